//! Warm-up: link many plans in parallel into the disk cache.

use std::time::{Duration, Instant};

use super::{KernelCache, Level, Loader};
use crate::bundle::PlansFor;
use crate::plan::SkippedPlan;

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
    /// Plans the target cannot run, not linked, with what it lacks.
    pub skipped: Vec<SkippedPlan>,
    /// Wall time.
    pub elapsed: Duration,
}

/// Links every plan of `plans` not yet cached, `jobs` at a time (0 = one per core),
/// calling `progress` after each plan; the plans its target cannot run are listed in the
/// report, not linked. Failures are collected, not fatal.
pub fn warmup<L: Loader>(
    cache: &KernelCache<L>,
    plans: &PlansFor,
    jobs: usize,
    progress: &(dyn Fn(&WarmupEvent) + Sync),
) -> WarmupReport {
    let started = Instant::now();
    let outcomes = crate::parallel::map(&plans.plans, jobs, |plan| {
        let event = WarmupEvent {
            plan: plan.name().to_string(),
            outcome: cache
                .cubin(plan)
                .map(|(_, level)| level)
                .map_err(|e| e.to_string()),
        };
        progress(&event);
        event
    });
    let mut report = WarmupReport {
        skipped: plans.skipped.clone(),
        ..WarmupReport::default()
    };
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
