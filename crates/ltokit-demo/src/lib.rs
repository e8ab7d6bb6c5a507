//! A small kernel split into three fragments, used by `ltokit demo`, the tests and the
//! GPU check: an entry kernel and two device functions it calls across fragments.
//!
//! `ltk_demo(const float* x, float* y, float a, int n)` computes
//! `y[i] = combine(transform(x[i], a), y[i])` with `transform(v, a) = a*v + 1` and
//! `combine(t, y) = t*t - 0.5*y`.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod redis_server;

use ltokit::arch::Target;
use ltokit::error::Result;
use ltokit::fragment::{self, CompileOptions, Fragment};
use ltokit::launch::{Elem, Extent, Param};

/// Name of the entry kernel.
pub const KERNEL: &str = "ltk_demo";

/// The kernel's parameters: `x`, `y`, `a`, `n`.
pub const SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::F32, Extent::AtLeastArg(3)),
    Param::BufferMut(Elem::F32, Extent::AtLeastArg(3)),
    Param::F32,
    Param::I32,
];

/// The fragments' sources, entry first: `(file name, CUDA C++)`.
pub const SOURCES: &[(&str, &str)] = &[
    ("entry.cu", include_str!("../kernels/demo/entry.cu")),
    ("transform.cu", include_str!("../kernels/demo/transform.cu")),
    ("combine.cu", include_str!("../kernels/demo/combine.cu")),
];

/// Compiles the three fragments to LTO-IR for `target`.
pub fn compile_fragments(target: Target) -> Result<Vec<Fragment>> {
    let options = CompileOptions::new(target);
    SOURCES
        .iter()
        .map(|(name, source)| fragment::compile(source, name, &options))
        .collect()
}

/// The bundle spec of the demo's variant matrix (scale × combine op × optimisation level).
pub const BUNDLE_SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/demo/bundle.json");

/// How the combine fragment combines (the `op` axis of the bundle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// `t*t - y/2` (the default).
    Square,
    /// `|t| - y/2`.
    Abs,
    /// `max(t, y) - y/2`.
    Max,
}

/// The CPU reference of the default variant (scale 1, square).
pub fn reference(x: &[f32], y: &[f32], a: f32) -> Vec<f32> {
    reference_variant(x, y, a, 1.0, Combine::Square)
}

/// The CPU reference of any variant, in the same float operations.
pub fn reference_variant(x: &[f32], y: &[f32], a: f32, scale: f32, combine: Combine) -> Vec<f32> {
    x.iter()
        .zip(y)
        .map(|(&x, &y)| {
            let t = a * x * scale + 1.0;
            match combine {
                Combine::Square => t * t - 0.5 * y,
                Combine::Abs => t.abs() - 0.5 * y,
                Combine::Max => t.max(y) - 0.5 * y,
            }
        })
        .collect()
}

/// Deterministic pseudo-random floats in [-2, 2) for a seed, for test inputs.
pub fn random_floats(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..len).map(|_| rng.f32() * 4.0 - 2.0).collect()
}

/// For tests that need the CUDA compiler libraries: when NVRTC or nvJitLink cannot be
/// loaded, prints `SKIPPED <test>: <why>` and returns true (the test then returns).
/// With `LTOKIT_TEST_REQUIRE_TOOLKIT=1` (set by `scripts/test.sh`, so CI cannot pass by
/// skipping) a missing library fails the test instead.
pub fn skip_without_toolkit() -> bool {
    let Some(why) = ltokit::toolkit::compiler_unavailable() else {
        return false;
    };
    let test = std::thread::current().name().unwrap_or("test").to_string();
    assert!(
        std::env::var_os("LTOKIT_TEST_REQUIRE_TOOLKIT").is_none_or(|v| v != "1"),
        "{test}: LTOKIT_TEST_REQUIRE_TOOLKIT=1 and {why}"
    );
    // Written past the test harness's output capture, so the skip shows in every run.
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
    true
}

/// What one run of the demo kernel on a GPU showed.
#[derive(Debug, Clone)]
pub struct GpuCheck {
    /// Elements computed.
    pub len: usize,
    /// Largest difference from the CPU reference, relative to max(1, |reference|).
    pub max_rel_error: f32,
    /// Elements whose error exceeds the tolerance.
    pub mismatches: usize,
}

/// Tolerance of the GPU result against the CPU reference (relative; nvJitLink may fuse
/// the multiply-adds, which changes the last bits).
pub const TOLERANCE: f32 = 1e-5;

/// Loads `cubin` on `gpu`, runs the kernel on `len` fresh random inputs from `seed`, and
/// compares with [`reference()`].
pub fn check_on_gpu(
    gpu: &ltokit::launch::Gpu,
    cubin: &[u8],
    len: usize,
    seed: u64,
) -> Result<GpuCheck> {
    let kernel = gpu.load_kernel(cubin, KERNEL, SIGNATURE)?;
    check_kernel(gpu, &kernel, len, seed, 1.0, Combine::Square)
}

/// Runs a loaded demo kernel of variant (`scale`, `combine`) on `len` fresh random
/// inputs (the kernel updates `y` in place, so no poisoning is needed: every element is
/// overwritten with a value that depends on its old one) and compares with
/// [`reference_variant`].
pub fn check_kernel(
    gpu: &ltokit::launch::Gpu,
    kernel: &ltokit::launch::Kernel,
    len: usize,
    seed: u64,
    scale: f32,
    combine: Combine,
) -> Result<GpuCheck> {
    let n = i32::try_from(len).map_err(|_| {
        ltokit::Error::InvalidArgument(format!(
            "{len} elements is more than the kernel's int count allows"
        ))
    })?;
    let x = random_floats(len, seed);
    let y = random_floats(len, seed ^ 0xA5A5_A5A5);
    let a = random_floats(1, seed ^ 0x5A5A)[0];
    let expected = reference_variant(&x, &y, a, scale, combine);
    let dx = gpu.upload(&x)?;
    let mut dy = gpu.upload(&y)?;
    let threads = 256u32;
    let config = ltokit::launch::LaunchConfig {
        grid_dim: ((len as u32).div_ceil(threads).max(1), 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let launch = gpu
        .launch(kernel, config)
        .buffer(&dx)
        .buffer_mut(&mut dy)
        .scalar(&a)
        .scalar(&n);
    // SAFETY: ltk_demo touches x[i] and y[i] for i < n only; both buffers hold len = n
    // elements, and only y (passed mutably) is written.
    unsafe { launch.run() }?;
    let got = gpu.download(&dy)?;
    let mut max_rel_error = 0f32;
    let mut mismatches = 0;
    for (g, e) in got.iter().zip(&expected) {
        let err = (g - e).abs() / e.abs().max(1.0);
        if err.is_nan() || err > TOLERANCE {
            mismatches += 1;
        }
        max_rel_error = if err.is_nan() {
            f32::NAN
        } else {
            max_rel_error.max(err)
        };
    }
    Ok(GpuCheck {
        len,
        max_rel_error,
        mismatches,
    })
}
