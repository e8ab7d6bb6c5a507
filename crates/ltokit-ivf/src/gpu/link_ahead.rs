//! Linking a first search's kernels before the engine exists. A program that reads its
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

use super::kernels::{in_order_link_workers, KernelSpec};
use super::search::{device_build_kernels, likely_first_kernels, FirstSearch};
use super::{bundle, MatrixArith, TileArith};
use crate::data::DType;
use crate::metric::Metric;

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
        assert!(names
            .iter()
            .any(|n| n.starts_with("coarse_scores_h16_q") && n.ends_with("_u8")));
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
            select("coarse_select_c2") < select("coarse_select_c8"),
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
}
