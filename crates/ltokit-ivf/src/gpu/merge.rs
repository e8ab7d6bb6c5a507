//! The merge: each query's final top k of its candidate sets (kernels/merge.cu), for both
//! scans and for the coarse search's splits. Small batches give each query a block: for
//! k ≤ 32 its warps keep their best 32 in registers (sorted through shuffles) and merge
//! them in a tree; for larger k the block sorts every candidate in shared memory
//! (bitonic). Either way every candidate loads at once, and one query no longer waits on
//! one warp inserting candidates one at a time. Larger batches keep a warp per query and
//! its running top-k: in registers for k ≤ 32 (eight queries a block), else in shared
//! memory.

use ltokit::launch::{CudaSlice, CudaViewMut, Elem, Extent, Launch, LaunchConfig, Param};
use ltokit::{Error, Result};

use super::{capacity, IvfGpu, KernelSpec};
use crate::metric::Metric;

/// A merge kernel's parameters: candidate scores and ids, candidates per query, k, the
/// outputs, then the kernel's own.
macro_rules! merge_signature {
    ($($own:expr),* $(,)?) => {
        &[
            Param::Buffer(Elem::F32, Extent::Any),
            Param::Buffer(Elem::I64, Extent::Any),
            Param::I32,
            Param::I32,
            Param::BufferMut(Elem::F32, Extent::Any),
            Param::BufferMut(Elem::I64, Extent::Any),
            $($own,)*
        ]
    };
}

/// `ivf_merge`'s parameters.
const MERGE_SIGNATURE: &[Param] = merge_signature!();

/// `ivf_merge_regs`'s parameters: [`MERGE_SIGNATURE`]'s, then the batch's query count.
const MERGE_REGS_SIGNATURE: &[Param] = merge_signature!(Param::I32);

/// Queries (a warp each) of a block of the register merge (`IVF_RMERGE_WARPS` in
/// merge.cu).
const REGS_MERGE_QUERIES_PER_BLOCK: usize = 8;

/// Batches of at most this many queries take a block a query; larger ones fill the GPU
/// with a warp a query. Measured on the H200 (lowdim 1M × 128 f32, k 10, 20 probes; ncu,
/// docs/gpu-runs/2026-11-30-mma-tiles/{a1,b}-*/ncu-latency-summary.txt): one query's scan
/// merge (1,400 candidates) and coarse merge (640) take 4.2 µs with the warps' register
/// merge, 31.4 µs with the shared-memory sort and 15.8 / 20.4 µs with a warp; 100 queries
/// 3.6 µs, 7.5 µs and 15–33 µs. Between 100 and 1,000 queries (a warp a query: 0.04 ms
/// for 10,000) the crossover was not measured.
pub(crate) const BLOCK_MERGE_MAX_QUERIES: usize = 512;
/// Candidates a query may have for the sort (`IVF_SORT_MAX` in merge.cu).
pub(crate) const SORT_MAX_CANDIDATES: usize = 2048;
/// Threads of a sorting block (`IVF_SORT_THREADS` in merge.cu).
const SORT_THREADS: u32 = 256;
/// Largest k of the warps' register merge (a warp's list is 32 long).
const WARPS_MERGE_MAX_K: usize = 32;
/// Threads of a warps-merge block (`IVF_WMERGE_WARPS` × 32 in merge.cu).
const WARPS_MERGE_THREADS: u32 = 512;

/// How a batch's candidates are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MergeKind {
    /// A block a query, its warps' best 32 in registers (k ≤ 32, any candidate count).
    Warps,
    /// A block a query, all its candidates sorted in shared memory.
    Sort,
    /// A warp a query with a running top-k in registers (k ≤ 32), eight a block.
    /// Measured on the H200 against `Warp` (session 14, `1-wip-ab/`, same call, ncu at
    /// the GPU's clocks): images × 2 probes 19.4 → 7.4 µs, 1M × 128 i8 × 10 probes 29.1 →
    /// 10.4 µs; device QPS +0.6 to +13.6 % over the six bench sets, none lower.
    Regs,
    /// A warp a query with a running top-k in shared memory.
    Warp,
}

/// The merge for `nb` queries of `n_cand` candidates into their top `k`.
fn merge_kind(nb: usize, n_cand: usize, k: usize) -> MergeKind {
    if nb > BLOCK_MERGE_MAX_QUERIES {
        if k <= WARPS_MERGE_MAX_K {
            MergeKind::Regs
        } else {
            MergeKind::Warp
        }
    } else if k <= WARPS_MERGE_MAX_K {
        MergeKind::Warps
    } else if n_cand <= SORT_MAX_CANDIDATES {
        MergeKind::Sort
    } else {
        MergeKind::Warp
    }
}

/// The merge kernel for `nb` queries of `n_cand` candidates into their top `k`, reported
/// by `metric` (`l2`: the scores as they are).
pub(crate) fn merge_kernel(
    metric: Metric,
    k: usize,
    nb: usize,
    n_cand: usize,
) -> Result<KernelSpec> {
    kind_kernel(metric, k, merge_kind(nb, n_cand, k))
}

/// The kernel of merge `kind` into top `k`, reported by `metric`.
fn kind_kernel(metric: Metric, k: usize, kind: MergeKind) -> Result<KernelSpec> {
    let cap = capacity(k)?;
    let (plan, shared) = match kind {
        MergeKind::Warps => (format!("merge_warps_{}", metric.name()), 0),
        MergeKind::Sort => (format!("merge_sort_{}", metric.name()), 0),
        MergeKind::Regs => (format!("merge_regs_{}", metric.name()), 0),
        MergeKind::Warp => (format!("merge_c{cap}_{}", metric.name()), cap * 12),
    };
    Ok(KernelSpec {
        plan,
        signature: if kind == MergeKind::Regs {
            MERGE_REGS_SIGNATURE
        } else {
            MERGE_SIGNATURE
        },
        shared,
    })
}

impl IvfGpu {
    /// Each of `nb` queries' top `k` of its `n_cand` candidates (`cand`, query-major; ids
    /// below 0 are empty) into `out`, reported by `metric`.
    pub(crate) fn merge(
        &self,
        metric: Metric,
        nb: usize,
        n_cand: usize,
        k: usize,
        cand: (&CudaSlice<f32>, &CudaSlice<i64>),
        out: (&mut CudaViewMut<'_, f32>, &mut CudaViewMut<'_, i64>),
    ) -> Result<()> {
        let (cand_d, cand_i) = cand;
        let (out_d, out_i) = out;
        if cand_d.len().min(cand_i.len()) < nb * n_cand || out_d.len().min(out_i.len()) < nb * k {
            return Err(Error::InvalidArgument(format!(
                "merge buffers too small for {nb} queries × {n_cand} candidates, k {k}"
            )));
        }
        if nb == 0 {
            return Ok(());
        }
        let kind = merge_kind(nb, n_cand, k);
        let spec = kind_kernel(metric, k, kind)?;
        let kernel = self
            .kernels
            .kernel(&spec.plan, spec.signature, spec.shared)?;
        let (n_cand_i, k_i, nb_i) = (n_cand as i32, k as i32, nb as i32);
        let (blocks, threads) = match kind {
            MergeKind::Warps => (nb, WARPS_MERGE_THREADS),
            MergeKind::Sort => (nb, SORT_THREADS),
            MergeKind::Regs => (
                nb.div_ceil(REGS_MERGE_QUERIES_PER_BLOCK),
                32 * REGS_MERGE_QUERIES_PER_BLOCK as u32,
            ),
            MergeKind::Warp => (nb, 32),
        };
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: spec.shared as u32,
        };
        let launch = Launch::on(self.gpu.stream(), &kernel, cfg)
            .buffer(cand_d)
            .buffer(cand_i)
            .scalar(&n_cand_i)
            .scalar(&k_i)
            .view_mut(out_d)
            .view_mut(out_i);
        let launch = if kind == MergeKind::Regs {
            launch.scalar(&nb_i)
        } else {
            launch
        };
        // SAFETY: the merge reads n_cand candidates per query for nb queries and writes k
        // results per query; both within the buffers (checked above). The sort holds at
        // most SORT_MAX_CANDIDATES a query in its static shared memory, and the warps' and
        // the register merges keep 32 a warp, k ≤ 32 (`merge_kind`); the register merge's
        // warps past nb return at once.
        unsafe { launch.run() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_batches_take_a_block_a_query_and_large_ones_a_warp() {
        let one = merge_kernel(Metric::L2, 10, 1, 600).unwrap();
        assert_eq!(one.plan, "merge_warps_l2");
        assert_eq!(one.shared, 0);
        // The warps' merge streams: any number of candidates.
        let many_cand = merge_kernel(Metric::L2, 32, 1, 100_000).unwrap();
        assert_eq!(many_cand.plan, "merge_warps_l2");
        // k over a warp's list: the shared-memory sort, within its capacity.
        let wide_k = merge_kernel(Metric::Cosine, 33, 100, 2048).unwrap();
        assert_eq!(wide_k.plan, "merge_sort_cosine");
        let wide = merge_kernel(Metric::L2, 100, 1, SORT_MAX_CANDIDATES + 1).unwrap();
        assert_eq!(wide.plan, "merge_c128_l2");
        assert_eq!(wide.shared, 128 * 12);
        // Large batches: a warp a query, its list in registers up to k = 32.
        let many = merge_kernel(Metric::Ip, 10, BLOCK_MERGE_MAX_QUERIES + 1, 200).unwrap();
        assert_eq!(many.plan, "merge_regs_ip");
        assert_eq!(many.signature, MERGE_REGS_SIGNATURE);
        let many_wide = merge_kernel(Metric::L2, 33, 10_000, 330).unwrap();
        assert_eq!(many_wide.plan, "merge_c64_l2");
        assert_eq!(many_wide.signature, MERGE_SIGNATURE);
        assert!(merge_kernel(Metric::L2, 0, 1, 10).is_err());
    }
}
