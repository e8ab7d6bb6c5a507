//! Repeated searches replayed as one recorded launch ([`ltokit::graph`]).
//!
//! A device-resident search of the same shape into the same buffers — a service answering
//! batch after batch, a benchmark — runs the same dozen launches with the same arguments
//! each time. The second such call is recorded instead of launched one kernel at a time,
//! and the calls after it replay the recording: one launch, none of the host's work of
//! choosing and checking the kernels, no gaps between them on the GPU. The recorded
//! arguments are device addresses, so a replay searches whatever the query buffer holds
//! then. An index keeps the last few distinct calls ([`KEPT_CALLS`]), so a caller that
//! cycles through a few buffers replays each.
//!
//! A recording is only valid while every buffer it points at stays where it was: the
//! caller's (their addresses and lengths are part of [`CallKey`]) and the workspace's and
//! coarse scratch's, which move only when they grow — every growth counts in
//! [`super::workspace::growths`], and a recording made before the count changed is
//! dropped, not replayed. Filters (uploaded per call) and profiled searches (which wait
//! after each stage) are never recorded.

use super::list_major::{ListMajorChoice, ScanPath, TileArith};

/// Everything besides the index that decides a search's launches and their arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallKey {
    /// The engine ([`super::IvfGpu`]'s id): its kernels and scratch buffers.
    pub engine: u64,
    /// Device address and length of the queries, the output ids and the distances.
    pub queries: (u64, usize),
    pub out_ids: (u64, usize),
    pub out_distances: (u64, usize),
    pub k: usize,
    pub n_probes: usize,
    /// The index's scan path and the engine's tile and list-major settings.
    pub path: ScanPath,
    pub tile_arith: TileArith,
    pub list_major: ListMajorChoice,
}

/// How many calls' keys (and recordings) an index keeps: a caller cycling through a few
/// buffers — a batch loop over slices of one query buffer — replays each of them.
pub(crate) const KEPT_CALLS: usize = 16;

/// The last [`KEPT_CALLS`] distinct calls: each one's key, the buffer growths counted when
/// it last ran, and from its second run on its recording (`R`:
/// [`ltokit::graph::Recording`] on the GPU). Most recent first.
pub(crate) struct Replays<R> {
    calls: Vec<Call<R>>,
}

struct Call<R> {
    key: CallKey,
    growths: u64,
    recording: Option<R>,
    /// Its recording failed once: it runs unrecorded from then on.
    refused: bool,
}

impl<R> Default for Replays<R> {
    fn default() -> Self {
        Replays { calls: Vec::new() }
    }
}

impl<R> Replays<R> {
    /// The recording of a call with `key`, if there is one and no buffer has grown since it
    /// was made (`growths` is the count now). A call that buffers have moved under is
    /// forgotten, its recording dropped.
    pub(crate) fn recording(&mut self, key: &CallKey, growths: u64) -> Option<&mut R> {
        let at = self.calls.iter().position(|c| c.key == *key)?;
        if self.calls[at].growths != growths {
            self.calls.remove(at);
            return None;
        }
        // A call replayed is the most recent: the last to go.
        self.calls[..=at].rotate_right(1);
        self.calls[0].recording.as_mut()
    }

    /// Whether a call with `key` should be recorded: it ran before, unrecorded, and no
    /// buffer has grown since — so this run will find every buffer it needs allocated.
    pub(crate) fn should_record(&self, key: &CallKey, growths: u64) -> bool {
        self.calls
            .iter()
            .any(|c| c.key == *key && c.growths == growths && c.recording.is_none() && !c.refused)
    }

    /// Notes that recording a call with `key` failed: it is not tried again (a call that
    /// cannot be recorded would otherwise pay for the attempt every time).
    pub(crate) fn refuse(&mut self, key: &CallKey) {
        if let Some(c) = self.calls.iter_mut().find(|c| c.key == *key) {
            c.refused = true;
        }
    }

    /// Notes the call that just ended: its key, the growths counted after it, and its
    /// recording if it was recorded. The least recent call beyond [`KEPT_CALLS`] goes.
    pub(crate) fn remember(&mut self, key: CallKey, growths: u64, recording: Option<R>) {
        let refused = self.calls.iter().any(|c| c.key == key && c.refused);
        self.calls.retain(|c| c.key != key);
        self.calls.insert(
            0,
            Call {
                key,
                growths,
                recording,
                refused,
            },
        );
        self.calls.truncate(KEPT_CALLS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: usize) -> CallKey {
        CallKey {
            engine: 1,
            queries: (0x1000, 1280),
            out_ids: (0x2000, 100),
            out_distances: (0x3000, 100),
            k,
            n_probes: 20,
            path: ScanPath::Auto,
            tile_arith: TileArith::default(),
            list_major: ListMajorChoice::default(),
        }
    }

    #[test]
    fn the_second_identical_call_records_and_the_third_replays() {
        let mut r: Replays<&str> = Replays::default();
        assert!(
            !r.should_record(&key(10), 7),
            "a first call is never recorded"
        );
        assert!(r.recording(&key(10), 7).is_none());
        r.remember(key(10), 7, None);
        assert!(r.should_record(&key(10), 7));
        assert!(!r.should_record(&key(11), 7), "another k is another call");
        r.remember(key(10), 7, Some("graph"));
        assert!(!r.should_record(&key(10), 7), "recorded once is enough");
        assert_eq!(r.recording(&key(10), 7).copied(), Some("graph"));
        assert!(r.recording(&key(11), 7).is_none());
    }

    #[test]
    fn a_buffer_that_grew_drops_the_recording_and_delays_the_next() {
        let mut r: Replays<&str> = Replays::default();
        r.remember(key(10), 7, None);
        assert!(
            !r.should_record(&key(10), 8),
            "buffers grew since: record later"
        );
        r.remember(key(10), 8, Some("graph"));
        assert!(
            r.recording(&key(10), 9).is_none(),
            "moved buffers: no replay"
        );
        assert!(
            r.recording(&key(10), 8).is_none(),
            "the stale recording is gone for good"
        );
        assert!(
            !r.should_record(&key(10), 9),
            "and the call must run again first"
        );
    }

    #[test]
    fn a_call_whose_recording_failed_is_not_recorded_again() {
        let mut r: Replays<&str> = Replays::default();
        r.remember(key(10), 7, None);
        assert!(r.should_record(&key(10), 7));
        r.refuse(&key(10));
        r.remember(key(10), 7, None);
        assert!(!r.should_record(&key(10), 7));
        assert!(r.recording(&key(10), 7).is_none());
    }

    #[test]
    fn calls_cycling_through_a_few_buffers_each_replay() {
        let mut r: Replays<u32> = Replays::default();
        let slice = |i: u64| CallKey {
            queries: (0x1000 + i * 0x100, 128),
            ..key(10)
        };
        for i in 0..KEPT_CALLS as u64 {
            r.remember(slice(i), 7, None);
        }
        for i in 0..KEPT_CALLS as u64 {
            assert!(r.should_record(&slice(i), 7), "slice {i}");
            r.remember(slice(i), 7, Some(i as u32));
        }
        for i in 0..KEPT_CALLS as u64 {
            assert_eq!(r.recording(&slice(i), 7).copied(), Some(i as u32));
        }
        // One more distinct call pushes out the least recent.
        r.remember(slice(99), 7, None);
        assert_eq!(r.calls.len(), KEPT_CALLS);
        assert!(r.recording(&slice(0), 7).is_none());
        assert_eq!(r.recording(&slice(1), 7).copied(), Some(1));
        // A replay makes its call the most recent: slice 1 (replayed just now) stays when
        // the next distinct call comes, slice 2 goes.
        r.remember(slice(100), 7, None);
        assert_eq!(r.recording(&slice(1), 7).copied(), Some(1));
        assert!(r.recording(&slice(2), 7).is_none());
    }
}
