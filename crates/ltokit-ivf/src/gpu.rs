//! IVF-Flat on the GPU: the scan, coarse search, exact search and k-means assignment, all
//! through one pair of JIT-LTO kernels (`ivf_scan` + `ivf_merge`) assembled by ltokit
//! from the fragments of the embedded bundle.
//!
//! Every search is "scan some lists for each query, keep each block's top-k, merge":
//! IVF search scans the probed lists of the index; coarse search scans the centres (as one
//! list); exact search and k-means assignment scan every chunk of a flat dataset.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use ltokit::bundle::Bundle;
use ltokit::cache::{CacheConfig, KernelCache};
use ltokit::launch::{CudaSlice, Elem, Extent, Gpu, Kernel, LaunchConfig, ModuleLoader, Param};
use ltokit::{Error, Result, Target};

use crate::data::{DType, Matrix};
use crate::index::{veclen, IvfIndex, GROUP};
use crate::metric::{Filter, Metric};

static BUNDLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ivf.ltkb"));

/// The largest k (top-k capacity of the kernels).
pub const MAX_K: usize = 1024;
/// Rows per list when a flat dataset is scanned exhaustively.
pub const EXACT_CHUNK: usize = 8192;
/// Bound of the per-batch candidate workspace.
const WORKSPACE_BYTES: usize = 256 << 20;

/// `ivf_scan`'s parameters (kernels/ivf_abi.cuh). Buffer lengths are products of
/// several arguments, so they are `Extent::Any`: `scan_batch` sizes them.
const SCAN_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::F32, Extent::Any),    // queries
    Param::I32,                               // dim
    Param::I32,                               // n_probes
    Param::Buffer(Elem::I64, Extent::Any),    // probes
    Param::Buffer(Elem::U8, Extent::Any),     // list data
    Param::I32,                               // element size
    Param::Buffer(Elem::I64, Extent::Any),    // list offsets
    Param::Buffer(Elem::I32, Extent::Any),    // list sizes
    Param::Buffer(Elem::I64, Extent::Any),    // ids
    Param::Buffer(Elem::U32, Extent::Any),    // filter words
    Param::I64,                               // filter words per query
    Param::I32,                               // first query of the batch
    Param::I32,                               // k
    Param::BufferMut(Elem::F32, Extent::Any), // candidate distances
    Param::BufferMut(Elem::I64, Extent::Any), // candidate ids
];
/// `ivf_merge`'s parameters.
const MERGE_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::F32, Extent::Any),
    Param::Buffer(Elem::I64, Extent::Any),
    Param::I32,
    Param::I32,
    Param::BufferMut(Elem::F32, Extent::Any),
    Param::BufferMut(Elem::I64, Extent::Any),
];

/// The IVF kernels' bundle (embedded at build time).
pub fn bundle() -> Result<Arc<Bundle>> {
    Bundle::from_bytes("ltokit-ivf (embedded)", BUNDLE)
}

/// Size of the embedded bundle file in bytes (manifest and compressed fragments).
pub fn bundle_file_bytes() -> usize {
    BUNDLE.len()
}

/// The top-k capacity variant for `k`: the next power of two.
pub fn capacity(k: usize) -> Result<usize> {
    if k == 0 || k > MAX_K {
        return Err(Error::InvalidArgument(format!(
            "k = {k} is out of range (1..={MAX_K})"
        )));
    }
    Ok(k.next_power_of_two())
}

/// The plan names a search uses: (scan, merge).
pub fn plan_names(
    dtype: DType,
    veclen: usize,
    metric: Metric,
    filter: &Filter,
    k: usize,
) -> Result<(String, String)> {
    let cap = capacity(k)?;
    let vec = if veclen > 1 { "max" } else { "1" };
    Ok((
        format!(
            "scan_c{cap}_{}_v{vec}_{}_{}",
            dtype.name(),
            metric.name(),
            filter.name()
        ),
        format!("merge_c{cap}_{}", metric.name()),
    ))
}

/// Lists on the GPU in the interleaved layout.
pub struct DeviceLists {
    dtype: DType,
    dim: usize,
    veclen: usize,
    n_lists: usize,
    data: CudaSlice<u8>,
    list_offset: CudaSlice<i64>,
    list_size: CudaSlice<i32>,
    ids: CudaSlice<i64>,
}

impl DeviceLists {
    /// Uploads an index's lists.
    pub fn from_index(gpu: &Gpu, index: &IvfIndex) -> Result<Self> {
        Ok(DeviceLists {
            dtype: index.dtype,
            dim: index.dim,
            veclen: index.veclen,
            n_lists: index.n_lists(),
            data: gpu.upload(&nonempty(&index.data))?,
            list_offset: gpu.upload(&index.list_offset)?,
            list_size: gpu.upload(&index.list_size)?,
            ids: gpu.upload(&nonempty(&index.ids))?,
        })
    }

    /// A flat dataset as lists of `chunk` consecutive rows, ids 0..rows.
    pub fn chunked(gpu: &Gpu, rows: &Matrix, chunk: usize) -> Result<Self> {
        let n = rows.rows;
        let assignment: Vec<u32> = (0..n).map(|i| (i / chunk) as u32).collect();
        let n_lists = n.div_ceil(chunk).max(1);
        let ids: Vec<i64> = (0..n as i64).collect();
        let index = IvfIndex::from_assignment(
            Metric::L2,
            rows,
            &ids,
            vec![0.0; n_lists * rows.dim],
            &assignment,
        )?;
        Self::from_index(gpu, &index)
    }

    /// Number of lists.
    pub fn n_lists(&self) -> usize {
        self.n_lists
    }
}

fn nonempty<T: Clone + Default>(v: &[T]) -> Vec<T> {
    if v.is_empty() {
        vec![T::default()]
    } else {
        v.to_vec()
    }
}

/// Results of a batch of queries.
#[derive(Debug, Clone)]
pub struct Neighbors {
    /// `n_queries * k` ids, best first; -1 where fewer than k candidates were kept.
    pub ids: Vec<i64>,
    /// `n_queries * k` distances; +inf where the id is -1.
    pub distances: Vec<f32>,
    /// Neighbours per query.
    pub k: usize,
}

impl Neighbors {
    /// Ids of query `q`.
    pub fn ids_of(&self, q: usize) -> &[i64] {
        &self.ids[q * self.k..(q + 1) * self.k]
    }
    /// Distances of query `q`.
    pub fn distances_of(&self, q: usize) -> &[f32] {
        &self.distances[q * self.k..(q + 1) * self.k]
    }
    /// One row of ids per query.
    pub fn rows(&self) -> Vec<Vec<i64>> {
        self.ids
            .chunks(self.k.max(1))
            .map(<[i64]>::to_vec)
            .collect()
    }
}

/// The GPU engine: a device, the kernel cache, the bundle.
pub struct IvfGpu {
    gpu: Arc<Gpu>,
    cache: KernelCache<ModuleLoader>,
    bundle: Arc<Bundle>,
    target: Target,
    kernels: Mutex<HashMap<String, Arc<Kernel>>>,
}

impl IvfGpu {
    /// An engine on `gpu` with the given cache settings.
    pub fn new(gpu: Arc<Gpu>, cache: CacheConfig) -> Result<Self> {
        let target = Target::native(gpu.compute_capability());
        Ok(IvfGpu {
            cache: KernelCache::with_loader(cache, ModuleLoader::new(Arc::clone(&gpu))),
            gpu,
            bundle: bundle()?,
            target,
            kernels: Mutex::new(HashMap::new()),
        })
    }

    /// The device.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The kernel cache (for its counters).
    pub fn cache(&self) -> &KernelCache<ModuleLoader> {
        &self.cache
    }

    fn kernel(&self, plan_name: &str, signature: &[Param], shared: usize) -> Result<Arc<Kernel>> {
        if let Some(k) = self.kernels.lock().get(plan_name) {
            return Ok(Arc::clone(k));
        }
        let plan = self.bundle.plan(plan_name, self.target)?;
        let module = self.cache.get(&plan)?;
        let kernel = Arc::new(module.kernel(plan.kernel(), signature)?);
        if shared > 48 * 1024 {
            kernel.set_max_dynamic_shared_bytes(shared as u32)?;
        }
        self.kernels
            .lock()
            .insert(plan_name.to_string(), Arc::clone(&kernel));
        Ok(kernel)
    }

    /// How many queries one launch pair takes for `n_probes` probes of top-`k`.
    fn batch_size(n_probes: usize, k: usize) -> usize {
        (WORKSPACE_BYTES / (n_probes * k * 12).max(1)).clamp(1, 65535)
    }

    fn filter_on_device(&self, filter: &Filter, nq: usize) -> Result<(CudaSlice<u32>, i64)> {
        let (words, bits) = match filter {
            Filter::None => (0i64, vec![0u32]),
            Filter::Bitset(b) => (b.len() as i64, nonempty(b)),
            Filter::Bitmap { words, bits } => {
                if bits.len() != words * nq {
                    return Err(Error::InvalidArgument(format!(
                        "the per-query bitmap has {} words, {nq} queries × {words} words expected",
                        bits.len()
                    )));
                }
                (*words as i64, nonempty(bits))
            }
        };
        Ok((self.gpu.upload(&bits)?, words))
    }

    /// Scans one batch on the device: `nb` queries (`q`, row-major), each over the lists in
    /// its row of `probes` (`n_probes` per query); returns the top `k` (distances, ids).
    #[allow(clippy::too_many_arguments)]
    fn scan_batch(
        &self,
        lists: &DeviceLists,
        metric: Metric,
        filter: &Filter,
        filter_dev: (&CudaSlice<u32>, i64),
        query_base: usize,
        q: &CudaSlice<f32>,
        nb: usize,
        probes: &CudaSlice<i64>,
        n_probes: usize,
        k: usize,
    ) -> Result<(CudaSlice<f32>, CudaSlice<i64>)> {
        let dim = lists.dim;
        let (scan_name, merge_name) = plan_names(lists.dtype, lists.veclen, metric, filter, k)?;
        let cap = capacity(k)?;
        let scan_smem = 4 * cap * 12 + dim * 4;
        let merge_smem = cap * 12;
        let scan = self.kernel(&scan_name, SCAN_SIGNATURE, scan_smem)?;
        let merge = self.kernel(&merge_name, MERGE_SIGNATURE, merge_smem)?;
        let mut cand_d = self.gpu.zeros::<f32>(nb * n_probes * k)?;
        let mut cand_i = self.gpu.zeros::<i64>(nb * n_probes * k)?;
        let mut out_d = self.gpu.zeros::<f32>(nb * k)?;
        let mut out_i = self.gpu.zeros::<i64>(nb * k)?;
        let (dim_i, probes_i, elem, base, k_i) = (
            dim as i32,
            n_probes as i32,
            lists.dtype.size() as i32,
            query_base as i32,
            k as i32,
        );
        let cfg = LaunchConfig {
            grid_dim: (n_probes as u32, nb as u32, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: scan_smem as u32,
        };
        let launch = self
            .gpu
            .launch(&scan, cfg)
            .buffer(q)
            .scalar(&dim_i)
            .scalar(&probes_i)
            .buffer(probes)
            .buffer(&lists.data)
            .scalar(&elem)
            .buffer(&lists.list_offset)
            .buffer(&lists.list_size)
            .buffer(&lists.ids)
            .buffer(filter_dev.0)
            .scalar(&filter_dev.1)
            .scalar(&base)
            .scalar(&k_i)
            .buffer_mut(&mut cand_d)
            .buffer_mut(&mut cand_i);
        // SAFETY: the scan kernel reads `q` rows [base, base + nb) of `dim` values (the
        // caller passes a buffer of at least that many queries), `n_probes` probe ids per
        // query (probes is nb × n_probes), list rows through list_offset/list_size (built
        // together with data and ids), the filter within its words per query, and writes
        // exactly nb × n_probes × k candidates, the size of cand_d and cand_i; grid and
        // shared memory match the plan's capacity.
        unsafe { launch.run() }?;
        let n_cand = (n_probes * k) as i32;
        let cfg = LaunchConfig {
            grid_dim: (nb as u32, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: merge_smem as u32,
        };
        let launch = self
            .gpu
            .launch(&merge, cfg)
            .buffer(&cand_d)
            .buffer(&cand_i)
            .scalar(&n_cand)
            .scalar(&k_i)
            .buffer_mut(&mut out_d)
            .buffer_mut(&mut out_i);
        // SAFETY: the merge kernel reads n_cand = n_probes × k candidates per query for
        // nb queries (the buffers the scan wrote) and writes k results per query into
        // out_d and out_i, which hold nb × k.
        unsafe { launch.run() }?;
        Ok((out_d, out_i))
    }

    /// For each query (f32, row-major, `lists.dim` wide), scans the lists named in its row
    /// of `probes` (`n_probes` per query) and returns its top `k`.
    #[allow(clippy::too_many_arguments)]
    pub fn scan(
        &self,
        lists: &DeviceLists,
        metric: Metric,
        filter: &Filter,
        queries: &[f32],
        probes: &[i64],
        n_probes: usize,
        k: usize,
    ) -> Result<Neighbors> {
        let dim = lists.dim;
        let nq = queries.len() / dim;
        if queries.len() != nq * dim || probes.len() != nq * n_probes || n_probes == 0 {
            return Err(Error::InvalidArgument(format!(
                "{} query values, {} probes for {n_probes} probes per query of dimension {dim}",
                queries.len(),
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
        let mut ids = Vec::with_capacity(nq * k);
        let mut distances = Vec::with_capacity(nq * k);
        for start in (0..nq).step_by(batch) {
            let nb = batch.min(nq - start);
            let q = self.gpu.upload(&queries[start * dim..(start + nb) * dim])?;
            let p = self
                .gpu
                .upload(&probes[start * n_probes..(start + nb) * n_probes])?;
            let (d, i) = self.scan_batch(
                lists,
                metric,
                filter,
                (&filter_dev.0, filter_dev.1),
                start,
                &q,
                nb,
                &p,
                n_probes,
                k,
            )?;
            distances.extend(self.gpu.download(&d)?);
            ids.extend(self.gpu.download(&i)?);
        }
        Ok(Neighbors { ids, distances, k })
    }

    /// Exact search: every row of `base` for every query.
    pub fn exact(
        &self,
        base: &DeviceLists,
        metric: Metric,
        filter: &Filter,
        queries: &[f32],
        k: usize,
    ) -> Result<Neighbors> {
        let nq = queries.len() / base.dim.max(1);
        let probes: Vec<i64> = (0..nq).flat_map(|_| 0..base.n_lists as i64).collect();
        self.scan(base, metric, filter, queries, &probes, base.n_lists, k)
    }

    /// Nearest centre (squared L2) of each point: k-means assignment.
    pub fn assign(&self, points: &[f32], centers: &[f32], dim: usize) -> Result<Vec<u32>> {
        let c = Matrix::from_f32(centers.len() / dim, dim, centers)?;
        let lists = DeviceLists::chunked(&self.gpu, &c, EXACT_CHUNK)?;
        let found = self.exact(&lists, Metric::L2, &Filter::None, points, 1)?;
        Ok(found.ids.iter().map(|&i| i.max(0) as u32).collect())
    }
}

/// An index on the GPU, ready to search.
pub struct GpuIndex {
    /// The host index's metric, type and shape.
    pub metric: Metric,
    /// Element type.
    pub dtype: DType,
    /// Dimensions.
    pub dim: usize,
    /// Lists.
    pub n_lists: usize,
    lists: DeviceLists,
    centers: DeviceLists,
}

impl GpuIndex {
    /// Uploads an index.
    pub fn upload(engine: &IvfGpu, index: &IvfIndex) -> Result<Self> {
        let centers = Matrix::from_f32(index.n_lists(), index.dim, &index.centers)?;
        Ok(GpuIndex {
            metric: index.metric,
            dtype: index.dtype,
            dim: index.dim,
            n_lists: index.n_lists(),
            lists: DeviceLists::from_index(engine.gpu(), index)?,
            centers: DeviceLists::chunked(engine.gpu(), &centers, EXACT_CHUNK)?,
        })
    }

    fn coarse_metric(&self) -> Metric {
        if self.metric == Metric::L2Sqrt {
            Metric::L2
        } else {
            self.metric
        }
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

    /// The lists to probe for each query (coarse search): `n_probes` per query.
    pub fn probes(&self, engine: &IvfGpu, queries: &[f32], n_probes: usize) -> Result<Vec<i64>> {
        self.check_probes(n_probes)?;
        Ok(engine
            .exact(
                &self.centers,
                self.coarse_metric(),
                &Filter::None,
                queries,
                n_probes,
            )?
            .ids)
    }

    /// Searches: coarse search, then the scan of the probed lists with fused top-k. The
    /// probes stay on the GPU between the two.
    pub fn search(
        &self,
        engine: &IvfGpu,
        queries: &Matrix,
        k: usize,
        n_probes: usize,
        filter: &Filter,
    ) -> Result<Neighbors> {
        self.check_probes(n_probes)?;
        capacity(k)?;
        let q = self.queries_f32(queries)?;
        let nq = queries.rows;
        let chunks = self.centers.n_lists;
        let filter_dev = engine.filter_on_device(filter, nq)?;
        let none = engine.filter_on_device(&Filter::None, nq)?;
        let batch = IvfGpu::batch_size(n_probes, k).min(IvfGpu::batch_size(chunks, n_probes));
        let all_chunks: Vec<i64> = (0..batch).flat_map(|_| 0..chunks as i64).collect();
        let all_chunks = engine.gpu.upload(&all_chunks)?;
        let mut ids = Vec::with_capacity(nq * k);
        let mut distances = Vec::with_capacity(nq * k);
        for start in (0..nq).step_by(batch) {
            let nb = batch.min(nq - start);
            let q_dev = engine
                .gpu
                .upload(&q[start * self.dim..(start + nb) * self.dim])?;
            let (_, probes) = engine.scan_batch(
                &self.centers,
                self.coarse_metric(),
                &Filter::None,
                (&none.0, none.1),
                start,
                &q_dev,
                nb,
                &all_chunks,
                chunks,
                n_probes,
            )?;
            let (d, i) = engine.scan_batch(
                &self.lists,
                self.metric,
                filter,
                (&filter_dev.0, filter_dev.1),
                start,
                &q_dev,
                nb,
                &probes,
                n_probes,
                k,
            )?;
            distances.extend(engine.gpu.download(&d)?);
            ids.extend(engine.gpu.download(&i)?);
        }
        Ok(Neighbors { ids, distances, k })
    }

    /// Searches with the given probes (tests compare against the CPU with the same probes).
    #[allow(clippy::too_many_arguments)]
    pub fn search_with_probes(
        &self,
        engine: &IvfGpu,
        queries: &Matrix,
        probes: &[i64],
        n_probes: usize,
        k: usize,
        filter: &Filter,
    ) -> Result<Neighbors> {
        let q = self.queries_f32(queries)?;
        engine.scan(&self.lists, self.metric, filter, &q, probes, n_probes, k)
    }

    fn queries_f32(&self, queries: &Matrix) -> Result<Vec<f32>> {
        if queries.dim != self.dim {
            return Err(Error::InvalidArgument(format!(
                "queries have {} dimensions, the index {}",
                queries.dim, self.dim
            )));
        }
        let q = queries.to_f32();
        crate::data::check_finite_f32(&q, self.dim, "queries")?;
        Ok(q)
    }
}

/// Rows of padding a list of `n` rows occupies.
pub fn padded_rows(n: usize) -> usize {
    n.next_multiple_of(GROUP)
}

/// The veclen the kernels use for a type and dimension (re-exported for plan selection).
pub fn kernel_veclen(dtype: DType, dim: usize) -> usize {
    veclen(dtype, dim)
}
