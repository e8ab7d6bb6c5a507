//! The list-major tile: which arithmetic it links ([`LmTile`], [`TileArith`]), which
//! kernel runs it (registers capped for more blocks an SM or not, [`LmKernel`]), how many
//! queries it holds (for the batch's shape and the SM's occupancy), and the shared memory
//! and step buffers a block of it takes ([`BlockLayout`]).

use ltokit::Result;

use crate::data::DType;
use crate::gpu::{capacity, IvfGpu};

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

/// Which tiles list-major scans use ([`IvfGpu::set_tile_arith`]); the coarse search's
/// score matrix follows the same choice ([`crate::gpu::MatrixArith::choose`]).
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
        super::named(
            &TileArith::ALL,
            TileArith::name,
            name,
            "list-major tile arithmetic",
        )
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
pub(super) const LM_THREADS: u32 = 256;

/// Rows of a list's step, which every tile multiplies against its queries at once
/// (`LM_STEP_ROWS` in ivf_abi.cuh).
pub(super) const STEP_ROWS: usize = 64;

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

/// Every queries-per-tile a scan of top-k capacity `cap` may run with: 16, 32 and 64, up
/// to [`max_queries_per_tile`].
pub(crate) fn queries_per_tile_choices(cap: usize) -> impl Iterator<Item = usize> {
    let most = max_queries_per_tile(cap);
    [16, 32, 64].into_iter().filter(move |&qt| qt <= most)
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

/// A device's shared memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SharedMemory {
    /// The most one block may use (the opt-in limit).
    pub per_block: usize,
    /// What one SM holds for all its resident blocks.
    pub per_sm: usize,
}

/// Candidates a query slot keeps between offers to its top-k list, a score and a 16-bit
/// row each: the tile fragment's `ivf_lm_cand_cap` (kernels/lmtile.cu, where the
/// measurements that chose it are) — 96 in the wide-room tiles (`lmtile_<f16|i8|u8>tcw`,
/// [`LmKernel::Plain`]'s `wide_room`), 80 in every other.
fn cand_cap(rows: RowCopy) -> usize {
    match rows {
        RowCopy::Registers { wide_room: true } => WIDE_CAND_CAP,
        _ => CAND_CAP,
    }
}

/// Candidates a query slot keeps in most tiles ([`cand_cap`]).
const CAND_CAP: usize = 80;

/// Candidates a query slot keeps in the wide-room tiles ([`cand_cap`]).
const WIDE_CAND_CAP: usize = 96;

/// Shared memory the system takes from an SM for each resident block (sm_80 on).
const SYSTEM_SHARED_PER_BLOCK: usize = 1024;

impl SharedMemory {
    /// How many blocks of `bytes` of dynamic shared memory an SM holds at once.
    fn blocks_of(self, bytes: usize) -> usize {
        self.per_sm / (bytes + SYSTEM_SHARED_PER_BLOCK)
    }
}

/// The top-k capacities that have register-capped scan kernels (`ivf_lmscan_o3_c*`,
/// `ivf_lmscan_o4_c*`) and plain 8-bit plans linked for a wide dimension: the bundle's
/// `smallcap` axis.
const MAX_CAPPED_CAPACITY: usize = 32;

/// Dimensions the register-capped 8-bit scans are linked for as a constant (fragments
/// `lmdim_<N>`, the axis `lmdim` of kernels/bundle.json, which must list the same): the
/// link folds the dimension into the staging, the row copies' addresses and the k loop.
/// Measured on the H200 (session 15, `docs/gpu-runs/2026-12-01-s15/1-iep-parts-dimc-ab/`,
/// the scan compiled for 128 dimensions beside its generic form, same call, three rounds):
/// 1M × 128 i8 +3.3 to +3.9 % device QPS at batch 10,000; f32's 3xTF32 tile lost 22–25 %
/// the same way, so only these kernels take it (f16's plain tile: −1.3 to +0.1 %). As
/// landed (session 17, `docs/gpu-runs/2026-12-01-s17/1-lmdim-epi-ab/`, against main, three
/// rounds): i8 × 128 +1.0 to +2.1 % at batch 10,000. Dimensions up to 384, where a capped
/// kernel's blocks fit three to an SM (wider rows take the plain kernel).
pub(crate) const LINKED_DIMS: [usize; 7] = [64, 96, 100, 128, 200, 256, 384];

/// Dimensions the plain kernel's 8-bit mma tiles are linked for as a constant (the axis
/// `widedim` of kernels/bundle.json), for top-k capacities up to 32: wide rows whose
/// blocks the capped kernels cannot fit three to an SM (the images' 784, wide-i8's 512).
/// The link drops the register kernel's code from 86 to 62–64 KB (sm_90, no spill).
/// Measured on the H100 (session 32, `docs/gpu-runs/2026-12-06-s32/3-pdim-cimma3/`, `pdim`
/// against main, same call, three rounds): device QPS at batch 10,000 wide-i8 +2.7 /
/// +4.4 / +5.3 % (10 / 20 / 50 probes), images +1.9 / −0.0 / +1.4 / +2.0 % (2 / 5 / 10 /
/// 20), batch 1,000 +0.4 to +2.9 %; lowdim-i8 (the capped kernel, unchanged) within
/// ±0.5 %.
pub(crate) const WIDE_LINKED_DIMS: [usize; 2] = [512, 784];

/// Which list-major scan kernel a shape links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LmKernel {
    /// `lmscan_c*`: up to 128 registers a thread (two blocks an SM up to capacity 256,
    /// one above); rows reach shared memory through registers.
    Plain {
        /// Whether the tile keeps 96 candidates a query slot instead of 80 (the f16 and
        /// 8-bit mma tiles `…tcw`, where the SM still holds as many blocks of every tile
        /// size: [`LmKernel::choose`]).
        wide_room: bool,
    },
    /// `lmscan_o<blocks>_c*`: registers capped for `blocks` blocks an SM (3: 80 registers,
    /// 4: 64), rows copied with cp.async (fragment `lmtile_<i8|u8>tc_async`).
    Capped {
        /// Resident blocks an SM the registers allow: 3 or 4.
        blocks: usize,
    },
}

impl LmKernel {
    /// The kernel for a list-major scan of this shape: capped registers only for 8-bit
    /// mma.sync tiles with k ≤ 32, for the most blocks (four, else three) whose
    /// largest block the SM's shared memory holds that many times — elsewhere the cap
    /// only spills registers. Measured on the H200, same calls, two rounds each:
    /// - three blocks against two (`docs/gpu-runs/2026-11-30-s9/3-coarse-loads/`, rows
    ///   then through registers): lowdim i8 (128 dimensions) 11.5 → 13.0 M QPS at batch
    ///   10,000 × 10 probes, 4.4 → 5.0 M at 50; f16 +1–3 % at 10,000 but −6 % at 1,000;
    ///   f32 (two blocks fit) −20 %, 784-wide u8 images (one fits) −10 %;
    /// - rows by cp.async in the capped kernel (`docs/gpu-runs/2026-11-30-s10/4-topk-ab/`,
    ///   the 80 registers no longer spill the 32 that held a step): i8 +9–11 % at 10,000,
    ///   +14–22 % at 1,000; for the 784-wide u8 images (not capped) cp.async was 2–11 %
    ///   slower (`1-async-rows/`), so the plain kernel keeps the register path;
    /// - four blocks against three (`5-four-blocks/`, 64 registers spill 24 bytes): i8
    ///   +3 % at 5–10 probes, +7–8 % at 20–50, +4–5 % at batch 1,000.
    ///
    /// The plain kernel of an f16 or 8-bit mma tile keeps 96 candidates a query slot
    /// instead of 80 where that leaves the SM as many blocks of each tile size (16, 32 and
    /// 64 queries) — measured (session 12, `3-cand-cap-const-ab/`, against 80, the same
    /// call): f16 lowdim +0.7 to +3.2 %, the 784-wide u8 images +0.5 to +5.0 %; session 11
    /// measured 96 on f32's TF32 tile at −10 to −16 % (two blocks an SM no longer fit),
    /// which is the loss this rule keeps out of shapes such as f16 × 256 and 8-bit × 512.
    pub(crate) fn choose(tile: LmTile, dim: usize, k: usize, shared: SharedMemory) -> Result<Self> {
        let cap = capacity(k)?;
        let plain = || -> Result<Self> {
            Ok(LmKernel::Plain {
                wide_room: wide_room_keeps_blocks(tile, dim, k, shared)?,
            })
        };
        if !matches!(tile, LmTile::Mma(DType::I8 | DType::U8)) || cap > MAX_CAPPED_CAPACITY {
            return plain();
        }
        let largest = block_bytes(
            tile,
            dim,
            k,
            max_queries_per_tile(cap),
            RowCopy::Async { step_buffers: 1 },
        )?;
        match [4, 3].into_iter().find(|&b| shared.blocks_of(largest) >= b) {
            Some(blocks) => Ok(LmKernel::Capped { blocks }),
            None => plain(),
        }
    }

    /// Blocks an SM its registers allow for top-k capacity `cap` (`__launch_bounds__` in
    /// lmscan.cu: the plain kernel two up to capacity 256, else one).
    fn register_blocks(self, cap: usize) -> usize {
        match self {
            LmKernel::Plain { .. } if cap <= 256 => 2,
            LmKernel::Plain { .. } => 1,
            LmKernel::Capped { blocks } => blocks,
        }
    }

    /// The plan name's kernel prefix: `""` or `o<blocks>_`.
    pub(crate) fn plan_prefix(self) -> String {
        match self {
            LmKernel::Plain { .. } => String::new(),
            LmKernel::Capped { blocks } => format!("o{blocks}_"),
        }
    }

    /// The plan name's dimension part for `tile` at top-k capacity `cap`: `_d<dim>` where
    /// the kernel is linked with the dimension as a constant (fragment `lmdim_<dim>`: the
    /// register-capped 8-bit kernels, dimensions in [`LINKED_DIMS`]; the plain kernel's
    /// 8-bit mma tiles up to capacity 32, dimensions in [`WIDE_LINKED_DIMS`]), else empty
    /// (`lmdim_any`: the kernel's argument).
    pub(crate) fn dim_suffix(self, dim: usize, tile: LmTile, cap: usize) -> String {
        let wide_bytes = matches!(tile, LmTile::Mma(DType::I8 | DType::U8))
            && cap <= MAX_CAPPED_CAPACITY
            && WIDE_LINKED_DIMS.contains(&dim);
        match self {
            LmKernel::Capped { .. } if LINKED_DIMS.contains(&dim) => format!("_d{dim}"),
            LmKernel::Plain { .. } if wide_bytes => format!("_d{dim}"),
            _ => String::new(),
        }
    }

    /// The suffix of the plan name's tile: `w` for the wide-room tiles, else empty.
    pub(crate) fn tile_suffix(self) -> &'static str {
        match self {
            LmKernel::Plain { wide_room: true } => "w",
            _ => "",
        }
    }

    /// How the kernel's tile brings each step's rows to shared memory.
    fn rows(self, step_buffers: usize) -> RowCopy {
        match self {
            LmKernel::Plain { wide_room } => RowCopy::Registers { wide_room },
            LmKernel::Capped { .. } => RowCopy::Async { step_buffers },
        }
    }
}

/// Whether the plain kernel of `tile` may keep 96 candidates a query slot ([`LmKernel::choose`]):
/// f16 and 8-bit mma tiles whose blocks of 16, 32 and 64 queries (those `k` allows) fit
/// the device's limit a block and as many to an SM as with 80.
fn wide_room_keeps_blocks(
    tile: LmTile,
    dim: usize,
    k: usize,
    shared: SharedMemory,
) -> Result<bool> {
    if !matches!(tile, LmTile::Mma(DType::F16 | DType::I8 | DType::U8)) {
        return Ok(false);
    }
    let registers = LmKernel::Plain { wide_room: false }.register_blocks(capacity(k)?);
    for qt in queries_per_tile_choices(capacity(k)?) {
        let narrow = block_bytes(tile, dim, k, qt, RowCopy::Registers { wide_room: false })?;
        let wide = block_bytes(tile, dim, k, qt, RowCopy::Registers { wide_room: true })?;
        if wide > shared.per_block
            || shared.blocks_of(wide).min(registers) != shared.blocks_of(narrow).min(registers)
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Blocks of `qt` queries an SM holds at once: as many as its shared memory takes, at most
/// what the kernel's registers allow ([`LmKernel::register_blocks`]).
fn resident_blocks(
    tile: LmTile,
    dim: usize,
    k: usize,
    qt: usize,
    shared: SharedMemory,
) -> Result<usize> {
    let kernel = LmKernel::choose(tile, dim, k, shared)?;
    let bytes = block_layout(tile, dim, k, qt, kernel, shared)?.shared_bytes;
    Ok(shared
        .blocks_of(bytes)
        .min(kernel.register_blocks(capacity(k)?)))
}

/// `qt`, or half of it where a block of `qt` queries is alone on its SM and two blocks of
/// half as many fit: each block's barriers then leave the other's warps to run. Measured
/// on the H200 (`docs/gpu-runs/2026-11-30-s10/6-tile-occupancy/`, tile sizes forced, two
/// rounds): the 784-wide u8 images at batch 10,000 (one block of 64 an SM, two of 32)
/// ran 1.18–1.24× faster with 32 than with 64 (2 to 20 probes; 16: 0.87–1.19×); where
/// 64 already shares the SM (i8 at four blocks, f16 at two) 32 was 9–25 % slower.
fn spread_over_two_blocks(
    tile: LmTile,
    dim: usize,
    k: usize,
    qt: usize,
    shared: SharedMemory,
) -> Result<usize> {
    if qt > 16
        && resident_blocks(tile, dim, k, qt, shared)? == 1
        && resident_blocks(tile, dim, k, qt / 2, shared)? >= 2
    {
        Ok(qt / 2)
    } else {
        Ok(qt)
    }
}

/// How a list-major kernel brings each step's rows to shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowCopy {
    /// Through registers, loaded while the step before is multiplied (one step buffer);
    /// `wide_room`: the tile keeps 96 candidates a query slot ([`cand_cap`]).
    Registers { wide_room: bool },
    /// With cp.async into one of `step_buffers` buffers, with the rows' norms (the
    /// register-capped 8-bit kernels: fragment `lmtile_<i8|u8>tc_async`).
    Async { step_buffers: usize },
}

/// Shared memory of the tile fragment (`LmWork` in lmtile.cu): the tensor-core tiles
/// stage the queries and the step's 64 rows in their own type, one per row of `ld` = the
/// dimension rounded up to the k step (16 values; 32 for 8-bit mma.sync) plus 16 bytes,
/// the WMMA tiles with the step's dot products before them (qt × 68 of 4 bytes); the FMA
/// f32 tile dimension-major, with 4 pad slots per query row; then the step rows' and the
/// queries' norms. Tiles that copy rows asynchronously keep the queries' norms, two steps'
/// row norms, the queries and `step_buffers` steps.
fn work_bytes(tile: LmTile, dim: usize, qt: usize, rows: RowCopy) -> usize {
    // Elements a staged row takes: the dimension rounded up to the k step, plus 16 bytes.
    let ld = |size: usize, k_step: usize| dim.next_multiple_of(k_step) + 16 / size;
    let row_major = |size: usize, k_step: usize| {
        size * (qt + STEP_ROWS) * ld(size, k_step) + 4 * (STEP_ROWS + qt)
    };
    match (tile, rows) {
        (_, RowCopy::Async { step_buffers }) => {
            4 * (qt + 2 * STEP_ROWS) + (qt + STEP_ROWS * step_buffers) * ld(1, 32)
        }
        (LmTile::F32Fma, _) => 4 * (dim * (qt + 4) + dim * STEP_ROWS + STEP_ROWS + qt),
        (LmTile::Mma(dtype), _) if dtype.size() == 1 => row_major(1, 32),
        (LmTile::Mma(dtype), _) => row_major(dtype.size(), 16),
        (LmTile::Wmma(dtype), _) => 4 * qt * 68 + row_major(dtype.size(), 16),
    }
}

/// The tile fragment's work area for `qt` queries and one step buffer in the seed by list
/// (kernels/lmseedt.cu): the 8-bit mma tiles copy rows with cp.async there, the others
/// through registers.
pub(super) fn seed_work_bytes(tile: LmTile, dim: usize, qt: usize) -> usize {
    let rows = match tile {
        LmTile::Mma(dtype) if dtype.size() == 1 => RowCopy::Async { step_buffers: 1 },
        _ => RowCopy::Registers { wide_room: false },
    };
    work_bytes(tile, dim, qt, rows)
}

/// Dynamic shared memory of one list-major block of `qt` queries whose rows travel
/// through registers — the most any kernel of the shape needs (the layout in lmscan.cu:
/// top-k lists, a step's kept candidates (a score and a row byte for each of 64 rows a
/// query), thresholds, bounds, counts and slots, then the 128-byte aligned work area).
pub fn shared_bytes(tile: LmTile, dim: usize, k: usize, qt: usize) -> Result<usize> {
    block_bytes(tile, dim, k, qt, RowCopy::Registers { wide_room: false })
}

/// [`shared_bytes`] of a kernel that copies rows `rows`.
fn block_bytes(tile: LmTile, dim: usize, k: usize, qt: usize, rows: RowCopy) -> Result<usize> {
    Ok(work_offset(k, qt, rows)? + 128 + work_bytes(tile, dim, qt, rows))
}

/// Where the work area starts in a list-major block's shared memory (the kernel's
/// `work_off` argument, kernels/lmscan.cu): after the top-k lists, the candidate scores
/// and rows, the thresholds, bounds, counts, query numbers, pairs, busy slots and integer
/// thresholds, the busy counters and flush flags and the busy flags, rounded up to 128
/// bytes.
fn work_offset(k: usize, qt: usize, rows: RowCopy) -> Result<usize> {
    let cap = capacity(k)?;
    let fixed = qt * cap * 8 + qt * cand_cap(rows) * (4 + 2) + qt * 4 * 7 + 16 + 8 + qt;
    Ok(fixed.next_multiple_of(128))
}

/// How a list-major block of one shape runs: its step buffers and shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockLayout {
    /// Step buffers: 2 lets an asynchronous kernel copy the next step while it multiplies
    /// this one; with 1 it copies the next beside the top-k pass (kernels that load rows
    /// through registers always have 1).
    pub step_buffers: usize,
    /// Dynamic shared memory of the block.
    pub shared_bytes: usize,
    /// Where its work area starts ([`work_offset`]).
    pub work_offset: usize,
}

/// The block layout of a tile of `qt` queries for `kernel`: the plain kernel loads rows
/// through registers, one step buffer; the capped kernels copy them asynchronously, and at
/// three blocks an SM take a second step buffer where the SM still holds three (at four,
/// measured, one buffer and the fourth block pay more than two buffers).
pub(crate) fn block_layout(
    tile: LmTile,
    dim: usize,
    k: usize,
    qt: usize,
    kernel: LmKernel,
    shared: SharedMemory,
) -> Result<BlockLayout> {
    let layout = |step_buffers: usize| -> Result<BlockLayout> {
        let rows = kernel.rows(step_buffers);
        Ok(BlockLayout {
            step_buffers,
            shared_bytes: block_bytes(tile, dim, k, qt, rows)?,
            work_offset: work_offset(k, qt, rows)?,
        })
    };
    let blocks = match kernel {
        LmKernel::Plain { .. } => return layout(1),
        LmKernel::Capped { blocks } => blocks,
    };
    let double = layout(2)?;
    if blocks == 3 && shared.blocks_of(double.shared_bytes) >= 3 {
        Ok(double)
    } else {
        layout(1)
    }
}

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
    /// on), the portable tiles (FMA for f32, WMMA for f16 and 8-bit) to compare; the
    /// coarse score matrix follows (3xTF32 mma.sync, or FMA on the CUDA cores).
    pub fn set_tile_arith(&self, arith: TileArith) {
        *self.tile_arith.lock() = arith;
    }

    /// The tile choice in force ([`IvfGpu::set_tile_arith`]).
    pub fn tile_arith(&self) -> TileArith {
        *self.tile_arith.lock()
    }

    /// Whether list-major batches scan each query's first probe alone first: by the
    /// batch's shape by default, or always or never, to compare or to test both ways.
    pub fn set_probe_phases(&self, phases: super::ProbePhases) {
        self.list_major_choice.lock().phases = phases;
    }

    /// The phase choice in force ([`IvfGpu::set_probe_phases`]).
    pub fn probe_phases_choice(&self) -> super::ProbePhases {
        self.list_major_choice.lock().phases
    }

    /// How list-major batches that seed their bounds seed them: by list where the batch
    /// has several queries a list by default, or by query or by list, to compare or to
    /// test both ways.
    pub fn set_seed_by(&self, seed: super::SeedBy) {
        self.list_major_choice.lock().seed = seed;
    }

    /// The list-major settings in force.
    pub(crate) fn list_major_choice(&self) -> super::ListMajorChoice {
        *self.list_major_choice.lock()
    }

    /// The queries per tile a list-major scan of this shape runs with on this device
    /// (the preferred number, lowered until the block fits the shared memory, then
    /// halved where that takes an SM from one resident block to two:
    /// `spread_over_two_blocks`), or why it cannot run.
    pub fn list_major_tile(
        &self,
        dtype: DType,
        dim: usize,
        k: usize,
        n_pairs: usize,
        n_lists: usize,
    ) -> Result<std::result::Result<usize, String>> {
        let cap = capacity(k)?;
        let shared = self.shared_limit()?;
        let limit = shared.per_block;
        let tile = self.list_major_tile_arithmetic(dtype);
        let mut qt = preferred_queries_per_tile(cap, n_pairs, n_lists);
        loop {
            let need = shared_bytes(tile, dim, k, qt)?;
            if need <= limit {
                return Ok(Ok(spread_over_two_blocks(tile, dim, k, qt, shared)?));
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

    /// The device's shared memory: the dynamic limit per block and an SM's total (read
    /// once).
    pub(crate) fn shared_limit(&self) -> Result<SharedMemory> {
        let mut cached = self.shared_limit.lock();
        if let Some(v) = *cached {
            return Ok(v);
        }
        let v = SharedMemory {
            per_block: self.gpu.max_shared_per_block()?,
            per_sm: self.gpu.max_shared_per_sm()?,
        };
        *cached = Some(v);
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// An H200: 227 KiB a block, 228 KiB an SM.
    const H200: SharedMemory = SharedMemory {
        per_block: 227 * 1024,
        per_sm: 228 * 1024,
    };

    #[test]
    fn only_small_8_bit_blocks_cap_their_registers_for_as_many_blocks_as_fit() {
        let kernel = |tile, dim, k, shared| LmKernel::choose(tile, dim, k, shared).unwrap();
        let four = LmKernel::Capped { blocks: 4 };
        let three = LmKernel::Capped { blocks: 3 };
        let (plain, wide) = (
            LmKernel::Plain { wide_room: false },
            LmKernel::Plain { wide_room: true },
        );
        // 64-dimensional 8-bit (51 KiB a block of 64 queries with one buffer): four fit;
        // 128-dimensional (58 KiB, 66 KiB at k 32) and 256 (74 KiB): three.
        assert_eq!(kernel(LmTile::Mma(DType::I8), 64, 10, H200), four);
        assert_eq!(four.plan_prefix(), "o4_");
        assert_eq!(kernel(LmTile::Mma(DType::I8), 128, 10, H200), three);
        assert_eq!(kernel(LmTile::Mma(DType::U8), 128, 32, H200), three);
        assert_eq!(kernel(LmTile::Mma(DType::I8), 256, 10, H200), three);
        // 784-dimensional u8 (about 125 KiB): one fits; k past 32: no capped kernel (both
        // plain, with the wide room: as many blocks fit with it).
        assert_eq!(kernel(LmTile::Mma(DType::U8), 784, 10, H200), wide);
        assert_eq!(kernel(LmTile::Mma(DType::I8), 128, 33, H200), wide);
        assert_eq!(wide.plan_prefix(), "");
        assert_eq!(wide.tile_suffix(), "w");
        assert_eq!(plain.tile_suffix(), "");
        // Other tiles never (measured slower: f32 −20 %, f16 mixed); the wide room only
        // in the f16 and 8-bit mma tiles.
        assert_eq!(kernel(LmTile::Mma(DType::F16), 16, 10, H200), wide);
        for tile in [
            LmTile::Mma(DType::F32),
            LmTile::Wmma(DType::I8),
            LmTile::F32Fma,
        ] {
            assert_eq!(kernel(tile, 16, 10, H200), plain);
        }
        // A GPU with 180 KiB an SM: 128-dimensional i8 at three; with 128 KiB, not at all
        // (not even 16-dimensional: 46 KiB a block).
        let mid = SharedMemory {
            per_block: 99 * 1024,
            per_sm: 180 * 1024,
        };
        assert_eq!(kernel(LmTile::Mma(DType::I8), 128, 10, mid), three);
        let small = SharedMemory {
            per_block: 99 * 1024,
            per_sm: 128 * 1024,
        };
        // (There two blocks of 64 queries of 128-dimensional i8 fit with 80 candidates a
        // slot, one with 96: no wide room.)
        assert_eq!(kernel(LmTile::Mma(DType::I8), 128, 10, small), plain);
        assert_eq!(kernel(LmTile::Mma(DType::I8), 16, 10, small), wide);
    }

    #[test]
    fn capped_kernels_and_wide_8_bit_plain_tiles_of_the_listed_dimensions_link_the_dimension() {
        let three = LmKernel::Capped { blocks: 3 };
        let i8tc = LmTile::Mma(DType::I8);
        assert_eq!(three.dim_suffix(128, i8tc, 16), "_d128");
        assert_eq!(
            LmKernel::Capped { blocks: 4 }.dim_suffix(64, i8tc, 16),
            "_d64"
        );
        assert_eq!(three.dim_suffix(130, i8tc, 16), "");
        let plain = LmKernel::Plain { wide_room: false };
        assert_eq!(
            LmKernel::Plain { wide_room: true }.dim_suffix(128, i8tc, 16),
            ""
        );
        assert_eq!(plain.dim_suffix(784, LmTile::Mma(DType::U8), 16), "_d784");
        assert_eq!(plain.dim_suffix(784, LmTile::Mma(DType::U8), 64), "");
        assert_eq!(plain.dim_suffix(784, LmTile::Mma(DType::F16), 16), "");
        assert_eq!(plain.dim_suffix(784, LmTile::Wmma(DType::U8), 16), "");
    }

    #[test]
    fn the_bundle_has_a_plan_of_each_linked_dimension_and_no_other() {
        // LINKED_DIMS and the bundle's `lmdim` axis are written in two places: a dimension
        // only here would fail its first search, one only there would never be used.
        let bundle = crate::gpu::bundle().unwrap();
        let target = "sm_90".parse().unwrap();
        let mut in_bundle: Vec<usize> = bundle
            .manifest()
            .fragments
            .iter()
            .filter_map(|f| f.name.strip_prefix("lmdim_")?.parse().ok())
            .collect();
        in_bundle.sort_unstable();
        let mut linked: Vec<usize> = LINKED_DIMS
            .iter()
            .chain(&WIDE_LINKED_DIMS)
            .copied()
            .collect();
        linked.sort_unstable();
        assert_eq!(in_bundle, linked);
        for dim in LINKED_DIMS {
            for blocks in [3, 4] {
                let kernel = LmKernel::Capped { blocks };
                let name = format!(
                    "lmscan_{}c16_u8tc{}_ip_bitset",
                    kernel.plan_prefix(),
                    kernel.dim_suffix(dim, LmTile::Mma(DType::U8), 16)
                );
                let plan = bundle.plan(&name, target).unwrap();
                let inputs: Vec<&str> = plan.inputs().iter().map(|i| i.name.as_str()).collect();
                assert_eq!(
                    inputs,
                    [
                        "lmscan".to_string(),
                        "lmtile_u8tc_async".into(),
                        format!("lmdim_{dim}"),
                        "metric_ip".into(),
                        "filter_bitset".into()
                    ]
                );
            }
        }
        // The plain kernel's 8-bit tiles, for the wide dimensions.
        let plain = LmKernel::Plain { wide_room: true };
        for dim in WIDE_LINKED_DIMS {
            let name = format!(
                "lmscan_c32_i8tc{}{}_l2_none",
                plain.tile_suffix(),
                plain.dim_suffix(dim, LmTile::Mma(DType::I8), 32)
            );
            let plan = bundle.plan(&name, target).unwrap();
            assert!(
                plan.inputs()
                    .iter()
                    .any(|i| i.name == format!("lmdim_{dim}")),
                "{name}"
            );
        }
        // Every other scan links the dimension from its argument.
        let plan = bundle.plan("lmscan_c16_f32tc_l2_none", target).unwrap();
        assert!(plan.inputs().iter().any(|i| i.name == "lmdim_any"));
    }

    #[test]
    fn the_wide_room_is_taken_only_where_as_many_blocks_fit() {
        let room = |dtype, dim| wide_room_keeps_blocks(LmTile::Mma(dtype), dim, 10, H200).unwrap();
        // f16 × 128 (two blocks of 64 either way) and the images: wide.
        assert!(room(DType::F16, 128));
        assert!(room(DType::U8, 784));
        // f16 × 256 and 8-bit × 512: two blocks of 64 queries either way (106.5 and 112.5
        // KiB); f16 × 272 and 8-bit × 544: two at 80 candidates (110.5 KiB), one at 96
        // (116.5).
        assert!(room(DType::F16, 256));
        assert!(room(DType::I8, 512));
        assert!(!room(DType::F16, 272));
        assert!(!room(DType::I8, 544));
        assert!(!room(DType::F32, 16));
        let kernel = LmKernel::choose(LmTile::Mma(DType::F16), 272, 10, H200).unwrap();
        assert_eq!(kernel, LmKernel::Plain { wide_room: false });
        // The layouts count the room: 64 queries × 16 more candidates × 6 bytes.
        let bytes = |wide_room| {
            block_layout(
                LmTile::Mma(DType::F16),
                128,
                10,
                64,
                LmKernel::Plain { wide_room },
                H200,
            )
            .unwrap()
            .shared_bytes
        };
        assert_eq!(bytes(true) - bytes(false), 64 * 16 * 6);
    }

    #[test]
    fn tiles_alone_on_their_sm_are_halved_where_two_then_fit() {
        let spread = |tile, dim, qt| spread_over_two_blocks(tile, dim, 10, qt, H200).unwrap();
        // 784-wide u8 (plain kernel): one block of 64 queries an SM, two of 32.
        assert_eq!(
            resident_blocks(LmTile::Mma(DType::U8), 784, 10, 64, H200).unwrap(),
            1
        );
        assert_eq!(
            resident_blocks(LmTile::Mma(DType::U8), 784, 10, 32, H200).unwrap(),
            2
        );
        assert_eq!(spread(LmTile::Mma(DType::U8), 784, 64), 32);
        // Already two or more: unchanged (i8 at three, f16 and f32 at two); 16 stays.
        assert_eq!(
            resident_blocks(LmTile::Mma(DType::I8), 128, 10, 64, H200).unwrap(),
            3
        );
        assert_eq!(spread(LmTile::Mma(DType::I8), 128, 64), 64);
        assert_eq!(spread(LmTile::Mma(DType::F16), 128, 64), 64);
        assert_eq!(spread(LmTile::Mma(DType::F32), 128, 64), 64);
        assert_eq!(spread(LmTile::Mma(DType::U8), 784, 16), 16);
        // A row so wide that half the tile is still alone: unchanged.
        assert_eq!(spread(LmTile::Mma(DType::U8), 2048, 32), 32);
    }

    #[test]
    fn capped_kernels_copy_rows_async_with_a_second_buffer_only_at_three_blocks() {
        let registers = shared_bytes(LmTile::Mma(DType::I8), 64, 10, 64).unwrap();
        // The async layout holds a second step's row norms (4 × 64 bytes) beside the
        // register layout's one.
        let second_norms = 4 * 64;
        let layout = |kernel, shared| {
            block_layout(LmTile::Mma(DType::I8), 64, 10, 64, kernel, shared).unwrap()
        };
        // Four blocks: one buffer.
        let four = layout(LmKernel::Capped { blocks: 4 }, H200);
        assert_eq!(four.step_buffers, 1);
        assert_eq!(four.shared_bytes, registers + second_norms);
        assert!(4 * (four.shared_bytes + 1024) <= H200.per_sm);
        // Three: a second buffer of 64 × 80 bytes where three still fit.
        let three = layout(LmKernel::Capped { blocks: 3 }, H200);
        assert_eq!(three.step_buffers, 2);
        assert_eq!(three.shared_bytes, registers + second_norms + 64 * 80);
        let tight = SharedMemory {
            per_block: 99 * 1024,
            per_sm: 160 * 1024,
        };
        assert_eq!(
            layout(LmKernel::Capped { blocks: 3 }, tight).step_buffers,
            1
        );
        // The plain kernel: rows through registers, one buffer, the register layout.
        for (tile, dim) in [
            (LmTile::Mma(DType::U8), 784),
            (LmTile::Mma(DType::F32), 16),
            (LmTile::Mma(DType::F16), 16),
            (LmTile::F32Fma, 16),
            (LmTile::Wmma(DType::U8), 16),
        ] {
            let l = block_layout(
                tile,
                dim,
                10,
                64,
                LmKernel::Plain { wide_room: false },
                H200,
            )
            .unwrap();
            assert_eq!(l.step_buffers, 1);
            assert_eq!(l.shared_bytes, shared_bytes(tile, dim, 10, 64).unwrap());
        }
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
        let parts = 64 * 16 * 8 + 64 * 80 * 6 + 128 * 68 * 4 + 128 * 64 * 4;
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
        let tf32_parts = 64 * 16 * 8 + 64 * 80 * 6 + (64 + 64) * 132 * 4;
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
}
