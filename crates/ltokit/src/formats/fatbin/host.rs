//! Fatbins embedded in host binaries (ELF objects, executables, shared libraries).
//!
//! nvcc places device code in the section `.nv_fatbin` (whole-program code) and
//! `__nv_relfatbin` (relocatable device code, `-rdc=true`); each holds one or more
//! fatbin containers, possibly separated by zero padding.

use object::{Object, ObjectSection};

use crate::error::{Error, Result};

/// Section names that hold fatbin containers.
pub const FATBIN_SECTIONS: &[&str] = &[".nv_fatbin", "__nv_relfatbin"];

/// One fatbin-holding section of a host binary.
#[derive(Debug, Clone)]
pub struct EmbeddedFatbin<'a> {
    /// The section name.
    pub section: String,
    /// Its file offset.
    pub file_offset: u64,
    /// Its bytes (one or more containers).
    pub data: &'a [u8],
}

/// Finds every fatbin section of an ELF host binary. A binary without device code
/// yields an empty list; a file that is not a valid ELF is an error.
pub fn embedded_fatbins(data: &[u8]) -> Result<Vec<EmbeddedFatbin<'_>>> {
    let file = object::File::parse(data).map_err(|e| Error::Elf {
        what: format!("not a valid ELF host binary: {e}"),
    })?;
    let mut out = Vec::new();
    for section in file.sections() {
        let Ok(name) = section.name() else { continue };
        if !FATBIN_SECTIONS.contains(&name) {
            continue;
        }
        let bytes = section.data().map_err(|e| Error::Elf {
            what: format!("section {name} cannot be read: {e}"),
        })?;
        if bytes.is_empty() {
            continue;
        }
        out.push(EmbeddedFatbin {
            section: name.to_string(),
            file_offset: section.file_range().map_or(0, |(offset, _)| offset),
            data: bytes,
        });
    }
    Ok(out)
}
