//! The coarse search: for each query, the `n_probes` centres that score best. Small
//! batches: one kernel, a tiled centres × queries product with the selection fused
//! (kernels/coarse.cu), the centres split over several blocks when the batch is small.
//! Large batches: the scores of every (query, centre) as a tiled product into a matrix —
//! on the tensor cores (sm_80 on: f32 queries as 3xTF32, kernels/coarse_mma.cu; f16 and
//! 8-bit ones as two f16 products against the centres' f16 split, kernels/coarse_h16.cu)
//! or register-tiled on the CUDA cores ([`MatrixArith`]) — then one warp a query selects.
//! Queries are read in their stored type. Also the k-means assignment (the nearest
//! centre). The centres themselves: [`DeviceCenters`]; which kernels a search takes:
//! `plan.rs`.

mod plan;

use ltokit::launch::{CudaSlice, CudaView, CudaViewMut, DeviceElem, Launch, LaunchConfig};
use ltokit::{Error, Result};

use plan::*;
pub(crate) use plan::{coarse_kernels, coarse_splits, select_stand_in};
pub use plan::{MatrixArith, MATRIX_MIN_QUERIES};

use super::centers::{DeviceCenters, HalfCenters};
use super::workspace::Buffer;
use super::{capacity, IvfGpu, KernelSpec};
use crate::data::DType;
use crate::metric::Metric;

/// A batch of queries for the coarse search: `n` rows of `dtype` in `rows` (a view of
/// any element type holding their bytes), the first numbered `base` by the caller — a
/// non-finite value is reported as 1 + `base` + its row in `rows`.
pub(crate) struct CoarseQueries<'q, 'a, T: DeviceElem> {
    pub rows: &'q CudaView<'a, T>,
    pub dtype: DType,
    pub n: usize,
    pub base: usize,
    /// The batch size the caller chose its kernels for (at least `n`; more for a last,
    /// smaller batch): the score matrix's tile follows it, so that every batch of a search
    /// takes the kernel loaded for the first.
    pub planned: usize,
}

/// The arguments `coarse_signature!` puts first, as a launch takes them.
struct QueryAndCentreArgs<'a> {
    centers: &'a DeviceCenters,
    nq: i32,
    dim: i32,
    metric: i32,
    n: i32,
    query_base: i32,
}

impl<'a> QueryAndCentreArgs<'a> {
    fn new(centers: &'a DeviceCenters, nq: usize, query_base: usize) -> Self {
        QueryAndCentreArgs {
            centers,
            nq: nq as i32,
            dim: centers.dim as i32,
            metric: centers.metric_code(),
            n: centers.n as i32,
            query_base: query_base as i32,
        }
    }

    /// `launch` with `queries` and the arguments of the f16 score matrix
    /// ([`SCORES_H16_SIGNATURE`] up to the scores) appended.
    fn push_halves<'l, T: DeviceElem>(
        &'l self,
        launch: Launch<'l>,
        queries: &'l CudaView<'_, T>,
        halves: &'l HalfCenters,
        pads: &'l (i32, i32),
    ) -> Launch<'l> {
        self.push_with(launch, queries, &halves.halves)
            .scalar(&pads.0)
            .scalar(&pads.1)
            .scalar(&halves.inv_scale)
    }

    /// `launch` with `queries` and these arguments appended.
    fn push<'l, T: DeviceElem>(
        &'l self,
        launch: Launch<'l>,
        queries: &'l CudaView<'_, T>,
    ) -> Launch<'l> {
        self.push_with(launch, queries, &self.centers.centers)
    }

    /// `launch` with what every coarse kernel takes first: the queries, their count,
    /// dimension and the metric's code, the centres as `centres` (their f32 rows, or their
    /// f16 split), their norms, their count and the queries' first number.
    fn push_with<'l, T: DeviceElem, C: DeviceElem>(
        &'l self,
        launch: Launch<'l>,
        queries: &'l CudaView<'_, T>,
        centres: &'l CudaSlice<C>,
    ) -> Launch<'l> {
        launch
            .view(queries)
            .scalar(&self.nq)
            .scalar(&self.dim)
            .scalar(&self.metric)
            .buffer(centres)
            .buffer(&self.centers.norms)
            .scalar(&self.n)
            .scalar(&self.query_base)
    }
}

/// Device scratch of the coarse search: a large batch's score matrix; a split search's
/// per-split ids and scores and its merged scores.
#[derive(Default)]
pub(crate) struct CoarseScratch {
    /// Scores of every (query, centre) of a large batch's part.
    matrix: Buffer<f32>,
    ids: Buffer<i64>,
    scores: Buffer<f32>,
    merged: Buffer<f32>,
}

impl IvfGpu {
    /// [`select_kernel`] where it is loaded; else its stand-in ([`select_stand_in`]), with
    /// the register-row form loading in the background for later calls. The flag says
    /// whether the stand-in was chosen.
    pub(crate) fn select_kernel_now(
        &self,
        n_probes: usize,
        n_centers: usize,
    ) -> Result<(KernelSpec, bool)> {
        let best = select_kernel(n_probes, n_centers)?;
        match select_stand_in(n_probes, n_centers)? {
            Some(stand_in) if !self.kernels_loaded(std::slice::from_ref(&best)) => {
                self.prepare_in_background(std::slice::from_ref(&best));
                Ok((stand_in, true))
            }
            _ => Ok((best, false)),
        }
    }

    /// [`coarse_kernels`] as this engine launches them now: the selection by
    /// [`IvfGpu::select_kernel_now`]; the flag says whether it is the stand-in.
    pub(crate) fn coarse_kernels_now(
        &self,
        dtype: DType,
        dim: usize,
        n_probes: usize,
        (nq, n_centers): (usize, usize),
    ) -> Result<(Vec<KernelSpec>, bool)> {
        coarse_kernels_selecting(
            dtype,
            dim,
            n_probes,
            (nq, n_centers),
            self.coarse_matrix_arith(),
            || self.select_kernel_now(n_probes, n_centers),
        )
    }

    /// The device's SM count (read once): the persistent score kernels' grid.
    fn multiprocessors(&self) -> Result<usize> {
        let mut cached = self.multiprocessors.lock();
        if let Some(n) = *cached {
            return Ok(n);
        }
        let n = self.gpu.multiprocessor_count()?.max(1);
        *cached = Some(n);
        Ok(n)
    }

    /// How this engine multiplies large batches' score matrices (the tensor cores from
    /// sm_80 unless [`IvfGpu::set_tile_arith`] chose the portable tiles).
    pub fn coarse_matrix_arith(&self) -> MatrixArith {
        MatrixArith::choose(self.gpu.compute_capability().major, self.tile_arith())
    }

    /// The `n_probes` best centres of each query of `q` (row-major) into `probes`
    /// (`q.n × n_probes`, best first). A non-finite query value sets `bad_query` to 1 +
    /// `q.base` + that query's row (the caller zeroes it). Given `pair_counts` (a
    /// list-major grouping's counters, 2 × the centres:
    /// `list_major::Grouping::selection_counters`), the score matrix's selection zeroes
    /// them and counts each probe in them, as the grouping's count kernel would; returns
    /// whether it did (the fused kernel of small batches does not, and leaves them as
    /// they were).
    pub(crate) fn coarse<T: DeviceElem>(
        &self,
        centers: &DeviceCenters,
        q: &CoarseQueries<'_, '_, T>,
        n_probes: usize,
        probes: &mut CudaViewMut<'_, i64>,
        bad_query: &mut CudaSlice<i32>,
        pair_counts: Option<&mut CudaSlice<i32>>,
    ) -> Result<bool> {
        let (queries, dtype, nq) = (q.rows, q.dtype, q.n);
        let dim = centers.dim;
        if queries.len() * std::mem::size_of::<T>() < nq * dim * dtype.size()
            || probes.len() < nq * n_probes
        {
            return Err(Error::InvalidArgument(format!(
                "coarse-search buffers too small for {nq} queries × {n_probes} probes"
            )));
        }
        if n_probes == 0 || n_probes > centers.n {
            return Err(Error::InvalidArgument(format!(
                "n_probes = {n_probes} is out of range (1..={})",
                centers.n
            )));
        }
        if pair_counts
            .as_ref()
            .is_some_and(|c| c.len() < 2 * centers.n)
        {
            return Err(Error::InvalidArgument(format!(
                "pair counters too short for {} lists",
                centers.n
            )));
        }
        if nq == 0 {
            return Ok(false);
        }
        if nq >= MATRIX_MIN_QUERIES {
            let counting = pair_counts.is_some();
            self.coarse_by_matrix(centers, q, n_probes, probes, bad_query, pair_counts)?;
            return Ok(counting);
        }
        let spec = coarse_kernel(dtype, dim, n_probes)?;
        let smem = spec.shared;
        let kernel = self
            .kernels
            .kernel(&spec.plan, spec.signature, spec.shared)?;
        let splits = coarse_splits(nq, centers.n, n_probes);
        let per_split = centers.n.div_ceil(splits);
        let args = QueryAndCentreArgs::new(centers, nq, q.base);
        let (per_split_i, probes_i) = (per_split as i32, n_probes as i32);
        let cfg = LaunchConfig {
            grid_dim: (nq.div_ceil(QUERIES_PER_BLOCK) as u32, splits as u32, 1),
            block_dim: (32 * QUERIES_PER_BLOCK as u32, 1, 1),
            shared_mem_bytes: smem as u32,
        };
        let gpu = &self.gpu;
        let mut scratch = self.coarse_scratch.lock();
        let CoarseScratch {
            ids,
            scores,
            merged,
            ..
        } = &mut *scratch;
        let n_split_out = if splits > 1 {
            nq * splits * n_probes
        } else {
            1
        };
        let scores = scores.at_least(gpu, n_split_out)?;
        let launch = args
            .push(Launch::on(gpu.stream(), &kernel, cfg), queries)
            .scalar(&per_split_i)
            .scalar(&probes_i);
        if splits == 1 {
            let launch = launch
                .view_mut(probes)
                .buffer_mut(scores)
                .buffer_mut(bad_query);
            // SAFETY: one split: the kernel reads nq × dim query values of `dtype` (checked
            // above), n_centers × dim centre values and n_centers norms (uploaded
            // together), and writes nq × n_probes probes (checked above) and one flag.
            unsafe { launch.run() }?;
            return Ok(false);
        }
        let ids = ids.at_least(gpu, n_split_out)?;
        let launch = launch
            .buffer_mut(ids)
            .buffer_mut(scores)
            .buffer_mut(bad_query);
        // SAFETY: as above, but block (x, y) writes its n_probes ids and scores per query
        // at ((q · splits + y) · n_probes): nq × splits × n_probes of each, the length of
        // `ids` and `scores`; centres are read in [y · per_split, min(n, (y+1) · per_split)).
        unsafe { launch.run() }?;
        let merged = merged.at_least(gpu, nq * n_probes)?;
        // Each query's best n_probes of its splits' candidates: the merge with the identity
        // report (l2), the scores into `merged`, the ids (centres) into `probes`.
        self.merge(
            Metric::L2,
            nq,
            splits * n_probes,
            n_probes,
            (&*scores, &*ids),
            (&mut merged.slice_mut(0..nq * n_probes), probes),
        )?;
        Ok(false)
    }

    /// [`IvfGpu::coarse`] for large batches (arguments checked there): the score matrix of
    /// as many queries as [`MATRIX_MAX_ENTRIES`] allows at a time, then the selection.
    fn coarse_by_matrix<T: DeviceElem>(
        &self,
        centers: &DeviceCenters,
        q: &CoarseQueries<'_, '_, T>,
        n_probes: usize,
        probes: &mut CudaViewMut<'_, i64>,
        bad_query: &mut CudaSlice<i32>,
        mut pair_counts: Option<&mut CudaSlice<i32>>,
    ) -> Result<()> {
        let (queries, dtype, nq) = (q.rows, q.dtype, q.n);
        let matrix_arith = self.coarse_matrix_arith();
        let n = centers.n;
        let part = matrix_part(nq, n);
        // The kernel and tile of the batch size the caller planned for, which may be
        // larger than this batch.
        let planned = q.planned.max(nq);
        let score_kernel = matrix_arith.score_kernel(dtype, centers.dim, (planned, n));
        let (select_spec, _) = self.select_kernel_now(n_probes, n)?;
        let select_queries = select_queries_per_block(capacity(n_probes)?);
        let threads = score_kernel.tile.2;
        let sms = self.multiprocessors()?;
        let scores_k = self.kernels.kernel(
            &score_kernel.plan,
            score_kernel.signature,
            score_kernel.shared,
        )?;
        let select_k = self
            .kernels
            .kernel(&select_spec.plan, select_spec.signature, 0)?;
        let gpu = &self.gpu;
        // Queries per part in the view's element type (a view of bytes holds any type).
        let per_query = centers.dim * dtype.size() / std::mem::size_of::<T>();
        let mut scratch = self.coarse_scratch.lock();
        let matrix = scratch.matrix.at_least(gpu, part * n)?;
        let (n_i, probes_i) = (n as i32, n_probes as i32);
        // Zeroed here, where they are counted into, not by the caller: a batch that takes
        // the fused kernel instead leaves them to the grouping, which zeroes them itself.
        if let Some(counts) = pair_counts.as_deref_mut() {
            gpu.clear(counts)?;
        }
        let split = match score_kernel.split {
            CenterSplit::None => None,
            CenterSplit::Halves => Some(&centers.halves),
            CenterSplit::Limbs => Some(&centers.limbs),
        };
        let halves = match split {
            None => None,
            Some(Some(h)) => Some((h, (h.dim_pad as i32, h.n_pad as i32))),
            Some(None) => {
                return Err(Error::InvalidArgument(format!(
                    "these centres were uploaded for {:?} queries; upload them for {dtype:?} queries (DeviceCenters::upload) to search {dtype:?} queries",
                    centers.query_type
                )))
            }
        };
        for start in (0..nq).step_by(part) {
            let nb = part.min(nq - start);
            let part_rows = queries.slice(start * per_query..(start + nb) * per_query);
            let args = QueryAndCentreArgs::new(centers, nb, q.base + start);
            let nb_i = nb as i32;
            let cfg = LaunchConfig {
                grid_dim: score_kernel.grid((nb, n), sms),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: score_kernel.shared as u32,
            };
            let launch = Launch::on(gpu.stream(), &scores_k, cfg);
            let launch = match &halves {
                Some((h, pads)) => args.push_halves(launch, &part_rows, h, pads),
                None => args.push(launch, &part_rows),
            };
            let launch = launch.buffer_mut(&mut *matrix).buffer_mut(&mut *bad_query);
            // SAFETY: reads nb × dim query values of `dtype` (within the caller's checked
            // view), n × dim centre values — or the split's n_pad × dim_pad words of each
            // part, n_pad ≥ n rounded up to a tile, dim_pad ≥ dim to a chunk, as uploaded
            // together (the limbs with n_pad f32 scales after them) — and n norms, writes
            // nb × n scores (the matrix holds part × n ≥ nb × n) and one flag.
            unsafe { launch.run() }?;
            let mut out = probes.slice_mut(start * n_probes..(start + nb) * n_probes);
            let cfg = LaunchConfig {
                grid_dim: (nb.div_ceil(select_queries) as u32, 1, 1),
                block_dim: (32 * select_queries as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            let count_i = pair_counts.is_some() as i32;
            let launch = Launch::on(gpu.stream(), &select_k, cfg)
                .buffer(&*matrix)
                .scalar(&nb_i)
                .scalar(&n_i)
                .scalar(&probes_i)
                .view_mut(&mut out)
                .scalar(&count_i);
            // Without counters the kernel never touches its counter argument.
            let launch = match pair_counts.as_deref_mut() {
                Some(counts) => launch.buffer_mut(counts),
                None => launch.buffer_mut(&mut *bad_query),
            };
            // SAFETY: reads the nb × n scores written above and writes n_probes ids per
            // query, nb × n_probes within `out`; n_probes ≤ n, so each gets valid ids; with
            // counters (checked: 2 × n entries) it increments entry id and n + id of ids
            // below n.
            unsafe { launch.run() }?;
        }
        Ok(())
    }

    /// The `n_probes` best centres of each of the `n` rows of `rows` (stored as `dtype`),
    /// on the host; a NaN or infinite value is an error naming its row (found by the
    /// kernel, not by a host pass).
    pub(crate) fn coarse_to_host<T: DeviceElem>(
        &self,
        centers: &DeviceCenters,
        rows: &CudaView<'_, T>,
        dtype: DType,
        n: usize,
        n_probes: usize,
    ) -> Result<Vec<i64>> {
        let gpu = &self.gpu;
        let mut out = gpu.alloc::<i64>((n * n_probes).max(1))?;
        let mut bad = gpu.upload(&[0i32])?;
        let q = CoarseQueries {
            rows,
            dtype,
            n,
            base: 0,
            planned: n,
        };
        self.coarse(
            centers,
            &q,
            n_probes,
            &mut out.slice_mut(0..(n * n_probes).max(1)),
            &mut bad,
            None,
        )?;
        let ids = gpu.download_prefix(&out, n * n_probes)?;
        if let Some(&b) = gpu.download(&bad)?.first().filter(|&&b| b > 0) {
            return Err(Error::InvalidArgument(format!(
                "vector {} has a NaN or infinite value; clean the data first",
                b - 1
            )));
        }
        Ok(ids)
    }
}
