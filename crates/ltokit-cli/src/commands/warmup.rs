//! `ltokit warmup`: link every plan of a bundle for one target into the disk cache.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use ltokit::bundle::Bundle;
use ltokit::cache::{warmup, KernelCache};

use super::cache::CacheArgs;
use super::parse_target;

/// What to warm and how.
pub struct Options {
    /// Parallel links (0 = one per core).
    pub jobs: usize,
    /// A file naming the plans to warm (all when `None`).
    pub plans: Option<PathBuf>,
    /// Publish to the remote level too.
    pub remote: bool,
    /// Print JSON.
    pub json: bool,
}

/// Warms the cache with the plans of `bundle` for `arch`.
pub fn run(
    bundle: &Path,
    arch: &str,
    options: Options,
    cache: &CacheArgs,
) -> anyhow::Result<ExitCode> {
    let Options {
        jobs,
        plans,
        remote,
        json,
    } = options;
    let target = parse_target(arch)?;
    let bundle = Bundle::open(bundle)?;
    let plans = match plans {
        None => bundle.plans(target)?,
        Some(file) => bundle.plans_of(&super::read_plan_list(&file)?, target)?,
    };
    let config = cache.config()?;
    if remote {
        super::remote::writable(&config)?;
    }
    anyhow::ensure!(
        config.dir.is_some(),
        "warm-up fills the disk cache, which is off; pass --cache-dir DIR"
    );
    let cache = KernelCache::new(config);
    anyhow::ensure!(
        cache.disk().is_some(),
        "the disk cache cannot be used (see the warning above)"
    );
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(plans.plans.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let report = warmup::warmup(&cache, &plans, jobs, &|event| {
        bar.inc(1);
        bar.set_message(event.plan.clone());
    });
    bar.finish_and_clear();
    let per_second = plans.plans.len() as f64 / report.elapsed.as_secs_f64().max(1e-9);
    // Plans that were already on this node's disk are not in the remote store yet.
    let pushed = match (remote, cache.disk()) {
        (true, Some(disk)) => Some(super::cache::push(disk, cache.config(), Some(target))?),
        _ => None,
    };
    if json {
        let value = serde_json::json!({
            "bundle": bundle.label(), "target": target.to_string(), "plans": plans.plans.len(),
            "linked": report.linked, "cached": report.cached, "failed": report.failed,
            "skipped": report.skipped, "links": cache.stats().links,
            "remote_pushed": pushed.map(|(n, _)| n), "remote_push_failed": pushed.map(|(_, f)| f),
            "seconds": report.elapsed.as_secs_f64(), "plans_per_second": per_second,
        });
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        outln!(
            "{} plans for {target}: {} linked, {} already cached, {} failed in {:.2} s ({per_second:.1} plans/s)",
            plans.plans.len(),
            report.linked,
            report.cached,
            report.failed.len(),
            report.elapsed.as_secs_f64()
        );
        for s in &report.skipped {
            outln!("skipped {}: {} (target {target})", s.plan, s.why);
        }
        for (plan, error) in &report.failed {
            eprintln!("failed: {plan}: {error}");
        }
    }
    Ok(if report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
