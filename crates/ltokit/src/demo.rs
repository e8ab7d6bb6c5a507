//! A small kernel split into three fragments, used by `ltokit demo`, the tests and the
//! GPU check: an entry kernel and two device functions it calls across fragments.
//!
//! `ltk_demo(const float* x, float* y, float a, int n)` computes
//! `y[i] = combine(transform(x[i], a), y[i])` with `transform(v, a) = a*v + 1` and
//! `combine(t, y) = t*t - 0.5*y`.

use crate::arch::Target;
use crate::error::Result;
use crate::fragment::{self, CompileOptions, Fragment};
use crate::launch::Param;

/// Name of the entry kernel.
pub const KERNEL: &str = "ltk_demo";

/// The kernel's parameters: `x`, `y`, `a`, `n`.
pub const SIGNATURE: &[Param] = &[Param::Ptr, Param::Ptr, Param::F32, Param::I32];

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

/// The CPU reference of the kernel, in the same float operations.
pub fn reference(x: &[f32], y: &[f32], a: f32) -> Vec<f32> {
    x.iter()
        .zip(y)
        .map(|(&x, &y)| {
            let t = a * x + 1.0;
            t * t - 0.5 * y
        })
        .collect()
}
