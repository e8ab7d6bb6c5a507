//! Inspecting cubins: the ELF files that hold GPU machine code.
//!
//! A cubin has machine `EM_CUDA` (190) and OS ABI 0x41; from ABI version 8 on (CUDA 12.8+)
//! the architecture number sits in bits 8–15 of `e_flags`, before that in bits 0–7. The
//! `a`/`f` suffix is not recorded in `e_flags` (sm_90 and sm_90a cubins are identical
//! there); fatbin entry flags and ltokit's own manifests carry it.

use object::read::elf::{ElfFile64, FileHeader, Sym};
use object::{Endianness, Object, ObjectSymbol};

use crate::error::{Error, Result};

/// ELF machine number of CUDA GPUs.
pub const EM_CUDA: u16 = 190;
/// `st_other` bit marking a kernel entry point in a cubin.
const STO_CUDA_ENTRY: u8 = 0x10;

/// What a cubin's ELF header and symbol table say.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CubinInfo {
    /// ELF machine (190 for a valid cubin).
    pub machine: u16,
    /// Raw `e_flags`.
    pub e_flags: u32,
    /// ELF ABI version (`e_ident[8]`).
    pub abi_version: u8,
    /// The architecture number (`90` for sm_90).
    pub arch: u32,
    /// Kernel entry points.
    pub kernels: Vec<String>,
    /// Every named function symbol (kernels and device functions).
    pub functions: Vec<String>,
}

/// True when `data` is an ELF file whose machine is `EM_CUDA`.
pub fn is_cubin(data: &[u8]) -> bool {
    data.starts_with(b"\x7fELF") && data.len() >= 20 && {
        let little = data.get(5) == Some(&1);
        let m = [data[18], data[19]];
        (if little {
            u16::from_le_bytes(m)
        } else {
            u16::from_be_bytes(m)
        }) == EM_CUDA
    }
}

impl CubinInfo {
    /// Parses a cubin. Fails with a clear error on anything that is not a 64-bit CUDA ELF.
    pub fn parse(data: &[u8]) -> Result<Self> {
        let elf = ElfFile64::<Endianness>::parse(data).map_err(|e| Error::Elf {
            what: format!("not a valid 64-bit ELF cubin: {e}"),
        })?;
        let endian = elf.endian();
        let header = elf.elf_header();
        let machine = header.e_machine(endian).0;
        if machine != EM_CUDA {
            return Err(Error::Elf {
                what: format!(
                    "ELF machine is {machine}, not {EM_CUDA} (EM_CUDA): this is not a cubin"
                ),
            });
        }
        let e_flags = header.e_flags(endian).0;
        let abi_version = header.e_ident().abi_version;
        let arch = if abi_version >= 8 {
            (e_flags >> 8) & 0xff
        } else {
            e_flags & 0xff
        };
        let mut kernels = Vec::new();
        let mut functions = Vec::new();
        for symbol in elf.symbols() {
            if symbol.kind() != object::SymbolKind::Text {
                continue;
            }
            let Ok(name) = symbol.name() else { continue };
            if name.is_empty() {
                continue;
            }
            if symbol.elf_symbol().st_other().0 & STO_CUDA_ENTRY != 0 {
                kernels.push(name.to_string());
            }
            functions.push(name.to_string());
        }
        Ok(CubinInfo {
            machine,
            e_flags,
            abi_version,
            arch,
            kernels,
            functions,
        })
    }
}
