//! The per-query scan: one block per (query, probe) streams the probed list's rows,
//! scores them against the query staged in shared memory, and keeps a per-block top-k;
//! the merge then selects each query's top k across its probes. Exact search is the same
//! scan over a flat dataset cut into chunks.

use ltokit::launch::{
    CudaSlice, CudaView, CudaViewMut, DeviceElem, Elem, Extent, Launch, LaunchConfig, Param,
};
use ltokit::{Error, Result};

use super::list_major::{PairGroups, ScanPath};
use super::profile::Stage;
use super::{capacity, plan_names, DeviceLists, IvfGpu, KernelSpec, Neighbors};
use crate::data::Matrix;
use crate::metric::{Filter, Metric};

/// A kernel signature with the parameters both scans share in the middle (list data,
/// element size, list offsets, list sizes, ids, filter words, filter words per query,
/// first query of the batch, k; [`ScanBatch::list_and_filter_args`] passes them) between
/// each scan's own.
macro_rules! scan_signature {
    ([$($before:expr),* $(,)?], [$($after:expr),* $(,)?]) => {
        &[
            $($before,)*
            Param::Buffer(Elem::U8, Extent::Any),
            Param::I32,
            Param::Buffer(Elem::I64, Extent::Any),
            Param::Buffer(Elem::I32, Extent::Any),
            Param::Buffer(Elem::I64, Extent::Any),
            Param::Buffer(Elem::U32, Extent::Any),
            Param::I64,
            Param::I32,
            Param::I32,
            $($after,)*
        ]
    };
}
pub(crate) use scan_signature;

/// `ivf_scan`'s parameters (kernels/scan.cu). Buffer lengths are products of several
/// arguments, so they are `Extent::Any`: [`ScanBatch`] sizes them.
const SCAN_SIGNATURE: &[Param] = scan_signature!(
    [
        Param::Ptr,                            // queries, in the lists' type
        Param::I32,                            // dim
        Param::I32,                            // n_probes
        Param::I32,                            // probes per block
        Param::I32,                            // row splits per list
        Param::Buffer(Elem::I64, Extent::Any), // probes
    ],
    [
        Param::BufferMut(Elem::F32, Extent::Any), // candidate distances
        Param::BufferMut(Elem::I64, Extent::Any), // candidate ids
    ]
);

/// `ivf_merge`'s parameters.
const MERGE_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::F32, Extent::Any),
    Param::Buffer(Elem::I64, Extent::Any),
    Param::I32,
    Param::I32,
    Param::BufferMut(Elem::F32, Extent::Any),
    Param::BufferMut(Elem::I64, Extent::Any),
];

/// One batch of the scan, everything on the device.
pub(crate) struct ScanBatch<'a, T: DeviceElem> {
    /// The lists.
    pub lists: &'a DeviceLists,
    /// The metric the lists are scored by.
    pub metric: Metric,
    /// The filter (its kind picks the plan) and its words on the device.
    pub filter: &'a Filter,
    pub filter_words: (&'a CudaSlice<u32>, i64),
    /// Index of the batch's first query in the whole call (for per-query bitmaps).
    pub query_base: usize,
    /// `nb` queries in the lists' type, row-major.
    pub queries: CudaView<'a, T>,
    pub nb: usize,
    /// `nb × n_probes` list numbers.
    pub probes: CudaView<'a, i64>,
    pub n_probes: usize,
    pub k: usize,
}

impl<'a, T: DeviceElem> ScanBatch<'a, T> {
    /// Appends the arguments both scans take in the same order after their own: the
    /// lists (data, element size, offsets, sizes, ids), the filter (words, words per
    /// query), the batch's first query and k.
    pub(crate) fn list_and_filter_args<'l>(
        &'l self,
        launch: Launch<'l>,
        elem: &'l i32,
        query_base: &'l i32,
        k: &'l i32,
    ) -> Launch<'l> {
        launch
            .buffer(&self.lists.data)
            .scalar(elem)
            .buffer(&self.lists.list_offset)
            .buffer(&self.lists.list_size)
            .buffer(&self.lists.ids)
            .buffer(self.filter_words.0)
            .scalar(&self.filter_words.1)
            .scalar(query_base)
            .scalar(k)
    }

    /// Checks the batch's buffers before any launch: the queries and probes hold `nb`
    /// rows, the candidate buffers (`cand_len` each) `nb × n_probes × k`, the outputs
    /// (`out_len` each) `nb × k`.
    pub(crate) fn check_buffers(&self, cand_len: usize, out_len: usize) -> Result<()> {
        let query_bytes = self.nb * self.lists.dim * self.lists.dtype.size();
        if cand_len < self.nb * self.n_probes * self.k
            || out_len < self.nb * self.k
            || self.queries.len() * std::mem::size_of::<T>() < query_bytes
            || self.probes.len() < self.nb * self.n_probes
        {
            return Err(Error::InvalidArgument(format!(
                "scan buffers too small for {} queries × {} probes × k {}",
                self.nb, self.n_probes, self.k
            )));
        }
        Ok(())
    }
}

/// The scan and merge kernels a scan of `lists` by `metric` with `filter` for top-`k` needs.
pub(crate) fn scan_kernels(
    lists: &DeviceLists,
    metric: Metric,
    filter: &Filter,
    k: usize,
) -> Result<[KernelSpec; 2]> {
    let (scan, _) = plan_names(lists.dtype, lists.veclen, metric, filter, k)?;
    let cap = capacity(k)?;
    Ok([
        KernelSpec {
            plan: scan,
            signature: SCAN_SIGNATURE,
            shared: 4 * cap * 12 + lists.dim * 4,
        },
        merge_kernel(metric, k)?,
    ])
}

/// The merge of candidates into each query's top `k`, reported by `metric` (`l2`: the
/// scores as they are).
pub(crate) fn merge_kernel(metric: Metric, k: usize) -> Result<KernelSpec> {
    let cap = capacity(k)?;
    Ok(KernelSpec {
        plan: format!("merge_c{cap}_{}", metric.name()),
        signature: MERGE_SIGNATURE,
        shared: cap * 12,
    })
}

/// Bytes of list rows one scan block should cover at least, so that its fixed costs
/// (staging the query, the top-k set-up, writing its candidates) stay small beside the
/// scan; short lists (8-bit types, small datasets) are grouped to reach it.
const BLOCK_BYTES: usize = 512 << 10;
/// Blocks a launch should keep at least, so that grouping never starves the GPU
/// (small batches).
const MIN_BLOCKS: usize = 8192;

/// How many consecutive probes of a query one block scans: enough lists to cover
/// [`BLOCK_BYTES`], as long as the launch keeps [`MIN_BLOCKS`] blocks; at most 16.
fn probes_per_block(lists: &DeviceLists, nb: usize, n_probes: usize) -> usize {
    let avg_list_bytes = (lists.data.len() / lists.n_lists.max(1)).max(1);
    let by_bytes = BLOCK_BYTES.div_ceil(avg_list_bytes).clamp(1, 16);
    let by_parallelism = (nb * n_probes / MIN_BLOCKS).max(1);
    by_bytes.min(by_parallelism).min(n_probes.max(1))
}

/// Blocks a small batch's scan aims at by cutting lists over several blocks: two an SM
/// of the H200 (132). One query's 20 probes are otherwise 20 blocks, most of the GPU idle
/// while each streams a whole list with four warps.
const SPLIT_TARGET_BLOCKS: usize = 264;
/// Rows one split should keep at least: two 32-row groups for each of a block's 4 warps,
/// so that the split's fixed costs (staging the query, writing k candidates) stay small.
const MIN_ROWS_PER_SPLIT: usize = 256;
/// Splits of one list at most.
const MAX_ROW_SPLITS: usize = 16;

/// Into how many blocks each list of a scan of `blocks` (query, probe group) blocks is
/// cut, for lists of `rows_per_list` rows on average: 1 for launches that fill the GPU by
/// themselves.
pub(crate) fn row_splits(rows_per_list: usize, blocks: usize) -> usize {
    if blocks >= SPLIT_TARGET_BLOCKS {
        return 1;
    }
    let by_rows = (rows_per_list / MIN_ROWS_PER_SPLIT).max(1);
    SPLIT_TARGET_BLOCKS
        .div_ceil(blocks.max(1))
        .min(by_rows)
        .min(MAX_ROW_SPLITS)
}

/// Candidate sets (of `k` each) a batch of `nb` queries × `n_probes` probes may write:
/// one per probe, or more where [`row_splits`] cuts the lists of a small batch (then
/// fewer than twice [`SPLIT_TARGET_BLOCKS`]). Size the candidate buffers by this.
pub(crate) fn candidate_sets(nb: usize, n_probes: usize) -> usize {
    (nb * n_probes).max(2 * SPLIT_TARGET_BLOCKS)
}

impl IvfGpu {
    /// Scans one batch and merges it: candidates into `cand` (at least `nb × n_probes × k`
    /// each), the top `k` of each query into `out` (at least `nb × k` each).
    pub(crate) fn scan_batch<T: DeviceElem>(
        &self,
        b: &ScanBatch<'_, T>,
        cand: (&mut CudaSlice<f32>, &mut CudaSlice<i64>),
        out: (&mut CudaViewMut<'_, f32>, &mut CudaViewMut<'_, i64>),
    ) -> Result<()> {
        let lists = b.lists;
        let dim = lists.dim;
        b.check_buffers(cand.0.len().min(cand.1.len()), out.0.len().min(out.1.len()))?;
        let per_block = probes_per_block(lists, b.nb, b.n_probes);
        let rows_per_list = lists.ids.len() / lists.n_lists.max(1);
        let splits = row_splits(rows_per_list, b.nb * b.n_probes.div_ceil(per_block));
        let groups = b.n_probes.div_ceil(per_block) * splits;
        if cand.0.len().min(cand.1.len()) < b.nb * groups * b.k {
            return Err(Error::InvalidArgument(format!(
                "scan candidate buffers too small for {} queries × {groups} blocks × k {} \
                 (size them by candidate_sets)",
                b.nb, b.k
            )));
        }
        let [scan, merge] = scan_kernels(lists, b.metric, b.filter, b.k)?;
        let scan_smem = scan.shared;
        let scan = self
            .kernels
            .kernel(&scan.plan, scan.signature, scan.shared)?;
        let (dim_i, probes_i, per_block_i, splits_i, elem, base, k_i) = (
            dim as i32,
            b.n_probes as i32,
            per_block as i32,
            splits as i32,
            lists.dtype.size() as i32,
            b.query_base as i32,
            b.k as i32,
        );
        let cfg = LaunchConfig {
            grid_dim: (groups as u32, b.nb as u32, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: scan_smem as u32,
        };
        let stream = self.gpu.stream();
        let (cand_d, cand_i) = cand;
        let launch = Launch::on(stream, &scan, cfg)
            .view(&b.queries)
            .scalar(&dim_i)
            .scalar(&probes_i)
            .scalar(&per_block_i)
            .scalar(&splits_i)
            .view(&b.probes);
        let launch = b
            .list_and_filter_args(launch, &elem, &base, &k_i)
            .buffer_mut(cand_d)
            .buffer_mut(cand_i);
        // SAFETY: the scan reads `nb` queries of `dim` values (checked above), n_probes
        // list numbers per query (checked above; list numbers come from the coarse search
        // or were range-checked by `scan`), list rows through list_offset/list_size (built
        // together with data and ids), the filter within its words per query, and writes
        // nb × groups × k candidates (groups: probe groups × row splits), no more than
        // cand holds (checked above).
        unsafe { launch.run() }?;
        self.profiler.lap(&self.gpu, Stage::Scan)?;
        self.merge_candidates(&merge, b.nb, groups * b.k, b.k, (&*cand_d, &*cand_i), out)
    }

    /// Each of `nb` queries' top `k` of its `n_cand` candidates (`cand`, query-major) into
    /// `out`, through the merge kernel `merge`.
    pub(crate) fn merge_candidates(
        &self,
        merge: &KernelSpec,
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
        let kernel = self
            .kernels
            .kernel(&merge.plan, merge.signature, merge.shared)?;
        let (n_cand_i, k_i) = (n_cand as i32, k as i32);
        let cfg = LaunchConfig {
            grid_dim: (nb as u32, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: merge.shared as u32,
        };
        let launch = Launch::on(self.gpu.stream(), &kernel, cfg)
            .buffer(cand_d)
            .buffer(cand_i)
            .scalar(&n_cand_i)
            .scalar(&k_i)
            .view_mut(out_d)
            .view_mut(out_i);
        // SAFETY: the merge reads n_cand candidates per query for nb queries and writes k
        // results per query; both within the buffers (checked above).
        unsafe { launch.run() }?;
        self.profiler.lap(&self.gpu, Stage::Merge)
    }

    /// For each query (in the lists' type, `lists.dim` wide), scans the lists named in
    /// its row of `probes` (`n_probes` per query) by `path` and returns its top `k`.
    #[allow(clippy::too_many_arguments)]
    pub fn scan(
        &self,
        lists: &DeviceLists,
        metric: Metric,
        filter: &Filter,
        queries: &Matrix,
        probes: &[i64],
        n_probes: usize,
        k: usize,
        path: ScanPath,
    ) -> Result<Neighbors> {
        let dim = lists.dim;
        let nq = queries.rows;
        if queries.dtype != lists.dtype || queries.dim != dim {
            return Err(Error::InvalidArgument(format!(
                "queries are {} × {}, the lists {} × {dim}",
                queries.dtype.name(),
                queries.dim,
                lists.dtype.name()
            )));
        }
        if probes.len() != nq * n_probes || n_probes == 0 {
            return Err(Error::InvalidArgument(format!(
                "{} probes for {nq} queries × {n_probes} probes",
                probes.len()
            )));
        }
        if let Some(bad) = probes
            .iter()
            .find(|&&p| p < 0 || p as usize >= lists.n_lists)
        {
            return Err(Error::InvalidArgument(format!(
                "probe {bad} names no list ({} lists)",
                lists.n_lists
            )));
        }
        capacity(k)?;
        let filter_dev = self.filter_on_device(filter, nq)?;
        let batch = Self::batch_size(n_probes, k);
        let gpu = &self.gpu;
        let q_all = gpu.upload(&queries.bytes)?;
        let p_all = gpu.upload(probes)?;
        let sets = candidate_sets(batch.min(nq).max(1), n_probes);
        let mut cand_d = gpu.alloc::<f32>(sets * k)?;
        let mut cand_i = gpu.alloc::<i64>(sets * k)?;
        let mut out_d = gpu.alloc::<f32>(nq.max(1) * k)?;
        let mut out_i = gpu.alloc::<i64>(nq.max(1) * k)?;
        let row = dim * lists.dtype.size();
        let mut groups = PairGroups::default();
        for start in (0..nq).step_by(batch) {
            let nb = batch.min(nq - start);
            let b = ScanBatch {
                lists,
                metric,
                filter,
                filter_words: (&filter_dev.0, filter_dev.1),
                query_base: start,
                queries: q_all.slice(start * row..(start + nb) * row),
                nb,
                probes: p_all.slice(start * n_probes..(start + nb) * n_probes),
                n_probes,
                k,
            };
            let out = (
                &mut out_d.slice_mut(start * k..(start + nb) * k),
                &mut out_i.slice_mut(start * k..(start + nb) * k),
            );
            if self.use_list_major(path, lists, nb, n_probes, k)? {
                self.list_major_batch(&b, &mut groups, (&mut cand_d, &mut cand_i), out)?;
            } else {
                self.scan_batch(&b, (&mut cand_d, &mut cand_i), out)?;
            }
        }
        Ok(Neighbors {
            distances: gpu.download_prefix(&out_d, nq * k)?,
            ids: gpu.download_prefix(&out_i, nq * k)?,
            k,
        })
    }

    /// Exact search: every row of `base` for every query (in `base`'s type).
    pub fn exact(
        &self,
        base: &DeviceLists,
        metric: Metric,
        filter: &Filter,
        queries: &Matrix,
        k: usize,
    ) -> Result<Neighbors> {
        let probes: Vec<i64> = (0..queries.rows)
            .flat_map(|_| 0..base.n_lists as i64)
            .collect();
        // Per-query: exact search is the ground truth recall is measured against, so it
        // keeps the direct (q − x)² arithmetic rather than the norm expansion.
        self.scan(
            base,
            metric,
            filter,
            queries,
            &probes,
            base.n_lists,
            k,
            ScanPath::PerQuery,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_batches_cut_long_lists_over_blocks_and_large_ones_do_not() {
        // One query × 20 probes of 977-row lists: 20 blocks, cut 3 ways (977 / 256).
        assert_eq!(row_splits(977, 20), 3);
        // Lists long enough: as many splits as reach two blocks an SM, at most 16.
        assert_eq!(row_splits(100_000, 20), 14);
        assert_eq!(row_splits(100_000, 1), MAX_ROW_SPLITS);
        // Short lists are never cut; launches that fill the GPU neither.
        assert_eq!(row_splits(300, 1), 1);
        assert_eq!(row_splits(100_000, SPLIT_TARGET_BLOCKS), 1);
        assert_eq!(row_splits(100_000, 0), MAX_ROW_SPLITS);
        // The candidate buffers hold every split's candidates.
        for blocks in 1..SPLIT_TARGET_BLOCKS + 10 {
            for nb in [1, 3, blocks] {
                let groups = blocks.div_ceil(nb);
                let sets = nb * groups * row_splits(1 << 20, nb * groups);
                assert!(sets <= candidate_sets(nb, groups), "{nb} × {groups}");
            }
        }
    }
}
