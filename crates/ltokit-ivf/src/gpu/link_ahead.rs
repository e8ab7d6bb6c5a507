//! Which kernels an index build and its first search most likely need
//! ([`FirstSearch`], `likely_first_kernels`), and linking them ahead: in the engine's
//! background while an index builds ([`IvfGpu::prepare_first_search_in_background`]), or
//! before the engine exists. A program that reads its
//! vectors before it opens the GPU knows the index's shape (type, dimension, metric,
//! lists) before the CUDA context is created, and creating it takes a few hundred
//! milliseconds (0.23–0.29 s on the H200) — time the first search's links can use (the
//! per-query scan alone links in 0.2–0.27 s there, longer than a small index takes to
//! build). [`LinkAhead::start`] reads the GPU's compute capability without a context and
//! links those kernels into the disk cache on a few threads; the engine's own loads then
//! find them there, or wait for a link under way (the disk cache's per-key lock is a
//! cross-process single flight), so nothing is linked twice.

use std::collections::VecDeque;
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use ltokit::cache::stats::Stats;
use ltokit::cache::{CacheConfig, KernelCache};
use ltokit::launch::Gpu;
use ltokit::{Result, Target};

use super::coarse::{coarse_kernels, select_stand_in};
use super::kernels::{in_order_link_workers, KernelSpec};
use super::kmeans::train_rows_kernel;
use super::lists::{layout_kernel, row_norms_kernel};
use super::merge::merge_kernel;
use super::scan::scan_kernel;
use super::{bundle, IvfGpu, MatrixArith, TileArith};
use crate::data::DType;
use crate::index::veclen;
use crate::metric::{Filter, Metric};

/// The shape of the index a program is about to build and search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexShape {
    /// The vectors' type.
    pub dtype: DType,
    /// Their dimension.
    pub dim: usize,
    /// The search metric.
    pub metric: Metric,
    /// Lists of the index.
    pub n_lists: usize,
}

/// Links running on background threads; dropping it waits for them (a process must not
/// end inside nvJitLink: see [`super::IvfGpu`]'s drop).
pub struct LinkAhead {
    plans: Vec<String>,
    cache: Option<Arc<KernelCache>>,
    threads: Vec<JoinHandle<()>>,
}

impl LinkAhead {
    /// Starts linking, for GPU `ordinal` and into the disk cache of `cache`, the kernels
    /// an index of `shape` built on the device (`crate::build::build_on_gpu`) and its
    /// first search (`first`, where the program knows it; else the likely ones) need —
    /// the build's row gather and layout, the per-query scan and merge, the coarse search
    /// for `first`'s probes, then for other probe counts — in that order, on a few threads
    /// (a quarter of the cores, 1 to 4), and returns at once. Nothing is started (and the
    /// engine links on demand as before) when `cache` has no disk cache or does not allow
    /// linking, or when the GPU cannot be read: then the engine's own creation reports the
    /// error.
    pub fn start(
        cache: &CacheConfig,
        ordinal: usize,
        shape: IndexShape,
        first: Option<FirstSearch>,
    ) -> LinkAhead {
        let none = LinkAhead {
            plans: Vec::new(),
            cache: None,
            threads: Vec::new(),
        };
        if cache.dir.is_none() || !cache.jit {
            return none;
        }
        let (target, names, bundle) = match plans_for(ordinal, shape, first)
            .and_then(|(target, names)| Ok((target, names, bundle()?)))
        {
            Ok(prepared) => prepared,
            Err(e) => {
                tracing::debug!("no kernels linked ahead of the engine: {e}");
                return none;
            }
        };
        let queue = Arc::new(Mutex::new(names.iter().cloned().collect::<VecDeque<_>>()));
        let cache = Arc::new(KernelCache::new(cache.clone()));
        let threads = (0..in_order_link_workers())
            .map(|_| {
                let (queue, cache, bundle) = (queue.clone(), cache.clone(), bundle.clone());
                std::thread::spawn(move || loop {
                    let Some(plan) = queue.lock().pop_front() else {
                        return;
                    };
                    let linked = bundle
                        .plan(&plan, target)
                        .and_then(|p| cache.cubin(&p).map(|_| ()));
                    if let Err(e) = linked {
                        tracing::warn!("linking kernel {plan} ahead of the engine failed: {e}");
                    }
                })
            })
            .collect();
        LinkAhead {
            plans: names,
            cache: Some(cache),
            threads,
        }
    }

    /// The plans being linked, in order (none when nothing was started).
    pub fn plans(&self) -> &[String] {
        &self.plans
    }

    /// Waits for the links started; returns their cache's counters (links made, their
    /// time, plans found already on disk), which the engine's own cache does not count.
    pub fn wait(mut self) -> Stats {
        self.join();
        self.cache.as_ref().map(|c| c.stats()).unwrap_or_default()
    }

    fn join(&mut self) {
        for t in self.threads.drain(..) {
            // A panicked thread linked nothing; the engine links on demand.
            let _ = t.join();
        }
    }
}

impl Drop for LinkAhead {
    fn drop(&mut self) {
        self.join();
    }
}

/// The target of GPU `ordinal` and the plans [`LinkAhead::start`] links for `shape`: the
/// engine's defaults (its native target, the tensor-core coarse search where the GPU has
/// it).
fn plans_for(
    ordinal: usize,
    shape: IndexShape,
    first: Option<FirstSearch>,
) -> Result<(Target, Vec<String>)> {
    let cc = Gpu::probe_compute_capability(ordinal)?;
    let matrix = MatrixArith::choose(cc.major, TileArith::default());
    Ok((Target::native(cc), plan_names(shape, matrix, first)?))
}

/// The plans of [`LinkAhead::start`] in the order they are linked.
fn plan_names(
    shape: IndexShape,
    matrix: MatrixArith,
    first: Option<FirstSearch>,
) -> Result<Vec<String>> {
    let mut specs: Vec<KernelSpec> = device_build_kernels(shape.dtype).into();
    specs.extend(likely_first_kernels(
        shape.dtype,
        shape.dim,
        shape.metric,
        shape.n_lists,
        matrix,
        first,
    )?);
    Ok(specs.into_iter().map(|s| s.plan).collect())
}

impl IvfGpu {
    /// Queues for linking in the background, in order, the kernels the first search of an
    /// index of `dtype` × `dim` over `n_lists` lists most likely needs
    /// (`likely_first_kernels`); returns at once. An index build calls it before its
    /// k-means, so that those links overlap the build.
    pub fn prepare_first_search_in_background(
        &self,
        dtype: DType,
        dim: usize,
        metric: Metric,
        n_lists: usize,
    ) {
        match likely_first_kernels(
            dtype,
            dim,
            metric,
            n_lists,
            self.coarse_matrix_arith(),
            None,
        ) {
            Ok(specs) => self.prepare_in_background_in_order(&specs),
            Err(e) => tracing::debug!("no kernels linked ahead of the first search: {e}"),
        }
    }

    /// [`IvfGpu::prepare_first_search_in_background`] after the kernels of
    /// [`crate::build::build_on_gpu`] that the k-means plans do not cover (the training
    /// rows' gather, the layout on the device).
    pub fn prepare_build_kernels_in_background(
        &self,
        dtype: DType,
        dim: usize,
        metric: Metric,
        n_lists: usize,
    ) {
        // One queue: the first search's kernels follow these.
        self.prepare_in_background_in_order(&device_build_kernels(dtype));
        self.prepare_first_search_in_background(dtype, dim, metric, n_lists);
    }
}

/// The kernels of [`crate::build::build_on_gpu`] for rows of `dtype` that the k-means
/// plans do not cover: the training rows' gather, the layout on the device and the rows'
/// norms.
pub(crate) fn device_build_kernels(dtype: DType) -> [KernelSpec; 3] {
    [
        train_rows_kernel(dtype),
        layout_kernel(),
        row_norms_kernel(dtype),
    ]
}

/// k of the search most indexes see first (what [`likely_first_kernels`] prepares for).
pub(crate) const FIRST_K: usize = 10;
/// Queries of the batch most indexes see first.
pub(crate) const FIRST_BATCH: usize = 10_000;

/// The first search a program will run, where it knows it (k, probes, queries per batch):
/// its kernels are then linked first, ahead of the likely others
/// ([`crate::gpu::LinkAhead::start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstSearch {
    /// Neighbours per query.
    pub k: usize,
    /// Lists probed per query.
    pub n_probes: usize,
    /// Queries per batch.
    pub batch: usize,
}

/// The kernels of the search most indexes of `dtype` × `dim` over `n_lists` lists see first,
/// in the order they are worth linking ahead of it: k = 10 over a batch of 10,000 queries
/// — the per-query scan and its merge (what auto runs while the list-major kernel loads),
/// the coarse search (its score matrix multiplied by `matrix`) and selection for 8, 16,
/// 32, 4, 2 and 64 probes. With `first`, its k, batch and probe count (its selection
/// before the others) instead.
pub(crate) fn likely_first_kernels(
    dtype: DType,
    dim: usize,
    metric: Metric,
    n_lists: usize,
    matrix: MatrixArith,
    first: Option<FirstSearch>,
) -> Result<Vec<KernelSpec>> {
    let (k, batch) = first.map_or((FIRST_K, FIRST_BATCH), |f| (f.k, f.batch.max(1)));
    let mut specs = vec![
        scan_kernel(dtype, dim, veclen(dtype, dim), metric, &Filter::None, k)?,
        merge_kernel(metric, k, batch, k)?,
    ];
    let known = first.map(|f| f.n_probes.clamp(1, n_lists));
    // The first search selects by the stand-in while the register-row form links (a
    // second): the stand-in of the known probe count comes first.
    if let Some(stand_in) = known
        .map(|p| select_stand_in(p, n_lists))
        .transpose()?
        .flatten()
    {
        specs.push(stand_in);
    }
    for n_probes in known.into_iter().chain([8, 16, 32, 4, 2, 64]) {
        if n_probes <= n_lists {
            // The score matrix is the same plan for every probe count: listed once.
            for spec in coarse_kernels(dtype, dim, n_probes, (batch, n_lists), matrix)? {
                if !specs.iter().any(|s| s.plan == spec.plan) {
                    specs.push(spec);
                }
            }
        }
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plans_linked_ahead_are_the_builds_then_the_first_searchs_and_all_exist() {
        let bundle = bundle().unwrap();
        let target: Target = "sm_90".parse().unwrap();
        let shape = IndexShape {
            dtype: DType::U8,
            dim: 784,
            metric: Metric::L2,
            n_lists: 256,
        };
        let names = plan_names(shape, MatrixArith::TensorCores, None).unwrap();
        assert_eq!(names[0], "train_rows_u8");
        assert_eq!(names[2], "row_norms_u8");
        assert!(names[3].starts_with("scan_c16_u8_"), "{names:?}");
        assert!(names.iter().any(|n| n == "coarse_scores_imma_q64_u8"));
        for n in &names {
            bundle
                .plan(n, target)
                .unwrap_or_else(|e| panic!("{n}: {e}"));
        }
        // A known first search (k 100, 2 probes): its scan, merge and selection come
        // before the other probe counts' selections, each plan once.
        let first = FirstSearch {
            k: 100,
            n_probes: 2,
            batch: 1_000,
        };
        let known = plan_names(shape, MatrixArith::TensorCores, Some(first)).unwrap();
        assert!(known[3].starts_with("scan_c128_u8_"), "{known:?}");
        let select = |n: &str| known.iter().position(|p| p == n).unwrap();
        assert!(
            select("coarse_select_short_c2") < select("coarse_select_short_c8"),
            "{known:?}"
        );
        let mut unique = known.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), known.len());
        for n in &known {
            bundle
                .plan(n, target)
                .unwrap_or_else(|e| panic!("{n}: {e}"));
        }
    }

    #[test]
    fn nothing_starts_without_a_disk_cache_or_with_linking_off() {
        let shape = IndexShape {
            dtype: DType::F32,
            dim: 16,
            metric: Metric::L2,
            n_lists: 8,
        };
        assert!(LinkAhead::start(&CacheConfig::default(), 0, shape, None)
            .threads
            .is_empty());
        // Strict mode returns before anything touches the directory.
        let unused = std::env::temp_dir().join("ltokit-ivf-link-ahead-never-written");
        let strict = CacheConfig::in_dir(&unused).with_jit(false);
        let strict_links = LinkAhead::start(&strict, 0, shape, None);
        assert!(strict_links.threads.is_empty() && strict_links.plans().is_empty());
        assert_eq!(strict_links.wait(), Stats::default());
        assert!(!unused.exists());
    }

    #[test]
    fn the_first_search_kernels_linked_ahead_are_plans_of_the_bundle() {
        // A name the bundle lacks would only be logged by the background thread, and the
        // first search would link everything itself: every type and metric, on the H200.
        let bundle = bundle().unwrap();
        let target: Target = "sm_90a".parse().unwrap();
        let matrices = [MatrixArith::TensorCores, MatrixArith::CudaCores];
        for dtype in [DType::F32, DType::F16, DType::I8, DType::U8] {
            for (metric, matrix) in [Metric::L2, Metric::L2Sqrt, Metric::Ip, Metric::Cosine]
                .into_iter()
                .flat_map(|m| matrices.map(|a| (m, a)))
            {
                for (dim, n_lists) in [(128, 1024), (784, 256), (20, 8)] {
                    let specs =
                        likely_first_kernels(dtype, dim, metric, n_lists, matrix, None).unwrap();
                    // Scan, merge and at least one coarse search; no probe count past the
                    // lists (8 lists: 8, 4 and 2 probes only).
                    assert!(specs.len() >= 4, "{dtype:?} {metric:?}: {}", specs.len());
                    let mut names: Vec<&str> = specs.iter().map(|s| s.plan.as_str()).collect();
                    names.sort_unstable();
                    names.dedup();
                    assert_eq!(names.len(), specs.len(), "a plan listed twice");
                    for s in &specs {
                        bundle
                            .plan(&s.plan, target)
                            .unwrap_or_else(|e| panic!("{}: {e}", s.plan));
                    }
                }
            }
        }
        // A small index gets no selection for more probes than it has lists.
        let small = likely_first_kernels(
            DType::F32,
            20,
            Metric::L2,
            8,
            MatrixArith::TensorCores,
            None,
        )
        .unwrap();
        assert!(small.iter().all(|s| !s.plan.ends_with("_c16")
            && !s.plan.contains("select_c32")
            && !s.plan.contains("select_c64")));
    }
}
