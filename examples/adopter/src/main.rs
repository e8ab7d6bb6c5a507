//! A GPU library adopting ltokit: its kernels ship as an LTO-IR bundle (made by build.rs),
//! the variant a call needs is linked for the GPU present (or served from the kernel
//! cache), and launched on a stream this program created with its own cudarc.
//!
//! With a GPU: runs every variant on fresh random inputs on its own stream and compares
//! each with a CPU reference. Without one: links every variant for sm_90 through the
//! cache and reports the cubins.

use std::sync::Arc;

use cudarc::driver::CudaContext;
use ltokit::bundle::Bundle;
use ltokit::cache::{CacheConfig, KernelCache, PlanHandle};
use ltokit::formats::cubin::CubinInfo;
use ltokit::launch::{Elem, Extent, Gpu, Launch, LaunchConfig, ModuleLoader, Param};
use ltokit::Target;

/// The bundle build.rs compiled from `kernels/`.
static BUNDLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kernels.ltkb"));

/// `adopter_axpby(const float* x, float* y, float a, float b, int n)`.
const SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::F32, Extent::AtLeastArg(4)),
    Param::BufferMut(Elem::F32, Extent::AtLeastArg(4)),
    Param::F32,
    Param::F32,
    Param::I32,
];

/// The CPU reference of plan `axpby_<act>`.
fn reference(act: &str, x: &[f32], y: &[f32], a: f32, b: f32) -> Vec<f32> {
    x.iter()
        .zip(y)
        .map(|(&x, &y)| {
            let v = a * x;
            let v = match act {
                "relu" => v.max(0.0),
                "square" => v * v,
                _ => v,
            };
            v + b * y
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bundle = Bundle::from_bytes("adopter kernels", BUNDLE)?;
    let config = CacheConfig::from_env()?;
    let has_gpu =
        ltokit::launch::driver_available() && CudaContext::device_count().is_ok_and(|n| n > 0);
    if !has_gpu {
        return link_only(&bundle, config);
    }
    // This program's own CUDA objects: a context and a non-default stream.
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    let gpu = Arc::new(Gpu::from_stream(Arc::clone(&stream))?);
    let target = Target::native(gpu.compute_capability());
    println!(
        "GPU {} ({target}), launching on a stream this program made",
        gpu.name()
    );
    let cache = KernelCache::with_loader(config, ModuleLoader::new(Arc::clone(&gpu)));
    let n = 1_000_003usize;
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut random = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0
    };
    let mut failures = 0;
    for act in ["relu", "square", "identity"] {
        let plan = bundle.plan(&format!("axpby_{act}"), target)?;
        let handle = PlanHandle::new(plan);
        let (module, level) = cache.get_traced(handle.plan())?;
        let kernel = module.kernel(handle.plan().kernel(), SIGNATURE)?;
        let x: Vec<f32> = (0..n).map(|_| random()).collect();
        let y: Vec<f32> = (0..n).map(|_| random()).collect();
        let (a, b) = (1.5f32, -0.25f32);
        let dx = stream.clone_htod(&x)?;
        let mut dy = stream.clone_htod(&y)?;
        let count = n as i32;
        let launch = Launch::on(&stream, &kernel, LaunchConfig::for_num_elems(n as u32))
            .buffer(&dx)
            .buffer_mut(&mut dy)
            .scalar(&a)
            .scalar(&b)
            .scalar(&count);
        // SAFETY: adopter_axpby touches x[i] and y[i] for i < n only; both hold n.
        unsafe { launch.run() }?;
        let got = stream.clone_dtoh(&dy)?;
        let want = reference(act, &x, &y, a, b);
        let bad = got
            .iter()
            .zip(&want)
            .filter(|(g, w)| (*g - *w).abs() > 1e-5 * w.abs().max(1.0))
            .count();
        println!(
            "  axpby_{act:<8} {n} elements: {bad} mismatches against the CPU reference (kernel from {level:?})"
        );
        failures += bad;
        // Served again through the handle: an in-process hit, no hashing.
        let _ = cache.get_handle(&handle)?;
    }
    let s = cache.stats();
    println!(
        "kernel cache: {} linked, {} from disk, {} in-process hits",
        s.links, s.l2_hits, s.l1_hits
    );
    if failures > 0 {
        return Err(format!("{failures} mismatching elements").into());
    }
    Ok(())
}

/// Without a GPU: link every plan for sm_90 through the cache and show the cubins.
fn link_only(bundle: &Arc<Bundle>, config: CacheConfig) -> Result<(), Box<dyn std::error::Error>> {
    let target: Target = "sm_90".parse()?;
    println!("no GPU: linking every variant for {target} without running it");
    let cache = KernelCache::new(config);
    for plan in bundle.plans(target)?.plans {
        let (cubin, level) = cache.get_traced(&plan)?;
        let info = CubinInfo::parse(&cubin)?;
        println!(
            "  {:<16} {:>6} bytes, sm_{}, kernels {:?} ({level:?})",
            plan.name(),
            cubin.len(),
            info.arch,
            info.kernels
        );
    }
    Ok(())
}
