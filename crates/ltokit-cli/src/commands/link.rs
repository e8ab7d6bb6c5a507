//! `ltokit link`: any mix of inputs → cubin.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ltokit::cubin::CubinInfo;
use ltokit::link::{self, LinkInput};

use super::{parse_target, write_file};

/// Links `inputs` for `arch` and writes the cubin to `output`.
pub fn run(
    arch: &str,
    options: &[String],
    inputs: &[PathBuf],
    output: &Path,
    info_log: bool,
) -> anyhow::Result<ExitCode> {
    let target = parse_target(arch)?;
    let inputs = inputs
        .iter()
        .map(|p| LinkInput::from_file(p))
        .collect::<Result<Vec<_>, _>>()?;
    let started = std::time::Instant::now();
    let out = link::link(&inputs, target, options)?;
    let elapsed = started.elapsed();
    write_file(output, &out.cubin)?;
    let info = CubinInfo::parse(&out.cubin)?;
    println!(
        "linked {} input(s) for {target} with nvJitLink {} in {:.1} ms → {} ({} bytes; kernels: {})",
        inputs.len(),
        out.linker,
        elapsed.as_secs_f64() * 1e3,
        output.display(),
        out.cubin.len(),
        if info.kernels.is_empty() { "none".to_string() } else { info.kernels.join(", ") }
    );
    if info_log && !out.info_log.trim().is_empty() {
        println!("{}", out.info_log.trim_end());
    }
    Ok(ExitCode::SUCCESS)
}
