//! `ltokit bench cache`: what one request costs at each cache level, in this process.
//!
//! Run it in fresh processes to measure a fresh process's path (scripts/gpu-bench-cache.sh
//! does): context creation is timed on its own, then the request for one plan until its
//! kernel is ready to launch, then L1 hits. `--cold` also times loading nvJitLink and a
//! first link of another plan (nvJitLink's start-up) before the request.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use ltokit::bundle::Bundle;
use ltokit::cache::{KernelCache, Loader, PlanHandle};
use ltokit::launch;
use ltokit::launch::{Gpu, ModuleLoader};
use ltokit::plan::Plan;
use ltokit::toolkit::nvjitlink::NvJitLink;
use ltokit_demo as demo;

use super::cache::CacheArgs;
use super::parse_target;

#[derive(serde::Serialize, Default)]
struct Report {
    plan: String,
    target: String,
    gpu: Option<String>,
    context_ms: Option<f64>,
    linker_load_ms: Option<f64>,
    first_link_other_plan_ms: Option<f64>,
    level: String,
    request_to_ready_ms: f64,
    nvjitlink_loaded: bool,
    l1_hit_median_us: f64,
    l1_hit_p95_us: f64,
    /// Mean of `iters` L1 hits through `KernelCache::get(&plan)`, timed as one batch.
    l1_hit_mean_ns: f64,
    /// The same through a `PlanHandle` (key computed once).
    l1_handle_hit_mean_ns: f64,
    check_mismatches: Option<usize>,
    check_max_rel_error: Option<f32>,
}

/// Times `iters` L1 hits one by one (into `per_call`, µs) and as two batches, through
/// the plan and through a `PlanHandle` (means in ns, into `report`).
fn time_l1_hits<L: Loader>(
    cache: &KernelCache<L>,
    plan: &Plan,
    iters: usize,
    per_call: &mut Vec<f64>,
    report: &mut Report,
) -> anyhow::Result<()> {
    for _ in 0..iters {
        let t = Instant::now();
        std::hint::black_box(cache.get(plan)?);
        per_call.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let n = iters.max(1) as f64;
    let t = Instant::now();
    for _ in 0..iters {
        std::hint::black_box(cache.get(std::hint::black_box(plan))?);
    }
    report.l1_hit_mean_ns = t.elapsed().as_secs_f64() * 1e9 / n;
    let handle = PlanHandle::new(plan.clone());
    let t = Instant::now();
    for _ in 0..iters {
        std::hint::black_box(cache.get_handle(std::hint::black_box(&handle))?);
    }
    report.l1_handle_hit_mean_ns = t.elapsed().as_secs_f64() * 1e9 / n;
    Ok(())
}

fn nvjitlink_mapped() -> bool {
    std::fs::read_to_string("/proc/self/maps").is_ok_and(|m| m.contains("libnvJitLink"))
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// The demo variant a plan was built from, from its fragment names.
fn demo_variant(plan: &Plan) -> Option<(f32, demo::Combine)> {
    let mut scale = None;
    let mut combine = None;
    for input in plan.inputs() {
        if let Some(x) = input.name.strip_prefix("transform_x") {
            scale = x.parse::<f32>().ok();
        }
        combine = match input.name.as_str() {
            "combine_square" => Some(demo::Combine::Square),
            "combine_abs" => Some(demo::Combine::Abs),
            "combine_max" => Some(demo::Combine::Max),
            _ => combine,
        };
    }
    Some((scale?, combine?))
}

/// Arguments of `ltokit bench cache`.
#[derive(clap::Args, Debug)]
pub struct CacheBenchArgs {
    /// The bundle.
    #[arg(long)]
    bundle: PathBuf,
    /// The plan to request.
    #[arg(long)]
    plan: String,
    /// Target: sm_XY[a|f] or native.
    #[arg(long, default_value = "native")]
    arch: String,
    /// L1 hits to time.
    #[arg(long, default_value_t = 1000)]
    iters: usize,
    /// Also time loading nvJitLink and a first link of another plan.
    #[arg(long)]
    cold: bool,
    /// Launch the kernel and compare with the CPU reference (demo bundle).
    #[arg(long)]
    check: bool,
    /// Print one JSON line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    cache: CacheArgs,
}

/// Measures one request for a plan of a bundle.
pub fn run(args: &CacheBenchArgs) -> anyhow::Result<ExitCode> {
    let CacheBenchArgs {
        bundle,
        plan: plan_name,
        arch,
        iters,
        cold,
        check,
        json,
        cache: cache_args,
    } = args;
    let (iters, cold, check, json) = (*iters, *cold, *check, *json);
    let target = parse_target(arch)?;
    let bundle = Bundle::open(bundle)?;
    let plan = bundle.plan(plan_name, target)?;
    let mut report = Report {
        plan: plan.name().to_string(),
        target: target.to_string(),
        ..Report::default()
    };
    let config = cache_args.config()?;

    let gpu = if launch::driver_available() {
        let started = Instant::now();
        let gpu = Arc::new(Gpu::open(0)?);
        report.context_ms = Some(ms(started));
        report.gpu = Some(gpu.name().to_string());
        Some(gpu)
    } else {
        None
    };
    if cold {
        let started = Instant::now();
        NvJitLink::get()?;
        report.linker_load_ms = Some(ms(started));
        if let Some(other) = bundle
            .plans(target)?
            .plans
            .into_iter()
            .find(|p| p.name() != plan.name())
        {
            let started = Instant::now();
            other.link()?;
            report.first_link_other_plan_ms = Some(ms(started));
        }
    }

    let mut l1 = Vec::with_capacity(iters);
    match &gpu {
        Some(gpu) => {
            anyhow::ensure!(
                plan.kernel() == demo::KERNEL,
                "bench cache knows the parameters of {} only",
                demo::KERNEL
            );
            let cache = KernelCache::with_loader(config, ModuleLoader::new(Arc::clone(gpu)));
            let started = Instant::now();
            let (module, level) = cache.get_traced(&plan)?;
            let kernel = module.kernel(plan.kernel(), demo::SIGNATURE)?;
            report.request_to_ready_ms = ms(started);
            report.level = format!("{level:?}").to_lowercase();
            report.nvjitlink_loaded = nvjitlink_mapped();
            time_l1_hits(&cache, &plan, iters, &mut l1, &mut report)?;
            if check {
                let (scale, combine) = demo_variant(&plan).ok_or_else(|| {
                    anyhow::anyhow!("{} is not a plan of the demo bundle", plan.name())
                })?;
                let seed = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(7, |d| d.as_nanos() as u64);
                let result = demo::check_kernel(gpu, &kernel, 1 << 20, seed, scale, combine)?;
                report.check_mismatches = Some(result.mismatches);
                report.check_max_rel_error = Some(result.max_rel_error);
            }
        }
        None => {
            let cache = KernelCache::new(config);
            let started = Instant::now();
            let (_, level) = cache.get_traced(&plan)?;
            report.request_to_ready_ms = ms(started);
            report.level = format!("{level:?}").to_lowercase();
            report.nvjitlink_loaded = nvjitlink_mapped();
            time_l1_hits(&cache, &plan, iters, &mut l1, &mut report)?;
        }
    }
    l1.sort_by(f64::total_cmp);
    if !l1.is_empty() {
        report.l1_hit_median_us = l1[l1.len() / 2];
        report.l1_hit_p95_us = l1[(l1.len() * 95 / 100).min(l1.len() - 1)];
    }
    if json {
        outln!("{}", serde_json::to_string(&report)?);
    } else {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(match report.check_mismatches {
        Some(n) if n > 0 => ExitCode::FAILURE,
        _ => ExitCode::SUCCESS,
    })
}
