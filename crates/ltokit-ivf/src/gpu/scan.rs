//! The per-query scan: one block per (query, probe) streams the probed list's rows,
//! scores them against the query staged in shared memory, and keeps a per-block top-k;
//! the merge then selects each query's top k across its probes. Exact search is the same
//! scan over a flat dataset cut into chunks.

use ltokit::launch::{
    CudaSlice, CudaView, CudaViewMut, DeviceElem, Elem, Extent, Launch, LaunchConfig, Param,
};
use ltokit::{Error, Result};

use super::list_major::{PairGroups, ScanPath};
use super::merge::merge_kernel;
use super::profile::Stage;
use super::{capacity, plan_names, DeviceLists, IvfGpu, KernelSpec, Neighbors};
use crate::data::{DType, Matrix};
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

/// The scalars among [`ScanBatch::list_and_filter_args`]: a launch borrows its arguments,
/// so the caller holds these while it builds one.
pub(crate) struct ListScalars {
    elem: i32,
    query_base: i32,
    k: i32,
}

impl<'a, T: DeviceElem> ScanBatch<'a, T> {
    /// The scalars of [`ScanBatch::list_and_filter_args`]: the lists' element size, the
    /// batch's first query and k.
    pub(crate) fn list_scalars(&self) -> ListScalars {
        ListScalars {
            elem: self.lists.dtype.size() as i32,
            query_base: self.query_base as i32,
            k: self.k as i32,
        }
    }

    /// Appends the arguments every scan kernel takes in the same order after its own: the
    /// lists (data, element size, offsets, sizes, ids), the filter (words, words per
    /// query), the batch's first query and k (`scalars`: [`ScanBatch::list_scalars`]).
    pub(crate) fn list_and_filter_args<'l>(
        &'l self,
        launch: Launch<'l>,
        scalars: &'l ListScalars,
    ) -> Launch<'l> {
        launch
            .buffer(&self.lists.data)
            .scalar(&scalars.elem)
            .buffer(&self.lists.list_offset)
            .buffer(&self.lists.list_size)
            .buffer(&self.lists.ids)
            .buffer(self.filter_words.0)
            .scalar(&self.filter_words.1)
            .scalar(&scalars.query_base)
            .scalar(&scalars.k)
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

/// The scan and merge kernels a scan of `nb` queries × `n_probes` probes of `lists` by
/// `metric` with `filter` for top-`k` needs.
pub(crate) fn scan_kernels(
    lists: &DeviceLists,
    metric: Metric,
    filter: &Filter,
    k: usize,
    nb: usize,
    n_probes: usize,
) -> Result<[KernelSpec; 2]> {
    let layout = ScanLayout::of(lists, nb, n_probes);
    Ok([
        scan_kernel(lists.dtype, lists.dim, lists.veclen, metric, filter, k)?,
        merge_kernel(metric, k, nb, layout.sets_per_query() * k)?,
    ])
}

/// The per-query scan kernel for lists of `dtype` × `dim` stored `veclen` values a chunk.
pub(crate) fn scan_kernel(
    dtype: DType,
    dim: usize,
    veclen: usize,
    metric: Metric,
    filter: &Filter,
    k: usize,
) -> Result<KernelSpec> {
    let (plan, _) = plan_names(dtype, veclen, metric, filter, k)?;
    Ok(KernelSpec {
        plan,
        signature: SCAN_SIGNATURE,
        shared: 4 * capacity(k)? * 12 + dim * 4,
    })
}

/// How a per-query scan launch covers a batch: probes a block, splits of each list.
struct ScanLayout {
    per_block: usize,
    splits: usize,
    n_probes: usize,
}

impl ScanLayout {
    /// The layout for `nb` queries × `n_probes` probes of `lists`.
    fn of(lists: &DeviceLists, nb: usize, n_probes: usize) -> Self {
        let per_block = probes_per_block(lists, nb, n_probes);
        let rows_per_list = lists.ids.len() / lists.n_lists.max(1);
        let splits = row_splits(rows_per_list, nb * n_probes.div_ceil(per_block));
        ScanLayout {
            per_block,
            splits,
            n_probes,
        }
    }

    /// Candidate sets (blocks) a query gets: probe groups × row splits.
    fn sets_per_query(&self) -> usize {
        self.n_probes.div_ceil(self.per_block) * self.splits
    }
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
/// Rows one split should keep at least: a 32-row group for each of a block's 4 warps.
/// A small batch's scan is latency: each warp's group is a chain of load round trips, so
/// one group a warp over more blocks beats two groups over fewer (the split's fixed costs
/// — staging the query, writing k candidates — are a few hundred bytes).
const MIN_ROWS_PER_SPLIT: usize = 128;
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
        let layout = ScanLayout::of(lists, b.nb, b.n_probes);
        let (per_block, splits) = (layout.per_block, layout.splits);
        let groups = layout.sets_per_query();
        if cand.0.len().min(cand.1.len()) < b.nb * groups * b.k {
            return Err(Error::InvalidArgument(format!(
                "scan candidate buffers too small for {} queries × {groups} blocks × k {} \
                 (size them by candidate_sets)",
                b.nb, b.k
            )));
        }
        let [scan, _] = scan_kernels(lists, b.metric, b.filter, b.k, b.nb, b.n_probes)?;
        let scan_smem = scan.shared;
        let scan = self
            .kernels
            .kernel(&scan.plan, scan.signature, scan.shared)?;
        let (dim_i, probes_i, per_block_i, splits_i) = (
            dim as i32,
            b.n_probes as i32,
            per_block as i32,
            splits as i32,
        );
        let scalars = b.list_scalars();
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
            .list_and_filter_args(launch, &scalars)
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
        self.merge(b.metric, b.nb, groups * b.k, b.k, (&*cand_d, &*cand_i), out)?;
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
                self.list_major_batch(&b, &mut groups, false, (&mut cand_d, &mut cand_i), out)?;
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
        // One query × 20 probes of 977-row lists: 20 blocks, cut 7 ways (977 / 128).
        assert_eq!(row_splits(977, 20), 7);
        // Lists long enough: as many splits as reach two blocks an SM, at most 16.
        assert_eq!(row_splits(100_000, 20), 14);
        assert_eq!(row_splits(100_000, 1), MAX_ROW_SPLITS);
        // Short lists are never cut; launches that fill the GPU neither.
        assert_eq!(row_splits(200, 1), 1);
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
