//! `ltokit compile`: CUDA C++ → LTO-IR.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ltokit::fragment::{self, CompileOptions};

use super::{parse_target, write_file};

/// Compiles `source` and writes the LTO-IR to `output`.
pub fn run(
    arch: &str,
    include: Vec<PathBuf>,
    define: Vec<String>,
    name_expressions: Vec<String>,
    options: Vec<String>,
    source: &Path,
    output: &Path,
) -> anyhow::Result<ExitCode> {
    let mut opts = CompileOptions::new(parse_target(arch)?);
    opts.include_dirs = include;
    opts.defines = define;
    opts.name_expressions = name_expressions;
    opts.extra_options = options;
    let frag = fragment::compile_file(source, &opts)?;
    if !frag.log.trim().is_empty() {
        eprintln!("{}", frag.log.trim_end());
    }
    write_file(output, &frag.ltoir)?;
    outln!(
        "{} → {} ({} bytes of LTO-IR for {}, NVRTC {})",
        source.display(),
        output.display(),
        frag.ltoir.len(),
        frag.target,
        frag.producer
    );
    for (expr, lowered) in &frag.lowered_names {
        outln!("  {expr} = {lowered}");
    }
    Ok(ExitCode::SUCCESS)
}
