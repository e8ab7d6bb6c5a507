//! Which kernels a coarse search takes, and their launch shapes: the fused kernel and the
//! split of the centres for small batches; for large ones the score matrix (its
//! arithmetic, [`MatrixArith`], and query tile) and the selection (its two forms and the
//! stand-in a first search takes while the other links). Measurements that set each
//! threshold are at the constant.

use ltokit::launch::{Elem, Extent, Param};
use ltokit::{Error, Result};

use crate::data::DType;
use crate::gpu::centers::{LIMB_CHUNK_DIMS, LIMB_MAX_DIM};
use crate::gpu::list_major::TileArith;
use crate::gpu::merge::{merge_kernel, SORT_MAX_CANDIDATES};
use crate::gpu::{capacity, coarse_plan_name, KernelSpec};
use crate::metric::Metric;

/// Queries a coarse-search block takes (one warp each; kernels/coarse.cu).
pub(super) const QUERIES_PER_BLOCK: usize = 8;
/// Centre rows × dimensions of one shared-memory tile (kernels/coarse.cu).
pub(super) const TILE_ROWS: usize = 128;
pub(super) const TILE_DIMS: usize = 32;
/// Shared memory a block may use on the GPUs ltokit targets (Hopper: 227 KiB).
pub(super) const MAX_SHARED: usize = 227 * 1024;

/// A coarse kernel's signature: the queries and centres every one of them takes first,
/// then its own parameters.
macro_rules! coarse_signature {
    ($($own:expr),* $(,)?) => {
        &[
            Param::Ptr,                            // queries, in their stored type
            Param::I32,                            // nq
            Param::I32,                            // dim
            Param::I32,                            // metric code
            Param::Buffer(Elem::F32, Extent::Any), // centres
            Param::Buffer(Elem::F32, Extent::Any), // centre norms
            Param::I32,                            // n_centers
            Param::I32,                            // query_base (reported bad query's offset)
            $($own),*
        ]
    };
}

/// `ivf_coarse`'s parameters.
pub(super) const COARSE_SIGNATURE: &[Param] = coarse_signature!(
    Param::I32,                                      // centres per split
    Param::I32,                                      // n_probes
    Param::BufferMut(Elem::I64, Extent::Any),        // probes out (or per-split ids)
    Param::BufferMut(Elem::F32, Extent::Any),        // per-split scores (when split)
    Param::BufferMut(Elem::I32, Extent::AtLeast(1)), // first bad query + 1
);

/// `ivf_coarse_scores`'s parameters: the score of every (query, centre) into a matrix.
pub(super) const SCORES_SIGNATURE: &[Param] = coarse_signature!(
    Param::BufferMut(Elem::F32, Extent::Any), // scores, nq × n_centers
    Param::BufferMut(Elem::I32, Extent::AtLeast(1)), // first bad query + 1
);

/// `ivf_coarse_scores_h16`'s parameters (kernels/coarse_h16.cu): the score matrix of
/// queries exact in f16 against the centres' f16 split.
pub(super) const SCORES_H16_SIGNATURE: &[Param] = &[
    Param::Ptr,                                      // queries, in their stored type
    Param::I32,                                      // nq
    Param::I32,                                      // dim
    Param::I32,                                      // metric code
    Param::Buffer(Elem::U16, Extent::Any),           // centre halves, hi rows then lo rows
    Param::Buffer(Elem::F32, Extent::Any),           // centre norms
    Param::I32,                                      // n_centers
    Param::I32,                                      // query_base
    Param::I32,                                      // dim_pad
    Param::I32,                                      // n_pad
    Param::F32,                                      // inv_scale
    Param::BufferMut(Elem::F32, Extent::Any),        // scores, nq × n_centers
    Param::BufferMut(Elem::I32, Extent::AtLeast(1)), // first bad query + 1
];

/// `ivf_coarse_select`'s parameters: each query's best n_probes of its row of scores.
pub(super) const SELECT_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::F32, Extent::Any),    // scores
    Param::I32,                               // nq
    Param::I32,                               // n_centers
    Param::I32,                               // n_probes
    Param::BufferMut(Elem::I64, Extent::Any), // probes out
    Param::I32,                               // whether to count the pairs
    Param::BufferMut(Elem::I32, Extent::Any), // the grouping's pair counters (2 × n_centers)
];

/// Batches from this many queries take the score matrix and a separate selection (two
/// kernels, every (query, centre) scored by a register-tiled product, then one warp a
/// query selects); smaller ones the fused kernel with its split of the centres, which
/// needs no matrix and spreads a few queries over many SMs. Measured on the H200 (1M ×
/// 128 f32, 1,024 centres, 10,000 queries; docs/gpu-runs/2026-11-30-coarse-matrix): 0.31
/// ms instead of 0.64 at 20 probes, 0.23 instead of 0.54 at 2; 60k × 784 u8, 256
/// centres: 0.25–0.30 ms instead of 0.78–0.83. In batches of 1,000 at 10 probes: 0.28 ms
/// a batch fused, 0.09 ms by the matrix (…/coarse-matrix/final/vs1k); below 1,000 the
/// crossover was not measured, 512 keeps the fused kernel for the latency-bound sizes.
pub const MATRIX_MIN_QUERIES: usize = 512;
/// Most score-matrix entries of one pass (256 MiB of f32); larger batches go in parts.
pub(super) const MATRIX_MAX_ENTRIES: usize = 1 << 26;

/// Query tiles of the f16 score matrix, largest first (kernels/coarse_h16.cu: one kernel
/// each, 2 × tile / 32 warps of 32 × 32 products): every copy of a centre chunk serves a
/// tile's queries, so large tiles read the centres from L2 fewer times, but leave a small
/// batch fewer blocks.
pub(super) const HALF_QUERY_TILES: [usize; 2] = [128, 64];
/// Centres of a tile of the f16 score matrix (`CH_TC`).
pub(super) const HALF_CENTER_TILE: usize = 64;
/// Blocks a query tile of the f16 score matrix must give the batch to be taken: two
/// blocks for each of the H200's SMs. Measured (docs/gpu-runs/2026-12-01-s13/): 128-query
/// tiles against the 2xTF32 kernel's 32-query tiles, 10,000 queries (316 blocks over
/// images' 256 centres, 1,264 over 1,024): images +4 to +10 %, i8 x 512 0 to +7 %, the
/// 128-dimension sets within ±1.5 %; at 1,000 queries (32 blocks on images) f16 tiles of
/// 32 queries, 2 warps, lost 0 to 3 % to the 2xTF32 kernel, which smaller batches keep.
pub(super) const HALF_TILE_MIN_BLOCKS: usize = 2 * SPREAD_BLOCKS;

/// Bytes of dynamic shared memory a block of the f16 score matrix with `tile_queries`
/// queries takes (kernels/coarse_h16.cu `ChStages`): its stages of the tile's query rows
/// and of the centres' hi and lo rows, [`HALF_ROW_STRIDE`] halves a row. 128-query tiles
/// keep three stages, so that f16 queries copied with cp.async are two chunks ahead of
/// the multiply; 64-query tiles two (five blocks an SM).
pub(super) fn half_shared_bytes(tile_queries: usize) -> usize {
    let stages = if tile_queries >= 128 { 3 } else { 2 };
    stages * (tile_queries + 2 * HALF_CENTER_TILE) * HALF_ROW_STRIDE * 2
}

/// Queries of a tile of the 8-bit score matrix (kernels/coarse_imma.cu
/// `ivf_coarse_scores_imma_q64_kernel`).
const IMMA_QUERY_TILE: usize = 64;

/// Stages of the 8-bit score matrix's copy pipeline (kernels/coarse_imma.cu `CI_STAGES`).
const IMMA_STAGES: usize = 2;

/// Bytes of a staged row of the 8-bit score matrix (`CI_LD`: a 128-byte chunk,
/// [`LIMB_CHUNK_DIMS`], and 16 bytes more, eight rows on distinct banks for ldmatrix).
const IMMA_ROW_BYTES: usize = LIMB_CHUNK_DIMS + 16;

/// Bytes of dynamic shared memory a block of the 8-bit score matrix takes
/// (kernels/coarse_imma.cu `ci_kernel`): every stage holds its 64 query rows and the
/// centres' 64 hi and 64 lo limb rows. Three blocks an SM hold 166 KB.
const IMMA_SHARED_BYTES: usize =
    IMMA_STAGES * (IMMA_QUERY_TILE + 2 * HALF_CENTER_TILE) * IMMA_ROW_BYTES;

/// Halves of a staged row of the f16 score matrix (`CH_LD`: 80 bytes, 16-byte aligned,
/// eight rows on distinct banks for ldmatrix).
const HALF_ROW_STRIDE: usize = 40;

/// The query tile of the f16 score matrix for `nq` queries over `n_centers` centres: 64
/// where 128-query tiles would fill part of one wave of three blocks an SM, else the
/// largest that still gives [`HALF_TILE_MIN_BLOCKS`] blocks; none when no tile does.
pub(super) fn half_query_tile(nq: usize, n_centers: usize) -> Option<usize> {
    let centre_tiles = n_centers.div_ceil(HALF_CENTER_TILE);
    // Where 128-query tiles leave their one wave of three blocks an SM part full (images:
    // 316 blocks on 396 slots, 52 SMs with three and 80 with two), 64-query tiles at five
    // an SM spread evenly (628 on 660). Measured on the H200 (session 21,
    // `docs/gpu-runs/2026-12-02-s21/1-coarse-ab/`, `q64`, three rounds): images × 2's score
    // matrix 65.2 → 58.9 µs (ncu), device QPS at batch 10,000 +2.0 / +2.6 / +0.5 / −0.0 %
    // at 2 / 5 / 10 / 20 probes; no other bench shape takes it.
    if nq.div_ceil(128) * centre_tiles < 3 * SPREAD_BLOCKS
        && nq.div_ceil(64) * centre_tiles >= HALF_TILE_MIN_BLOCKS
    {
        return Some(64);
    }
    HALF_QUERY_TILES
        .into_iter()
        .find(|&t| nq.div_ceil(t) * centre_tiles >= HALF_TILE_MIN_BLOCKS)
}

/// How a large batch's score matrix is multiplied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixArith {
    /// mma.sync on the tensor cores (sm_80 on): f32 queries as 3xTF32 in tiles of 32
    /// queries × 64 centres, 4 warps (kernels/coarse_mma.cu; f32's accuracy, mma.cuh);
    /// f16 and 8-bit queries as two f16 products against the centres' f16 split in tiles
    /// of 128 or 64 queries × 64 centres where the batch keeps two blocks an SM
    /// (kernels/coarse_h16.cu; the split holds each centre to 2^-22), else as two TF32
    /// products in the 32-query tiles.
    TensorCores,
    /// f32 FMA on the CUDA cores, 64 × 64 tiles register-blocked 4 × 4 (kernels/coarse.cu).
    CudaCores,
}

impl MatrixArith {
    /// The tensor cores where the GPU has mma.sync (compute capability major `cc_major` ≥
    /// 8) and the tile choice `arith` allows them; else the CUDA cores.
    pub fn choose(cc_major: u32, arith: TileArith) -> MatrixArith {
        if arith == TileArith::Mma && cc_major >= 8 {
            MatrixArith::TensorCores
        } else {
            MatrixArith::CudaCores
        }
    }

    /// The query tile of the f16 score matrix where `nq` queries of `dtype` over
    /// `n_centers` centres are multiplied against the centres' f16 split: on the tensor
    /// cores, queries exact in f16, a batch large enough for one of its tiles
    /// ([`half_query_tile`]); else none (the 3xTF32 / 2xTF32 kernel).
    fn half_tile(self, dtype: DType, (nq, n_centers): (usize, usize)) -> Option<usize> {
        if self == MatrixArith::TensorCores && dtype != DType::F32 {
            half_query_tile(nq, n_centers)
        } else {
            None
        }
    }

    /// The score kernel for `nq` `dim`-wide queries of `dtype` over `n_centers` centres:
    /// its plan, parameters and tile follow the matrix's part ([`matrix_part`]).
    pub(super) fn score_kernel(
        self,
        dtype: DType,
        dim: usize,
        (nq, n_centers): (usize, usize),
    ) -> ScoreKernel {
        let name = dtype.name();
        match (
            self,
            self.half_tile(dtype, (matrix_part(nq, n_centers), n_centers)),
        ) {
            // 8-bit queries on the integer tensor cores against the centres' limbs
            // (kernels/coarse_imma.cu), in 64-query tiles of 8 warps.
            (_, Some(_)) if matches!(dtype, DType::I8 | DType::U8) && dim <= LIMB_MAX_DIM => {
                ScoreKernel {
                    plan: format!("coarse_scores_imma_q64_{name}"),
                    signature: SCORES_H16_SIGNATURE,
                    tile: (IMMA_QUERY_TILE, HALF_CENTER_TILE, 256),
                    split: CenterSplit::Limbs,
                    shared: IMMA_SHARED_BYTES,
                    resident: Some(3),
                }
            }
            (_, Some(tq)) => ScoreKernel {
                plan: format!("coarse_scores_h16_q{tq}_{name}"),
                signature: SCORES_H16_SIGNATURE,
                tile: (tq, HALF_CENTER_TILE, (tq / 32 * 64) as u32),
                split: CenterSplit::Halves,
                shared: half_shared_bytes(tq),
                resident: None,
            },
            (MatrixArith::TensorCores, None) => ScoreKernel {
                plan: format!("coarse_scores_mma_{name}"),
                signature: SCORES_SIGNATURE,
                tile: (32, 64, 128),
                split: CenterSplit::None,
                shared: 0,
                resident: None,
            },
            (MatrixArith::CudaCores, None) => ScoreKernel {
                plan: format!("coarse_scores_{name}"),
                signature: SCORES_SIGNATURE,
                tile: (64, 64, 256),
                split: CenterSplit::None,
                shared: 0,
                resident: None,
            },
        }
    }
}

/// The score-matrix kernel of one shape ([`MatrixArith::score_kernel`]).
pub(super) struct ScoreKernel {
    pub(super) plan: String,
    pub(super) signature: &'static [Param],
    /// (queries, centres) of a block's tile, and its threads.
    pub(super) tile: (usize, usize, u32),
    /// Which split of the centres it multiplies against, if any.
    pub(super) split: CenterSplit,
    /// Bytes of dynamic shared memory a block takes.
    pub(super) shared: usize,
    /// For the kernels that go through several tiles a block (kernels/coarse_tile.cuh
    /// `ChTiles`), the blocks an SM their launch bounds declare: their grid is that many
    /// blocks an SM, or one a tile where there are fewer tiles. None: a block a tile.
    pub(super) resident: Option<usize>,
}

/// The form of the centres a score kernel multiplies against, beside their f32 values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CenterSplit {
    /// None: the f32 centres themselves.
    None,
    /// Their f16 split (kernels/coarse_h16.cu).
    Halves,
    /// Their 8-bit limbs (kernels/coarse_imma.cu).
    Limbs,
}

impl ScoreKernel {
    /// The grid for `nq` queries over `n_centers` centres on a device of `sms` SMs.
    pub(super) fn grid(&self, (nq, n_centers): (usize, usize), sms: usize) -> (u32, u32, u32) {
        let (tq, tc, _) = self.tile;
        let (query_tiles, centre_tiles) = (nq.div_ceil(tq), n_centers.div_ceil(tc));
        match self.resident {
            Some(per_sm) => ((query_tiles * centre_tiles).min(per_sm * sms) as u32, 1, 1),
            None => (query_tiles as u32, centre_tiles as u32, 1),
        }
    }

    /// The kernel to load.
    pub(super) fn spec(&self) -> KernelSpec {
        KernelSpec {
            plan: self.plan.clone(),
            signature: self.signature,
            shared: self.shared,
        }
    }
}

/// Queries a selection block of capacity `cap` takes (one warp each): eight, or four
/// where eight warps' running top-k (a distance and an id, 8 bytes, a slot) would pass the
/// 48 KiB of static shared memory a kernel may declare — capacity 1,024's 64 KiB failed
/// to link on the H100 (ptxas: "uses too much shared data"). kernels/coarse_select.cu's
/// `select_warps` is the same rule.
pub(super) fn select_queries_per_block(cap: usize) -> usize {
    if 8 * cap * 8 <= 48 * 1024 {
        8
    } else {
        4
    }
}

/// SMs a small batch's coarse search should spread over (an H200 has 132).
pub(super) const SPREAD_BLOCKS: usize = 132;
/// Most splits of the centres.
pub(super) const MAX_SPLITS: usize = 64;
/// Centres a split takes at least, and the granularity of a split: one a lane of each
/// warp (a split may be narrower than a 128-row tile; the tile's other rows are zeros).
pub(super) const SPLIT_GRANULE: usize = 32;

/// How many parts the centres are split into for `nq` queries over `n_centers` centres
/// and `n_probes` probes: one when the batch fills the GPU by itself, else enough parts
/// (of whole 32-centre granules) to reach about [`SPREAD_BLOCKS`] blocks, as long as the
/// merge of the splits' `splits × n_probes` candidates stays within the block-wide sort.
/// A block's time is a chain of tile loads and insertions: the fewer centres a split, the
/// shorter the chain a single query waits on.
pub(crate) fn coarse_splits(nq: usize, n_centers: usize, n_probes: usize) -> usize {
    let blocks = nq.div_ceil(QUERIES_PER_BLOCK).max(1);
    let by_merge = (SORT_MAX_CANDIDATES / n_probes.max(1)).max(1);
    let wanted = (SPREAD_BLOCKS / blocks).clamp(1, MAX_SPLITS).min(by_merge);
    let per_split = n_centers
        .div_ceil(wanted)
        .next_multiple_of(SPLIT_GRANULE)
        .max(SPLIT_GRANULE);
    n_centers.div_ceil(per_split).max(1)
}

/// The kernels a coarse search of `nq` queries of `dtype` over `n_centers` centres needs:
/// the coarse kernel, and the merge of its splits when it splits; or for a large batch
/// the score matrix multiplied by `matrix` and the selection.
pub(crate) fn coarse_kernels(
    dtype: DType,
    dim: usize,
    n_probes: usize,
    (nq, n_centers): (usize, usize),
    matrix: MatrixArith,
) -> Result<Vec<KernelSpec>> {
    let select = || Ok((select_kernel(n_probes, n_centers)?, false));
    let (specs, _) =
        coarse_kernels_selecting(dtype, dim, n_probes, (nq, n_centers), matrix, select)?;
    Ok(specs)
}

/// [`coarse_kernels`] with a large batch's selection given by `select` (the spec, and
/// whether it stands in for another), which only large batches call; the flag is
/// `select`'s, false for a small batch.
pub(super) fn coarse_kernels_selecting(
    dtype: DType,
    dim: usize,
    n_probes: usize,
    (nq, n_centers): (usize, usize),
    matrix: MatrixArith,
    select: impl FnOnce() -> Result<(KernelSpec, bool)>,
) -> Result<(Vec<KernelSpec>, bool)> {
    if nq >= MATRIX_MIN_QUERIES {
        let score = matrix.score_kernel(dtype, dim, (nq, n_centers)).spec();
        let (select, stands_in) = select()?;
        return Ok((vec![score, select], stands_in));
    }
    let mut specs = vec![coarse_kernel(dtype, dim, n_probes)?];
    let splits = coarse_splits(nq, n_centers, n_probes);
    if splits > 1 {
        specs.push(merge_kernel(Metric::L2, n_probes, nq, splits * n_probes)?);
    }
    Ok((specs, false))
}

/// Queries of each part of a score matrix of `nq` queries over `n_centers` centres (the
/// last may have fewer): as many as [`MATRIX_MAX_ENTRIES`] allows.
pub(super) fn matrix_part(nq: usize, n_centers: usize) -> usize {
    (MATRIX_MAX_ENTRIES / n_centers.max(1)).clamp(1, nq.max(1))
}

/// The forms of the coarse selection (kernels/coarse_select.cu says where each pays); all
/// take the same signature and launch shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SelectForm {
    /// A bound from each lane's smallest, then the row's entries under it offered: any row.
    Chunks,
    /// The same with the row held in registers ([`SELECT_ROWS_IN_REGISTERS`], up to 32
    /// probes).
    Rows,
    /// Each lane's eight centres sorted, the warp's smallest head taken n_probes times
    /// (rows of up to [`SELECT_SHORT_MAX_CENTERS`], up to [`SELECT_SHORT_MAX_CAP`] probes).
    Short,
}

/// The selection of `n_probes` from a row of `n_centers` scores: the short-row form for
/// short rows and few probes, the register-row form for rows of
/// [`SELECT_ROWS_IN_REGISTERS`] and capacities up to 32, else the general one.
pub(super) fn select_kernel(n_probes: usize, n_centers: usize) -> Result<KernelSpec> {
    let cap = capacity(n_probes)?;
    let form = if cap <= SELECT_SHORT_MAX_CAP && n_centers <= SELECT_SHORT_MAX_CENTERS {
        SelectForm::Short
    } else if selects_in_registers(cap, n_centers) {
        SelectForm::Rows
    } else {
        SelectForm::Chunks
    };
    Ok(select_spec(cap, form))
}

/// The largest capacity and row of the short-row selection: eight centres a lane (at 16
/// probes it was level with the general form: kernels/coarse_select.cu).
const SELECT_SHORT_MAX_CAP: usize = 8;
const SELECT_SHORT_MAX_CENTERS: usize = 256;

/// Whether [`select_kernel`] of capacity `cap` over rows of `n_centers` takes the form that
/// holds the row in registers.
pub(super) fn selects_in_registers(cap: usize, n_centers: usize) -> bool {
    cap <= 32 && SELECT_ROWS_IN_REGISTERS.contains(&n_centers)
}

/// The selection of capacity `cap` in `form`.
pub(super) fn select_spec(cap: usize, form: SelectForm) -> KernelSpec {
    let form = match form {
        SelectForm::Chunks => "",
        SelectForm::Rows => "rows_",
        SelectForm::Short => "short_",
    };
    KernelSpec {
        plan: format!("coarse_select_{form}c{cap}"),
        signature: SELECT_SIGNATURE,
        shared: 0,
    }
}

/// The selection a search may launch while [`select_kernel`]'s register-row form is not
/// loaded: that form links in about a second (0.84–1.13 s for each capacity on the H200's
/// host, session 26), the other in 0.19 s, and a first search must not wait for it.
/// `None` where [`select_kernel`] already is the other form.
pub(crate) fn select_stand_in(n_probes: usize, n_centers: usize) -> Result<Option<KernelSpec>> {
    let cap = capacity(n_probes)?;
    if !selects_in_registers(cap, n_centers) {
        return Ok(None);
    }
    Ok(Some(select_spec(cap, SelectForm::Chunks)))
}

/// Row lengths (centres) whose selection holds the row in registers: up to the kernel's
/// 32 chunks of 32, and longer than the rows that the other form reads in two rounds.
pub(super) const SELECT_ROWS_IN_REGISTERS: std::ops::RangeInclusive<usize> = 257..=1024;

/// The coarse-search kernel for `dim`-dimensional queries of `dtype` and `n_probes` probes.
pub(crate) fn coarse_kernel(dtype: DType, dim: usize, n_probes: usize) -> Result<KernelSpec> {
    let cap = capacity(n_probes)?;
    let shared = QUERIES_PER_BLOCK * cap * 12
        + TILE_ROWS * (TILE_DIMS + 1) * 4
        + QUERIES_PER_BLOCK * dim * 4;
    if shared > MAX_SHARED {
        return Err(Error::InvalidArgument(format!(
            "the coarse search of {dim}-dimensional queries for {n_probes} probes needs {shared} bytes of shared memory, more than the {MAX_SHARED} a block has; use fewer probes"
        )));
    }
    Ok(KernelSpec {
        plan: coarse_plan_name(n_probes, dtype)?,
        signature: COARSE_SIGNATURE,
        shared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_score_matrix_takes_the_tensor_cores_from_sm_80_unless_told_otherwise() {
        use MatrixArith::*;
        assert_eq!(MatrixArith::choose(9, TileArith::Mma), TensorCores);
        assert_eq!(MatrixArith::choose(8, TileArith::Mma), TensorCores);
        assert_eq!(MatrixArith::choose(7, TileArith::Mma), CudaCores);
        assert_eq!(MatrixArith::choose(9, TileArith::Portable), CudaCores);
        // The plans the bundle names (kernels/bundle.json); the tensor-core tiles give a
        // 1,000 × 256 batch twice the blocks (128 against 64, of the H200's 132 SMs).
        let images = (10_000, 256);
        let plan = |a: MatrixArith, dtype| a.score_kernel(dtype, 784, images).plan;
        assert_eq!(plan(TensorCores, DType::U8), "coarse_scores_imma_q64_u8");
        assert_eq!(
            TensorCores.score_kernel(DType::U8, 784, images).split,
            CenterSplit::Limbs
        );
        assert_eq!(plan(TensorCores, DType::F16), "coarse_scores_h16_q64_f16");
        assert_eq!(
            TensorCores.score_kernel(DType::F16, 784, images).split,
            CenterSplit::Halves
        );
        // 8-bit queries too wide for the limbs' s32 sums take the f16 split.
        let wide = TensorCores.score_kernel(DType::I8, LIMB_MAX_DIM + 1, images);
        assert_eq!(
            (wide.plan.as_str(), wide.split),
            ("coarse_scores_h16_q64_i8", CenterSplit::Halves)
        );
        assert_eq!(plan(TensorCores, DType::F32), "coarse_scores_mma_f32");
        assert_eq!(plan(CudaCores, DType::F16), "coarse_scores_f16");
        let blocks = |a: MatrixArith| {
            let (tq, tc, _) = a.score_kernel(DType::F32, 784, (1000, 256)).tile;
            1000usize.div_ceil(tq) * 256usize.div_ceil(tc)
        };
        assert_eq!((blocks(TensorCores), blocks(CudaCores)), (128, 64));
        let kernels = coarse_kernels(DType::I8, 128, 10, (10_000, 1024), TensorCores).unwrap();
        let names: Vec<&str> = kernels.iter().map(|k| k.plan.as_str()).collect();
        assert_eq!(
            names,
            ["coarse_scores_imma_q64_i8", "coarse_select_rows_c16"]
        );
        assert_eq!(kernels[0].signature, SCORES_H16_SIGNATURE);
        // The selection holds rows of 257 to 1,024 centres in registers, for up to 32
        // probes; rows of up to 256 take the short form up to 8 probes.
        let select = |n_probes, n_centers| select_kernel(n_probes, n_centers).unwrap().plan;
        assert_eq!(select(2, 256), "coarse_select_short_c2");
        assert_eq!(select(5, 33), "coarse_select_short_c8");
        assert_eq!(select(9, 256), "coarse_select_c16");
        assert_eq!(select(2, 257), "coarse_select_rows_c2");
        assert_eq!(select(20, 512), "coarse_select_rows_c32");
        assert_eq!(select(50, 1024), "coarse_select_c64");
        assert_eq!(select(10, 1025), "coarse_select_c16");
        // The register-row form has a stand-in of the same capacity and signature; the
        // other form needs none.
        let stand_in = |n_probes, n_centers| {
            select_stand_in(n_probes, n_centers)
                .unwrap()
                .map(|s| (s.plan, s.signature == SELECT_SIGNATURE))
        };
        assert_eq!(stand_in(10, 1024), Some(("coarse_select_c16".into(), true)));
        assert_eq!(stand_in(1, 300), Some(("coarse_select_c1".into(), true)));
        assert_eq!(stand_in(2, 256), None);
        assert_eq!(stand_in(50, 1024), None);
    }

    #[test]
    fn only_large_batches_ask_for_a_selection_and_keep_its_stand_in_flag() {
        use std::cell::Cell;
        let asked = Cell::new(0);
        let stand_in = || {
            asked.set(asked.get() + 1);
            Ok((select_spec(16, SelectForm::Chunks), true))
        };
        let matrix = MatrixArith::TensorCores;
        let shape = (MATRIX_MIN_QUERIES, 1024);
        let (large, flag) =
            coarse_kernels_selecting(DType::I8, 128, 10, shape, matrix, stand_in).unwrap();
        let names: Vec<&str> = large.iter().map(|k| k.plan.as_str()).collect();
        assert_eq!(names[1], "coarse_select_c16");
        assert!(flag);
        assert_eq!(asked.get(), 1);
        // One query fewer: the fused kernel, no selection asked for, no stand-in.
        let shape = (MATRIX_MIN_QUERIES - 1, 1024);
        let (small, flag) =
            coarse_kernels_selecting(DType::I8, 128, 10, shape, matrix, stand_in).unwrap();
        assert!(
            small[0].plan.starts_with("coarse_c16_"),
            "{}",
            small[0].plan
        );
        assert!(!flag);
        assert_eq!(asked.get(), 1);
        // The selection's error is the search's.
        let failing = || Err(Error::InvalidArgument("no selection".into()));
        let shape = (MATRIX_MIN_QUERIES, 1024);
        assert!(coarse_kernels_selecting(DType::I8, 128, 10, shape, matrix, failing).is_err());
    }

    #[test]
    fn the_f16_score_matrix_takes_the_largest_query_tile_that_keeps_two_blocks_an_sm() {
        use MatrixArith::*;
        // 10,000 queries: 128-query tiles give 79 × 4 = 316 blocks over 256 centres, part of
        // one wave; 64-query tiles 628.
        assert_eq!(half_query_tile(10_000, 256), Some(64));
        assert_eq!(half_query_tile(10_000, 1024), Some(128));
        // 2,000 over 1,024: 16 × 16 = 256 blocks at 128, under 264; 512 at 64.
        assert_eq!(half_query_tile(2_000, 1024), Some(64));
        // 1,000: 16 × 16 = 256 blocks at 64 — too few for any tile: the 2xTF32 kernel.
        assert_eq!(half_query_tile(1_000, 1024), None);
        assert_eq!(half_query_tile(1_000, 256), None);
        let plans = |dtype, shape| {
            let scores = TensorCores.score_kernel(dtype, 128, shape);
            (scores.plan, scores.tile)
        };
        assert_eq!(
            plans(DType::I8, (1_000, 1024)),
            ("coarse_scores_mma_i8".into(), (32, 64, 128))
        );
        assert_eq!(
            plans(DType::U8, (4_000, 601)),
            ("coarse_scores_imma_q64_u8".into(), (64, 64, 256))
        );
        assert_eq!(
            plans(DType::F16, (2_000, 601)),
            ("coarse_scores_h16_q64_f16".into(), (64, 64, 128))
        );
        // f32 queries and the CUDA cores never take it.
        assert_eq!(plans(DType::F32, (10_000, 256)).0, "coarse_scores_mma_f32");
        assert_eq!(
            CudaCores.score_kernel(DType::U8, 784, (10_000, 256)).plan,
            "coarse_scores_u8"
        );
    }

    #[test]
    fn the_integer_score_matrix_of_8_bit_queries_goes_through_several_tiles_a_block() {
        let grid = |dtype, shape| {
            MatrixArith::TensorCores
                .score_kernel(dtype, 128, shape)
                .grid(shape, 132)
        };
        // 10,000 × 1,024: 157 × 16 tiles of 64 × 64 (8-bit) over three blocks an SM.
        assert_eq!(grid(DType::I8, (10_000, 1024)), (396, 1, 1));
        // f16 keeps a block a tile (79 × 16 of 128 × 64): going through several cost its
        // 128-query kernel 8 bytes of spill and lowdim-f16 0.2–0.8 % (session 34, call 3).
        assert_eq!(grid(DType::F16, (10_000, 1024)), (79, 16, 1));
        // Fewer tiles than places: one block a tile (2,000 × 601: 32 × 10 of 64 × 64).
        assert_eq!(grid(DType::U8, (2_000, 601)), (320, 1, 1));
        // f32 (3xTF32) keeps a block a tile, on two axes.
        assert_eq!(grid(DType::F32, (10_000, 1024)), (313, 16, 1));
    }

    /// Whether an sm_90 SM (228 KiB of shared memory, 1 KiB of it reserved a block) holds
    /// `blocks` blocks of `bytes` of shared memory each.
    fn sm90_holds(blocks: usize, bytes: usize) -> bool {
        blocks * (bytes + 1024) <= 228 * 1024
    }

    #[test]
    fn the_integer_score_matrix_stages_fit_the_three_blocks_an_sm_it_declares() {
        // kernels/coarse_imma.cu: two stages of 64 query rows and 128 limb rows, 144
        // bytes each (128-byte chunks), three blocks an SM (`__launch_bounds__(256, 3)`).
        assert!(sm90_holds(3, IMMA_SHARED_BYTES));
        assert_eq!(IMMA_SHARED_BYTES, 55_296);
        let spec = MatrixArith::TensorCores
            .score_kernel(DType::U8, 784, (10_000, 256))
            .spec();
        assert_eq!(
            (spec.plan.as_str(), spec.shared),
            ("coarse_scores_imma_q64_u8", IMMA_SHARED_BYTES)
        );
    }

    #[test]
    fn the_f16_score_matrix_stages_fit_the_blocks_an_sm_its_kernels_declare() {
        // kernels/coarse_h16.cu declares three blocks an SM for 128-query tiles and five
        // for 64-query ones.
        assert!(sm90_holds(3, half_shared_bytes(128)) && sm90_holds(5, half_shared_bytes(64)));
        // Three stages of 128 queries pass the 48 KiB of static shared memory: dynamic.
        assert_eq!(half_shared_bytes(128), 61_440);
        assert_eq!(half_shared_bytes(64), 30_720);
        let spec = MatrixArith::TensorCores
            .score_kernel(DType::F16, 128, (10_000, 1024))
            .spec();
        assert_eq!(
            (spec.plan.as_str(), spec.shared),
            ("coarse_scores_h16_q128_f16", 61_440)
        );
    }

    #[test]
    fn small_batches_split_the_centres_finely_within_the_sort_and_large_ones_do_not() {
        // One query, 1,024 centres, 20 probes: 32 splits of 32 centres (640 candidates).
        assert_eq!(coarse_splits(1, 1024, 20), 32);
        // 100 probes: the sort holds 2,048 candidates, so 16 splits of 64.
        assert_eq!(coarse_splits(1, 1024, 100), 16);
        // 100 queries are 13 blocks: 10 splits wanted, of whole granules: 8 of 128.
        assert_eq!(coarse_splits(100, 1024, 20), 8);
        // A batch that fills the GPU, and a handful of centres: no split.
        assert_eq!(coarse_splits(2000, 1024, 20), 1);
        assert_eq!(coarse_splits(1, 10, 5), 1);
        for nq in [1, 7, 64, 300] {
            for n_probes in [1, 10, 33, 256, 1024] {
                for n_centers in [n_probes, 1000, 4096] {
                    let splits = coarse_splits(nq, n_centers, n_probes);
                    assert!((1..=MAX_SPLITS).contains(&splits));
                    assert!(
                        splits == 1 || splits * n_probes <= SORT_MAX_CANDIDATES,
                        "{nq} × {n_probes} of {n_centers}: {splits} splits"
                    );
                }
            }
        }
    }
}
