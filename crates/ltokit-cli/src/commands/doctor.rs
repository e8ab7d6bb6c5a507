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
struct RemoteReport {
    url: String,
    mode: String,
    /// Round-trip time of a PING, when it answered.
    ping_ms: Option<f64>,
    error: Option<String>,
}

#[derive(serde::Serialize)]
struct Report {
    libraries: Vec<toolkit::LibraryReport>,
    gpus: Vec<GpuReport>,
    gpu_note: Option<String>,
    /// The remote cache level (`LTOKIT_REMOTE`), when configured.
    remote: Option<RemoteReport>,
}

/// The remote level's settings and whether it answers; an error in the settings is
/// reported as the level's error.
fn remote() -> Option<RemoteReport> {
    let config = match ltokit::cache::RemoteConfig::from_env() {
        Ok(Some(c)) => c,
        Ok(None) => return None,
        Err(e) => {
            return Some(RemoteReport {
                url: std::env::var("LTOKIT_REMOTE").unwrap_or_default(),
                mode: String::new(),
                ping_ms: None,
                error: Some(e.to_string()),
            })
        }
    };
    let level = super::remote::level(&config);
    let ping = level.ping();
    Some(RemoteReport {
        url: config.url.clone(),
        mode: format!("{:?}", config.mode).to_lowercase(),
        ping_ms: ping.as_ref().ok().map(|d| d.as_secs_f64() * 1e3),
        error: ping.err(),
    })
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
        remote: remote(),
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
                    "  {:<10} {}\n{}",
                    lib.name,
                    if lib.present {
                        "NOT USABLE"
                    } else {
                        "NOT FOUND"
                    },
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
        if let Some(r) = &report.remote {
            match (r.ping_ms, &r.error) {
                (Some(ms), _) => outln!(
                    "remote cache: {} ({}), answers in {ms:.2} ms",
                    r.url,
                    r.mode
                ),
                (None, Some(why)) => outln!("remote cache: {} NOT USABLE: {why}", r.url),
                (None, None) => outln!("remote cache: {}", r.url),
            }
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
