//! `ltokit link`: any mix of inputs → cubin, through the kernel cache.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use ltokit::cache::KernelCache;
use ltokit::formats::cubin::CubinInfo;
use ltokit::plan::{Plan, PlanInput};

use super::cache::CacheArgs;
use super::{parse_target, write_file};

/// Links `inputs` for `arch` and writes the cubin to `output`.
pub fn run(
    arch: &str,
    options: &[String],
    inputs: &[PathBuf],
    output: &Path,
    cache: &CacheArgs,
) -> anyhow::Result<ExitCode> {
    let target = parse_target(arch)?;
    let plan_inputs = inputs
        .iter()
        .map(|p| {
            let data = std::fs::read(p).map_err(|e| ltokit::Error::io(p, e))?;
            PlanInput::from_bytes(p.display().to_string(), data)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let plan = Plan::new("ltokit link", "", target, options.to_vec(), plan_inputs);
    let cache = KernelCache::new(cache.config()?);
    let started = Instant::now();
    let (cubin, level) = cache.get_traced(&plan)?;
    let elapsed = started.elapsed();
    write_file(output, &cubin)?;
    let info = CubinInfo::parse(&cubin)?;
    let how = match level {
        ltokit::cache::Level::Link => "linked",
        ltokit::cache::Level::Provider => "served by a prebuilt provider",
        _ => "served from the disk cache",
    };
    outln!(
        "{how}: {} input(s) for {target} in {:.1} ms → {} ({} bytes; kernels: {})",
        inputs.len(),
        elapsed.as_secs_f64() * 1e3,
        output.display(),
        cubin.len(),
        if info.kernels.is_empty() {
            "none".to_string()
        } else {
            info.kernels.join(", ")
        }
    );
    Ok(ExitCode::SUCCESS)
}
