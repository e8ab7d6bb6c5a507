//! One module per subcommand, plus the small helpers they share.

pub mod bench;
pub mod bundle;
pub mod cache;
pub mod compile;
pub mod demo;
pub mod doctor;
pub mod inventory;
pub mod ivf;
pub mod link;
pub mod provider;
pub mod warmup;

use std::path::Path;

use anyhow::Context;
use ltokit::{launch, Target};

/// Parses `--arch`; `native` means the first GPU's architecture, or sm_90 without a GPU.
pub fn parse_target(arch: &str) -> anyhow::Result<Target> {
    if arch == "native" {
        return Ok(native_target().0);
    }
    Ok(arch.parse()?)
}

/// The first GPU's `sm_XY` and a description of where it came from.
pub fn native_target() -> (Target, String) {
    match launch::Gpu::open(0) {
        Ok(gpu) => (
            Target::native(gpu.compute_capability()),
            format!(
                "{} (compute capability {})",
                gpu.name(),
                gpu.compute_capability()
            ),
        ),
        Err(e) => (
            "sm_90".parse().expect("sm_90 is a valid target"),
            format!("no GPU ({e}); using sm_90"),
        ),
    }
}

/// Writes `bytes` to `path`, creating its directory.
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Bytes in a short human form: `3.4 KiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
