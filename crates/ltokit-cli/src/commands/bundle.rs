//! `ltokit bundle build|inspect`.

use std::path::Path;
use std::process::ExitCode;

use ltokit::bundle::Bundle;

use indicatif::HumanBytes;

/// Builds a bundle from a spec.
pub fn build(spec: &Path, output: &Path, jobs: usize) -> anyhow::Result<ExitCode> {
    let report = ltokit_build::build_bundle(spec, output, jobs)?;
    outln!(
        "{}: {} fragments ({} compiled, {} reused), {} plans, {} in {:.2} s",
        report.output.display(),
        report.compiled + report.reused,
        report.compiled,
        report.reused,
        report.plans,
        HumanBytes(report.bytes),
        report.elapsed.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints a bundle's manifest.
pub fn inspect(path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let bundle = Bundle::open(path)?;
    let m = bundle.manifest();
    if json {
        outln!("{}", serde_json::to_string_pretty(m)?);
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "bundle {} ({}): {} fragments, {} plans; LTO-IR {} bytes in {} solid block(s) of {} bytes",
        m.name,
        path.display(),
        m.fragments.len(),
        m.plans.len(),
        m.raw_bytes(),
        m.blocks.len(),
        m.stored_bytes()
    );
    for f in &m.fragments {
        outln!(
            "  {:<24} {:<6} {:<8} block {:<3} {:>7} bytes  NVRTC {}  exports {}",
            f.name,
            format!("{:?}", f.role).to_lowercase(),
            f.target,
            f.block,
            f.raw_bytes,
            f.producer,
            f.exports.join(",")
        );
    }
    for p in &m.plans {
        outln!(
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
