//! `ltokit doctor`: which libraries were found where, and which GPUs are present.

use std::process::ExitCode;

use ltokit::launch;
use ltokit::toolkit;

#[derive(serde::Serialize)]
struct GpuReport {
    ordinal: usize,
    name: String,
    compute_capability: String,
    target: String,
}

#[derive(serde::Serialize)]
struct Report {
    libraries: Vec<toolkit::LibraryReport>,
    gpus: Vec<GpuReport>,
    gpu_note: Option<String>,
}

fn gpus() -> (Vec<GpuReport>, Option<String>) {
    let count = match launch::Gpu::count() {
        Ok(0) => return (Vec::new(), Some("no GPU".into())),
        Ok(n) => n,
        Err(e) => return (Vec::new(), Some(format!("no GPU: {e}"))),
    };
    let mut out = Vec::new();
    for ordinal in 0..count {
        match launch::Gpu::open(ordinal) {
            Ok(gpu) => out.push(GpuReport {
                ordinal,
                name: gpu.name().to_string(),
                compute_capability: gpu.compute_capability().to_string(),
                target: ltokit::Target::native(gpu.compute_capability()).to_string(),
            }),
            Err(e) => return (out, Some(format!("GPU {ordinal}: {e}"))),
        }
    }
    (out, None)
}

/// Prints the report; exit status 1 when a library is missing.
pub fn run(json: bool) -> anyhow::Result<ExitCode> {
    let libraries = toolkit::report();
    let (gpus, gpu_note) = gpus();
    let all_found = libraries.iter().all(|l| l.found);
    let report = Report {
        libraries,
        gpus,
        gpu_note,
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        outln!("CUDA libraries:");
        for lib in &report.libraries {
            match (&lib.path, lib.version) {
                (Some(path), Some(version)) => {
                    let origin = lib.origin.map(|o| o.to_string()).unwrap_or_default();
                    outln!(
                        "  {:<10} {version:<6} {} (via {origin})",
                        lib.name,
                        path.display()
                    );
                    if let Some(detail) = &lib.detail {
                        outln!("  {:<10} {detail}", "");
                    }
                }
                _ => outln!(
                    "  {:<10} NOT FOUND\n{}",
                    lib.name,
                    indent(lib.error.as_deref().unwrap_or(""))
                ),
            }
        }
        outln!("GPUs:");
        for gpu in &report.gpus {
            outln!(
                "  [{}] {} — compute capability {} → links for {}",
                gpu.ordinal,
                gpu.name,
                gpu.compute_capability,
                gpu.target
            );
        }
        if let Some(note) = &report.gpu_note {
            outln!("  {note}");
        }
    }
    Ok(if all_found {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
