//! The fatbin container: NVIDIA's bundle of cubins, PTX and LTO-IR for several
//! architectures.
//!
//! - [`mod@read`] parses containers (one or several concatenated) into [`Entry`]s, never
//!   reading out of bounds: every size is checked against the input.
//! - [`mod@write`] builds containers that nvJitLink and the driver accept.
//! - [`mod@host`] finds fatbins embedded in ELF host objects and shared libraries, and tells
//!   a bare cubin from a host binary, so that any CUDA binary can be inventoried.
//!
//! Layout (little-endian), as observed on nvcc 13.0 output:
//!
//! | container header (16 B) | `u32 magic 0xBA55ED50`, `u16 version 1`, `u16 header size`, `u64 entries size` |
//! |---|---|
//! | entry header (its own size, ≥ 64 B) | `u16 kind`, `u16 0x0101`, `u32 header size`, `u64 padded payload size`, `u32 compressed size`, `u32 options offset`, `u16 minor`, `u16 major`, `u32 arch`, `u32 id offset`, `u32 id length`, `u64 flags`, `u64 reserved`, `u64 uncompressed size` |
//!
//! The payload follows each entry header; the next entry follows the padded payload.

pub mod host;
pub mod read;
pub mod write;

pub use read::{parse, Entry};
pub use write::FatbinWriter;

/// Magic number that starts every fatbin container.
pub const MAGIC: u32 = 0xBA55_ED50;
/// Size of the container header.
pub const CONTAINER_HEADER_SIZE: usize = 16;
/// Smallest entry header: the fixed fields end at offset 0x40.
pub const MIN_ENTRY_HEADER_SIZE: usize = 0x40;

/// Entry flag: 64-bit code.
pub const FLAG_64BIT: u64 = 0x1;
/// Entry flag: host is Linux.
pub const FLAG_HOST_LINUX: u64 = 0x10;
/// Entry flag: payload compressed with LZ4 (raw block).
pub const FLAG_LZ4: u64 = 0x2000;
/// Entry flag: payload compressed with ZSTD.
pub const FLAG_ZSTD: u64 = 0x8000;
/// Entry flag: seen only on LTO-IR compressed with NVIDIA's private scheme.
pub const FLAG_COMPRESSED_IR: u64 = 0x10000;
/// Entry flag: arch-specific (`a`) target.
pub const FLAG_ARCH_SPECIFIC: u64 = 0x10_0000;
/// Entry flag: family (`f`) target.
pub const FLAG_FAMILY: u64 = 0x20_0000;

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// PTX text (kind 1).
    Ptx,
    /// A cubin, ELF machine code (kind 2).
    Cubin,
    /// LTO-IR (kind 8).
    #[serde(rename = "ltoir")]
    LtoIr,
}

impl EntryKind {
    /// The kind number stored in the entry header.
    pub fn code(self) -> u16 {
        match self {
            EntryKind::Ptx => 1,
            EntryKind::Cubin => 2,
            EntryKind::LtoIr => 8,
        }
    }

    /// The kind for a header number, if known.
    pub fn from_code(code: u16) -> Option<Self> {
        match code {
            1 => Some(EntryKind::Ptx),
            2 => Some(EntryKind::Cubin),
            8 => Some(EntryKind::LtoIr),
            _ => None,
        }
    }

    /// The name used in listings: `cubin`, `ptx`, `ltoir`.
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Ptx => "ptx",
            EntryKind::Cubin => "cubin",
            EntryKind::LtoIr => "ltoir",
        }
    }

    /// The target kind this entry's code is for.
    pub fn code_kind(self) -> crate::arch::CodeKind {
        match self {
            EntryKind::Ptx => crate::arch::CodeKind::Compute,
            EntryKind::Cubin => crate::arch::CodeKind::Sass,
            EntryKind::LtoIr => crate::arch::CodeKind::Lto,
        }
    }
}

impl std::fmt::Display for EntryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How an entry's payload is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Codec {
    /// Stored as is.
    None,
    /// LZ4 raw block (nvcc `--compress-mode=speed`, older toolkits' default).
    Lz4,
    /// ZSTD frame (nvcc 13 default for PTX and LTO-IR, `size` mode).
    Zstd,
}

impl Codec {
    /// The name used in listings: `none`, `lz4`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
        }
    }
}

impl std::fmt::Display for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
