//! `ltokit demo`: IVF-Flat search whose scan kernel ltokit assembles from LTO-IR fragments.
//!
//! With a GPU: build an index on synthetic data, search it at two n_probes, print recall
//! against exact GPU search and QPS, and show where the kernels came from (a second run
//! finds them in the disk cache). Without one: link the kernels a search needs for sm_90
//! through the same cache, show their inventory, and say what was skipped.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use ltokit::cache::{CacheConfig, KernelCache, Level};
use ltokit::launch::{self, Gpu};
use ltokit::Target;
use ltokit_ivf::data::synthetic_pair;
use ltokit_ivf::gpu::{
    bundle, bundle_file_bytes, coarse_plan_name, plan_names, DeviceLists, FirstSearch, IndexShape,
    IvfGpu, LinkAhead, EXACT_CHUNK,
};
use ltokit_ivf::index::veclen;
use ltokit_ivf::kmeans::KMeansParams;
use ltokit_ivf::{DType, Filter, Metric};

use indicatif::HumanBytes;
use ltokit::formats::cubin::CubinInfo;

use super::write_file;

const ROWS: usize = 200_000;
const DIM: usize = 128;
const QUERIES: usize = 5_000;
const LISTS: usize = 256;
const K: usize = 10;
/// The probe counts searched, the first one first.
const PROBES: [usize; 3] = [4, 16, 64];

/// Runs the demo, writing linked kernels under `out_dir`.
pub fn run(out_dir: &Path) -> anyhow::Result<ExitCode> {
    let config = CacheConfig::from_env()?;
    let b = bundle()?;
    let m = b.manifest();
    let (raw, stored) = (m.raw_bytes(), m.stored_bytes());
    outln!(
        "IVF-Flat kernels: {} LTO-IR fragments ({} of IR, {} compressed) make {} plans (data type × vector width × metric × filter × top-k capacity); the bundle file with its manifest is {}",
        m.fragments.len(),
        HumanBytes(raw),
        HumanBytes(stored),
        m.plans.len(),
        HumanBytes(bundle_file_bytes() as u64)
    );
    match config.dir.as_ref() {
        Some(d) => outln!("kernel cache: {}", d.display()),
        None => outln!("kernel cache: disk cache off (LTOKIT_CACHE=off)"),
    }
    // With a GPU, the kernels of the build and the first search link while its context is
    // created (nothing starts without one).
    let shape = IndexShape {
        dtype: DType::F32,
        dim: DIM,
        metric: Metric::L2,
        n_lists: LISTS,
    };
    let first = FirstSearch {
        k: K,
        n_probes: PROBES[0],
        batch: QUERIES,
    };
    let links = LinkAhead::start(&config, 0, shape, Some(first));
    let gpu = if launch::driver_available() {
        Gpu::open(0).ok()
    } else {
        None
    };
    match gpu {
        Some(gpu) => with_gpu(Arc::new(gpu), config, links),
        None => without_gpu(config, out_dir),
    }
}

fn with_gpu(gpu: Arc<Gpu>, config: CacheConfig, links: LinkAhead) -> anyhow::Result<ExitCode> {
    outln!(
        "GPU: {} (compute capability {})",
        gpu.name(),
        gpu.compute_capability()
    );
    let engine = IvfGpu::new(gpu, config)?;
    let (base, queries) = synthetic_pair(ROWS, QUERIES, DIM, DType::F32, 7);
    let started = Instant::now();
    let params = KMeansParams {
        n_lists: LISTS,
        iters: 10,
        ..Default::default()
    };
    let (gindex, _) = ltokit_ivf::build::build_on_gpu(&engine, &base, Metric::L2, &params)?;
    outln!(
        "built an index of {ROWS} × {DIM} f32 vectors in {LISTS} lists on the GPU in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let flat = DeviceLists::chunked(&engine, &base, EXACT_CHUNK)?;
    let truth = engine.exact(&flat, Metric::L2, &Filter::None, &queries, K)?;
    let mut first = true;
    for n_probes in PROBES {
        let started = Instant::now();
        let found = gindex.search(&engine, &queries, K, n_probes, &Filter::None)?;
        let first_ms = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        let again = gindex.search(&engine, &queries, K, n_probes, &Filter::None)?;
        let secs = started.elapsed().as_secs_f64();
        anyhow::ensure!(again.ids == found.ids, "two identical searches disagreed");
        let recall = ltokit_ivf::reference::recall(&found.rows(), &truth.rows(), K);
        let note = if first {
            format!(" (first search in this process: {first_ms:.1} ms)")
        } else {
            String::new()
        };
        outln!("  n_probes {n_probes:>3}: recall@{K} {recall:.4}, {QUERIES} queries in {:.2} ms = {:.0} QPS{note}", secs * 1e3, QUERIES as f64 / secs);
        first = false;
    }
    let s = engine.cache().stats();
    let ahead = links.wait().links;
    outln!("kernels this run: {} linked by nvJitLink while the GPU's context was created and {} since, {} loaded from the disk cache (those linked ahead among them), {} in-process hits", ahead, s.links, s.l2_hits, s.l1_hits);
    if s.links + ahead > 0 {
        outln!("run `ltokit demo` again: every kernel will come from the disk cache, no linking");
    }
    Ok(ExitCode::SUCCESS)
}

fn without_gpu(config: CacheConfig, out_dir: &Path) -> anyhow::Result<ExitCode> {
    let target: Target = "sm_90".parse()?;
    outln!(
        "no GPU here: linking what a search needs for {target} (the H100/H200), without running it"
    );
    let cache = KernelCache::new(config);
    let b = bundle()?;
    let coarse = coarse_plan_name(16, DType::F32)?;
    let (scan, merge) = plan_names(
        DType::F32,
        veclen(DType::F32, DIM),
        Metric::L2,
        &Filter::None,
        K,
    )?;
    let names = [coarse, scan, merge];
    outln!("writing the cubins to {}", out_dir.display());
    outln!(
        "  {:<28} {:>8}  {:<8} {:<10} from",
        "plan",
        "bytes",
        "arch",
        "kernel"
    );
    for name in &names {
        let plan = b.plan(name, target)?;
        let started = Instant::now();
        let (cubin, level) = cache.get_traced(&plan)?;
        let how = match level {
            Level::Link => "linked by nvJitLink",
            Level::L2 => "loaded from the disk cache",
            Level::L1 => "in-process hit",
            Level::Provider => "from a prebuilt provider",
            Level::Remote => "from the fleet's remote cache",
        };
        let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
        // What the cubin's own ELF says: the architecture it runs on and its kernel.
        let info = CubinInfo::parse(&cubin)?;
        outln!(
            "  {name:<28} {:>8}  {:<8} {:<10} {how} in {elapsed_ms:.1} ms",
            cubin.len(),
            format!("sm_{}", info.arch),
            info.kernels.join(","),
        );
        write_file(&out_dir.join(format!("{name}.{target}.cubin")), &cubin)?;
    }
    let s = cache.stats();
    outln!(
        "\nkernels this run: {} linked, {} from the disk cache",
        s.links,
        s.l2_hits
    );
    outln!("skipped: building the index and searching (they need a GPU); everything above ran for real");
    outln!("next:");
    outln!("  ltokit demo                          again: every kernel comes from the disk cache");
    outln!(
        "  ltokit inventory {}/*.cubin   every entry of the cubins written",
        out_dir.display()
    );
    outln!("  ltokit cache stats                   the cache's counters");
    outln!("  ltokit demo   on a machine with a GPU: builds an index and searches it");
    Ok(ExitCode::SUCCESS)
}
