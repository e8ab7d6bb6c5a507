//! Cache counters: in-process atomics, and the subset persisted per cache directory.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of the counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// In-process hits.
    pub l1_hits: u64,
    /// In-process misses.
    pub l1_misses: u64,
    /// Disk-cache hits.
    pub l2_hits: u64,
    /// Disk-cache misses.
    pub l2_misses: u64,
    /// Links performed.
    pub links: u64,
    /// Links that failed.
    pub link_failures: u64,
    /// Total link time in nanoseconds.
    pub link_nanos: u64,
    /// Cubin bytes read from disk.
    pub bytes_read: u64,
    /// Cubin bytes written to disk.
    pub bytes_written: u64,
    /// Entries evicted to respect the size bound.
    pub evictions: u64,
    /// Corrupt or truncated entries found (and removed).
    pub corrupt: u64,
    /// Requests served by a prebuilt provider.
    pub provider_hits: u64,
    /// Remote-level (Redis) hits.
    #[serde(default)]
    pub remote_hits: u64,
    /// Remote-level misses.
    #[serde(default)]
    pub remote_misses: u64,
    /// Remote entries refused: unsigned, wrongly signed, truncated or corrupt.
    #[serde(default)]
    pub remote_refused: u64,
    /// Remote operations that failed or timed out, and requests that skipped the level
    /// while it backed off.
    #[serde(default)]
    pub remote_errors: u64,
    /// Cubins written to the remote level.
    #[serde(default)]
    pub remote_writes: u64,
}

const FIELDS: usize = 17;
/// Position of `l1_hits` in the array form.
const L1_HITS: usize = 0;

impl Stats {
    fn to_array(self) -> [u64; FIELDS] {
        [
            self.l1_hits,
            self.l1_misses,
            self.l2_hits,
            self.l2_misses,
            self.links,
            self.link_failures,
            self.link_nanos,
            self.bytes_read,
            self.bytes_written,
            self.evictions,
            self.corrupt,
            self.provider_hits,
            self.remote_hits,
            self.remote_misses,
            self.remote_refused,
            self.remote_errors,
            self.remote_writes,
        ]
    }

    fn from_array(a: [u64; FIELDS]) -> Self {
        Stats {
            l1_hits: a[L1_HITS],
            l1_misses: a[1],
            l2_hits: a[2],
            l2_misses: a[3],
            links: a[4],
            link_failures: a[5],
            link_nanos: a[6],
            bytes_read: a[7],
            bytes_written: a[8],
            evictions: a[9],
            corrupt: a[10],
            provider_hits: a[11],
            remote_hits: a[12],
            remote_misses: a[13],
            remote_refused: a[14],
            remote_errors: a[15],
            remote_writes: a[16],
        }
    }
}

/// Live counters of one cache in one process.
#[derive(Debug, Default)]
pub(crate) struct Counters([AtomicU64; FIELDS]);

impl Counters {
    /// Adds a delta.
    pub fn add(&self, delta: Stats) {
        for (cell, v) in self.0.iter().zip(delta.to_array()) {
            if v != 0 {
                cell.fetch_add(v, Ordering::Relaxed);
            }
        }
    }

    /// Counts one L1 hit (the hot path: one atomic add).
    pub fn add_l1_hit(&self) {
        self.0[L1_HITS].fetch_add(1, Ordering::Relaxed);
    }

    /// The current values.
    pub fn snapshot(&self) -> Stats {
        let mut a = [0u64; FIELDS];
        for (out, cell) in a.iter_mut().zip(&self.0) {
            *out = cell.load(Ordering::Relaxed);
        }
        Stats::from_array(a)
    }
}

const STATS_MAGIC: &[u8; 8] = b"LTOKSTAT";

/// Adds `delta` to the counters persisted in `path`, under an exclusive file lock so
/// that concurrent processes never lose an update. A corrupt file starts again at zero.
pub fn persist_add(path: &Path, delta: Stats) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    file.lock()?;
    let mut current = read_locked(&mut file);
    for (c, d) in current.iter_mut().zip(delta.to_array()) {
        *c = c.wrapping_add(d);
    }
    let mut buf = Vec::with_capacity(8 + 8 * FIELDS);
    buf.extend_from_slice(STATS_MAGIC);
    for v in current {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&buf)?;
    file.set_len(buf.len() as u64)?;
    file.unlock()
}

/// Reads the persisted counters (zero when absent).
pub fn persisted(path: &Path) -> Stats {
    match std::fs::File::open(path) {
        Ok(mut file) => {
            let _ = file.lock_shared();
            Stats::from_array(read_locked(&mut file))
        }
        Err(_) => Stats::default(),
    }
}

fn read_locked(file: &mut std::fs::File) -> [u64; FIELDS] {
    let mut buf = Vec::new();
    let mut out = [0u64; FIELDS];
    if file.seek(SeekFrom::Start(0)).is_err() || file.read_to_end(&mut buf).is_err() {
        return out;
    }
    if buf.len() < 8 || &buf[..8] != STATS_MAGIC {
        return out;
    }
    for (i, chunk) in buf[8..].chunks_exact(8).take(FIELDS).enumerate() {
        out[i] = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
    }
    out
}
