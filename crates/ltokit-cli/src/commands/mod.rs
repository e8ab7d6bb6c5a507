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
pub mod remote;
pub mod warmup;

use std::path::Path;

use anyhow::Context;
use ltokit::{launch, Target};

/// Parses `--arch`; `native` means the first GPU's architecture, and is an error that
/// says how to name a target when there is no GPU.
pub fn parse_target(arch: &str) -> anyhow::Result<Target> {
    if arch == "native" {
        let gpu = launch::Gpu::open(0)
            .map_err(|e| ltokit::Error::NoNativeTarget { why: e.to_string() })?;
        return Ok(Target::native(gpu.compute_capability()));
    }
    Ok(arch.parse()?)
}

/// The plan names listed in `path`, one per line (blank lines and `#` comments skipped).
pub fn read_plan_list(path: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the plan list {}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect())
}

/// Writes `bytes` to `path`, creating its directory.
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}
