//! Providers: prebuilt cubins for one exact target and a set of plans, so that a
//! deployment needs no linking at run time.
//!
//! File layout, format 2 (little-endian; the envelope is `formats::container`): magic
//! `LTOKPROV`, `u32` format version, `u32` reserved, `u64` manifest length, 32-byte BLAKE3
//! of the stored manifest, `u64` payload length, the [`ProviderManifest`] as zstd-compressed
//! JSON, then the payload: the cubins in solid zstd blocks (`formats::blocks`). Cubins of
//! one kernel are written next to each other in plan-name order — near-copies that
//! differ in a type or a constant — and a block holds up to [`BLOCK_BUDGET`] raw bytes, so
//! zstd compresses what they share once. Reading an entry decompresses only its own
//! block, up to the entry's end; the provider keeps the latest blocks, so neighbouring
//! entries cost one decompression. Every entry is checked against its own digest when
//! read.
//!
//! Format 1 files (one zstd frame per entry, plain JSON manifest) are still read: each
//! of their frames is a block of one entry.
//!
//! Entries are keyed by the plan key computed for the provider's target and the
//! nvJitLink version that linked them (recorded in the manifest), so a provider serves a
//! process that has no nvJitLink at all.
//!
//! Which providers serve a device of compute capability M.m follows the architecture
//! rules exactly ([`usable_on`]): an `a` provider only M.m itself, an `f` provider its
//! family (same major, minor ≤ m), a plain `sm_XY` provider the same M.m — or, when the
//! caller's policy allows it, the same major with Y ≤ m. Never across majors.

pub mod build;
mod encoding;

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::arch::{ComputeCapability, Target, Variant};
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::formats::blocks::{Block, BlockReader, BlockSource, BlockWriter, Slot};
use crate::formats::container;
pub use crate::plan::SkippedPlan;
use crate::plan::{Plan, PlanKey, CACHE_FORMAT_VERSION};
use crate::version::Version;

/// Magic bytes of a provider file.
pub const MAGIC: &[u8; 8] = b"LTOKPROV";
/// Provider format version written (format 1 is still read).
pub const FORMAT_VERSION: u32 = 2;
/// The format versions read.
const VERSIONS: &[u32] = &[1, FORMAT_VERSION];
/// Raw bytes per solid block: chosen from measurements of provider size against the
/// time to serve one entry (BENCHMARKS.md, "Provider format 2").
pub const BLOCK_BUDGET: u64 = 3 << 20;
/// File extension of providers.
pub const EXTENSION: &str = "ltkp";

/// One prebuilt cubin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProviderEntry {
    /// Plan key (for the provider's target and linker).
    pub key: Digest,
    /// Plan name, when known.
    #[serde(default)]
    pub plan: Option<String>,
    /// Entry kernel, when known.
    #[serde(default)]
    pub kernel: Option<String>,
    /// Where the cubin lies, and its digest.
    pub slot: Slot,
}

/// A cubin to write into a provider.
#[derive(Debug, Clone)]
pub struct NewEntry {
    /// Plan key (for the provider's target and linker).
    pub key: Digest,
    /// Plan name, when known.
    pub plan: Option<String>,
    /// Entry kernel, when known.
    pub kernel: Option<String>,
    /// The cubin.
    pub cubin: Vec<u8>,
}

/// What a provider says about itself, apart from its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderInfo {
    /// Name (usually the bundle's).
    pub name: String,
    /// The exact target.
    pub target: Target,
    /// The nvJitLink version that linked the entries (part of their keys).
    pub linker: Version,
    /// The NVRTC version that produced the IR, when known.
    pub producer: Option<Version>,
    /// Plans the target cannot run, left out.
    pub skipped: Vec<SkippedPlan>,
}

/// A provider's manifest.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProviderManifest {
    /// Name (usually the bundle's).
    pub name: String,
    /// The exact target, e.g. `sm_90a`.
    pub target: String,
    /// The nvJitLink version that linked the entries (part of their keys).
    pub linker: Version,
    /// The NVRTC version that produced the IR, when known.
    #[serde(default)]
    pub producer: Option<Version>,
    /// Cache format version the keys were computed with.
    pub cache_format: u32,
    /// The payload's solid blocks.
    pub blocks: Vec<Block>,
    /// The cubins.
    pub entries: Vec<ProviderEntry>,
    /// Plans the target cannot run, left out.
    #[serde(default)]
    pub skipped: Vec<SkippedPlan>,
}

impl ProviderManifest {
    /// Total decompressed size of the cubins.
    pub fn raw_bytes(&self) -> u64 {
        self.entries.iter().map(|e| e.slot.raw_bytes).sum()
    }

    /// Total compressed size of the payload.
    pub fn stored_bytes(&self) -> u64 {
        self.blocks.iter().map(|b| b.stored_bytes).sum()
    }

    /// The compressed bytes of `entry`'s block in proportion to its share of the block
    /// (entries of a solid block have no size of their own).
    pub fn stored_share(&self, entry: &ProviderEntry) -> u64 {
        self.blocks
            .get(entry.slot.block as usize)
            .filter(|b| b.raw_bytes > 0)
            .map_or(0, |b| {
                (u128::from(b.stored_bytes) * u128::from(entry.slot.raw_bytes)
                    / u128::from(b.raw_bytes)) as u64
            })
    }
}

/// Where a provider's payload is read from.
enum Payload {
    /// All of it in memory (opened from bytes).
    Memory { data: Vec<u8>, start: usize },
    /// The file, read one block at a time as entries are asked for.
    File {
        file: Mutex<std::fs::File>,
        start: u64,
    },
}

impl BlockSource for Payload {
    fn stored(&self, block: &Block) -> std::result::Result<Cow<'_, [u8]>, String> {
        match self {
            Payload::Memory { data, start } => data[*start..].stored(block),
            Payload::File { file, start } => {
                let mut bytes = vec![0u8; block.stored_bytes as usize];
                let mut file = file.lock();
                file.seek(SeekFrom::Start(start + block.offset))
                    .and_then(|_| file.read_exact(&mut bytes))
                    .map_err(|e| format!("cannot read a block: {e}"))?;
                Ok(Cow::Owned(bytes))
            }
        }
    }
}

/// An open provider.
pub struct Provider {
    manifest: ProviderManifest,
    target: Target,
    payload: Payload,
    reader: BlockReader,
    by_key: HashMap<Digest, usize>,
    format: u32,
    path: PathBuf,
    disabled: AtomicBool,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Provider({}, {}, {} entries)",
            self.path.display(),
            self.target,
            self.manifest.entries.len()
        )
    }
}

fn malformed(label: &str, what: impl std::fmt::Display) -> Error {
    Error::UnrecognizedInput {
        input: label.to_string(),
        what: format!(
            "not a usable ltokit provider: {what}; rebuild it with `ltokit provider build`"
        ),
    }
}

/// May a provider for `provider` serve a device of compute capability `cc`?
/// `allow_newer_minor` lets a plain `sm_XY` provider serve M.m with the same major and
/// Y ≤ m (off by default: exact).
pub fn usable_on(provider: &Target, cc: ComputeCapability, allow_newer_minor: bool) -> bool {
    if provider.cc.major != cc.major {
        return false;
    }
    match provider.variant {
        Variant::Specific => provider.cc == cc,
        Variant::Family => provider.cc.minor <= cc.minor,
        Variant::Base => provider.cc == cc || (allow_newer_minor && provider.cc.minor <= cc.minor),
    }
}

impl Provider {
    /// Opens a provider file, checking its header, manifest digest and layout. Only the
    /// header and manifest are read now; each block is read when an entry in it is
    /// first asked for (so a process that needs one kernel reads one block).
    pub fn open(path: &Path) -> Result<Provider> {
        let label = path.display().to_string();
        let io = |e| Error::io(path, e);
        let mut file = std::fs::File::open(path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        let mut header = vec![0u8; container::HEADER_SIZE.min(file_len as usize)];
        file.read_exact(&mut header).map_err(io)?;
        let (layout, format) =
            container::parse_header(&header, file_len, MAGIC, VERSIONS, "provider")
                .map_err(|why| malformed(&label, why))?;
        let mut manifest = vec![0u8; layout.manifest_len];
        file.read_exact(&mut manifest).map_err(io)?;
        container::check_manifest(&header, &manifest).map_err(|why| malformed(&label, why))?;
        let manifest = encoding::decode(format, &manifest).map_err(|why| malformed(&label, why))?;
        let payload = Payload::File {
            file: Mutex::new(file),
            start: layout.payload_start as u64,
        };
        Provider::assemble(path, format, manifest, layout.payload_len, payload)
    }

    /// Opens provider bytes; `path` names them.
    pub fn from_bytes(path: &Path, data: Vec<u8>) -> Result<Provider> {
        let label = path.display().to_string();
        let (layout, format) = container::open_versions(&data, MAGIC, VERSIONS, "provider")
            .map_err(|why| malformed(&label, why))?;
        let manifest = encoding::decode(format, layout.manifest(&data))
            .map_err(|why| malformed(&label, why))?;
        let payload = Payload::Memory {
            data,
            start: layout.payload_start,
        };
        Provider::assemble(path, format, manifest, layout.payload_len, payload)
    }

    /// Checks a decoded manifest against this ltokit and the payload, and indexes it.
    fn assemble(
        path: &Path,
        format: u32,
        manifest: ProviderManifest,
        payload_len: usize,
        payload: Payload,
    ) -> Result<Provider> {
        let label = path.display().to_string();
        let target: Target = manifest.target.parse().map_err(|e| malformed(&label, e))?;
        if target.kind != crate::arch::CodeKind::Sass {
            return Err(malformed(
                &label,
                format!("target {target} is not a machine target (sm_XY)"),
            ));
        }
        if manifest.cache_format != CACHE_FORMAT_VERSION {
            return Err(malformed(
                &label,
                format!(
                    "its keys use cache format {}, this ltokit uses {CACHE_FORMAT_VERSION}",
                    manifest.cache_format
                ),
            ));
        }
        let reader = BlockReader::new(manifest.blocks.clone(), payload_len as u64)
            .map_err(|why| malformed(&label, why))?;
        let mut by_key = HashMap::with_capacity(manifest.entries.len());
        for (i, e) in manifest.entries.iter().enumerate() {
            reader
                .check(&e.slot)
                .map_err(|why| malformed(&label, format!("entry {} {why}", e.key.short(16))))?;
            by_key.entry(e.key).or_insert(i);
        }
        Ok(Provider {
            manifest,
            target,
            payload,
            reader,
            by_key,
            format,
            path: path.to_path_buf(),
            disabled: AtomicBool::new(false),
        })
    }

    /// Writes a provider of `entries` (format 2): cubins ordered by kernel and plan
    /// name, in solid blocks of at most [`BLOCK_BUDGET`] raw bytes, compressed `jobs` at
    /// a time (0 = one per core).
    pub fn write(info: ProviderInfo, entries: Vec<NewEntry>, jobs: usize) -> Result<Vec<u8>> {
        Provider::write_with_budget(info, entries, BLOCK_BUDGET, jobs)
    }

    /// [`Provider::write`] with blocks of at most `budget` raw bytes (for measuring
    /// what a block size costs and saves).
    pub fn write_with_budget(
        info: ProviderInfo,
        mut entries: Vec<NewEntry>,
        budget: u64,
        jobs: usize,
    ) -> Result<Vec<u8>> {
        if info.target.kind != crate::arch::CodeKind::Sass {
            return Err(Error::InvalidArgument(format!(
                "a provider needs a machine target (sm_XY), not {}",
                info.target
            )));
        }
        // Near-copies side by side: the same kernel, then plan names (type, width,
        // metric, filter vary last).
        entries.sort_by(|a, b| (&a.kernel, &a.plan, a.key).cmp(&(&b.kernel, &b.plan, b.key)));
        let mut writer = BlockWriter::new(budget);
        let mut records = Vec::with_capacity(entries.len());
        for e in &entries {
            records.push(ProviderEntry {
                key: e.key,
                plan: e.plan.clone(),
                kernel: e.kernel.clone(),
                slot: writer.push(&e.cubin),
            });
        }
        let (payload, blocks) = writer.finish(jobs)?;
        let manifest = ProviderManifest {
            name: info.name,
            target: info.target.to_string(),
            linker: info.linker,
            producer: info.producer,
            cache_format: CACHE_FORMAT_VERSION,
            blocks,
            entries: records,
            skipped: info.skipped,
        };
        let stored = encoding::encode(&manifest)?;
        Ok(container::write(MAGIC, FORMAT_VERSION, &stored, &payload))
    }

    /// The manifest.
    pub fn manifest(&self) -> &ProviderManifest {
        &self.manifest
    }

    /// The file format it was read from (1 or 2).
    pub fn format(&self) -> u32 {
        self.format
    }

    /// The exact target.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Where it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The key `plan` has in this provider.
    pub fn key_of(&self, plan: &Plan) -> PlanKey {
        plan.key_on(self.target, self.manifest.linker)
    }

    /// Reads and verifies entry `index`.
    pub fn entry_bytes(&self, index: usize) -> Result<Vec<u8>> {
        let label = || self.path.display().to_string();
        let e = self.manifest.entries.get(index).ok_or_else(|| {
            malformed(
                &label(),
                format!("no entry #{index} (it has {})", self.manifest.entries.len()),
            )
        })?;
        self.reader
            .read(&self.payload, &e.slot)
            .map_err(|why| malformed(&label(), format!("entry {}: {why}", e.key.short(16))))
    }

    /// The cubin for `plan`, if this provider has it. A digest mismatch disables the
    /// provider (with a warning) and answers `None`.
    pub fn get(&self, plan: &Plan) -> Option<Vec<u8>> {
        if self.disabled.load(Ordering::Relaxed) {
            return None;
        }
        let index = *self.by_key.get(&self.key_of(plan).0)?;
        match self.entry_bytes(index) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                self.disabled.store(true, Ordering::Relaxed);
                tracing::warn!("disabling provider {}: {e}", self.path.display());
                None
            }
        }
    }

    /// Why this provider left `plan` out, if it did.
    pub fn skipped_reason(&self, plan: &Plan) -> Option<&str> {
        self.manifest
            .skipped
            .iter()
            .find(|s| s.plan == plan.name())
            .map(|s| s.why.as_str())
    }

    /// Checks every entry's digest.
    pub fn verify(&self) -> Result<()> {
        for i in 0..self.manifest.entries.len() {
            self.entry_bytes(i)?;
        }
        Ok(())
    }
}

/// The default directory providers are installed into and found in:
/// `$XDG_DATA_HOME/ltokit/providers`, else `~/.local/share/ltokit/providers`.
pub fn default_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(d).join("ltokit").join("providers");
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".local/share/ltokit/providers")
}

/// Where providers are looked for: each entry of `LTOKIT_PROVIDER_PATH` (directories or
/// files, colon-separated), then [`default_dir`].
pub fn search_path() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::env::var_os("LTOKIT_PROVIDER_PATH")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    out.push(default_dir());
    out
}

/// Opens every provider found on `paths`; unreadable or malformed ones are skipped with
/// a warning.
pub fn discover(paths: &[PathBuf]) -> Vec<Arc<Provider>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_file() {
            files.push(p.clone());
        } else if let Ok(dir) = std::fs::read_dir(p) {
            let mut found: Vec<PathBuf> = dir
                .flatten()
                .map(|e| e.path())
                .filter(|f| f.extension().is_some_and(|x| x == EXTENSION))
                .collect();
            found.sort();
            files.extend(found);
        }
    }
    let mut out = Vec::new();
    for f in files {
        match Provider::open(&f) {
            Ok(p) => out.push(Arc::new(p)),
            Err(e) => tracing::warn!("ignoring provider {}: {e}", f.display()),
        }
    }
    out
}

/// The providers of `all` that serve a device of `cc`, best first (`a`, then `f`, then
/// plain; higher minor first).
pub fn for_device(
    all: &[Arc<Provider>],
    cc: ComputeCapability,
    allow_newer_minor: bool,
) -> Vec<Arc<Provider>> {
    let mut usable: Vec<Arc<Provider>> = all
        .iter()
        .filter(|p| usable_on(&p.target, cc, allow_newer_minor))
        .cloned()
        .collect();
    usable.sort_by_key(|p| std::cmp::Reverse((p.target.variant, p.target.cc.minor)));
    usable
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Target {
        s.parse().unwrap()
    }

    #[test]
    fn matching_follows_the_architecture_rules() {
        let cc = |m, n| ComputeCapability::new(m, n);
        assert!(usable_on(&t("sm_90"), cc(9, 0), false));
        assert!(usable_on(&t("sm_90a"), cc(9, 0), false));
        assert!(!usable_on(&t("sm_100a"), cc(10, 3), false));
        assert!(usable_on(&t("sm_100f"), cc(10, 3), false));
        assert!(!usable_on(&t("sm_100f"), cc(11, 0), false));
        assert!(!usable_on(&t("sm_80"), cc(8, 6), false), "exact by default");
        assert!(
            usable_on(&t("sm_80"), cc(8, 6), true),
            "newer minor when allowed"
        );
        assert!(!usable_on(&t("sm_86"), cc(8, 0), true));
        assert!(
            !usable_on(&t("sm_80"), cc(9, 0), true),
            "never across majors"
        );
    }
}
