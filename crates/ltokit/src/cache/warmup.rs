//! Warm-up: link many plans in parallel into the disk cache.

use std::time::{Duration, Instant};

use super::{KernelCache, Level, Loader};
use crate::plan::Plan;

/// What happened to one plan.
#[derive(Debug, Clone)]
pub struct WarmupEvent {
    /// The plan's name.
    pub plan: String,
    /// Where its cubin came from (`Link` when it was linked now), or the error.
    pub outcome: Result<Level, String>,
}

/// The result of a warm-up.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct WarmupReport {
    /// Plans linked now.
    pub linked: usize,
    /// Plans already in the disk cache.
    pub cached: usize,
    /// Plans that failed, with their errors.
    pub failed: Vec<(String, String)>,
    /// Wall time.
    pub elapsed: Duration,
}

/// Links every plan not yet cached, `jobs` at a time (0 = one per core), calling
/// `progress` after each plan. Failures are collected, not fatal.
pub fn warmup<L: Loader>(
    cache: &KernelCache<L>,
    plans: &[Plan],
    jobs: usize,
    progress: &(dyn Fn(&WarmupEvent) + Sync),
) -> WarmupReport {
    let started = Instant::now();
    let outcomes = crate::parallel::map(plans, jobs, |plan| {
        let event = WarmupEvent {
            plan: plan.name.clone(),
            outcome: cache
                .cubin(plan)
                .map(|(_, level)| level)
                .map_err(|e| e.to_string()),
        };
        progress(&event);
        event
    });
    let mut report = WarmupReport::default();
    for event in outcomes {
        match event.outcome {
            Ok(Level::Link) => report.linked += 1,
            Ok(_) => report.cached += 1,
            Err(e) => report.failed.push((event.plan, e)),
        }
    }
    report.elapsed = started.elapsed();
    report
}
