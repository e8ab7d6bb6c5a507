//! The list-major scan: the batch's (query, probe) pairs grouped by the list they probe,
//! then one block per tile of 16 to 64 pairs of one list, which reads the list once for
//! all of them — a small matrix product per 64-row step (`kernels/lmtile.cu`) instead of
//! one pass over the list per query. It writes the per-query scan's candidate layout (k
//! per pair) and shares its merge. Worth it when many queries probe each list (large
//! batches); [`ScanPath::Auto`] picks it from the batch shape.

use std::sync::atomic::{AtomicU8, Ordering};

use ltokit::launch::{
    CudaSlice, CudaViewMut, DeviceElem, Elem, Extent, Launch, LaunchConfig, Param,
};
use ltokit::{Error, Result};

use super::merge::merge_kernel;
use super::profile::Stage;
use super::scan::{scan_signature, ScanBatch};
use super::workspace::Buffer;
use super::{capacity, DeviceLists, IvfGpu, KernelSpec};
use crate::data::DType;
use crate::metric::{Filter, Metric};

/// Which scan a search runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScanPath {
    /// One block per (query, probes) streams the probed lists for that query alone.
    PerQuery,
    /// Pairs grouped by list; each list read once per tile of its queries.
    ListMajor,
    /// List-major when the batch gives each probed list enough queries (see
    /// [`min_pairs_per_list`]) and the shape fits its shared memory, else per-query.
    #[default]
    Auto,
}

impl ScanPath {
    /// Parses `per-query`, `list-major` or `auto`.
    pub fn parse(s: &str) -> Result<ScanPath> {
        match s {
            "per-query" => Ok(ScanPath::PerQuery),
            "list-major" => Ok(ScanPath::ListMajor),
            "auto" => Ok(ScanPath::Auto),
            other => Err(Error::InvalidArgument(format!(
                "unknown scan path {other:?}; use per-query, list-major or auto"
            ))),
        }
    }

    /// The name `parse` reads.
    pub fn name(self) -> &'static str {
        match self {
            ScanPath::PerQuery => "per-query",
            ScanPath::ListMajor => "list-major",
            ScanPath::Auto => "auto",
        }
    }

    /// The cell's code: 0 (a new cell) is `Auto`, the default.
    pub(crate) fn to_code(self) -> u8 {
        match self {
            ScanPath::Auto => 0,
            ScanPath::PerQuery => 1,
            ScanPath::ListMajor => 2,
        }
    }

    pub(crate) fn from_code(code: u8) -> ScanPath {
        match code {
            1 => ScanPath::PerQuery,
            2 => ScanPath::ListMajor,
            _ => ScanPath::Auto,
        }
    }
}

/// A [`ScanPath`] that can be changed through a shared reference (new: `Auto`).
#[derive(Debug, Default)]
pub(crate) struct ScanPathCell(AtomicU8);

impl ScanPathCell {
    pub(crate) fn get(&self) -> ScanPath {
        ScanPath::from_code(self.0.load(Ordering::Relaxed))
    }
    pub(crate) fn set(&self, path: ScanPath) {
        self.0.store(path.to_code(), Ordering::Relaxed);
    }
}

/// Average (query, probe) pairs per list from which `Auto` takes the list-major scan for
/// f32 lists. Below it most tiles hold a few queries, and the per-query scan, which does
/// no arithmetic for empty tile slots, is faster. Measured on the H200 with the mma.sync
/// tile and the register top-k (1M × 128 f32, 1,024 lists, 20 probes, one call waited
/// for; docs/gpu-runs/2026-11-30-mma-tiles/b-mma-tiles): at 2.0 pairs a list (100
/// queries) per-query is 4 % faster (0.336 vs 0.349 ms), at 5.9 (300 queries) list-major
/// is 1.77× faster (0.426 vs 0.752 ms), and at 4.9 (1,000 × 5) 1.53× (0.437 vs 0.664 ms,
/// two calls of the same build). (Before those kernels the crossover was 6.)
pub const MIN_PAIRS_PER_LIST_F32: f64 = 2.5;
/// The same for f16 lists: list-major is 14 % faster already at 9.8 pairs a list and 33 %
/// at 19.5 (1M × 128 f16, 10,000 queries × 1 and 2 probes).
pub const MIN_PAIRS_PER_LIST_F16: f64 = 8.0;
/// The same for 8-bit lists. With the WMMA tile list-major was 7 % faster at 19.5 pairs a
/// list, 12 % at 29 and 28 % at 49 (1M × 128 i8, 10,000 queries × 2, 3, 5 probes), hence
/// 16; with the mma.sync tile it is 1.61× faster at 9.8 (1,000 queries × 10 probes: 3.29 M
/// vs 2.05 M QPS) and 2.04× at 19.5 (docs/gpu-runs/2026-11-30-mma-tiles/d-vs-cuvs-1k-and-
/// tests/vs1k). Below 9.8 it was not measured; 8 is f16's measured crossover.
pub const MIN_PAIRS_PER_LIST_8BIT: f64 = 8.0;
/// Lists shorter than a row is wide (on average) make a WMMA or FMA tile's query staging
/// and second scoring pass a large part of its work: for those tiles the thresholds above
/// are multiplied by this. Measured on 60k × 784 u8 images in 256 lists (234 rows a list)
/// with the WMMA tile: per-query was 13 % faster at 78 pairs a list and 6 % at 117,
/// list-major 9 % faster at 195. The mma.sync tiles score in registers and need no
/// factor: on the same images list-major was 4 % faster at 7.8 pairs a list, 18 % at 19.5
/// and 43 % at 39 (1,000 queries × 2, 5, 10 probes; docs/gpu-runs/2026-11-30-s7/grid, in
/// the same call as cuVS), where the factor of 8 had kept auto on the per-query scan.
pub const SHORT_LIST_FACTOR: f64 = 8.0;

/// The pairs per list from which `Auto` takes the list-major scan with `tile` for lists
/// of `dim` values a row and `rows_per_list` rows a list on average.
pub fn min_pairs_per_list(tile: LmTile, dim: usize, rows_per_list: f64) -> f64 {
    let base = match tile.dtype() {
        DType::F32 => MIN_PAIRS_PER_LIST_F32,
        DType::F16 => MIN_PAIRS_PER_LIST_F16,
        DType::I8 | DType::U8 => MIN_PAIRS_PER_LIST_8BIT,
    };
    if rows_per_list < dim as f64 && !matches!(tile, LmTile::Mma(_)) {
        base * SHORT_LIST_FACTOR
    } else {
        base
    }
}

/// The tile arithmetic a list-major scan links (fragment `lmtile_<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LmTile {
    /// mma.sync on the tensor cores (sm_80 and newer), the products kept in registers and
    /// scored by the warp that made them: f32 as 3xTF32 (each operand split into a TF32
    /// part and the TF32 part of the rest, three products summed in f32: a relative error
    /// of about 2⁻²¹ of Σ|q·x|, the order of f32's own rounding over the sum), f16 with
    /// f32 accumulation, 8-bit exact (kernels/lmtile.cu).
    Mma(DType),
    /// f32 products on CUDA cores (FMA), register-tiled.
    F32Fma,
    /// f16 or 8-bit products on tensor cores through WMMA (sm_75 on), stored to shared
    /// memory and scored in a second pass; exact for 8-bit types.
    Wmma(DType),
}

/// Which tiles list-major scans use ([`IvfGpu::set_tile_arith`]).
///
/// Measured on the H200 (lowdim 1M × 128 f32, 1,024 lists, k 10, list-major forced each
/// way in one run, `docs/gpu-runs/2026-11-30-f32-tile/final/`): the 3xTF32 tile is faster
/// than FMA on every row — 1.09–1.18× at batch 10,000 (2–100 probes, 64-query tiles from
/// 5 probes) and 1.14–1.43× at batch 1,000 (tiles of 16–64) — hence the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TileArith {
    /// [`LmTile::Mma`] where the GPU has mma.sync's forms (sm_80 on), else the portable
    /// tiles.
    #[default]
    Mma,
    /// The tiles every supported GPU runs: CUDA-core FMA for f32, WMMA for f16 and 8-bit
    /// (to compare, or for f32 products summed in one fixed order).
    Portable,
}

impl TileArith {
    /// Both choices.
    pub const ALL: [TileArith; 2] = [TileArith::Mma, TileArith::Portable];

    /// `mma` or `portable`.
    pub fn name(self) -> &'static str {
        match self {
            TileArith::Mma => "mma",
            TileArith::Portable => "portable",
        }
    }

    /// The choice named `name` (see [`TileArith::name`]).
    pub fn parse(name: &str) -> Result<TileArith> {
        TileArith::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown list-major tile arithmetic {name:?}; use mma or portable"
                ))
            })
    }
}

impl LmTile {
    /// The tile for lists of `dtype` on a GPU of compute capability major `cc_major`
    /// with the choice `arith`.
    pub fn choose(dtype: DType, cc_major: u32, arith: TileArith) -> LmTile {
        match dtype {
            _ if arith == TileArith::Mma && cc_major >= 8 => LmTile::Mma(dtype),
            DType::F32 => LmTile::F32Fma,
            other => LmTile::Wmma(other),
        }
    }

    /// The type of the lists the tile scans.
    pub fn dtype(self) -> DType {
        match self {
            LmTile::F32Fma => DType::F32,
            LmTile::Wmma(dtype) | LmTile::Mma(dtype) => dtype,
        }
    }

    /// The name in its fragment and plans (`f32`, `f16`, `i8`, `u8` for the portable
    /// tiles, `f32tc`, `f16tc`, `i8tc`, `u8tc` for mma.sync).
    pub fn name(self) -> &'static str {
        match self {
            LmTile::F32Fma => "f32",
            LmTile::Wmma(dtype) => dtype.name(),
            LmTile::Mma(DType::F32) => "f32tc",
            LmTile::Mma(DType::F16) => "f16tc",
            LmTile::Mma(DType::I8) => "i8tc",
            LmTile::Mma(DType::U8) => "u8tc",
        }
    }
}

/// Threads per list-major block (`LM_THREADS` in ivf_abi.cuh).
const LM_THREADS: u32 = 256;

/// The most queries a tile may hold for top-k capacity `cap`: a tile's per-query top-k
/// lists share the block's shared memory with its rows and queries.
pub fn max_queries_per_tile(cap: usize) -> usize {
    if cap <= 64 {
        64
    } else if cap <= 256 {
        32
    } else {
        16
    }
}

/// Queries per tile for a batch of `n_pairs` (query, probe) pairs over `n_lists` lists:
/// enough to share each list's reads among many queries, few enough that the last,
/// partial tile of a list does not multiply mostly empty slots (16 slots when lists get
/// fewer than 16 pairs on average, 32 below 40, else 64); at most
/// [`max_queries_per_tile`].
pub fn preferred_queries_per_tile(cap: usize, n_pairs: usize, n_lists: usize) -> usize {
    let per_list = n_pairs as f64 / n_lists.min(n_pairs).max(1) as f64;
    let by_shape = if per_list < 16.0 {
        16
    } else if per_list < 40.0 {
        32
    } else {
        64
    };
    by_shape.min(max_queries_per_tile(cap))
}

/// Shared memory of the tile fragment (`LmWork` in lmtile.cu): the tensor-core tiles
/// stage the queries and the step's 64 rows in their own type, one per row of `ld` = the
/// dimension rounded up to the k step (16 values; 32 for 8-bit mma.sync) plus 16 bytes,
/// the WMMA tiles with the step's dot products before them (qt × 68 of 4 bytes); the FMA
/// f32 tile dimension-major, with 4 pad slots per query row; then the norms.
fn work_bytes(tile: LmTile, dim: usize, qt: usize) -> usize {
    let row_major = |size: usize, k_step: usize| {
        let ld = dim.next_multiple_of(k_step) + 16 / size;
        size * (qt + 64) * ld + 4 * (8 * 64 + 64 + qt)
    };
    match tile {
        LmTile::F32Fma => 4 * (dim * (qt + 4) + dim * 64 + 8 * 64 + qt),
        LmTile::Mma(dtype) if dtype.size() == 1 => row_major(1, 32),
        LmTile::Mma(dtype) => row_major(dtype.size(), 16),
        LmTile::Wmma(dtype) => 4 * qt * 68 + row_major(dtype.size(), 16),
    }
}

/// Dynamic shared memory of one list-major block of `qt` queries (the layout in
/// lmscan.cu: top-k lists, a step's kept candidates (a score and a row byte for each of
/// 64 rows a query), thresholds, bounds, counts and slots, then the 128-byte aligned work
/// area).
pub fn shared_bytes(tile: LmTile, dim: usize, k: usize, qt: usize) -> Result<usize> {
    let cap = capacity(k)?;
    // Top-k lists; candidate scores and rows; thr, qbound, counts, qidx, pair, busy; the
    // busy counters; the busy flags.
    let fixed = qt * cap * 8 + qt * 64 * (4 + 1) + qt * 4 * 6 + 16 + qt;
    Ok(fixed.next_multiple_of(128) + 128 + work_bytes(tile, dim, qt))
}

/// `ivf_lmscan`'s parameters (kernels/lmscan.cu).
const LMSCAN_SIGNATURE: &[Param] = scan_signature!(
    [
        Param::Ptr,                            // queries, in the lists' type
        Param::I32,                            // dim
        Param::I32,                            // veclen
        Param::I32,                            // n_probes
        Param::I32,                            // queries per tile
        Param::Buffer(Elem::I32, Extent::Any), // pairs grouped by list
        Param::Buffer(Elem::I32, Extent::Any), // list_start
        Param::Buffer(Elem::I32, Extent::Any), // tile_start
        Param::I32,                            // n_lists
    ],
    [
        Param::BufferMut(Elem::U32, Extent::Any), // per-query bounds (zeroed)
        Param::BufferMut(Elem::F32, Extent::Any), // candidate distances
        Param::BufferMut(Elem::I64, Extent::Any), // candidate ids
    ]
);

/// `ivf_group_count` and `ivf_group_fill`: probes, pair count, counts or cursors, and for
/// the fill the pairs.
const GROUP_COUNT_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::I64, Extent::Any),
    Param::I32,
    Param::BufferMut(Elem::I32, Extent::Any),
];
const GROUP_FILL_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::I64, Extent::Any),
    Param::I32,
    Param::BufferMut(Elem::I32, Extent::Any),
    Param::BufferMut(Elem::I32, Extent::Any),
];
/// `ivf_group_offsets`: counts, n_lists, queries per tile, list_start, tile_start, cursors.
const GROUP_OFFSETS_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::I32, Extent::Any),
    Param::I32,
    Param::I32,
    Param::BufferMut(Elem::I32, Extent::Any),
    Param::BufferMut(Elem::I32, Extent::Any),
    Param::BufferMut(Elem::I32, Extent::Any),
];

/// The kernels of a list-major scan of `batch` = (queries, probes): lmscan, the three
/// grouping kernels, merge. The scan is allowed the shared memory of its largest tile, up
/// to the device's `shared_limit` (each launch uses what its tile needs).
pub(crate) fn list_major_kernels(
    lists: &DeviceLists,
    tile: LmTile,
    metric: Metric,
    filter: &Filter,
    k: usize,
    batch: (usize, usize),
    shared_limit: usize,
) -> Result<[KernelSpec; 5]> {
    let (nb, n_probes) = batch;
    let cap = capacity(k)?;
    Ok([
        KernelSpec {
            plan: format!(
                "lmscan_c{cap}_{}_{}_{}",
                tile.name(),
                metric.name(),
                filter.name()
            ),
            signature: LMSCAN_SIGNATURE,
            shared: shared_bytes(tile, lists.dim, k, max_queries_per_tile(cap))?.min(shared_limit),
        },
        KernelSpec {
            plan: "group_count".into(),
            signature: GROUP_COUNT_SIGNATURE,
            shared: 0,
        },
        KernelSpec {
            plan: "group_offsets".into(),
            signature: GROUP_OFFSETS_SIGNATURE,
            shared: 0,
        },
        KernelSpec {
            plan: "group_fill".into(),
            signature: GROUP_FILL_SIGNATURE,
            shared: 0,
        },
        merge_kernel(metric, k, nb, n_probes * k)?,
    ])
}

/// Device buffers of the grouping, reused across calls.
#[derive(Default)]
pub(crate) struct PairGroups {
    counts: Buffer<i32>,
    list_start: Buffer<i32>,
    tile_start: Buffer<i32>,
    cursor: Buffer<i32>,
    pairs: Buffer<i32>,
    /// Per query of the batch: the best k-th score any of its pairs reached (lmscan.cu).
    bound: Buffer<u32>,
}

/// Threads per block of the grouping's element-wise kernels.
const GROUP_THREADS: usize = 256;

impl IvfGpu {
    /// The tile arithmetic list-major scans of `dtype` lists use on this device (see
    /// [`TileArith`] and [`IvfGpu::set_tile_arith`]).
    pub fn list_major_tile_arithmetic(&self, dtype: DType) -> LmTile {
        LmTile::choose(
            dtype,
            self.gpu.compute_capability().major,
            self.tile_arith(),
        )
    }

    /// Which tiles list-major scans use: mma.sync on the tensor cores by default (sm_80
    /// on), the portable tiles (FMA for f32, WMMA for f16 and 8-bit) to compare.
    pub fn set_tile_arith(&self, arith: TileArith) {
        *self.tile_arith.lock() = arith;
    }

    /// The tile choice in force ([`IvfGpu::set_tile_arith`]).
    pub fn tile_arith(&self) -> TileArith {
        *self.tile_arith.lock()
    }

    /// The queries per tile a list-major scan of this shape runs with on this device
    /// (the preferred number, lowered until the block fits the shared memory), or why it
    /// cannot run.
    pub fn list_major_tile(
        &self,
        dtype: DType,
        dim: usize,
        k: usize,
        n_pairs: usize,
        n_lists: usize,
    ) -> Result<std::result::Result<usize, String>> {
        let cap = capacity(k)?;
        let limit = self.shared_limit()?;
        let tile = self.list_major_tile_arithmetic(dtype);
        let mut qt = preferred_queries_per_tile(cap, n_pairs, n_lists);
        loop {
            let need = shared_bytes(tile, dim, k, qt)?;
            if need <= limit {
                return Ok(Ok(qt));
            }
            if qt == 16 {
                return Ok(Err(format!(
                    "the list-major scan of {} × {dim} for k = {k} needs {need} bytes of shared \
                     memory per block, this GPU allows {limit}; use the per-query scan or a smaller k",
                    dtype.name()
                )));
            }
            qt /= 2;
        }
    }

    /// Whether `path` means the list-major scan for this batch shape.
    pub(crate) fn use_list_major(
        &self,
        path: ScanPath,
        lists: &DeviceLists,
        nb: usize,
        n_probes: usize,
        k: usize,
    ) -> Result<bool> {
        let n_pairs = nb * n_probes;
        let tile = || self.list_major_tile(lists.dtype, lists.dim, k, n_pairs, lists.n_lists);
        match path {
            ScanPath::PerQuery => Ok(false),
            ScanPath::ListMajor => match tile()? {
                Err(why) => Err(Error::InvalidArgument(why)),
                Ok(_) => Ok(true),
            },
            ScanPath::Auto => {
                let per_list = n_pairs as f64 / lists.n_lists.max(1) as f64;
                // Rows a list on average, padding included (one id per stored row).
                let rows_per_list = lists.ids.len() as f64 / lists.n_lists.max(1) as f64;
                let arith = self.list_major_tile_arithmetic(lists.dtype);
                let needed = min_pairs_per_list(arith, lists.dim, rows_per_list);
                Ok(per_list >= needed && tile()?.is_ok())
            }
        }
    }

    /// The list-major scan of one batch and its merge: candidates into `cand` (at least
    /// `nb × n_probes × k` each), each query's top `k` into `out` (at least `nb × k`).
    pub(crate) fn list_major_batch<T: DeviceElem>(
        &self,
        b: &ScanBatch<'_, T>,
        groups: &mut PairGroups,
        cand: (&mut CudaSlice<f32>, &mut CudaSlice<i64>),
        out: (&mut CudaViewMut<'_, f32>, &mut CudaViewMut<'_, i64>),
    ) -> Result<()> {
        let lists = b.lists;
        let n_pairs = b.nb * b.n_probes;
        b.check_buffers(cand.0.len().min(cand.1.len()), out.0.len().min(out.1.len()))?;
        if n_pairs > i32::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "{n_pairs} (query, probe) pairs in one batch; the list-major scan takes at most {}",
                i32::MAX
            )));
        }
        let tile = self.list_major_tile_arithmetic(lists.dtype);
        let qt = self
            .list_major_tile(lists.dtype, lists.dim, b.k, n_pairs, lists.n_lists)?
            .map_err(Error::InvalidArgument)?;
        let [scan, count, offsets, fill, _] = list_major_kernels(
            lists,
            tile,
            b.metric,
            b.filter,
            b.k,
            (b.nb, b.n_probes),
            self.shared_limit()?,
        )?;
        let scan_smem = shared_bytes(tile, lists.dim, b.k, qt)?;
        let scan_k = self
            .kernels
            .kernel(&scan.plan, scan.signature, scan.shared)?;
        let count_k = self.kernels.kernel(&count.plan, count.signature, 0)?;
        let offsets_k = self.kernels.kernel(&offsets.plan, offsets.signature, 0)?;
        let fill_k = self.kernels.kernel(&fill.plan, fill.signature, 0)?;
        let gpu = &self.gpu;
        let stream = gpu.stream();
        let n_lists = lists.n_lists;
        let counts = groups.counts.at_least(gpu, n_lists)?;
        let list_start = groups.list_start.at_least(gpu, n_lists + 1)?;
        let tile_start = groups.tile_start.at_least(gpu, n_lists + 1)?;
        let cursor = groups.cursor.at_least(gpu, n_lists)?;
        let pairs = groups.pairs.at_least(gpu, n_pairs)?;
        let bound = groups.bound.at_least(gpu, b.nb)?;
        let (n_pairs_i, n_lists_i, qt_i) = (n_pairs as i32, n_lists as i32, qt as i32);
        let elementwise = LaunchConfig {
            grid_dim: (n_pairs.div_ceil(GROUP_THREADS).clamp(1, 4096) as u32, 1, 1),
            block_dim: (GROUP_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };

        gpu.clear(counts)?;
        gpu.clear(bound)?;
        let launch = Launch::on(stream, &count_k, elementwise)
            .view(&b.probes)
            .scalar(&n_pairs_i)
            .buffer_mut(counts);
        // SAFETY: reads n_pairs probes (ScanBatch::check_buffers), each a list number below
        // n_lists (from the coarse search or range-checked by the caller), and increments
        // counts[list] within its n_lists entries.
        unsafe { launch.run() }?;
        let one_block = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 0,
        };
        let launch = Launch::on(stream, &offsets_k, one_block)
            .buffer(counts)
            .scalar(&n_lists_i)
            .scalar(&qt_i)
            .buffer_mut(list_start)
            .buffer_mut(tile_start)
            .buffer_mut(cursor);
        // SAFETY: reads n_lists counts, writes n_lists + 1 list and tile starts and n_lists
        // cursors, the lengths allocated above.
        unsafe { launch.run() }?;
        let launch = Launch::on(stream, &fill_k, elementwise)
            .view(&b.probes)
            .scalar(&n_pairs_i)
            .buffer_mut(cursor)
            .buffer_mut(pairs);
        // SAFETY: each pair takes one slot of its list's range of `pairs` (the counts sum
        // to n_pairs, the length allocated above).
        unsafe { launch.run() }?;
        self.profiler.lap(gpu, Stage::Group)?;

        // Tiles: at most one partial tile per probed list besides the full ones.
        let tiles = n_lists.min(n_pairs) + n_pairs / qt;
        let (dim_i, veclen_i, probes_i, elem, base, k_i) = (
            lists.dim as i32,
            lists.veclen as i32,
            b.n_probes as i32,
            lists.dtype.size() as i32,
            b.query_base as i32,
            b.k as i32,
        );
        let cfg = LaunchConfig {
            grid_dim: (tiles as u32, 1, 1),
            block_dim: (LM_THREADS, 1, 1),
            shared_mem_bytes: scan_smem as u32,
        };
        let (cand_d, cand_i) = cand;
        let launch = Launch::on(stream, &scan_k, cfg)
            .view(&b.queries)
            .scalar(&dim_i)
            .scalar(&veclen_i)
            .scalar(&probes_i)
            .scalar(&qt_i)
            .buffer(pairs)
            .buffer(list_start)
            .buffer(tile_start)
            .scalar(&n_lists_i);
        let launch = b
            .list_and_filter_args(launch, &elem, &base, &k_i)
            .buffer_mut(bound)
            .buffer_mut(&mut *cand_d)
            .buffer_mut(&mut *cand_i);
        // SAFETY: blocks past tile_start[n_lists] return at once; a tile reads its pairs
        // within list_start's ranges (built above from the same probes), their queries
        // (pair / n_probes < nb, checked by check_buffers), its list's whole 32-row groups
        // (lists are padded to 32 rows), the filter within its words, and writes k
        // candidates at pair × k < nb × n_probes × k, within cand (checked), and the bounds
        // of its queries (< nb, the length allocated above).
        unsafe { launch.run() }?;
        self.profiler.lap(gpu, Stage::Scan)?;
        self.merge(
            b.metric,
            b.nb,
            b.n_probes * b.k,
            b.k,
            (&*cand_d, &*cand_i),
            out,
        )?;
        self.profiler.lap(gpu, Stage::Merge)
    }

    /// The device's dynamic shared memory limit per block (read once).
    pub(crate) fn shared_limit(&self) -> Result<usize> {
        let mut cached = self.shared_limit.lock();
        if let Some(v) = *cached {
            return Ok(v);
        }
        let v = self.gpu.max_shared_per_block()?;
        *cached = Some(v);
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_paths_parse_their_names_and_nothing_else() {
        for path in [ScanPath::PerQuery, ScanPath::ListMajor, ScanPath::Auto] {
            assert_eq!(ScanPath::parse(path.name()).unwrap(), path);
            assert_eq!(ScanPath::from_code(path.to_code()), path);
        }
        let err = ScanPath::parse("listmajor").unwrap_err().to_string();
        assert!(err.contains("per-query, list-major or auto"), "{err}");
        let cell = ScanPathCell::default();
        assert_eq!(cell.get(), ScanPath::Auto);
        cell.set(ScanPath::ListMajor);
        assert_eq!(cell.get(), ScanPath::ListMajor);
    }

    #[test]
    fn tiles_grow_with_the_pairs_per_list_and_shrink_with_the_capacity() {
        // 10,000 queries × 20 probes over 1,024 lists: ~195 pairs a list.
        assert_eq!(preferred_queries_per_tile(16, 200_000, 1024), 64);
        // 1,000 × 20 over 1,024: ~20 a list; 1,000 × 5: ~5.
        assert_eq!(preferred_queries_per_tile(16, 20_000, 1024), 32);
        assert_eq!(preferred_queries_per_tile(16, 5_000, 1024), 16);
        // Few pairs: only the lists they probe count.
        assert_eq!(preferred_queries_per_tile(16, 100, 100_000), 16);
        // Large k leaves room for fewer queries per tile.
        assert_eq!(preferred_queries_per_tile(128, 200_000, 1024), 32);
        assert_eq!(preferred_queries_per_tile(1024, 200_000, 1024), 16);
        assert_eq!(max_queries_per_tile(1), 64);
        assert_eq!(max_queries_per_tile(512), 16);
    }

    #[test]
    fn tiles_follow_the_choice_and_the_gpu() {
        use LmTile::*;
        // mma.sync by default, never before sm_80.
        assert_eq!(TileArith::default(), TileArith::Mma);
        for dtype in [DType::F32, DType::F16, DType::I8, DType::U8] {
            assert_eq!(LmTile::choose(dtype, 9, TileArith::Mma), Mma(dtype));
            assert_eq!(LmTile::choose(dtype, 8, TileArith::Mma), Mma(dtype));
            assert_eq!(
                LmTile::choose(dtype, 8, TileArith::Mma).name(),
                format!("{}tc", dtype.name())
            );
        }
        assert_eq!(LmTile::choose(DType::F32, 7, TileArith::Mma), F32Fma);
        assert_eq!(LmTile::choose(DType::F32, 9, TileArith::Portable), F32Fma);
        assert_eq!(
            LmTile::choose(DType::U8, 7, TileArith::Mma),
            Wmma(DType::U8)
        );
        assert_eq!(
            LmTile::choose(DType::F16, 9, TileArith::Portable).name(),
            "f16"
        );
        for t in TileArith::ALL {
            assert_eq!(TileArith::parse(t.name()).unwrap(), t);
        }
        let err = TileArith::parse("tf32").unwrap_err().to_string();
        assert!(err.contains("mma or portable"), "{err}");
    }

    #[test]
    fn shared_memory_counts_every_part_of_the_block() {
        // f32 × 128, k 10, 64 queries: the top-k lists (64 × 16 × 8), kept candidates
        // (64 × 64 × 5), thresholds and slots, the staged queries (128 × 68 × 4) and rows
        // (128 × 64 × 4).
        let f32_bytes = shared_bytes(LmTile::F32Fma, 128, 10, 64).unwrap();
        let parts = 64 * 16 * 8 + 64 * 64 * 5 + 128 * 68 * 4 + 128 * 64 * 4;
        assert!(
            f32_bytes > parts && f32_bytes < parts + 8192,
            "{f32_bytes} vs {parts}"
        );
        // 8-bit rows take a quarter of f32's room, f16 half (beside their dot products).
        let u8_bytes = shared_bytes(LmTile::Wmma(DType::U8), 128, 10, 64).unwrap();
        let f16_bytes = shared_bytes(LmTile::Wmma(DType::F16), 128, 10, 64).unwrap();
        assert!(u8_bytes < f16_bytes && f16_bytes < f32_bytes);
        // Fewer queries per tile and smaller k need less.
        assert!(shared_bytes(LmTile::F32Fma, 128, 10, 16).unwrap() < f32_bytes);
        assert!(shared_bytes(LmTile::F32Fma, 128, 1024, 16).unwrap() > 16 * 1024 * 8);
        // The TF32 tile stores rows row-major (ld 132) without dot products: two blocks
        // of 64 queries still fit an H200 SM (228 KiB) at 128 dimensions.
        let tf32_bytes = shared_bytes(LmTile::Mma(DType::F32), 128, 10, 64).unwrap();
        let tf32_parts = 64 * 16 * 8 + 64 * 64 * 5 + (64 + 64) * 132 * 4;
        assert!(tf32_bytes > tf32_parts && tf32_bytes < tf32_parts + 8192);
        assert!(2 * (tf32_bytes + 1024) <= 228 * 1024, "{tf32_bytes}");
        // An image-sized 8-bit row fits an H200 block (227 KiB) with 64 queries; the mma
        // tile pads 784 to 800 (its k step is 32 bytes) and needs no dot products.
        let wmma_images = shared_bytes(LmTile::Wmma(DType::U8), 784, 10, 64).unwrap();
        assert!(wmma_images < 227 * 1024);
        let mma_images = shared_bytes(LmTile::Mma(DType::U8), 784, 10, 64).unwrap();
        assert_eq!(wmma_images - mma_images, 64 * 68 * 4 - (64 + 64) * 16);
        assert!(shared_bytes(LmTile::F32Fma, 128, 0, 64).is_err());
    }

    #[test]
    fn narrower_types_and_short_wide_lists_need_at_least_as_many_pairs_per_list() {
        let mma = |dtype, dim, rows| min_pairs_per_list(LmTile::Mma(dtype), dim, rows);
        let f32_rule = mma(DType::F32, 128, 977.0);
        assert_eq!(f32_rule, MIN_PAIRS_PER_LIST_F32);
        assert!(mma(DType::F16, 128, 977.0) > f32_rule);
        assert!(mma(DType::I8, 128, 977.0) >= mma(DType::F16, 128, 977.0));
        assert_eq!(mma(DType::U8, 128, 977.0), mma(DType::I8, 128, 977.0));
        // 784-wide rows in lists of 234: with the mma tile list-major measured faster from
        // 7.8 pairs a list (1,000 queries × 2 probes), so no factor; the WMMA tile still
        // needs more (per-query was faster there up to 117).
        let images = mma(DType::U8, 784, 234.0);
        assert!(images <= 8.0, "{images}");
        let images_wmma = min_pairs_per_list(LmTile::Wmma(DType::U8), 784, 234.0);
        assert!(images_wmma > 7.8 && images_wmma < 78.0, "{images_wmma}");
        assert_eq!(
            min_pairs_per_list(LmTile::Wmma(DType::U8), 784, 784.0),
            MIN_PAIRS_PER_LIST_8BIT
        );
        // The FMA tile is f32's portable tile: f32's threshold.
        assert_eq!(
            min_pairs_per_list(LmTile::F32Fma, 128, 977.0),
            MIN_PAIRS_PER_LIST_F32
        );
    }
}
