//! Bundles: one versioned, checksummed file of named LTO-IR fragments and the plans
//! that combine them.
//!
//! Layout (little-endian; the envelope is `formats::container`):
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `LTOKBNDL` |
//! | 8 | `u32` format version ([`FORMAT_VERSION`]) |
//! | 12 | `u32` reserved (0) |
//! | 16 | `u64` manifest length |
//! | 24 | 32-byte BLAKE3 digest of the manifest |
//! | 56 | `u64` payload area length |
//! | 64 | manifest: zstd-compressed JSON in which plans name fragments, kernels and option lists by index (`encoding`) |
//! | 64 + manifest | payload area: the fragments' LTO-IR in solid zstd blocks (`formats::blocks`) |
//!
//! Opening a bundle checks the header, the manifest digest and every offset; payloads are
//! decompressed only when a fragment is first used, and checked against the fragment's
//! content hash then. A bundle is ordinary data: it can be embedded with `include_bytes!`
//! and opened from memory. Bundles of format 1 (plain JSON, one frame per fragment) are
//! refused with a message saying to rebuild them.

mod encoding;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::arch::Target;
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::formats::blocks::{Block, BlockReader, BlockWriter, Slot};
use crate::formats::container;
use crate::plan::{FragmentSource, Plan, PlanInput, Requirements, SkippedPlan};
use crate::version::Version;

/// Magic bytes that start a bundle.
pub const MAGIC: &[u8; 8] = b"LTOKBNDL";
/// The bundle format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 2;
/// Raw bytes per solid block of LTO-IR. LTO-IR is compressed by its producer, so only
/// what fragments share gains; one block of everything a bundle holds gains most
/// (BENCHMARKS.md, "Bundle format 2").
const BLOCK_BUDGET: u64 = 8 << 20;

/// What a fragment is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Holds the `__global__` entry kernel of a plan.
    Entry,
    /// Holds device functions an entry calls.
    Device,
}

/// One fragment's manifest record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FragmentRecord {
    /// Unique name within the bundle.
    pub name: String,
    /// Entry or device fragment.
    pub role: Role,
    /// Symbols it defines (kernels for an entry fragment, device functions otherwise).
    pub exports: Vec<String>,
    /// Symbols it needs from other fragments.
    pub requires: Vec<String>,
    /// The NVRTC version that produced it.
    pub producer: Version,
    /// The IR's target (`lto_XY[a|f]`), as text.
    pub target: String,
    /// BLAKE3 of the raw LTO-IR: the fragment's identity in plan keys.
    pub content_hash: Digest,
    /// BLAKE3 of everything that went into compiling it (source, includes, options,
    /// NVRTC version): lets a rebuild reuse it when nothing changed.
    pub compile_key: Digest,
    /// The solid block that holds its LTO-IR (filled in by [`Bundle::write`]).
    pub block: u32,
    /// Offset of its LTO-IR inside the decompressed block.
    pub offset: u64,
    /// Raw LTO-IR size.
    pub raw_bytes: u64,
}

impl FragmentRecord {
    /// Where its LTO-IR lies.
    fn slot(&self) -> Slot {
        Slot {
            block: self.block,
            offset: self.offset,
            raw_bytes: self.raw_bytes,
            digest: self.content_hash,
        }
    }
}

/// One plan's manifest record: an entry fragment, device fragments, link options.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct PlanRecord {
    /// Unique name within the bundle.
    pub name: String,
    /// The entry kernel's symbol name.
    pub kernel: String,
    /// Name of the entry fragment.
    pub entry: String,
    /// Names of the device fragments, in link order.
    pub fragments: Vec<String>,
    /// Extra nvJitLink options (after `-arch` and `-lto`).
    pub options: Vec<String>,
    /// The lowest architecture number the plan runs on (e.g. 80), if it needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_arch: Option<u32>,
    /// Whether the plan needs an arch-specific (`a`) target (e.g. for wgmma).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub arch_specific: bool,
}

impl PlanRecord {
    /// What the plan needs of its target.
    pub fn requirements(&self) -> Requirements {
        Requirements {
            min_arch: self.min_arch,
            arch_specific: self.arch_specific,
        }
    }
}

/// A bundle's plans for one target: those it can run, and those it cannot with why.
#[derive(Debug, Clone, Default)]
pub struct PlansFor {
    /// Plans the target meets the requirements of.
    pub plans: Vec<Plan>,
    /// Plans left out, with what the target lacks.
    pub skipped: Vec<SkippedPlan>,
}

/// The manifest of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// The bundle's name.
    pub name: String,
    /// Fragments, in payload order.
    pub fragments: Vec<FragmentRecord>,
    /// The payload's solid blocks.
    pub blocks: Vec<Block>,
    /// Plans.
    pub plans: Vec<PlanRecord>,
}

impl Manifest {
    /// Total compressed size of the payload.
    pub fn stored_bytes(&self) -> u64 {
        self.blocks.iter().map(|b| b.stored_bytes).sum()
    }

    /// Total raw size of the fragments' LTO-IR.
    pub fn raw_bytes(&self) -> u64 {
        self.fragments.iter().map(|f| f.raw_bytes).sum()
    }
}

/// An open bundle. Cheap to clone through `Arc`; fragments decompress on first use.
pub struct Bundle {
    manifest: Manifest,
    data: Arc<[u8]>,
    payload_start: usize,
    reader: BlockReader,
    decoded: Vec<OnceLock<Arc<[u8]>>>,
    label: String,
}

impl std::fmt::Debug for Bundle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bundle")
            .field("label", &self.label)
            .field("fragments", &self.manifest.fragments.len())
            .field("plans", &self.manifest.plans.len())
            .finish()
    }
}

fn malformed(label: &str, what: impl std::fmt::Display) -> Error {
    Error::UnrecognizedInput {
        input: label.to_string(),
        what: format!(
            "malformed ltokit bundle: {what}; rebuild it with `ltokit bundle` (or ltokit-build)"
        ),
    }
}

impl Bundle {
    /// Reads and opens a bundle file.
    pub fn open(path: &Path) -> Result<Arc<Bundle>> {
        let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Bundle::from_bytes(&path.display().to_string(), data)
    }

    /// Opens a bundle held in memory; `label` names it in errors.
    pub fn from_bytes(label: &str, data: impl Into<Arc<[u8]>>) -> Result<Arc<Bundle>> {
        let data: Arc<[u8]> = data.into();
        let layout = container::open(&data, MAGIC, FORMAT_VERSION, "bundle")
            .map_err(|why| malformed(label, why))?;
        let manifest =
            encoding::decode(layout.manifest(&data)).map_err(|why| malformed(label, why))?;
        let reader = validate(label, &manifest, layout.payload_len as u64)?;
        let decoded = (0..manifest.fragments.len())
            .map(|_| OnceLock::new())
            .collect();
        Ok(Arc::new(Bundle {
            manifest,
            data,
            payload_start: layout.payload_start,
            reader,
            decoded,
            label: label.to_string(),
        }))
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The name the bundle was opened under.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Index of a fragment by name.
    pub fn fragment_index(&self, name: &str) -> Option<usize> {
        self.manifest.fragments.iter().position(|f| f.name == name)
    }

    /// The raw LTO-IR of fragment `index`, decompressed on first use and checked
    /// against its content hash.
    pub fn fragment_bytes(&self, index: usize) -> Result<Arc<[u8]>> {
        let record = self.manifest.fragments.get(index).ok_or_else(|| {
            malformed(
                &self.label,
                format!(
                    "no fragment #{index} (it has {})",
                    self.manifest.fragments.len()
                ),
            )
        })?;
        if let Some(bytes) = self.decoded.get(index).and_then(OnceLock::get) {
            return Ok(Arc::clone(bytes));
        }
        let raw = self
            .reader
            .read(&self.data[self.payload_start..], &record.slot())
            .map_err(|why| malformed(&self.label, format!("fragment {}: {why}", record.name)))?;
        let bytes: Arc<[u8]> = raw.into();
        Ok(Arc::clone(self.decoded[index].get_or_init(|| bytes)))
    }

    /// Plan `name` for `target`: an error naming the plan when the bundle has none of
    /// that name, or when `target` does not meet the plan's requirements.
    pub fn plan(self: &Arc<Self>, name: &str, target: Target) -> Result<Plan> {
        let record = self.plan_record(name)?;
        self.plan_from_record(record, target)
    }

    /// The manifest record of plan `name`.
    pub fn plan_record(&self, name: &str) -> Result<&PlanRecord> {
        self.manifest
            .plans
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| Error::UnknownPlan {
                bundle: self.label.clone(),
                plan: name.to_string(),
                count: self.manifest.plans.len(),
            })
    }

    /// Every plan of the bundle for `target`, split into those it can run and those
    /// it cannot.
    pub fn plans(self: &Arc<Self>, target: Target) -> Result<PlansFor> {
        self.plans_named(self.manifest.plans.iter(), target)
    }

    /// The plans named in `names` for `target`, split as [`Bundle::plans`] does; an
    /// error for a name the bundle does not have.
    pub fn plans_of(self: &Arc<Self>, names: &[String], target: Target) -> Result<PlansFor> {
        let records = names
            .iter()
            .map(|n| self.plan_record(n))
            .collect::<Result<Vec<_>>>()?;
        self.plans_named(records.into_iter(), target)
    }

    fn plans_named<'a>(
        self: &Arc<Self>,
        records: impl Iterator<Item = &'a PlanRecord>,
        target: Target,
    ) -> Result<PlansFor> {
        let mut out = PlansFor::default();
        for record in records {
            match self.plan_from_record(record, target) {
                Ok(plan) => out.plans.push(plan),
                Err(Error::UnsupportedPlan {
                    plan, requirement, ..
                }) => out.skipped.push(SkippedPlan {
                    plan,
                    why: requirement,
                }),
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    fn plan_from_record(self: &Arc<Self>, record: &PlanRecord, target: Target) -> Result<Plan> {
        let source: Arc<dyn FragmentSource> = Arc::clone(self) as Arc<dyn FragmentSource>;
        let mut inputs = Vec::with_capacity(1 + record.fragments.len());
        for name in std::iter::once(&record.entry).chain(&record.fragments) {
            // validate() guarantees the names resolve.
            let index = self.fragment_index(name).ok_or_else(|| {
                malformed(
                    &self.label,
                    format!("plan {} names unknown fragment {name}", record.name),
                )
            })?;
            let f = &self.manifest.fragments[index];
            let ir_target: Target = f.target.parse()?;
            inputs.push(PlanInput::from_source(
                Arc::clone(&source),
                index,
                f.name.clone(),
                f.content_hash,
                ir_target,
                f.producer,
            ));
        }
        Plan::new(
            record.name.clone(),
            record.kernel.clone(),
            target,
            record.options.clone(),
            inputs,
        )
        .with_requirements(record.requirements())
    }

    /// Writes a bundle from a manifest (offsets and sizes are filled in) and the raw
    /// LTO-IR of each fragment, in manifest order.
    pub fn write(
        name: &str,
        mut fragments: Vec<FragmentRecord>,
        plans: Vec<PlanRecord>,
        payloads: &[&[u8]],
    ) -> Result<Vec<u8>> {
        if fragments.len() != payloads.len() {
            return Err(Error::InvalidArgument(format!(
                "{} fragment records but {} payloads",
                fragments.len(),
                payloads.len()
            )));
        }
        let mut writer = BlockWriter::new(BLOCK_BUDGET);
        for (record, raw) in fragments.iter_mut().zip(payloads) {
            let slot = writer.push(raw);
            record.block = slot.block;
            record.offset = slot.offset;
            record.raw_bytes = slot.raw_bytes;
            record.content_hash = slot.digest;
        }
        let (area, blocks) = writer.finish(0)?;
        let manifest = Manifest {
            name: name.to_string(),
            fragments,
            blocks,
            plans,
        };
        validate(name, &manifest, area.len() as u64)?;
        check_symbols(name, &manifest)?;
        let stored = encoding::encode(&manifest)?;
        Ok(container::write(MAGIC, FORMAT_VERSION, &stored, &area))
    }
}

/// Checks that every plan can link: its entry exports its kernel, and its fragments
/// together export every symbol any of them requires. A mistake here would otherwise
/// surface only at run time, as ptxas's "Unresolved extern function".
fn check_symbols(label: &str, m: &Manifest) -> Result<()> {
    let by_name: std::collections::HashMap<&str, &FragmentRecord> =
        m.fragments.iter().map(|f| (f.name.as_str(), f)).collect();
    for p in &m.plans {
        // validate() guarantees every name resolves.
        let parts: Vec<&FragmentRecord> = std::iter::once(&p.entry)
            .chain(&p.fragments)
            .filter_map(|n| by_name.get(n.as_str()).copied())
            .collect();
        let Some(entry) = parts.first() else {
            continue;
        };
        if !entry.exports.contains(&p.kernel) {
            return Err(Error::BadSpec {
                spec: label.to_string(),
                why: format!(
                    "plan {}: its entry fragment {} does not export the kernel {} (it exports [{}]); list the kernel under the entry's \"exports\"",
                    p.name,
                    p.entry,
                    p.kernel,
                    entry.exports.join(", ")
                ),
            });
        }
        check_kernels_used(label, p, entry)?;
        for part in &parts {
            for symbol in &part.requires {
                if !parts.iter().any(|f| f.exports.contains(symbol)) {
                    return Err(Error::BadSpec {
                        spec: label.to_string(),
                        why: format!(
                            "plan {}: fragment {} requires {symbol}, which none of its fragments [{}] exports; add the fragment that defines it to the plan",
                            p.name,
                            part.name,
                            parts.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Checks a plan's `-kernels-used=` options against its entry fragment: the plan's own
/// kernel must be among them, and no other kernel of the entry may start with one of
/// them — nvJitLink keeps every kernel whose name starts with a `-kernels-used` value
/// (`ivf_scan_c1` keeps `ivf_scan_c16` too), which would bloat the cubin silently.
fn check_kernels_used(label: &str, p: &PlanRecord, entry: &FragmentRecord) -> Result<()> {
    let used: Vec<&str> = p
        .options
        .iter()
        .filter_map(|o| o.strip_prefix("-kernels-used="))
        .collect();
    if used.is_empty() {
        return Ok(());
    }
    let bad = |why: String| Error::BadSpec {
        spec: label.to_string(),
        why: format!("plan {}: {why}", p.name),
    };
    if !used.contains(&p.kernel.as_str()) {
        return Err(bad(format!(
            "its -kernels-used options [{}] leave out its own kernel {}; add -kernels-used={}",
            used.join(", "),
            p.kernel,
            p.kernel
        )));
    }
    for name in &used {
        if let Some(other) = entry
            .exports
            .iter()
            .find(|e| e.as_str() != *name && e.starts_with(name) && !used.contains(&e.as_str()))
        {
            return Err(bad(format!(
                "-kernels-used={name} also keeps {other} (nvJitLink matches kernel names by prefix); rename the kernels so that none is a prefix of another, e.g. with a suffix"
            )));
        }
    }
    Ok(())
}

impl FragmentSource for Bundle {
    fn fragment_bytes(&self, index: usize) -> Result<Arc<[u8]>> {
        Bundle::fragment_bytes(self, index)
    }
}

/// Checks names, roles, targets, and that every payload lies inside the payload area;
/// returns the reader of the payload's blocks.
fn validate(label: &str, m: &Manifest, payload_len: u64) -> Result<BlockReader> {
    let reader =
        BlockReader::new(m.blocks.clone(), payload_len).map_err(|why| malformed(label, why))?;
    let mut names = std::collections::HashSet::new();
    for f in &m.fragments {
        if !names.insert(f.name.as_str()) {
            return Err(malformed(
                label,
                format!("fragment name {} appears twice", f.name),
            ));
        }
        f.target
            .parse::<Target>()
            .map_err(|e| malformed(label, format!("fragment {}: {e}", f.name)))?;
        reader
            .check(&f.slot())
            .map_err(|why| malformed(label, format!("fragment {} {why}", f.name)))?;
    }
    let mut plan_names = std::collections::HashSet::new();
    for p in &m.plans {
        if !plan_names.insert(p.name.as_str()) {
            return Err(malformed(
                label,
                format!("plan name {} appears twice", p.name),
            ));
        }
        let role_of = |name: &str| m.fragments.iter().find(|f| f.name == name).map(|f| f.role);
        match role_of(&p.entry) {
            Some(Role::Entry) => {}
            Some(Role::Device) => {
                return Err(malformed(
                    label,
                    format!(
                        "plan {}: {} is a device fragment, not an entry",
                        p.name, p.entry
                    ),
                ))
            }
            None => {
                return Err(malformed(
                    label,
                    format!("plan {} names unknown entry fragment {}", p.name, p.entry),
                ))
            }
        }
        for name in &p.fragments {
            if role_of(name).is_none() {
                return Err(malformed(
                    label,
                    format!("plan {} names unknown fragment {name}", p.name),
                ));
            }
        }
    }
    Ok(reader)
}
