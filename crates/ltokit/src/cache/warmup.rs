//! Warm-up: link many plans in parallel into the disk cache.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
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
    let jobs = if jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        jobs
    };
    let next = AtomicUsize::new(0);
    let report = Mutex::new(WarmupReport::default());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(plans.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(plan) = plans.get(i) else { break };
                let outcome = cache
                    .cubin(plan)
                    .map(|(_, level)| level)
                    .map_err(|e| e.to_string());
                let event = WarmupEvent {
                    plan: plan.name.clone(),
                    outcome,
                };
                {
                    let mut r = report.lock().unwrap_or_else(|p| p.into_inner());
                    match &event.outcome {
                        Ok(Level::Link) => r.linked += 1,
                        Ok(_) => r.cached += 1,
                        Err(e) => r.failed.push((plan.name.clone(), e.clone())),
                    }
                }
                progress(&event);
            });
        }
    });
    let mut report = report.into_inner().unwrap_or_else(|p| p.into_inner());
    report.elapsed = started.elapsed();
    report
}
