//! `ltokit demo`: the whole pipeline on a small three-fragment kernel.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use ltokit::fatbin::{Codec, EntryKind, FatbinWriter};
use ltokit::link::{self, LinkInput};
use ltokit::{demo, inventory, launch};

use super::{inventory::print_text, native_target, write_file};

/// Elements the GPU check computes.
const GPU_CHECK_LEN: usize = 1 << 20;

/// Runs the demo, writing its outputs under `out_dir`.
pub fn run(out_dir: &Path) -> anyhow::Result<ExitCode> {
    let (target, where_from) = native_target();
    println!("target: {target} — {where_from}");

    let started = Instant::now();
    let fragments = demo::compile_fragments(target)?;
    let compile_ms = started.elapsed().as_secs_f64() * 1e3;
    for f in &fragments {
        println!(
            "  compiled {:<13} → {:>5} bytes of LTO-IR ({}, NVRTC {})",
            f.name,
            f.ltoir.len(),
            f.target,
            f.producer
        );
    }
    println!(
        "  NVRTC: {compile_ms:.0} ms for {} fragments (includes library start-up)",
        fragments.len()
    );

    let inputs: Vec<LinkInput> = fragments.iter().map(LinkInput::from_fragment).collect();
    let started = Instant::now();
    let linked = link::link(&inputs, target, &[])?;
    let first_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let again = link::link(&inputs, target, &[])?;
    let second_ms = started.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(
        again.cubin == linked.cubin,
        "nvJitLink gave different cubins for the same inputs"
    );
    println!("  nvJitLink {}: linked {} ({} bytes) in {first_ms:.1} ms (first call, library start-up included), {second_ms:.1} ms again", linked.linker, target, linked.cubin.len());

    let cubin_path = out_dir.join(format!("ltk_demo.{target}.cubin"));
    write_file(&cubin_path, &linked.cubin)?;
    let mut bundle = FatbinWriter::new();
    bundle.add(EntryKind::Cubin, target, &linked.cubin, Codec::Zstd)?;
    for f in &fragments {
        bundle.add(EntryKind::LtoIr, f.target, &f.ltoir, Codec::None)?;
    }
    let fatbin_path = out_dir.join("ltk_demo.fatbin");
    write_file(&fatbin_path, &bundle.finish())?;
    println!();
    print_text(&inventory::inventory_file(&cubin_path)?);
    println!();
    print_text(&inventory::inventory_file(&fatbin_path)?);
    println!();

    if !launch::driver_available() {
        println!("skipped: running the kernel (no NVIDIA driver on this machine); everything else ran for real");
        return Ok(ExitCode::SUCCESS);
    }
    let gpu = match launch::Gpu::open(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            println!("skipped: running the kernel ({e})");
            return Ok(ExitCode::SUCCESS);
        }
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let check = demo::check_on_gpu(&gpu, &linked.cubin, GPU_CHECK_LEN, seed)?;
    println!(
        "ran {} on {}: {} elements, max relative error {:.2e} vs the CPU reference, {} mismatches (seed {seed})",
        demo::KERNEL,
        gpu.name(),
        check.len,
        check.max_rel_error,
        check.mismatches
    );
    Ok(if check.mismatches == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
