//! L2: the on-disk cubin cache.
//!
//! Layout under the cache directory (created 0700):
//!
//! ```text
//! v1/entries/ab/<64-hex key>.cubin   content-addressed entries
//! v1/locks/<64-hex key>.lock         per-key lock files (cross-process single flight)
//! v1/linkers/<identity>              nvJitLink versions by library identity
//! v1/linkers/seen-<major>.<minor>     marks: this nvJitLink version linked entries here
//! v1/stats                           persisted counters
//! ```
//!
//! An entry is an 88-byte header — magic `LTOKCUBN`, `u32` format version, `u32` target
//! code ([`encode_target`]; 0 when unknown), the 32-byte plan key, `u64` payload length, the payload's 32-byte BLAKE3 —
//! then the cubin. Entries are published atomically (temporary file in the same
//! directory, fsync, rename, fsync of the directory) and verified on every read; readers
//! never lock. The last-used time is the file's mtime, refreshed on every hit, and drives
//! least-recently-used eviction down to the size bound.
//!
//! A cache is code that will run on the GPU: a directory or entry owned by another
//! user, or writable by group or others, is not used (warning, bypass).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use super::stats::{self, Stats};
use crate::arch::{CodeKind, Target, Variant};
use crate::digest::Digest;
use crate::plan::PlanKey;
use crate::version::Version;

const ENTRY_MAGIC: &[u8; 8] = b"LTOKCUBN";
/// Version of the entry file format.
pub const ENTRY_FORMAT_VERSION: u32 = 1;
const HEADER_SIZE: usize = 88;
const LAYOUT: &str = "v1";
/// Temporary files older than this are debris of killed writers and may be removed.
const STALE_TEMP_AGE: Duration = Duration::from_secs(600);

/// What a read found.
#[derive(Debug)]
pub enum Lookup {
    /// A verified cubin.
    Hit(Vec<u8>),
    /// No entry.
    Miss,
    /// An entry that failed verification; it was removed.
    Corrupt(String),
    /// An entry that is not ours to trust (foreign owner or loose permissions); left alone.
    Untrusted(String),
}

/// One entry, as listed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EntryInfo {
    /// The plan key (from the file name).
    pub key: String,
    /// Its path.
    pub path: PathBuf,
    /// File size.
    pub bytes: u64,
    /// Seconds since the Unix epoch of the last use.
    pub last_used: u64,
}

/// The result of verifying every entry.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct VerifyReport {
    /// Entries that verified.
    pub good: u64,
    /// Entries that failed and were removed, with why.
    pub removed: Vec<(String, String)>,
    /// Stale temporary files removed.
    pub temp_removed: u64,
}

/// The on-disk cache of one directory.
#[derive(Debug)]
pub struct DiskCache {
    root: PathBuf,
    max_bytes: u64,
    uid: u32,
    write_disabled: AtomicBool,
}

/// The effective user id (the one file ownership is compared with).
fn current_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Why `meta` must not be trusted, if it must not.
fn distrust(path: &Path, meta: &fs::Metadata, uid: u32) -> Option<String> {
    if meta.uid() != uid {
        return Some(format!(
            "{} is owned by uid {}, not by this user (uid {uid})",
            path.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "{} is writable by group or others (mode {:o})",
            path.display(),
            meta.mode() & 0o777
        ));
    }
    None
}

fn create_private_dir(path: &Path) -> std::io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}

impl DiskCache {
    /// Opens (creating it 0700 if needed) the cache under `dir`. Fails — and the caller
    /// bypasses the disk cache — when the directory cannot be made or is not trustworthy.
    pub fn open(dir: &Path, max_bytes: u64) -> Result<DiskCache, String> {
        let uid = current_uid();
        create_private_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let root = dir.join(LAYOUT);
        for sub in ["", "entries", "locks", "linkers"] {
            let d = root.join(sub);
            if let Err(e) = create_private_dir(&d) {
                // A read-only cache can still serve hits; writes degrade later.
                if !d.is_dir() {
                    return Err(format!("cannot create {}: {e}", d.display()));
                }
            }
        }
        for d in [dir.to_path_buf(), root.clone(), root.join("entries")] {
            let meta = fs::metadata(&d).map_err(|e| format!("{}: {e}", d.display()))?;
            if let Some(why) = distrust(&d, &meta, uid) {
                return Err(why);
            }
        }
        Ok(DiskCache {
            root,
            max_bytes,
            uid,
            write_disabled: AtomicBool::new(false),
        })
    }

    /// The versioned root (`<dir>/v1`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Records that nvJitLink `linker` linked entries into this cache, so that a process
    /// with no nvJitLink at all can still compute their keys (strict mode on a deployed
    /// cache). One empty marker file per version: creating it twice is harmless.
    pub fn remember_linker(&self, linker: Version) -> std::io::Result<()> {
        let path = self.root.join("linkers").join(format!("seen-{linker}"));
        if path.exists() {
            return Ok(());
        }
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map(|_| ())
    }

    /// The nvJitLink versions that linked entries here, newest first.
    pub fn linkers_seen(&self) -> Vec<Version> {
        let mut out: Vec<Version> = fs::read_dir(self.root.join("linkers"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let (major, minor) = name.strip_prefix("seen-")?.split_once('.')?;
                Some(Version::new(major.parse().ok()?, minor.parse().ok()?))
            })
            .collect();
        out.sort_by(|a, b| b.cmp(a));
        out.dedup();
        out
    }

    /// The size bound in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    fn entry_path(&self, key: &PlanKey) -> PathBuf {
        let hex = key.to_string();
        self.root
            .join("entries")
            .join(&hex[..2])
            .join(format!("{hex}.cubin"))
    }

    fn stats_path(&self) -> PathBuf {
        self.root.join("stats")
    }

    /// Reads and verifies the entry for `key`; a bad entry is removed and reported.
    pub fn get(&self, key: &PlanKey) -> Lookup {
        let path = self.entry_path(key);
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(_) => return Lookup::Miss,
        };
        match file.metadata() {
            Ok(meta) => {
                if let Some(why) = distrust(&path, &meta, self.uid) {
                    return Lookup::Untrusted(why);
                }
            }
            Err(_) => return Lookup::Miss,
        }
        let mut data = Vec::new();
        if let Err(e) = std::io::Read::read_to_end(&mut file, &mut data) {
            return Lookup::Untrusted(format!("{}: {e}", path.display()));
        }
        match decode_entry(&data, key) {
            Ok(_) => {
                // Refresh the last-used time for LRU eviction (best effort).
                let _ = file.set_modified(SystemTime::now());
                data.drain(..HEADER_SIZE);
                Lookup::Hit(data)
            }
            Err(why) => {
                let _ = fs::remove_file(&path);
                Lookup::Corrupt(format!("{}: {why}", path.display()))
            }
        }
    }

    /// True while writes are possible (false after a write failed: read-only or full disk).
    pub fn writable(&self) -> bool {
        !self.write_disabled.load(Ordering::Relaxed)
    }

    /// Stops writing after a failure; returns true the first time (to warn once).
    pub fn disable_writes(&self) -> bool {
        !self.write_disabled.swap(true, Ordering::Relaxed)
    }

    /// Publishes `cubin` under `key` atomically, then evicts down to the size bound.
    /// Returns the number of entries evicted.
    pub fn put(&self, key: &PlanKey, target: Option<Target>, cubin: &[u8]) -> std::io::Result<u64> {
        let path = self.entry_path(key);
        let dir = path.parent().unwrap_or(&self.root);
        create_private_dir(dir)?;
        let tmp = dir.join(format!(
            ".tmp-{}-{}-{}",
            std::process::id(),
            key.0.short(16),
            unique_suffix()
        ));
        let result = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            let header = encode_header(key, target, cubin);
            file.write_all(&header)?;
            fault_injection_pause();
            file.write_all(cubin)?;
            file.sync_all()?;
            drop(file);
            fault_injection_pause();
            fs::rename(&tmp, &path)?;
            File::open(dir)?.sync_all()
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result?;
        Ok(self.evict_to(self.max_bytes, Some(&path)))
    }

    /// Takes the cross-process lock of `key` (blocks until it is free).
    pub fn lock(&self, key: &PlanKey) -> std::io::Result<File> {
        let path = self.root.join("locks").join(format!("{key}.lock"));
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)?;
        file.lock()?;
        Ok(file)
    }

    /// Every entry, oldest use first.
    pub fn entries(&self) -> Vec<EntryInfo> {
        let mut out: Vec<(SystemTime, EntryInfo)> = Vec::new();
        let Ok(shards) = fs::read_dir(self.root.join("entries")) else {
            return Vec::new();
        };
        for shard in shards.flatten() {
            let Ok(files) = fs::read_dir(shard.path()) else {
                continue;
            };
            for f in files.flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                let Some(key) = name.strip_suffix(".cubin") else {
                    continue;
                };
                let Ok(meta) = f.metadata() else { continue };
                let last_used = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs());
                out.push((
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    EntryInfo {
                        key: key.to_string(),
                        path: f.path(),
                        bytes: meta.len(),
                        last_used,
                    },
                ));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.key.cmp(&b.1.key)));
        out.into_iter().map(|(_, e)| e).collect()
    }

    /// Calls `f` with the key, target and verified cubin of every entry (of `target`
    /// only, when given); entries that fail verification are skipped (a later read
    /// removes them).
    pub fn for_each_cubin(
        &self,
        target: Option<Target>,
        mut f: impl FnMut(PlanKey, Option<Target>, Vec<u8>),
    ) {
        for e in self.entries() {
            let entry_target = entry_target(&e.path);
            if target.is_some() && entry_target != target {
                continue;
            }
            let Ok(key) = e.key.parse::<Digest>() else {
                continue;
            };
            if let Lookup::Hit(cubin) = self.get(&PlanKey(key)) {
                f(PlanKey(key), entry_target, cubin);
            }
        }
    }

    /// Removes least-recently-used entries until the total is at most `max_bytes`
    /// (`keep` is removed last). Returns how many were removed.
    pub fn evict_to(&self, max_bytes: u64, keep: Option<&Path>) -> u64 {
        let mut entries = self.entries();
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        if total <= max_bytes {
            return 0;
        }
        if let Some(keep) = keep {
            if let Some(i) = entries.iter().position(|e| e.path == keep) {
                let e = entries.remove(i);
                entries.push(e);
            }
        }
        let mut evicted = 0;
        for e in entries {
            if total <= max_bytes {
                break;
            }
            if fs::remove_file(&e.path).is_ok() {
                total -= e.bytes;
                evicted += 1;
                tracing::debug!(key = %e.key, bytes = e.bytes, "evicted");
            }
        }
        evicted
    }

    /// Verifies every entry, removing bad ones and stale temporary files.
    pub fn verify_all(&self) -> VerifyReport {
        let mut report = VerifyReport::default();
        for e in self.entries() {
            let Ok(key) = e.key.parse::<Digest>().map(PlanKey) else {
                let _ = fs::remove_file(&e.path);
                report
                    .removed
                    .push((e.key, "file name is not a plan key".into()));
                continue;
            };
            match self.get(&key) {
                Lookup::Hit(_) => report.good += 1,
                Lookup::Miss => {}
                Lookup::Corrupt(why) | Lookup::Untrusted(why) => report.removed.push((e.key, why)),
            }
        }
        report.temp_removed = self.remove_temp_files(STALE_TEMP_AGE);
        report
    }

    /// Removes temporary files older than `age`.
    pub fn remove_temp_files(&self, age: Duration) -> u64 {
        let mut removed = 0;
        let Ok(shards) = fs::read_dir(self.root.join("entries")) else {
            return 0;
        };
        for shard in shards.flatten() {
            let Ok(files) = fs::read_dir(shard.path()) else {
                continue;
            };
            for f in files.flatten() {
                let is_temp = f.file_name().to_string_lossy().starts_with(".tmp-");
                let old = f
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|d| d >= age);
                if is_temp && old && fs::remove_file(f.path()).is_ok() {
                    removed += 1;
                }
            }
        }
        removed
    }

    /// Removes every entry, lock file and temporary file (keeps the counters).
    pub fn clear(&self) -> std::io::Result<u64> {
        let n = self.entries().len() as u64;
        for sub in ["entries", "locks"] {
            let d = self.root.join(sub);
            if d.exists() {
                fs::remove_dir_all(&d)?;
            }
            create_private_dir(&d)?;
        }
        Ok(n)
    }

    /// Adds to the persisted counters (best effort: a failure is logged, not raised).
    pub fn record(&self, delta: Stats) {
        if !self.writable() {
            return;
        }
        if let Err(e) = stats::persist_add(&self.stats_path(), delta) {
            tracing::debug!("cannot persist cache counters: {e}");
        }
    }

    /// The persisted counters.
    pub fn persisted_stats(&self) -> Stats {
        stats::persisted(&self.stats_path())
    }
}

/// Packs a target into the entry header's target field: bit 31 set, variant in bits
/// 16–17 (0 base, 1 `f`, 2 `a`), architecture number in bits 0–15.
pub fn encode_target(target: Option<Target>) -> u32 {
    match target {
        None => 0,
        Some(t) => {
            let variant = match t.variant {
                Variant::Base => 0,
                Variant::Family => 1,
                Variant::Specific => 2,
            };
            0x8000_0000 | (variant << 16) | (t.number() & 0xffff)
        }
    }
}

/// Unpacks [`encode_target`].
pub fn decode_target(code: u32) -> Option<Target> {
    if code & 0x8000_0000 == 0 {
        return None;
    }
    let variant = match (code >> 16) & 3 {
        0 => Variant::Base,
        1 => Variant::Family,
        2 => Variant::Specific,
        _ => return None,
    };
    Target::from_number(CodeKind::Sass, code & 0xffff, variant).ok()
}

/// The target recorded in an entry file's header, if any.
pub fn entry_target(path: &Path) -> Option<Target> {
    let mut head = [0u8; 16];
    std::io::Read::read_exact(&mut File::open(path).ok()?, &mut head).ok()?;
    if &head[..8] != ENTRY_MAGIC {
        return None;
    }
    decode_target(u32::from_le_bytes([head[12], head[13], head[14], head[15]]))
}

/// A whole self-checking entry (header and cubin), as the disk stores it and the remote
/// level ships it.
#[cfg_attr(not(feature = "remote"), allow(dead_code))]
pub(crate) fn encode_entry(key: &PlanKey, target: Option<Target>, cubin: &[u8]) -> Vec<u8> {
    let mut entry = encode_header(key, target, cubin);
    entry.extend_from_slice(cubin);
    entry
}

/// The cubin of an entry made by [`encode_entry`], after checking it is whole, for `key`
/// and matches its digest.
#[cfg_attr(not(feature = "remote"), allow(dead_code))]
pub(crate) fn entry_payload<'a>(data: &'a [u8], key: &PlanKey) -> Result<&'a [u8], String> {
    decode_entry(data, key).map(|_| &data[HEADER_SIZE..])
}

fn encode_header(key: &PlanKey, target: Option<Target>, cubin: &[u8]) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_SIZE);
    h.extend_from_slice(ENTRY_MAGIC);
    h.extend_from_slice(&ENTRY_FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&encode_target(target).to_le_bytes());
    h.extend_from_slice(key.0.as_bytes());
    h.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    h.extend_from_slice(Digest::of(cubin).as_bytes());
    h
}

/// Checks an entry file; returns the payload length.
fn decode_entry(data: &[u8], key: &PlanKey) -> Result<usize, String> {
    if data.len() < HEADER_SIZE || &data[..8] != ENTRY_MAGIC {
        return Err(format!(
            "truncated or not an ltokit cache entry ({} bytes)",
            data.len()
        ));
    }
    let version = u32::from_le_bytes(data[8..12].try_into().unwrap_or([0; 4]));
    if version != ENTRY_FORMAT_VERSION {
        return Err(format!(
            "entry format version {version}, expected {ENTRY_FORMAT_VERSION}"
        ));
    }
    if data[16..48] != key.0.as_bytes()[..] {
        return Err("the entry holds another key".into());
    }
    let len = u64::from_le_bytes(data[48..56].try_into().unwrap_or([0; 8]));
    if len != (data.len() - HEADER_SIZE) as u64 {
        return Err(format!(
            "payload is {} bytes, header says {len} (truncated)",
            data.len() - HEADER_SIZE
        ));
    }
    if data[56..88] != Digest::of(&data[HEADER_SIZE..]).as_bytes()[..] {
        return Err("payload digest mismatch (corrupt)".into());
    }
    Ok(len as usize)
}

fn unique_suffix() -> u64 {
    use std::sync::atomic::AtomicU64;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    (nanos << 16) ^ COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// Test hook: `LTOKIT_FAULT_PUBLISH_PAUSE_MS` pauses inside a publish, so that tests can
/// kill a writer half-way and check that readers never see a torn entry.
fn fault_injection_pause() {
    if let Some(ms) = std::env::var("LTOKIT_FAULT_PUBLISH_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(Duration::from_millis(ms));
    }
}
