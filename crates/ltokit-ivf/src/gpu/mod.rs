//! IVF-Flat on the GPU, one module per job:
//!
//! | module | job |
//! |---|---|
//! | this one | the engine: device, kernel cache, the embedded bundle, plan names |
//! | [`lists`] | lists (or a flat dataset cut into chunks) on the device, interleaved |
//! | `centers` | the coarse centres on the device: norms, and the f16 split of the tensor-core score matrix for f16 and 8-bit queries |
//! | [`coarse`] | the coarse search: centres × queries, tiled, with the n_probes selection fused (small batches) or after a score matrix (large ones, on the tensor cores from sm_80); k-means assignment |
//! | [`kmeans`] | k-means training on the device (update by atomics, balancing, spherical for ip/cosine) |
//! | [`scan`] | the per-query scan of probed lists with fused top-k; exact search |
//! | `merge` | each query's final top k of its candidate sets (a block sorting them for small batches, else a warp's running top-k) |
//! | [`list_major`] | the list-major scan: pairs grouped by list, each list read once per tile of its queries; the choice of scan |
//! | [`search`] | an index on the device: the device-resident search and the host API over it |
//! | `workspace` | device buffers reused across calls |
//! | `kernels` | plans loaded once per engine: in parallel, on a background thread, or queued in order for a few background threads |
//!
//! Kernels are ltokit plans of the embedded bundle (`kernels/`), linked for the GPU
//! present or served from the kernel cache, resolved once per engine.

mod centers;
pub mod coarse;
mod kernels;
pub mod kmeans;
pub mod link_ahead;
pub mod list_major;
pub mod lists;
mod merge;
pub mod profile;
mod replay;
pub mod scan;
pub mod search;
mod workspace;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use ltokit::bundle::Bundle;
use ltokit::cache::{CacheConfig, KernelCache};
use ltokit::launch::{CudaSlice, Gpu, LaunchConfig, ModuleLoader};
use ltokit::{Error, Result, Target};

use crate::data::DType;
use crate::metric::{Filter, Metric};

pub use centers::DeviceCenters;
pub use coarse::MatrixArith;
pub(crate) use kernels::KernelSpec;
pub use link_ahead::{FirstSearch, IndexShape, LinkAhead};
pub use list_major::{
    LmTile, ProbePhases, ScanPath, SeedBy, TileArith, MIN_PAIRS_PER_LIST_PHASED,
    SEED_BY_LIST_MIN_QUERIES, SEED_MIN_ROWS, SEED_ONE_WARP_MIN_QUERIES,
};
pub use lists::DeviceLists;
pub use search::GpuIndex;

/// Largest k (and n_probes) supported.
pub const MAX_K: usize = 1024;
/// Rows per list when exact search cuts a dataset into lists.
pub const EXACT_CHUNK: usize = 8192;
/// Bound of the per-batch candidate workspace.
const WORKSPACE_BYTES: usize = 256 << 20;

static BUNDLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ivf.ltkb"));

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

/// The plan names a scan uses: (scan, merge).
pub fn plan_names(
    dtype: DType,
    veclen: usize,
    metric: Metric,
    filter: &Filter,
    k: usize,
) -> Result<(String, String)> {
    let cap = capacity(k)?;
    Ok((
        format!(
            "scan_c{cap}_{}_v{}_{}_{}",
            dtype.name(),
            vec_name(veclen),
            metric.name(),
            filter.name()
        ),
        format!("merge_c{cap}_{}", metric.name()),
    ))
}

/// The `{vec}` of a plan that reads lists stored `veclen` values a chunk (the distance
/// fragments `dist_*_v1` and `dist_*_vmax`).
pub(crate) fn vec_name(veclen: usize) -> &'static str {
    if veclen > 1 {
        "max"
    } else {
        "1"
    }
}

/// The coarse-search plan for `n_probes` probes per query of `dtype`.
pub fn coarse_plan_name(n_probes: usize, dtype: DType) -> Result<String> {
    Ok(format!("coarse_c{}_{}", capacity(n_probes)?, dtype.name()))
}

/// Results of a batch of queries, on the host.
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

/// The id the next engine takes ([`IvfGpu`]'s `id`).
static NEXT_ENGINE_ID: AtomicU64 = AtomicU64::new(1);

/// The GPU engine: a device, the kernel cache, the bundle, and the kernels resolved so far.
pub struct IvfGpu {
    gpu: Arc<Gpu>,
    kernels: Arc<kernels::KernelSet>,
    profiler: profile::Profiler,
    coarse_scratch: Mutex<coarse::CoarseScratch>,
    /// The device's shared-memory limit per block, read once.
    shared_limit: Mutex<Option<list_major::SharedMemory>>,
    /// The device's SM count, read once.
    multiprocessors: Mutex<Option<usize>>,
    /// Which tiles list-major scans use ([`IvfGpu::set_tile_arith`]).
    tile_arith: Mutex<list_major::TileArith>,
    /// Whether list-major batches scan in two phases ([`IvfGpu::set_probe_phases`]) and
    /// how they seed their bounds ([`IvfGpu::set_seed_by`]).
    list_major_choice: Mutex<list_major::ListMajorChoice>,
    /// This engine among the process's (a recorded search names the engine it ran on).
    id: u64,
    /// Whether repeated device-resident searches replay a recording
    /// ([`IvfGpu::set_replay`]).
    replay: AtomicBool,
    /// Searches recorded, replayed, and recordings that failed ([`ReplayCounts`]).
    replay_counts: [AtomicU64; 3],
}

/// What happened to a search's recording: its index in `IvfGpu::replay_counts`' counters.
#[derive(Debug, Clone, Copy)]
enum ReplayEvent {
    Recorded = 0,
    Replayed = 1,
    Failed = 2,
}

/// How an engine's searches used recordings so far ([`IvfGpu::replay_counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReplayCounts {
    /// Calls recorded (each also ran, by its first replay).
    pub recorded: u64,
    /// Calls that replayed an earlier recording.
    pub replayed: u64,
    /// Recordings that failed (the call then ran unrecorded); none is expected.
    pub failed: u64,
}

/// An engine waits, when dropped, for the links its background threads are in the middle
/// of (and drops the queued ones nothing has started): a process that ends while a thread
/// is inside nvJitLink or loading a module races the CUDA libraries' own teardown (a
/// crash at exit was seen on the H200 after a test that built an index and returned
/// before its first search's kernels had linked).
impl Drop for IvfGpu {
    fn drop(&mut self) {
        self.kernels.cancel_queued();
        self.kernels.wait_for_background();
    }
}

impl IvfGpu {
    /// Switches the per-stage clock on (its counters reset) or off; see
    /// [`profile`].
    pub fn set_profiling(&self, on: bool) {
        self.profiler.set(on);
    }

    /// Time per search stage since profiling was switched on.
    pub fn stage_times(&self) -> profile::StageTimes {
        self.profiler.times()
    }

    /// An engine on `gpu` (which may wrap the caller's own context and stream, see
    /// [`Gpu::from_stream`]) with the given cache settings.
    pub fn new(gpu: Arc<Gpu>, cache: CacheConfig) -> Result<Self> {
        if cache.jit {
            ltokit::toolkit::nvjitlink::NvJitLink::warm_in_background();
        }
        let target = Target::native(gpu.compute_capability());
        Ok(IvfGpu {
            kernels: Arc::new(kernels::KernelSet::new(
                KernelCache::with_loader(cache, ModuleLoader::new(Arc::clone(&gpu))),
                bundle()?,
                target,
            )),
            gpu,
            profiler: profile::Profiler::default(),
            coarse_scratch: Mutex::new(coarse::CoarseScratch::default()),
            shared_limit: Mutex::new(None),
            multiprocessors: Mutex::new(None),
            tile_arith: Mutex::new(list_major::TileArith::Mma),
            list_major_choice: Mutex::new(list_major::ListMajorChoice::default()),
            id: NEXT_ENGINE_ID.fetch_add(1, Ordering::Relaxed),
            replay: AtomicBool::new(true),
            replay_counts: Default::default(),
        })
    }

    /// Switches the replay of repeated searches on (the default) or off: the second
    /// device-resident search in a row with the same shape, settings and buffers is
    /// recorded as one CUDA graph, and identical calls after it replay it with one launch
    /// (see the `replay` module). Off, every call launches its kernels one by one.
    pub fn set_replay(&self, on: bool) {
        self.replay.store(on, Ordering::Relaxed);
    }

    /// Whether repeated searches replay a recording ([`IvfGpu::set_replay`]).
    pub fn replays(&self) -> bool {
        self.replay.load(Ordering::Relaxed)
    }

    /// How many searches were recorded and replayed so far.
    pub fn replay_counts(&self) -> ReplayCounts {
        let [recorded, replayed, failed] = self
            .replay_counts
            .each_ref()
            .map(|c| c.load(Ordering::Relaxed));
        ReplayCounts {
            recorded,
            replayed,
            failed,
        }
    }

    /// Counts one [`ReplayEvent`].
    fn count_replay(&self, event: ReplayEvent) {
        self.replay_counts[event as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// The device.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The kernel cache (for its counters).
    pub fn cache(&self) -> &KernelCache<ModuleLoader> {
        self.kernels.cache()
    }

    /// Waits until the kernels an automatic search started loading in the background
    /// (the list-major scan's, while the first searches ran per-query) are loaded: for
    /// benchmarks that time one scan after the first search.
    pub fn wait_for_background_loads(&self) {
        self.kernels.wait_for_background();
    }

    /// Loads the kernels of `specs` not loaded yet, in parallel.
    pub(crate) fn prepare(&self, specs: &[KernelSpec]) -> Result<()> {
        self.kernels.prepare(specs)
    }

    /// Starts loading the kernels of `specs` on a background thread; returns at once.
    pub(crate) fn prepare_in_background(&self, specs: &[KernelSpec]) {
        self.kernels.prepare_in_background(specs)
    }

    /// Queues the kernels of `specs` for loading in the background in the order given,
    /// after those queued before (a few threads work through the queue); returns at once.
    pub(crate) fn prepare_in_background_in_order(&self, specs: &[KernelSpec]) {
        self.kernels.prepare_in_background_in_order(specs)
    }

    /// Whether every kernel of `specs` is loaded.
    pub(crate) fn kernels_loaded(&self, specs: &[KernelSpec]) -> bool {
        self.kernels.all_loaded(specs)
    }

    /// How many queries one scan launch takes for `n_probes` probes of top-`k`.
    fn batch_size(n_probes: usize, k: usize) -> usize {
        (WORKSPACE_BYTES / (n_probes * k * 12).max(1)).clamp(1, 65535)
    }

    /// A filter's words on the device and the words per query (0 for no filter).
    pub(crate) fn filter_on_device(
        &self,
        filter: &Filter,
        nq: usize,
    ) -> Result<(CudaSlice<u32>, i64)> {
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
}

/// The launch of a kernel that gives each of `rows` rows a warp (kmeans.cu, train_rows.cu,
/// layout.cu), as [`grid_stride`] launches its threads.
fn warp_per_row(rows: usize) -> LaunchConfig {
    grid_stride(rows * 32)
}

/// The launch of a kernel whose `threads` threads stride over their work: blocks of 256
/// threads, at most 16 blocks for each of 132 SMs, the threads striding over the rest.
fn grid_stride(threads: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (threads.div_ceil(256).clamp(1, 132 * 16) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn nonempty<T: Clone + Default>(v: &[T]) -> Vec<T> {
    if v.is_empty() {
        vec![T::default()]
    } else {
        v.to_vec()
    }
}

/// The element type a query buffer of `dtype` holds on the device (f16 as its bits).
pub fn query_elem(dtype: DType) -> ltokit::launch::Elem {
    use ltokit::launch::Elem;
    match dtype {
        DType::F32 => Elem::F32,
        DType::F16 => Elem::U16,
        DType::I8 => Elem::I8,
        DType::U8 => Elem::U8,
    }
}
