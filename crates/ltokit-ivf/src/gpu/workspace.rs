//! Device buffers reused across searches: grown when a call needs more, never shrunk, and
//! never zero-filled (every kernel writes what it later reads).

use std::sync::atomic::{AtomicU64, Ordering};

use ltokit::graph::Recording;
use ltokit::launch::{CudaSlice, DeviceElem, Gpu};
use ltokit::pinned::PinnedStaging;
use ltokit::{Error, Result};

use super::replay::Replays;

/// Reallocations of any [`Buffer`] in this process: a recorded search's buffers are where
/// it recorded them only while this count stays the same (`replay`).
static GROWTHS: AtomicU64 = AtomicU64::new(0);

/// How many times a [`Buffer`] has moved to a larger allocation so far.
pub(crate) fn growths() -> u64 {
    GROWTHS.load(Ordering::Acquire)
}

/// One grow-only device buffer.
pub(crate) struct Buffer<T: DeviceElem>(Option<CudaSlice<T>>);

impl<T: DeviceElem> Default for Buffer<T> {
    fn default() -> Self {
        Buffer(None)
    }
}

impl<T: DeviceElem> Buffer<T> {
    /// The buffer, at least `len` elements long.
    pub(crate) fn at_least(&mut self, gpu: &Gpu, len: usize) -> Result<&mut CudaSlice<T>> {
        let len = len.max(1);
        if self.0.as_ref().is_none_or(|b| b.len() < len) {
            // Not while recording, and asked before the old buffer goes: its free would be
            // recorded too (`replay` records only calls whose buffers are there).
            gpu.refuse_while_recording("growing a workspace buffer to", len, size_of::<T>())?;
            // Counted before the old buffer goes, so that no recording of it is replayed.
            GROWTHS.fetch_add(1, Ordering::AcqRel);
            self.0 = None; // free before allocating the larger one
            self.0 = Some(gpu.alloc::<T>(len)?);
        }
        self.0
            .as_mut()
            .ok_or_else(|| Error::Driver(format!("no device buffer of {len} elements")))
    }
}

/// Everything a search needs besides the index and the caller's buffers.
#[derive(Default)]
pub(crate) struct Workspace {
    /// Candidates of one scan batch: distances and ids, `batch × n_probes × k`.
    pub(crate) cand_d: Buffer<f32>,
    pub(crate) cand_i: Buffer<i64>,
    /// The probes of one batch, `batch × n_probes`.
    pub(crate) probes: Buffer<i64>,
    /// 1 + the first query with a non-finite value, or 0 (written by the coarse search).
    pub(crate) bad_query: Buffer<i32>,
    /// The filter words of the last call with no filter (one zero word).
    pub(crate) no_filter: Buffer<u32>,
    /// The list-major scan's grouping of pairs by list.
    pub(crate) groups: super::list_major::PairGroups,
    /// The last few distinct searches' keys and recordings, for identical calls (`replay`).
    pub(crate) replays: Replays<Recording>,
}

/// The host API's staging: the queries as uploaded and the results before download, on
/// the device and in pinned host memory.
pub(crate) struct HostStaging {
    /// The queries, in their stored bytes.
    pub(crate) queries: Buffer<u8>,
    /// Results.
    pub(crate) out_d: Buffer<f32>,
    pub(crate) out_i: Buffer<i64>,
    /// The queries on their way up.
    pub(crate) queries_host: PinnedStaging<u8>,
    /// The results and the non-finite query flag on their way down.
    pub(crate) out_d_host: PinnedStaging<f32>,
    pub(crate) out_i_host: PinnedStaging<i64>,
    pub(crate) bad_host: PinnedStaging<i32>,
}

impl Default for HostStaging {
    fn default() -> Self {
        HostStaging {
            queries: Buffer::default(),
            out_d: Buffer::default(),
            out_i: Buffer::default(),
            queries_host: PinnedStaging::for_uploads(),
            out_d_host: PinnedStaging::for_downloads(),
            out_i_host: PinnedStaging::for_downloads(),
            bad_host: PinnedStaging::for_downloads(),
        }
    }
}
