//! The seed of a list-major batch's per-query bounds (kernels/lmseed.cu): before the scan,
//! a warp a query scores the first rows of its first probe and sets the query's bound to
//! the k-th of them, so that the scan's first steps keep few rows (lmscan.cu keeps only rows
//! under the bound). Here: where it pays ([`seeds_bounds`]), how many rows it reads, its
//! two forms (rows read from global memory by each query's warp, or copied once a list
//! into shared memory for the queries whose first probe it is: [`seeds_by_list`]), their
//! launch shapes, plans and launches.

use ltokit::launch::{CudaSlice, DeviceElem, Elem, Extent, Kernel, Launch, LaunchConfig, Param};
use ltokit::Result;

use super::group::{Grid, Grouped};
use super::tile::{seed_work_bytes, STEP_ROWS};
use super::{vec_name, DeviceLists, IvfGpu, KernelSpec, LmTile, SeedBy, LM_THREADS};
use crate::gpu::scan::{scan_signature, ScanBatch};
use crate::metric::{Filter, Metric};
use crate::DType;

/// `ivf_lmseed`'s parameters (kernels/lmseed.cu).
const LMSEED_SIGNATURE: &[Param] = scan_signature!(
    [
        Param::Ptr,                            // queries, in the lists' type
        Param::I32,                            // dim
        Param::I32,                            // n_probes
        Param::I32,                            // queries
        Param::Buffer(Elem::I64, Extent::Any), // probes
        Param::I32,                            // rows a query's seed scores
        Param::I32,                            // warps a query
    ],
    [
        Param::BufferMut(Elem::U32, Extent::Any), // per-query bounds
    ]
);

/// `ivf_lmseed_tile`'s parameters (kernels/lmseedt.cu).
const LMSEED_TILE_SIGNATURE: &[Param] = scan_signature!(
    [
        Param::Ptr,                            // queries, in the lists' type
        Param::I32,                            // dim
        Param::I32,                            // veclen
        Param::I32,                            // n_probes
        Param::I32,                            // queries per tile
        Param::I32,                            // steps a query's seed scores
        Param::I32,                            // work area offset
        Param::Buffer(Elem::I32, Extent::Any), // the first probes' tile records
        Param::Buffer(Elem::I32, Extent::Any), // pairs grouped by list
        Param::Buffer(Elem::U32, Extent::Any), // the lists' row norms
    ],
    [
        Param::BufferMut(Elem::U32, Extent::Any), // per-query bounds
    ]
);

/// Queries (first probes of one list) a block of the seed by list takes at most.
pub(super) const SEED_BY_LIST_QUERIES: usize = 32;

/// Queries a probed list must be the first probe of, on average, for the seed to go by
/// list: each block stages its record's queries and scores the list's first rows against
/// them once, where each query's warp read its 32 KiB from L2 and formed each distance.
/// Measured on the H100 with the rows scored by their dot products (kernels/lmseed.cu's
/// grouped form; session 33, `docs/gpu-runs/2026-12-06-s33/3-gdot/`, three rounds, device
/// QPS against the seed by query): lowdim-i8 × 10 / × 20 / × 50 at 10,000 +5.1 / +3.3 /
/// +0.3 % (its seed 60 → 52 µs, ncu), wide-i8 × 10 +1.2 %, lowdim-f16 −0.3 to +0.1 %;
/// batches of 1,000 (one first probe a list) keep the seed by query. The rows scored by
/// distances as the per-query seed does (call 2): lowdim-i8 +1.1 / +1.6 %. Seeding the
/// images by list as well (64 rows of 784 bytes, where the seed by query does not pay)
/// lost 10.7 / 9.3 % at 2 / 5 probes: its seed cost 60 µs for 14 µs of scan. The scan's
/// own tile arithmetic (kernels/lmseedt.cu) replaced the dot products in session 34
/// (`docs/gpu-runs/2026-12-06-s34/1-ab/`, `tseed` against main, three rounds, 10,000):
/// lowdim-f16 × 10 / × 20 +2.2 / +1.5 %, lowdim-i8 +0.2 / −0.1 %, lowdim f32 within ±1 %.
pub const SEED_BY_LIST_MIN_QUERIES: usize = 4;

/// The most shared memory a block of the seed by list takes (the rows and a staged query
/// a warp): the default limit, so that no opt-in is needed and several blocks fit an SM.
const SEED_BY_LIST_MAX_SHARED: usize = 48 * 1024;

/// Bytes of its first probe's rows a query's seed reads ([`seed_rows`]).
const SEED_BYTES: usize = 16 * 1024;

/// Rows of its first probe a query's seed scores: [`SEED_BYTES`] of them, in whole 32-row
/// groups, from 64 to 256. More rows give a tighter bound (a host simulation of the lowdim
/// set: 24 candidates kept a (query, probe) pair with 64 rows, 15 with 128) at a cost
/// that grows with the bytes read. Measured on the H200 (session 12, `2-seed-rows-ab/`,
/// same call, against 64 rows of the one-warp seed, mean of two rounds): 1M × 128 i8 at
/// 10/20/50 probes, batches 10,000 and 1,000 — 128 rows −0.8 to +1.3 %, 256 rows +0.3 to
/// +3.3 % (all six better than 128); the same set as f16 — 128 rows −0.1 to +2.4 %, 256
/// rows −2.5 to +2.3 %. So 256 rows of 128 bytes, 128 of 256 bytes. Again with the seed
/// that sorts scores alone (session 16, `2-seed-select-ab/`, three rounds): 64 KiB (512
/// rows of i8 × 128, 256 of f16) lost to 32 KiB on both — i8 −5.5 / −4.0 / −1.6 % at
/// 10 / 20 / 50 probes (10,000), f16 −4.0 / −2.6 / −1.3 %. With each list's 64 rows
/// nearest its centre placed first ([`crate::index::NEAREST_FIRST_ROWS`]), 16 KiB (128 rows
/// of i8 × 128, 64 of f16) beat 32 KiB (session 38, H100, same calls, means of two or three
/// calls of two rounds, against main's base-order lists at 32 KiB, device QPS): lowdim-i8
/// × 10 / × 20 / × 50 at 1,000 +3.2 / +2.7 / +1.5 % (the same lists at 32 KiB −0.4 / +0.7 /
/// +0.7 %), at 10,000 +3.1 / +2.1 /
/// +0.6 % (noisier: −0.1 to +6.3 at × 10); lowdim-f16 +0.5 to +2.9 %; 8 KiB (64 rows of i8,
/// one call) within a point of it either way on lowdim-i8, the same rows as 16 KiB on f16.
fn seed_rows(dim: usize, elem_bytes: usize) -> usize {
    let rows = SEED_BYTES / (dim * elem_bytes).max(1);
    (rows / 32 * 32).clamp(64, 256)
}

/// How `ivf_lmseed` is launched: queries a block, warps a query, and the shared memory
/// of the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SeedBlock {
    queries: usize,
    parts: usize,
    shared: usize,
}

/// Queries a batch must hold for the seed to give each query one warp: below it, up to four
/// warps share a query's 32-row groups, so that a small batch's seed is not one warp's
/// chain of loads; from it on, one warp a query keeps the best two bounds of its rows in
/// each lane and sorts once (kernels/lmseed.cu), where four warps staged the query four
/// times and sorted each group. Measured on the H200 (session 23, device QPS against main's
/// four warps, three rounds; `docs/gpu-runs/2026-12-02-s23/`): 1M × 128 i8 at 10 / 20 / 50
/// probes, one warp at every batch — batch 10,000 +1.4 / +1.1 / +1.0 % and +0.8 / +0.9 /
/// −1.4 % on two machines, the seed itself (ncu, 10 probes, clocks free, i8 L2 by
/// products then) 61 → 44 µs; batch 1,000 −11.0 / −10.0 / −7.8 % and −10.9 / −11.0 /
/// −7.5 %. The threshold lies between the two measured batches, so batches of 1,000 keep
/// four warps.
pub const SEED_ONE_WARP_MIN_QUERIES: usize = 5_000;

/// The seed's launch for a batch of `nb` `dim`-dimensional queries scoring `rows` rows
/// each: one warp a query from [`SEED_ONE_WARP_MIN_QUERIES`] queries on, else one warp a
/// 32-row group up to four warps a query; blocks of up to four warps; each warp stages
/// its query (4 bytes a value at most, 16-byte aligned) and leaves 32 scores for the
/// merge, within the default 48 KiB where a warp's share fits it.
fn seed_block(dim: usize, rows: usize, nb: usize) -> SeedBlock {
    let per_warp = (dim * 4).next_multiple_of(16) + 32 * 4;
    let warps = (48 * 1024 / per_warp).clamp(1, 4);
    let parts = if nb >= SEED_ONE_WARP_MIN_QUERIES {
        1
    } else {
        (rows / 32).clamp(1, warps)
    };
    let queries = warps / parts;
    SeedBlock {
        queries,
        parts,
        shared: queries * parts * per_warp,
    }
}

/// The shared memory of a block of the seed by list for lists of `dim` values scanned by
/// `tile`: the step's scores ([`SEED_BY_LIST_QUERIES`] × [`STEP_ROWS`] floats) and the
/// slots' query numbers, then from a 128-byte boundary (the first of the two returned: the
/// kernel's `work_off`) the tile's work area; the second is the whole.
fn seed_by_list_shared(tile: LmTile, dim: usize) -> (usize, usize) {
    let work_off = (SEED_BY_LIST_QUERIES * (STEP_ROWS + 1) * 4).next_multiple_of(128);
    (
        work_off,
        work_off + seed_work_bytes(tile, dim, SEED_BY_LIST_QUERIES),
    )
}

/// Whether a batch of `nb` queries over `n_lists` lists seeds its bounds by list (where a
/// block fits [`SEED_BY_LIST_MAX_SHARED`]): where its first probes are
/// [`SEED_BY_LIST_MIN_QUERIES`] a list or more on average.
fn seeds_by_list(nb: usize, n_lists: usize) -> bool {
    nb >= SEED_BY_LIST_MIN_QUERIES * n_lists.min(nb).max(1)
}

/// Which of the seed's two kernels runs, and its launch shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SeedForm {
    /// `ivf_lmseed`: each query's warps read its rows from global memory ([`seed_block`]).
    PerQuery(SeedBlock),
    /// `ivf_lmseed_tile`: a block a tile of the first probes of one list
    /// ([`SEED_BY_LIST_QUERIES`] at most) scores the list's first steps against them with
    /// the scan's own tile arithmetic (`tile`'s fragment).
    ByList { tile: LmTile },
}

/// The seed of one list-major scan shape: its kernel, and the rows and launch shape the
/// kernel's shared memory was sized for (the launch takes them from here).
pub(crate) struct SeedKernel {
    /// The plan of `form`'s kernel.
    pub spec: KernelSpec,
    /// Rows of its first probe each query scores ([`seed_rows`]).
    pub rows: usize,
    /// Its kernel and launch shape for those rows.
    pub form: SeedForm,
}

/// Whether a list-major scan for top-`k` of `n_probes` probes of `dtype` lists holding
/// `mean_rows` rows on average seeds its queries' bounds with `ivf_lmseed` before it runs
/// (else they start at +inf). The seed reads [`seed_rows`] rows a
/// query, as much for 2 probes as for 50, and pays by what the scan's top-k pass no longer
/// does; measured on the H200 (session 11, same call, batches 10,000 and 1,000): 8-bit and
/// f16 lists of about 1,000 rows gained 1–7 % from 10 probes on; f32 (512-byte rows) −4 to
/// +1.5 %; 784-wide 8-bit images with 234-row lists −17 % at 2 probes, +6 % at 20 (10,000)
/// but −5 % (1,000). So: 8-bit and f16 rows, k within the seed's 32, and at least
/// [`SEED_MIN_ROWS`] rows scanned a query on average.
pub(crate) fn seeds_bounds(dtype: DType, k: usize, n_probes: usize, mean_rows: usize) -> bool {
    matches!(dtype, DType::I8 | DType::U8 | DType::F16)
        && k <= SEED_MAX_K
        && n_probes * mean_rows >= SEED_MIN_ROWS
}

/// The largest k `ivf_lmseed` seeds (it keeps the best 32 rows).
const SEED_MAX_K: usize = 32;

/// Rows a query's probes must hold on average, together, for the seed to pay
/// (`seeds_bounds`): a hundred times the 64 rows the seed read when this was measured.
pub const SEED_MIN_ROWS: usize = 6400;

/// The seed of a list-major batch of `nb` queries × `n_probes` over `lists`, top `k`, or
/// none where it does not pay ([`seeds_bounds`]) or the batch scans its first probes in a
/// phase of their own (two phases take the seed's place: the first phase's bounds are
/// tighter than the seed's, which only shortens the first phase — measured in the same runs
/// as `MIN_PAIRS_PER_LIST_PHASED`: two phases without the seed beat them with it by 0.2 to
/// 7 % at every shape of the grid where two phases pay).
pub(crate) fn seed_kernel(
    lists: &DeviceLists,
    (tile, metric, filter): (LmTile, Metric, &Filter),
    k: usize,
    (nb, n_probes): (usize, usize),
    (two_phases, by): (bool, SeedBy),
) -> Option<SeedKernel> {
    let mean_rows = lists.n_rows() / lists.n_lists().max(1);
    if two_phases || !seeds_bounds(lists.dtype, k, n_probes, mean_rows) {
        return None;
    }
    let rows = seed_rows(lists.dim, lists.dtype.size());
    let (_, by_list_shared) = seed_by_list_shared(tile, lists.dim);
    let by_list = by_list_shared <= SEED_BY_LIST_MAX_SHARED
        && match by {
            SeedBy::Auto => seeds_by_list(nb, lists.n_lists),
            SeedBy::Query => false,
            SeedBy::List => true,
        };
    let (spec, form) = if by_list {
        let spec = KernelSpec {
            plan: format!(
                "lmseedt_{}_{}_{}",
                tile.name(),
                metric.name(),
                filter.name()
            ),
            signature: LMSEED_TILE_SIGNATURE,
            shared: by_list_shared,
        };
        (spec, SeedForm::ByList { tile })
    } else {
        let block = seed_block(lists.dim, rows, nb);
        let spec = KernelSpec {
            plan: format!(
                "lmseed_{}_v{}_{}_{}",
                lists.dtype.name(),
                vec_name(lists.veclen),
                metric.name(),
                filter.name()
            ),
            signature: LMSEED_SIGNATURE,
            shared: block.shared,
        };
        (spec, SeedForm::PerQuery(block))
    };
    Some(SeedKernel { spec, rows, form })
}

impl IvfGpu {
    /// Launches `ivf_lmseed` (`seed`, linked as `kernel`) for batch `b`: each query's
    /// bound from the first rows of its first probe, into `bound`.
    pub(super) fn seed_bounds_per_query<T: DeviceElem>(
        &self,
        kernel: &Kernel,
        (rows, block): (usize, SeedBlock),
        b: &ScanBatch<'_, T>,
        bound: &mut CudaSlice<u32>,
    ) -> Result<()> {
        let lists = b.lists;
        let cfg = LaunchConfig {
            grid_dim: (b.nb.div_ceil(block.queries) as u32, 1, 1),
            block_dim: ((32 * block.parts * block.queries) as u32, 1, 1),
            shared_mem_bytes: block.shared as u32,
        };
        let (dim_i, probes_i, nb_i, rows_i, parts_i) = (
            lists.dim as i32,
            b.n_probes as i32,
            b.nb as i32,
            rows as i32,
            block.parts as i32,
        );
        let scalars = b.list_scalars();
        let launch = Launch::on(self.gpu.stream(), kernel, cfg)
            .view(&b.queries)
            .scalar(&dim_i)
            .scalar(&probes_i)
            .scalar(&nb_i)
            .view(&b.probes)
            .scalar(&rows_i)
            .scalar(&parts_i);
        let launch = b.list_and_filter_args(launch, &scalars).buffer_mut(bound);
        // SAFETY: the warps of query q < nb read query q and its first probe
        // (check_buffers: nb queries and nb × n_probes probes, each a list below
        // n_lists), at most the first `rows` rows of that list (lists are padded to
        // 32-row groups; rows past its size are not read), the filter within its words,
        // and write bound[q] (the caller's buffer holds nb); the block's shared memory is
        // what seed_block gave the kernel for these rows.
        unsafe { launch.run() }
    }

    /// Launches `ivf_lmseed_tile` (linked as `kernel` with `tile`'s fragment, scoring
    /// `rows` rows a query, whole [`STEP_ROWS`]-row steps) for batch `b` over the first
    /// probes' tiles `grid` of grouping `g`: the bound of every query (each is the first
    /// probe of one list, in one tile) into `bound`.
    pub(super) fn seed_bounds_by_list<T: DeviceElem>(
        &self,
        kernel: &Kernel,
        (tile, rows): (LmTile, usize),
        b: &ScanBatch<'_, T>,
        (g, grid): (&Grouped<'_>, Grid),
        bound: &mut CudaSlice<u32>,
    ) -> Result<()> {
        let lists = b.lists;
        let (work_off, shared) = seed_by_list_shared(tile, lists.dim);
        let cfg = LaunchConfig {
            grid_dim: (grid.tiles as u32, 1, 1),
            block_dim: (LM_THREADS, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        let (dim_i, veclen_i, probes_i) =
            (lists.dim as i32, lists.veclen as i32, b.n_probes as i32);
        let (qt_i, steps_i, work_off_i) = (
            grid.qt as i32,
            rows.div_ceil(STEP_ROWS) as i32,
            work_off as i32,
        );
        let records = g.records(grid);
        let scalars = b.list_scalars();
        let launch = Launch::on(self.gpu.stream(), kernel, cfg)
            .view(&b.queries)
            .scalar(&dim_i)
            .scalar(&veclen_i)
            .scalar(&probes_i)
            .scalar(&qt_i)
            .scalar(&steps_i)
            .scalar(&work_off_i)
            .view(&records)
            .buffer(g.pairs)
            .buffer(&lists.row_norms);
        let launch = b.list_and_filter_args(launch, &scalars).buffer_mut(bound);
        // SAFETY: a block whose record holds no pair returns at once; the others read their
        // record's pairs (group_pairs: at most qt = SEED_BY_LIST_QUERIES first probes of
        // the record's list, numbers below nb × n_probes), their queries (below nb,
        // check_buffers), the whole 32-row groups of the list's first steps (lists are
        // padded to 32-row groups) and their row norms (one a padded row), into the shared
        // memory seed_by_list_shared gave for this tile and dimension, the filter within
        // its words, and write the bounds of their queries (the caller's buffer holds nb).
        unsafe { launch.run() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_seeded_for_8_bit_and_f16_lists_long_enough_and_k_up_to_32() {
        // The lowdim shape: 1,000-row lists, 10 probes.
        for dtype in [DType::I8, DType::U8, DType::F16] {
            assert!(seeds_bounds(dtype, 10, 10, 1000), "{dtype:?}");
            assert!(seeds_bounds(dtype, 32, 10, 1000), "{dtype:?}");
            assert!(!seeds_bounds(dtype, 33, 10, 1000), "{dtype:?}");
        }
        assert!(!seeds_bounds(DType::F32, 10, 50, 1000));
        // Images: 234-row lists, even at 20 probes.
        assert!(!seeds_bounds(DType::U8, 10, 20, 234));
        assert!(seeds_bounds(DType::U8, 10, 2, SEED_MIN_ROWS / 2));
        assert!(!seeds_bounds(DType::U8, 10, 2, SEED_MIN_ROWS / 2 - 1));
    }

    #[test]
    fn the_seed_reads_16_kib_of_rows_in_whole_groups_from_64_to_256() {
        assert_eq!(seed_rows(128, 1), 128);
        assert_eq!(seed_rows(128, 2), 64);
        assert_eq!(seed_rows(96, 1), 160);
        assert_eq!(seed_rows(96, 2), 64);
        assert_eq!(seed_rows(32, 1), 256);
        assert_eq!(seed_rows(128, 4), 64);
        assert_eq!(seed_rows(784, 1), 64);
    }

    #[test]
    fn the_seed_gives_a_query_a_warp_a_group_in_blocks_that_fit_48_kib() {
        let block = |queries, parts, shared| SeedBlock {
            queries,
            parts,
            shared,
        };
        let small = SEED_ONE_WARP_MIN_QUERIES - 1;
        // 128 dimensions: 512 bytes of query and 128 of scores a warp.
        assert_eq!(seed_block(128, 64, small), block(2, 2, 4 * 640));
        assert_eq!(seed_block(128, 128, small), block(1, 4, 4 * 640));
        assert_eq!(seed_block(128, 256, small), block(1, 4, 4 * 640));
        assert_eq!(seed_block(784, 32, small), block(4, 1, 4 * 3264));
        // 4,096 dimensions: two warps fit; 16,384: one, past 48 KiB.
        assert_eq!(seed_block(4096, 128, small), block(1, 2, 2 * 16512));
        assert_eq!(seed_block(16384, 64, small), block(1, 1, 65664));
    }

    #[test]
    fn batches_with_several_queries_a_list_seed_by_list() {
        // lowdim × 10 at 10,000 queries: about ten first probes a list; at 1,000, one.
        assert!(seeds_by_list(10_000, 1024));
        assert!(!seeds_by_list(1_000, 1024));
        assert!(seeds_by_list(4 * 1024, 1024));
        assert!(!seeds_by_list(4 * 1024 - 1, 1024));
        // Fewer queries than lists never go by list.
        assert!(!seeds_by_list(3, 1024));
        assert!(seeds_by_list(8, 1));
    }

    #[test]
    fn a_seed_by_list_block_holds_the_scores_then_the_tiles_work_area() {
        // i8 × 128 on mma.sync (rows by cp.async): 32 × 65 floats (8,320 bytes, 8,320 at a
        // 128-byte boundary), then the queries' and two steps' row norms, 96 staged rows of
        // 128 + 16 bytes.
        let (work_off, shared) = seed_by_list_shared(LmTile::Mma(DType::I8), 128);
        assert_eq!(work_off, 8320);
        assert_eq!(shared, 8320 + 4 * (32 + 128) + 96 * 144);
        // f16 × 128 through registers: 96 rows of 136 halves, 96 norms.
        let (_, shared) = seed_by_list_shared(LmTile::Mma(DType::F16), 128);
        assert_eq!(shared, 8320 + 2 * 96 * 136 + 4 * 96);
        // Wide f32 tiles pass the limit and seed by query instead.
        assert!(seed_by_list_shared(LmTile::F32Fma, 4096).1 > SEED_BY_LIST_MAX_SHARED);
    }

    #[test]
    fn a_large_batch_seeds_each_query_with_one_warp() {
        let large = SEED_ONE_WARP_MIN_QUERIES;
        assert_eq!(
            seed_block(128, 256, large),
            SeedBlock {
                queries: 4,
                parts: 1,
                shared: 4 * 640
            }
        );
        assert_eq!(seed_block(4096, 128, large).queries, 2);
        assert_eq!(seed_block(16384, 64, 100_000).queries, 1);
    }
}
