//! Where a search's time goes: with profiling on, the engine waits for the GPU after
//! each stage (coarse search, grouping by list for the list-major scan, scan, merge)
//! and adds the stage's wall time to its counters. Off by default: then a stage
//! boundary costs one atomic load. The waits
//! serialise the stages, so profiled searches are a little slower than unprofiled ones;
//! the split is what they are for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use ltokit::launch::Gpu;
use ltokit::Result;

/// Seconds spent in each stage since profiling was switched on.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct StageTimes {
    /// Coarse search (centres × queries, top `n_probes`).
    pub coarse_s: f64,
    /// Grouping of (query, probe) pairs by list (list-major scan only).
    pub group_s: f64,
    /// Scan of the probed lists with the fused top-k.
    pub scan_s: f64,
    /// Merge of each query's candidates.
    pub merge_s: f64,
    /// Batches timed.
    pub batches: u64,
}

/// A stage of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Coarse,
    Group,
    Scan,
    Merge,
}

/// The engine's stage clock.
#[derive(Default)]
pub(crate) struct Profiler {
    on: AtomicBool,
    state: Mutex<(StageTimes, Option<Instant>)>,
}

impl Profiler {
    /// Switches profiling on (counters reset) or off.
    pub fn set(&self, on: bool) {
        *self.state.lock() = (StageTimes::default(), None);
        self.on.store(on, Ordering::Relaxed);
    }

    /// Whether profiling is on.
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// The counters so far.
    pub fn times(&self) -> StageTimes {
        self.state.lock().0
    }

    /// Marks the start of a batch (after waiting for earlier work).
    pub fn begin(&self, gpu: &Gpu) -> Result<()> {
        if !self.on.load(Ordering::Relaxed) {
            return Ok(());
        }
        gpu.synchronize()?;
        let mut state = self.state.lock();
        state.1 = Some(Instant::now());
        state.0.batches += 1;
        Ok(())
    }

    /// Waits for `stage` to finish and adds its time.
    pub fn lap(&self, gpu: &Gpu, stage: Stage) -> Result<()> {
        if !self.on.load(Ordering::Relaxed) {
            return Ok(());
        }
        gpu.synchronize()?;
        let now = Instant::now();
        let mut state = self.state.lock();
        let seconds = state.1.map_or(0.0, |t| (now - t).as_secs_f64());
        let times = &mut state.0;
        match stage {
            Stage::Coarse => times.coarse_s += seconds,
            Stage::Group => times.group_s += seconds,
            Stage::Scan => times.scan_s += seconds,
            Stage::Merge => times.merge_s += seconds,
        }
        state.1 = Some(now);
        Ok(())
    }
}
