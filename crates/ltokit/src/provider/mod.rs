//! Providers: prebuilt cubins for one exact target and a set of plans, so that a
//! deployment needs no linking at run time.
//!
//! File layout (little-endian; the envelope is `formats::container`): magic `LTOKPROV`, `u32` format version, `u32` reserved,
//! `u64` manifest length, 32-byte BLAKE3 of the manifest, `u64` payload length, the JSON
//! [`ProviderManifest`], then one zstd frame per entry. Any entry can be read without
//! decompressing the others; each is checked against its digest when read.
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

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::arch::{ComputeCapability, Target, Variant};
use crate::digest::Digest;
use crate::error::{Error, Result};
pub use crate::plan::SkippedPlan;
use crate::plan::{Plan, PlanKey, CACHE_FORMAT_VERSION};
use crate::version::Version;

/// Magic bytes of a provider file.
pub const MAGIC: &[u8; 8] = b"LTOKPROV";
/// Provider format version.
pub const FORMAT_VERSION: u32 = 1;
/// Largest entry ltokit decompresses (256 MiB).
const MAX_ENTRY_BYTES: u64 = 256 << 20;
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
    /// BLAKE3 of the cubin.
    pub digest: Digest,
    /// Offset of its zstd frame in the payload.
    pub offset: u64,
    /// Compressed size.
    pub stored_bytes: u64,
    /// Cubin size.
    pub raw_bytes: u64,
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
    /// The cubins.
    pub entries: Vec<ProviderEntry>,
    /// Plans the target cannot run, left out.
    #[serde(default)]
    pub skipped: Vec<SkippedPlan>,
}

/// An open provider.
pub struct Provider {
    manifest: ProviderManifest,
    target: Target,
    data: Arc<[u8]>,
    payload_start: usize,
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
    /// Opens a provider file, checking its header, manifest digest and layout.
    pub fn open(path: &Path) -> Result<Provider> {
        let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Provider::from_bytes(path, data)
    }

    /// Opens provider bytes; `path` names them.
    pub fn from_bytes(path: &Path, data: Vec<u8>) -> Result<Provider> {
        let label = path.display().to_string();
        let layout = crate::formats::container::open(&data, MAGIC, FORMAT_VERSION, "provider")
            .map_err(|why| malformed(&label, why))?;
        let (manifest_bytes, payload_len) = (layout.manifest(&data), layout.payload_len);
        let manifest: ProviderManifest = serde_json::from_slice(manifest_bytes)
            .map_err(|e| malformed(&label, format!("manifest: {e}")))?;
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
        for e in &manifest.entries {
            let end = e.offset.checked_add(e.stored_bytes);
            if end.is_none_or(|end| end > payload_len as u64) || e.raw_bytes > MAX_ENTRY_BYTES {
                return Err(malformed(
                    &label,
                    format!("entry {} lies outside the payload", e.key.short(16)),
                ));
            }
        }
        Ok(Provider {
            manifest,
            target,
            data: data.into(),
            payload_start: layout.payload_start,
            path: path.to_path_buf(),
            disabled: AtomicBool::new(false),
        })
    }

    /// Writes a provider.
    pub fn write(mut manifest: ProviderManifest, cubins: &[&[u8]]) -> Result<Vec<u8>> {
        if manifest.entries.len() != cubins.len() {
            return Err(Error::InvalidArgument(
                "one cubin per provider entry".into(),
            ));
        }
        let mut payload = Vec::new();
        for (e, cubin) in manifest.entries.iter_mut().zip(cubins) {
            let frame = crate::formats::container::append_frame(&mut payload, cubin)?;
            e.offset = frame.offset;
            e.stored_bytes = frame.stored_bytes;
            e.raw_bytes = frame.raw_bytes;
            e.digest = frame.digest;
        }
        let json = serde_json::to_vec_pretty(&manifest).map_err(|source| Error::Serialize {
            what: format!("the manifest of a provider for {}", manifest.target),
            source,
        })?;
        let out = crate::formats::container::write(MAGIC, FORMAT_VERSION, &json, &payload);
        Ok(out)
    }

    /// The manifest.
    pub fn manifest(&self) -> &ProviderManifest {
        &self.manifest
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
        let e = self.manifest.entries.get(index).ok_or_else(|| {
            malformed(
                &self.path.display().to_string(),
                format!("no entry #{index} (it has {})", self.manifest.entries.len()),
            )
        })?;
        let frame = crate::formats::container::Frame {
            offset: e.offset,
            stored_bytes: e.stored_bytes,
            raw_bytes: e.raw_bytes,
            digest: e.digest,
        };
        let raw = crate::formats::container::read_frame(&self.data, self.payload_start, &frame)
            .map_err(|why| {
                malformed(
                    &self.path.display().to_string(),
                    format!("entry {}: {why}", e.key.short(16)),
                )
            })?;
        Ok(raw)
    }

    /// The cubin for `plan`, if this provider has it. A digest mismatch disables the
    /// provider (with a warning) and answers `None`.
    pub fn get(&self, plan: &Plan) -> Option<Vec<u8>> {
        if self.disabled.load(Ordering::Relaxed) {
            return None;
        }
        let key = self.key_of(plan).0;
        let index = self.manifest.entries.iter().position(|e| e.key == key)?;
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
