//! Inventories of CUDA binaries: every device-code entry a file carries, with its kind,
//! architecture, codec and sizes — the Rust-native answer to `cuobjdump -lelf -lptx`.
//!
//! Accepted inputs: fatbins, bare cubins, ltokit providers, LTO-IR and PTX files, and ELF host binaries
//! (objects, executables, shared libraries) with `.nv_fatbin` / `__nv_relfatbin` sections.

use std::collections::BTreeMap;
use std::path::Path;

use crate::arch::{CodeKind, Target, Variant};
use crate::error::{Error, Result};
use crate::formats::cubin::{self, CubinInfo};
use crate::formats::fatbin::{self, host, Codec, EntryKind};
use crate::formats::ltoir;

/// One device-code entry of a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InventoryEntry {
    /// `cubin`, `ptx` or `ltoir`.
    pub kind: EntryKind,
    /// Architecture in listing form: `sm_90`, `sm_90a`, `sm_100f`.
    pub arch: String,
    /// How it is stored: `none`, `lz4`, `zstd`.
    pub codec: Codec,
    /// Bytes as stored in the file.
    pub stored_bytes: u64,
    /// Bytes once decompressed.
    pub raw_bytes: u64,
    /// The full target with its kind (`sm_90`, `compute_90`, `lto_90`).
    pub target: String,
    /// Where it was found: `fatbin`, `cubin`, or the ELF section name.
    pub container: String,
}

/// Totals for one (kind, arch) pair of a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InventoryTotal {
    /// Entry kind.
    pub kind: EntryKind,
    /// Architecture in listing form.
    pub arch: String,
    /// How many entries.
    pub count: u64,
    /// Sum of stored sizes.
    pub stored_bytes: u64,
    /// Sum of raw sizes.
    pub raw_bytes: u64,
}

/// The inventory of one file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileInventory {
    /// The file's path as given.
    pub path: String,
    /// What the file is: `fatbin`, `cubin`, `ltoir`, `ptx` or `elf`.
    pub format: &'static str,
    /// Every entry, in file order.
    pub entries: Vec<InventoryEntry>,
    /// Totals by kind and architecture.
    pub totals: Vec<InventoryTotal>,
}

/// Reads and inventories a file.
pub fn inventory_file(path: &Path) -> Result<FileInventory> {
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    inventory_bytes(&path.display().to_string(), &data)
}

/// Inventories bytes; `label` names them in the result and in errors.
pub fn inventory_bytes(label: &str, data: &[u8]) -> Result<FileInventory> {
    let with_label = |e: Error| Error::UnrecognizedInput {
        input: label.to_string(),
        what: e.to_string(),
    };
    let (format, entries) = if fatbin::read::is_fatbin(data) {
        (
            "fatbin",
            fatbin_entries(data, "fatbin").map_err(with_label)?,
        )
    } else if cubin::is_cubin(data) {
        ("cubin", vec![cubin_entry(data).map_err(with_label)?])
    } else if data.starts_with(b"\x7fELF") {
        let mut entries = Vec::new();
        for section in host::embedded_fatbins(data).map_err(with_label)? {
            entries.extend(fatbin_entries(section.data, &section.section).map_err(with_label)?);
        }
        ("elf", entries)
    } else if data.starts_with(crate::provider::MAGIC) {
        (
            "provider",
            provider_entries(label, data).map_err(with_label)?,
        )
    } else if ltoir::is_ltoir(data) {
        ("ltoir", Vec::new())
    } else if crate::link::looks_like_ptx(data) {
        ("ptx", Vec::new())
    } else {
        return Err(Error::UnrecognizedInput {
            input: label.to_string(),
            what: "not a fatbin, cubin, ELF host binary, LTO-IR or PTX file".into(),
        });
    };
    let totals = totals_of(&entries);
    Ok(FileInventory {
        path: label.to_string(),
        format,
        entries,
        totals,
    })
}

fn fatbin_entries(data: &[u8], container: &str) -> Result<Vec<InventoryEntry>> {
    Ok(fatbin::parse(data)?
        .into_iter()
        .map(|e| InventoryEntry {
            kind: e.kind,
            arch: e.arch_name(),
            codec: e.codec,
            stored_bytes: e.payload.len() as u64,
            raw_bytes: e.raw_size,
            target: e.target.to_string(),
            container: container.to_string(),
        })
        .collect())
}

fn provider_entries(label: &str, data: &[u8]) -> Result<Vec<InventoryEntry>> {
    let p = crate::provider::Provider::from_bytes(Path::new(label), data.to_vec())?;
    let target = p.target();
    let m = p.manifest();
    Ok(m.entries
        .iter()
        .map(|e| InventoryEntry {
            kind: EntryKind::Cubin,
            arch: target.to_string(),
            codec: Codec::Zstd,
            stored_bytes: m.stored_share(e),
            raw_bytes: e.slot.raw_bytes,
            target: target.to_string(),
            container: format!("provider:{}", e.plan.as_deref().unwrap_or("?")),
        })
        .collect())
}

fn cubin_entry(data: &[u8]) -> Result<InventoryEntry> {
    let info = CubinInfo::parse(data)?;
    let target = Target::from_number(CodeKind::Sass, info.arch, Variant::Base)?;
    Ok(InventoryEntry {
        kind: EntryKind::Cubin,
        arch: target.to_string(),
        codec: Codec::None,
        stored_bytes: data.len() as u64,
        raw_bytes: data.len() as u64,
        target: target.to_string(),
        container: "cubin".into(),
    })
}

fn totals_of(entries: &[InventoryEntry]) -> Vec<InventoryTotal> {
    let mut map: BTreeMap<(EntryKind, String), InventoryTotal> = BTreeMap::new();
    for e in entries {
        let t = map
            .entry((e.kind, e.arch.clone()))
            .or_insert_with(|| InventoryTotal {
                kind: e.kind,
                arch: e.arch.clone(),
                count: 0,
                stored_bytes: 0,
                raw_bytes: 0,
            });
        t.count += 1;
        t.stored_bytes += e.stored_bytes;
        t.raw_bytes += e.raw_bytes;
    }
    map.into_values().collect()
}
