//! An index on the device and its search: coarse search, scan of the probed lists with a
//! fused top-k, merge — all on the GPU's stream, with device buffers reused across calls.
//!
//! [`GpuIndex::search_device`] takes queries already on the GPU, in the index's own
//! element type (a u8 query is 1 byte per value), and writes ids and distances into the
//! caller's device buffers; [`GpuIndex::search`] is the host API over it (one upload of
//! the queries as stored, one download of the results, and the check of query values).

use parking_lot::Mutex;

use ltokit::launch::{device_extent, CudaView, CudaViewMut, DeviceElem};
use ltokit::{Error, Result};

use super::coarse::CoarseQueries;
use super::link_ahead::{likely_first_kernels, FIRST_BATCH, FIRST_K};
use super::list_major::{list_major_kernels, ScanPathCell};
use super::profile::Stage;
use super::replay::CallKey;
use super::scan::{candidate_sets, scan_kernels, ScanBatch};
use super::workspace::{growths, HostStaging, Workspace};
use super::{
    capacity, query_elem, DeviceCenters, DeviceLists, IvfGpu, KernelSpec, Neighbors, ReplayEvent,
    ScanPath, MAX_K,
};
use crate::data::{DType, Matrix};
use crate::index::IvfIndex;
use crate::metric::{Filter, Metric};

/// What a call's batches run, chosen once for the call (`GpuIndex::launch_batches`).
struct BatchPlan {
    /// Queries of the call, and of one batch at most.
    nq: usize,
    batch: usize,
    k: usize,
    n_probes: usize,
    /// The scan path of the batches that may scan list-major (their kernels loaded), or
    /// `None` where every batch scans per-query.
    list_major: Option<ScanPath>,
}

/// An index on the GPU, ready to search.
pub struct GpuIndex {
    /// The host index's metric.
    pub metric: Metric,
    /// Element type.
    pub dtype: DType,
    /// Dimensions.
    pub dim: usize,
    /// Lists.
    pub n_lists: usize,
    lists: DeviceLists,
    centers: DeviceCenters,
    workspace: Mutex<Workspace>,
    staging: Mutex<HostStaging>,
    scan_path: ScanPathCell,
}

impl GpuIndex {
    /// Uploads an index. The kernels a first search most likely needs (k ≤ 16, a batch of
    /// thousands, up to 64 probes) are queued at once for linking in the background, in
    /// that order, so that they are ready by the time the upload is done and the first
    /// search comes — a search needing one of them while it links waits for that link
    /// instead of starting its own.
    pub fn upload(engine: &IvfGpu, index: &IvfIndex) -> Result<Self> {
        Self::from_lists(
            engine,
            index.metric,
            DeviceLists::from_index(engine, index)?,
            &index.centers,
        )
    }

    /// An index of lists already on the device (an index built there: see
    /// [`crate::build::build_on_gpu`]) and their centres; the first search's kernels
    /// start linking as in [`GpuIndex::upload`].
    pub fn from_lists(
        engine: &IvfGpu,
        metric: Metric,
        lists: DeviceLists,
        centers: &[f32],
    ) -> Result<Self> {
        let coarse_metric = match metric {
            Metric::L2Sqrt => Metric::L2,
            m => m,
        };
        let dim = lists.dim();
        if centers.len() != lists.n_lists() * dim {
            return Err(Error::InvalidArgument(format!(
                "{} centre values for {} lists of {dim} dimensions",
                centers.len(),
                lists.n_lists()
            )));
        }
        let gindex = GpuIndex {
            metric,
            dtype: lists.dtype(),
            dim,
            n_lists: lists.n_lists(),
            centers: DeviceCenters::upload(
                engine.gpu(),
                centers,
                dim,
                coarse_metric,
                lists.dtype(),
            )?,
            lists,
            workspace: Mutex::new(Workspace::default()),
            staging: Mutex::new(HostStaging::default()),
            scan_path: ScanPathCell::default(),
        };
        engine.prepare_in_background_in_order(&gindex.likely_first_kernels(engine)?);
        Ok(gindex)
    }

    /// The index as a host [`IvfIndex`] (to save it, or to add to it): the lists and
    /// centres downloaded.
    pub fn to_host(&self, engine: &IvfGpu) -> Result<IvfIndex> {
        let gpu = engine.gpu();
        let centers = gpu.download(&self.centers.centers)?;
        self.lists.download(gpu, self.metric, centers)
    }

    /// Rows in each list.
    pub fn list_sizes(&self) -> &[i32] {
        self.lists.list_sizes()
    }

    /// `likely_first_kernels` of this index, then the list-major scan of that search.
    fn likely_first_kernels(&self, engine: &IvfGpu) -> Result<Vec<KernelSpec>> {
        let mut specs = likely_first_kernels(
            self.dtype,
            self.dim,
            self.metric,
            self.n_lists,
            engine.coarse_matrix_arith(),
            None,
        )?;
        let n_probes = 16.min(self.n_lists);
        if engine
            .list_major_tile(
                self.dtype,
                self.dim,
                FIRST_K,
                FIRST_BATCH * n_probes,
                self.n_lists,
            )?
            .is_ok()
        {
            specs.extend(
                list_major_kernels(
                    &self.lists,
                    engine.list_major_tile_arithmetic(self.dtype),
                    self.metric,
                    &Filter::None,
                    FIRST_K,
                    ((FIRST_BATCH, n_probes), engine.list_major_choice()),
                    engine.shared_limit()?,
                )?
                .into_vec(),
            );
        }
        Ok(specs)
    }

    /// Chooses the scan later searches run (default [`ScanPath::Auto`]). Forcing
    /// [`ScanPath::ListMajor`] makes a search whose shape it cannot run (shared memory
    /// of a large k or dimension) an error naming the sizes.
    pub fn set_scan_path(&self, path: ScanPath) {
        self.scan_path.set(path);
    }

    /// The scan searches run.
    pub fn scan_path(&self) -> ScanPath {
        self.scan_path.get()
    }

    fn check_probes(&self, n_probes: usize) -> Result<()> {
        if n_probes == 0 || n_probes > self.n_lists.min(MAX_K) {
            return Err(Error::InvalidArgument(format!(
                "n_probes = {n_probes} is out of range (1..={})",
                self.n_lists.min(MAX_K)
            )));
        }
        Ok(())
    }

    /// Searches `queries` (on the device, row-major, `dim` values each of the index's
    /// element type: f32, f16 as `u16` bits, i8, u8), writing each query's `k` nearest ids
    /// (best first; −1 past the kept candidates) and distances (+inf there) into
    /// `out_ids` and `out_distances` (at least `nq × k` each). Everything is enqueued on
    /// the engine's stream; nothing is copied to or from the host, and the call returns
    /// once the work is enqueued.
    ///
    /// Queries are not checked on the host: a non-finite value gives unspecified
    /// neighbours for that query (the host API, [`GpuIndex::search`], reports it). Batches
    /// larger than the workspace bound are split.
    #[allow(clippy::too_many_arguments)]
    pub fn search_device<T: DeviceElem>(
        &self,
        engine: &IvfGpu,
        queries: &CudaView<'_, T>,
        k: usize,
        n_probes: usize,
        filter: &Filter,
        out_ids: &mut CudaViewMut<'_, i64>,
        out_distances: &mut CudaViewMut<'_, f32>,
    ) -> Result<()> {
        if T::ELEM != query_elem(self.dtype) {
            return Err(Error::InvalidArgument(format!(
                "queries of {:?} for an index of {}",
                T::ELEM,
                self.dtype.name()
            )));
        }
        let mut ws = self.workspace.lock();
        self.search_locked(
            engine,
            &mut ws,
            queries,
            k,
            n_probes,
            filter,
            (out_ids, out_distances),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn search_locked<T: DeviceElem>(
        &self,
        engine: &IvfGpu,
        ws: &mut Workspace,
        queries: &CudaView<'_, T>,
        k: usize,
        n_probes: usize,
        filter: &Filter,
        out: (&mut CudaViewMut<'_, i64>, &mut CudaViewMut<'_, f32>),
    ) -> Result<()> {
        self.check_probes(n_probes)?;
        capacity(k)?;
        let per_query = self.dim; // elements of T per query (f16 travels as u16)
        if !queries.len().is_multiple_of(per_query) {
            return Err(Error::InvalidArgument(format!(
                "{} query values are not rows of {}",
                queries.len(),
                self.dim
            )));
        }
        let nq = queries.len() / per_query;
        let (out_ids, out_d) = out;
        if out_ids.len() < nq * k || out_d.len() < nq * k {
            return Err(Error::InvalidArgument(format!(
                "the output buffers hold {} ids and {} distances; {nq} queries × k {k} need {}",
                out_ids.len(),
                out_d.len(),
                nq * k
            )));
        }
        if nq == 0 {
            return Ok(());
        }
        // A repeated call replays its recording (see `replay`): one launch, no planning.
        let key = self.call_key(engine, queries, k, n_probes, filter, (&*out_ids, &*out_d));
        if let Some(recording) = key.and_then(|key| ws.replays.recording(&key, growths())) {
            recording.replay()?;
            engine.count_replay(ReplayEvent::Replayed);
            return Ok(());
        }
        // A first search links (or fetches) the plans of its path at once. Auto never
        // waits for the list-major scan's kernel (it links in about a second): until a
        // background thread has loaded it, the batches scan per-query. That thread starts
        // once this search's own plans are loaded, so that its link does not compete with
        // theirs.
        let batch = IvfGpu::batch_size(n_probes, k).min(nq);
        let path = self.scan_path.get();
        // Nor for the coarse selection's register-row form (a second to link): its
        // stand-in serves until it is loaded.
        let (mut specs, selecting_by_stand_in) = engine.coarse_kernels_now(
            self.dtype,
            self.dim,
            n_probes,
            (batch, self.centers.len()),
        )?;
        let mut later = None;
        let list_major = if engine.use_list_major(path, &self.lists, batch, n_probes, k)? {
            let lm = list_major_kernels(
                &self.lists,
                engine.list_major_tile_arithmetic(self.dtype),
                self.metric,
                filter,
                k,
                ((batch, n_probes), engine.list_major_choice()),
                engine.shared_limit()?,
            )?
            .into_vec();
            let ready = path == ScanPath::ListMajor || engine.kernels_loaded(&lm);
            if ready {
                specs.extend(lm);
            } else {
                later = Some(lm);
            }
            ready
        } else {
            false
        };
        if !list_major {
            specs.extend(scan_kernels(
                &self.lists,
                self.metric,
                filter,
                k,
                batch,
                n_probes,
            )?);
        }
        engine.prepare(&specs)?;
        // A call whose path may still change (the list-major kernels loading) is not
        // recorded.
        let key = key.filter(|_| later.is_none() && !selecting_by_stand_in);
        if let Some(lm) = later {
            engine.prepare_in_background(&lm);
        }
        let plan = BatchPlan {
            nq,
            batch,
            k,
            n_probes,
            list_major: list_major.then_some(path),
        };
        if let Some(key) = key.filter(|key| ws.replays.should_record(key, growths())) {
            let gpu = engine.gpu();
            match gpu.record(|| {
                self.launch_batches(
                    engine,
                    ws,
                    queries,
                    filter,
                    &plan,
                    (&mut *out_ids, &mut *out_d),
                )
            }) {
                Ok(((), mut recording)) => {
                    recording.replay()?;
                    engine.count_replay(ReplayEvent::Recorded);
                    ws.replays.remember(key, growths(), Some(recording));
                    return Ok(());
                }
                // Nothing ran: the same work runs unrecorded below.
                Err(e) => {
                    engine.count_replay(ReplayEvent::Failed);
                    ws.replays.refuse(&key);
                    tracing::debug!("search not recorded: {e}");
                }
            }
        }
        self.launch_batches(engine, ws, queries, filter, &plan, (out_ids, out_d))?;
        if let Some(key) = key {
            ws.replays.remember(key, growths(), None);
        }
        Ok(())
    }

    /// The key of a device-resident call ([`CallKey`]), or `None` where it is never
    /// recorded: replays off, a filter, profiling on.
    fn call_key<T: DeviceElem>(
        &self,
        engine: &IvfGpu,
        queries: &CudaView<'_, T>,
        k: usize,
        n_probes: usize,
        filter: &Filter,
        (out_ids, out_d): (&CudaViewMut<'_, i64>, &CudaViewMut<'_, f32>),
    ) -> Option<CallKey> {
        if !engine.replays() || !matches!(filter, Filter::None) || engine.profiler.is_on() {
            return None;
        }
        let stream = engine.gpu().stream();
        Some(CallKey {
            engine: engine.id,
            queries: device_extent(queries, stream),
            out_ids: device_extent(out_ids, stream),
            out_distances: device_extent(out_d, stream),
            k,
            n_probes,
            path: self.scan_path.get(),
            tile_arith: engine.tile_arith(),
            list_major: engine.list_major_choice(),
        })
    }

    /// Enqueues a call's batches (coarse search, scan, merge each) with the kernels
    /// `plan` chose, loaded by the caller.
    fn launch_batches<T: DeviceElem>(
        &self,
        engine: &IvfGpu,
        ws: &mut Workspace,
        queries: &CudaView<'_, T>,
        filter: &Filter,
        plan: &BatchPlan,
        (out_ids, out_d): (&mut CudaViewMut<'_, i64>, &mut CudaViewMut<'_, f32>),
    ) -> Result<()> {
        let &BatchPlan {
            nq,
            batch,
            k,
            n_probes,
            list_major,
        } = plan;
        let per_query = self.dim;
        let gpu = engine.gpu();
        let owned_filter;
        let filter_words = match filter {
            Filter::None => {
                let words = ws.no_filter.at_least(gpu, 1)?;
                (&*words, 0i64)
            }
            _ => {
                owned_filter = engine.filter_on_device(filter, nq)?;
                (&owned_filter.0, owned_filter.1)
            }
        };
        let probes = ws.probes.at_least(gpu, batch * n_probes)?;
        let sets = candidate_sets(batch, n_probes);
        let cand_d = ws.cand_d.at_least(gpu, sets * k)?;
        let cand_i = ws.cand_i.at_least(gpu, sets * k)?;
        let bad = ws.bad_query.at_least(gpu, 1)?;
        for start in (0..nq).step_by(batch) {
            let nb = batch.min(nq - start);
            let q = queries.slice(start * per_query..(start + nb) * per_query);
            engine.profiler.begin(gpu)?;
            let batch_queries = CoarseQueries {
                rows: &q,
                dtype: self.dtype,
                n: nb,
                base: start,
                planned: batch,
            };
            let lm = match list_major {
                Some(path) => engine.use_list_major(path, &self.lists, nb, n_probes, k)?,
                None => false,
            };
            // A list-major batch's pairs are counted by list in the coarse selection where
            // the grouping would count them a thread a pair (one kernel fewer).
            let pair_counts = if lm {
                ws.groups
                    .grouping
                    .selection_counters(gpu, self.lists.n_lists, nb * n_probes)?
            } else {
                None
            };
            let counted = engine.coarse(
                &self.centers,
                &batch_queries,
                n_probes,
                &mut probes.slice_mut(0..nb * n_probes),
                bad,
                pair_counts,
            )?;
            engine.profiler.lap(gpu, Stage::Coarse)?;
            let b = ScanBatch {
                lists: &self.lists,
                metric: self.metric,
                filter,
                filter_words,
                query_base: start,
                queries: q,
                nb,
                probes: probes.slice(0..nb * n_probes),
                n_probes,
                k,
            };
            let out = (
                &mut out_d.slice_mut(start * k..(start + nb) * k),
                &mut out_ids.slice_mut(start * k..(start + nb) * k),
            );
            if lm {
                engine.list_major_batch(
                    &b,
                    &mut ws.groups,
                    counted,
                    (&mut *cand_d, &mut *cand_i),
                    out,
                )?;
            } else {
                engine.scan_batch(&b, (&mut *cand_d, &mut *cand_i), out)?;
            }
        }
        Ok(())
    }

    /// [`GpuIndex::search_device`] for queries given as their stored bytes (`dim ×
    /// element size` bytes per query), whatever the index's element type.
    #[allow(clippy::too_many_arguments)]
    pub fn search_device_bytes(
        &self,
        engine: &IvfGpu,
        bytes: &CudaView<'_, u8>,
        k: usize,
        n_probes: usize,
        filter: &Filter,
        out_ids: &mut CudaViewMut<'_, i64>,
        out_distances: &mut CudaViewMut<'_, f32>,
    ) -> Result<()> {
        let elems = bytes.len() / self.dtype.size();
        if elems * self.dtype.size() != bytes.len() {
            return Err(Error::InvalidArgument(format!(
                "{} query bytes are not whole {} values",
                bytes.len(),
                self.dtype.name()
            )));
        }
        let out = (out_ids, out_distances);
        let mut ws = self.workspace.lock();
        // The kernels read the stored bytes; the views' types only say how many values.
        match self.dtype {
            DType::F32 => {
                // SAFETY: any bit pattern is an f32, and the bytes are whole values.
                let v = unsafe { bytes.transmute::<f32>(elems) }.ok_or_else(too_short)?;
                self.search_locked(engine, &mut ws, &v, k, n_probes, filter, out)
            }
            DType::F16 => {
                // SAFETY: any bit pattern is a u16 (an f16's bits), whole values.
                let v = unsafe { bytes.transmute::<u16>(elems) }.ok_or_else(too_short)?;
                self.search_locked(engine, &mut ws, &v, k, n_probes, filter, out)
            }
            DType::I8 => {
                // SAFETY: any bit pattern is an i8.
                let v = unsafe { bytes.transmute::<i8>(elems) }.ok_or_else(too_short)?;
                self.search_locked(engine, &mut ws, &v, k, n_probes, filter, out)
            }
            DType::U8 => self.search_locked(engine, &mut ws, bytes, k, n_probes, filter, out),
        }
    }

    /// Searches from the host: one upload of the queries as stored (through pinned
    /// memory, in chunks whose transfers start as each is copied), the device-resident
    /// search, one download of the results (likewise, with one wait for all of them).
    /// Fails, naming it, on a query with a NaN or infinite value (found on the device by
    /// the coarse search, not by a host pass).
    pub fn search(
        &self,
        engine: &IvfGpu,
        queries: &Matrix,
        k: usize,
        n_probes: usize,
        filter: &Filter,
    ) -> Result<Neighbors> {
        self.check_queries(queries)?;
        self.check_probes(n_probes)?;
        capacity(k)?;
        let gpu = engine.gpu();
        let nq = queries.rows;
        let mut staging = self.staging.lock();
        let staging = &mut *staging;
        // The coarse search records a non-finite query in this flag.
        gpu.clear(self.workspace.lock().bad_query.at_least(gpu, 1)?)?;
        let len = queries.bytes.len();
        let q = staging.queries.at_least(gpu, len)?;
        staging
            .queries_host
            .upload(gpu, &queries.bytes, &mut q.slice_mut(0..len))?;
        let out_i = staging.out_i.at_least(gpu, nq * k)?;
        let out_d = staging.out_d.at_least(gpu, nq * k)?;
        self.search_device_bytes(
            engine,
            &q.slice(0..len),
            k,
            n_probes,
            filter,
            &mut out_i.slice_mut(0..nq * k),
            &mut out_d.slice_mut(0..nq * k),
        )?;
        // Three transfers, one wait.
        staging
            .out_i_host
            .start_download(gpu, &out_i.slice(0..nq * k))?;
        staging
            .out_d_host
            .start_download(gpu, &out_d.slice(0..nq * k))?;
        {
            let mut ws = self.workspace.lock();
            let flag = ws.bad_query.at_least(gpu, 1)?;
            staging.bad_host.start_download(gpu, &flag.slice(0..1))?;
        }
        let ids = staging.out_i_host.finish_download()?;
        let distances = staging.out_d_host.finish_download()?;
        let bad = staging.bad_host.finish_download()?;
        if let Some(&b) = bad.first().filter(|&&b| b > 0) {
            return Err(Error::InvalidArgument(format!(
                "query {} has a NaN or infinite value; clean the queries first",
                b - 1
            )));
        }
        Ok(Neighbors { ids, distances, k })
    }

    fn check_queries(&self, queries: &Matrix) -> Result<()> {
        if queries.dim != self.dim || queries.dtype != self.dtype {
            return Err(Error::InvalidArgument(format!(
                "queries are {} × {}, the index {} × {}",
                queries.dtype.name(),
                queries.dim,
                self.dtype.name(),
                self.dim
            )));
        }
        Ok(())
    }

    /// The lists to probe for each query (the coarse search alone): `n_probes` per query.
    pub fn probes(&self, engine: &IvfGpu, queries: &Matrix, n_probes: usize) -> Result<Vec<i64>> {
        self.check_queries(queries)?;
        self.check_probes(n_probes)?;
        let q = engine.gpu().upload(&queries.bytes)?;
        engine.coarse_to_host(
            &self.centers,
            &q.slice(0..queries.bytes.len()),
            self.dtype,
            queries.rows,
            n_probes,
        )
    }

    /// Searches with the given probes (tests compare against the CPU with the same probes).
    pub fn search_with_probes(
        &self,
        engine: &IvfGpu,
        queries: &Matrix,
        probes: &[i64],
        n_probes: usize,
        k: usize,
        filter: &Filter,
    ) -> Result<Neighbors> {
        self.check_queries(queries)?;
        engine.scan(
            &self.lists,
            self.metric,
            filter,
            queries,
            probes,
            n_probes,
            k,
            self.scan_path.get(),
        )
    }
}

fn too_short() -> Error {
    Error::InvalidArgument("query bytes are not whole values".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uploaded_index_may_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<GpuIndex>();
    }
}
