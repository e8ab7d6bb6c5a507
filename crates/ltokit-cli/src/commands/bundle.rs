//! `ltokit bundle build|inspect`.

use std::path::Path;
use std::process::ExitCode;

use ltokit::bundle::Bundle;

use super::human_bytes;

/// Builds a bundle from a spec.
pub fn build(spec: &Path, output: &Path, jobs: usize) -> anyhow::Result<ExitCode> {
    let report = ltokit_build::build_bundle(spec, output, jobs)?;
    println!(
        "{}: {} fragments ({} compiled, {} reused), {} plans, {} in {:.2} s",
        report.output.display(),
        report.compiled + report.reused,
        report.compiled,
        report.reused,
        report.plans,
        human_bytes(report.bytes),
        report.elapsed.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints a bundle's manifest.
pub fn inspect(path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let bundle = Bundle::open(path)?;
    let m = bundle.manifest();
    if json {
        println!("{}", serde_json::to_string_pretty(m)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "bundle {} ({}): {} fragments, {} plans",
        m.name,
        path.display(),
        m.fragments.len(),
        m.plans.len()
    );
    for f in &m.fragments {
        println!(
            "  {:<24} {:<6} {:<8} {:>7} → {:>7} bytes  NVRTC {}  exports {}",
            f.name,
            format!("{:?}", f.role).to_lowercase(),
            f.target,
            f.stored_bytes,
            f.raw_bytes,
            f.producer,
            f.exports.join(",")
        );
    }
    for p in &m.plans {
        println!(
            "  plan {:<28} {} = {} + [{}] {}",
            p.name,
            p.kernel,
            p.entry,
            p.fragments.join(", "),
            p.options.join(" ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
