//! GPU tests (run with --ignored on the GPU machine): every data type × metric × filter ×
//! k bucket against the CPU reference on fresh random data, with partial groups, an empty
//! list, k larger than what is kept, and dimensions that do and do not fit the vector
//! width; and recall at n_probes = n_lists equal to exact search.

use std::sync::Arc;

use ltokit::cache::CacheConfig;
use ltokit::launch::Gpu;
use ltokit_ivf::data::{synthetic, Rng};
use ltokit_ivf::gpu::{
    DeviceLists, GpuIndex, IvfGpu, Neighbors, ProbePhases, ScanPath, SeedBy, TileArith, EXACT_CHUNK,
};
use ltokit_ivf::kmeans::{assign_cpu, train, training_rows, training_set, KMeansParams};
use ltokit_ivf::reference::{coarse, exact, scan_lists};
use ltokit_ivf::{DType, Filter, IvfIndex, Matrix, Metric};

#[path = "../../ltokit/tests/support/cuda_cache.rs"]
mod cuda_cache;
use cuda_cache::keep_the_cuda_cache_in_temp;

fn engine() -> IvfGpu {
    keep_the_cuda_cache_in_temp();
    let gpu = Arc::new(Gpu::open(0).expect("these tests need a GPU"));
    let dir = std::env::temp_dir().join("ltokit-ivf-gpu-test-cache");
    IvfGpu::new(gpu, CacheConfig::in_dir(dir)).unwrap()
}

fn seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// The test's engine, a fresh seed (printed by each test with its result, to replay a
/// failure) and a generator seeded with it.
fn engine_and_seed() -> (IvfGpu, u64, Rng) {
    let s = seed();
    (engine(), s, Rng::new(s))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 * a.abs().max(b.abs()).max(1.0)
}

/// An index with one deliberately empty list (its centre is far from everything).
/// Two searches' ids agree (given their equal distances) up to the order of equally
/// distant neighbours: the list-major scan keeps a step's candidates in the order its
/// threads find them, so ties may come out in either order — and at the k-th place a
/// different one of the tied neighbours may be kept.
fn assert_same_up_to_ties(a: &[i64], b: &[i64], dist: &[f32], k: usize, ctx: &str) {
    for (q, ((ia, ib), d)) in a.chunks(k).zip(b.chunks(k)).zip(dist.chunks(k)).enumerate() {
        for r in 0..k {
            if ia[r] == ib[r] {
                continue;
            }
            // The run of ranks tied with rank r: the same ids in it, except in a run that
            // reaches the k-th place.
            let (mut lo, mut hi) = (r, r);
            while lo > 0 && d[lo - 1] == d[r] {
                lo -= 1;
            }
            while hi + 1 < k && d[hi + 1] == d[r] {
                hi += 1;
            }
            assert!(
                hi > lo,
                "{ctx} query {q} rank {r}: ids {} and {} at distance {} with no tie",
                ia[r],
                ib[r],
                d[r]
            );
            if hi + 1 < k {
                let (mut sa, mut sb) = (ia[lo..=hi].to_vec(), ib[lo..=hi].to_vec());
                sa.sort();
                sb.sort();
                assert_eq!(
                    sa, sb,
                    "{ctx} query {q}: tied ids differ at ranks {lo}..={hi}"
                );
            }
        }
    }
}

fn index_with_empty_list(base: &Matrix, metric: Metric, n_lists: usize, seed: u64) -> IvfIndex {
    let params = KMeansParams {
        n_lists,
        iters: 4,
        train_fraction: 0.5,
        seed,
    };
    let t = training_set(base, &params, metric);
    let mut centers = train(&t, base.dim, &params, &mut |p, c| {
        Ok(assign_cpu(p, c, base.dim))
    })
    .unwrap();
    centers.extend(std::iter::repeat_n(1.0e4f32, base.dim));
    let assignment = assign_cpu(&base.to_f32(), &centers, base.dim);
    IvfIndex::from_assignment(
        metric,
        base,
        &(0..base.rows as i64).collect::<Vec<_>>(),
        centers,
        &assignment,
    )
    .unwrap()
}

/// [`index_with_empty_list`] and its upload to `engine`'s GPU.
fn upload_with_empty_list(
    engine: &IvfGpu,
    base: &Matrix,
    metric: Metric,
    n_lists: usize,
    seed: u64,
) -> (IvfIndex, GpuIndex) {
    let index = index_with_empty_list(base, metric, n_lists, seed);
    let gindex = GpuIndex::upload(engine, &index).unwrap();
    (index, gindex)
}

/// The coarse search chose, for each query, lists whose centres score as well as the
/// CPU's `n_probes` best (ties may pick other lists of equal score).
fn assert_best_lists(index: &IvfIndex, qf: &[f32], probes: &[i64], n_probes: usize, ctx: &str) {
    let dim = index.dim;
    let n_lists = (index.centers.len() / dim) as i64;
    let metric = if index.metric == Metric::L2Sqrt {
        Metric::L2
    } else {
        index.metric
    };
    for (qi, q) in qf.chunks(dim).enumerate() {
        let cpu = coarse(index, q, n_probes);
        let mut got: Vec<f64> = probes[qi * n_probes..(qi + 1) * n_probes]
            .iter()
            .map(|&l| {
                assert!((0..n_lists).contains(&l), "{ctx}: list {l} of {n_lists}");
                metric.score(q, &index.centers[l as usize * dim..(l as usize + 1) * dim])
            })
            .collect();
        let mut lists = probes[qi * n_probes..(qi + 1) * n_probes].to_vec();
        lists.sort_unstable();
        lists.dedup();
        assert_eq!(
            lists.len(),
            n_probes,
            "{ctx} query {qi}: a list chosen twice"
        );
        got.sort_by(f64::total_cmp);
        for (g, (_, c)) in got.iter().zip(&cpu) {
            assert!(
                close(*g, *c),
                "{ctx} {metric:?} query {qi}: {got:?} vs {cpu:?}"
            );
        }
    }
}

/// The coarse search of `queries` by `gindex` picks the CPU's best lists at 1, 7, 20, 32, 40
/// and 590 probes (`ctx` prefixes each message).
fn assert_probes_match_cpu(
    engine: &IvfGpu,
    index: &IvfIndex,
    gindex: &GpuIndex,
    queries: &Matrix,
    ctx: &str,
) {
    let qf = queries.to_f32();
    // 590 probes: the largest top-k capacity (1,024), whose selection blocks take four
    // queries instead of eight (its lists' shared memory); 20 and 32: the largest
    // capacities whose rows of up to 1,024 centres are held in registers and ranked.
    for n_probes in [1usize, 7, 20, 32, 40, 590] {
        let probes = gindex.probes(engine, queries, n_probes).unwrap();
        assert_best_lists(
            index,
            &qf,
            &probes,
            n_probes,
            &format!("{ctx} n_probes {n_probes}"),
        );
    }
}

fn filters(n_ids: usize, n_queries: usize, rng: &mut Rng) -> Vec<Filter> {
    let words = n_ids.div_ceil(32);
    let bits: Vec<u32> = (0..n_queries * words)
        .map(|_| rng.next_u64() as u32)
        .collect();
    vec![
        Filter::None,
        Filter::Bitset(Filter::bitset(n_ids, |id| id % 3 != 1)),
        Filter::Bitmap { words, bits },
    ]
}

/// `found` (top k of each query over its row of `probes`) equals the CPU's scan of the
/// same lists: the same distance at every rank, every id allowed by the filter and at the
/// distance reported, no duplicates, and empty ranks past the kept candidates.
#[allow(clippy::too_many_arguments)]
fn assert_matches_cpu(
    index: &IvfIndex,
    base: &Matrix,
    queries: &Matrix,
    probes: &[i64],
    n_probes: usize,
    filter: &Filter,
    found: &Neighbors,
    ctx: &str,
) {
    let dim = index.dim;
    let metric = index.metric;
    let k = found.k;
    let qf = queries.to_f32();
    for qi in 0..queries.rows {
        let q = &qf[qi * dim..(qi + 1) * dim];
        let lists: Vec<usize> = probes[qi * n_probes..(qi + 1) * n_probes]
            .iter()
            .map(|&l| l as usize)
            .collect();
        let want = scan_lists(index, qi, q, &lists, k, filter);
        let ids = found.ids_of(qi);
        let dists = found.distances_of(qi);
        for r in 0..k {
            if r < want.len() {
                assert!(
                    close(dists[r] as f64, want[r].1),
                    "{ctx} query {qi} rank {r}: {} vs {}",
                    dists[r],
                    want[r].1
                );
                let id = ids[r];
                assert!(
                    id >= 0 && filter.keeps(qi, id),
                    "{ctx} query {qi}: id {id} not allowed"
                );
                let row = base.row_f32(id as usize);
                assert!(
                    close(metric.report(metric.score(q, &row)), dists[r] as f64),
                    "{ctx} query {qi}: id {id} does not have distance {}",
                    dists[r]
                );
            } else {
                assert_eq!(
                    ids[r],
                    -1,
                    "{ctx} query {qi}: rank {r} past the {} candidates must be empty",
                    want.len()
                );
                assert!(dists[r].is_infinite());
            }
        }
        let mut uniq = ids.iter().filter(|&&i| i >= 0).collect::<Vec<_>>();
        let n = uniq.len();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), n, "{ctx} query {qi}: duplicate ids");
    }
}

/// A batch of queries and their probes into one index: [`Probed::check`] searches them
/// with those probes and compares the result with the CPU's scan of the same lists.
struct Probed<'a> {
    engine: &'a IvfGpu,
    index: &'a IvfIndex,
    gindex: &'a GpuIndex,
    base: &'a Matrix,
    queries: &'a Matrix,
    probes: &'a [i64],
    n_probes: usize,
}

impl<'a> Probed<'a> {
    fn new(
        engine: &'a IvfGpu,
        index: &'a IvfIndex,
        gindex: &'a GpuIndex,
        base: &'a Matrix,
        queries: &'a Matrix,
        probes: &'a [i64],
        n_probes: usize,
    ) -> Self {
        Probed {
            engine,
            index,
            gindex,
            base,
            queries,
            probes,
            n_probes,
        }
    }

    /// [`Probed::check`] for every filter × k × scan path; returns how many it checked.
    fn check_all(&self, filters: &[Filter], ks: &[usize], paths: &[ScanPath], ctx: &str) -> usize {
        for filter in filters {
            for &k in ks {
                for &path in paths {
                    self.gindex.set_scan_path(path);
                    let ctx = format!("{ctx} {} k={k} {}", filter.name(), path.name());
                    self.check(k, filter, &ctx);
                }
            }
        }
        filters.len() * ks.len() * paths.len()
    }

    fn check(&self, k: usize, filter: &Filter, ctx: &str) {
        let found = self
            .gindex
            .search_with_probes(
                self.engine,
                self.queries,
                self.probes,
                self.n_probes,
                k,
                filter,
            )
            .unwrap();
        assert_matches_cpu(
            self.index,
            self.base,
            self.queries,
            self.probes,
            self.n_probes,
            filter,
            &found,
            ctx,
        );
    }
}

#[test]
#[ignore = "needs a GPU"]
fn every_variant_matches_the_cpu_reference() {
    let engine = engine();
    let mut rng = Rng::new(seed());
    let mut checked = 0;
    for dtype in DType::ALL {
        for dim in [64usize, 30] {
            let s = rng.next_u64();
            let base = synthetic(1500 + rng.below(100), dim, 12, dtype, s);
            let queries = synthetic(24, dim, 12, dtype, s ^ 0xABC);
            let qf = queries.to_f32();
            for metric in Metric::ALL {
                let index = index_with_empty_list(&base, metric, 12, s);
                assert_eq!(
                    *index.list_size.last().unwrap(),
                    0,
                    "the last list must be empty"
                );
                let gindex = GpuIndex::upload(&engine, &index).unwrap();
                let n_probes = 5;
                let probes = gindex.probes(&engine, &queries, n_probes).unwrap();
                assert_best_lists(&index, &qf, &probes, n_probes, &format!("{dtype:?}"));
                let probed =
                    Probed::new(&engine, &index, &gindex, &base, &queries, &probes, n_probes);
                checked += probed.check_all(
                    &filters(base.rows, queries.rows, &mut rng),
                    &[1, 10, 100, 700],
                    &[ScanPath::PerQuery, ScanPath::ListMajor],
                    &format!("{dtype:?} dim {dim} {metric:?}"),
                );
            }
        }
    }
    println!("checked {checked} variant combinations against the CPU reference");
}

#[test]
#[ignore = "needs a GPU"]
fn list_major_tiles_cover_every_probe_pattern_up_to_k_1024() {
    let engine = engine();
    let mut rng = Rng::new(seed());
    let mut checked = 0;
    // (type, dimension): vector-width chunks, an odd dimension (padded to the k step), i8
    // × 128 (whose register-capped kernels are linked for their dimension: lmdim_128), an
    // image-sized 8-bit one and i8 × 512 (the plain kernel linked for its dimension up to
    // k 32: lmdim_784, lmdim_512), and f16 × 256, whose mma tile keeps 80 candidates a query slot
    // where the others keep 96 (tile::LmKernel::choose); every type both ways (mma.sync
    // where the GPU has it, and the portable FMA / WMMA tiles) for every tile size.
    let shapes = [
        (DType::F32, 48),
        (DType::F16, 40),
        (DType::I8, 35),
        (DType::I8, 128),
        (DType::U8, 784),
        (DType::I8, 512),
        (DType::F16, 256),
    ];
    let shapes = shapes
        .iter()
        .flat_map(|&(dtype, dim)| TileArith::ALL.map(|arith| (dtype, dim, arith)));
    for (si, (dtype, dim, arith)) in shapes.enumerate() {
        engine.set_tile_arith(arith);
        let tile = engine.list_major_tile_arithmetic(dtype).name();
        let s = rng.next_u64();
        let n_lists = 16;
        let base = synthetic(3000 + rng.below(200), dim, 16, dtype, s);
        let queries = synthetic(150, dim, 16, dtype, s ^ 7);
        let metric = Metric::ALL[si % Metric::ALL.len()];
        let (index, gindex) = upload_with_empty_list(&engine, &base, metric, n_lists, s);
        // Every query probes list 0 (three tiles of 64 and a partial one at k <= 64);
        // query 0 alone probes list 1; the rest are distinct random lists, the empty one
        // (n_lists) among them.
        let n_probes = 4;
        let mut probes = Vec::new();
        for qi in 0..queries.rows {
            let mut row = vec![
                0i64,
                if qi == 0 {
                    1
                } else {
                    2 + rng.below(n_lists - 1) as i64
                },
            ];
            while row.len() < n_probes {
                let l = 2 + rng.below(n_lists - 1) as i64;
                if !row.contains(&l) {
                    row.push(l);
                }
            }
            probes.extend(row);
        }
        let probed = Probed::new(&engine, &index, &gindex, &base, &queries, &probes, n_probes);
        checked += probed.check_all(
            &[
                Filter::None,
                Filter::Bitset(Filter::bitset(base.rows, |id| id % 5 != 2)),
            ],
            &[1, 16, 100, 1000],
            &[ScanPath::ListMajor],
            &format!("{dtype:?} ({tile}) dim {dim} {metric:?}"),
        );
        // The same pairs in two phases (each query's first probe alone, then the rest: the
        // second phase's tiles start from the first's bounds), which batches this small
        // do not take by themselves.
        engine.set_probe_phases(ProbePhases::Always);
        checked += probed.check_all(
            &[Filter::None],
            &[10, 100],
            &[ScanPath::ListMajor],
            &format!("{dtype:?} ({tile}) dim {dim} {metric:?} in two phases"),
        );
        engine.set_probe_phases(ProbePhases::Auto);
        // The full search (coarse search included) agrees with the per-query path.
        for path in [ScanPath::PerQuery, ScanPath::ListMajor] {
            gindex.set_scan_path(path);
            let found = gindex
                .search(&engine, &queries, 10, 3, &Filter::None)
                .unwrap();
            let probes = gindex.probes(&engine, &queries, 3).unwrap();
            let ctx = format!("{} search {dtype:?} ({tile}) {metric:?}", path.name());
            assert_matches_cpu(
                &index,
                &base,
                &queries,
                &probes,
                3,
                &Filter::None,
                &found,
                &ctx,
            );
        }
    }
    engine.set_tile_arith(TileArith::Mma);
    // A shape beyond the block's shared memory is refused by name when forced.
    let base = synthetic(300, 4096, 4, DType::F32, 1);
    let (_, gindex) = upload_with_empty_list(&engine, &base, Metric::L2, 4, 1);
    gindex.set_scan_path(ScanPath::ListMajor);
    let err = gindex
        .search(&engine, &base.select(&[0, 1]), 1000, 2, &Filter::None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("shared memory") && err.contains("per-query"),
        "{err}"
    );
    gindex.set_scan_path(ScanPath::Auto);
    gindex
        .search(&engine, &base.select(&[0, 1]), 1000, 2, &Filter::None)
        .expect("auto falls back to the per-query scan");
    println!("checked {checked} list-major combinations against the CPU reference");
}

#[test]
#[ignore = "needs a GPU"]
fn list_major_bounds_seeded_from_the_first_probe_lose_no_neighbour() {
    // Lists of ~2,500 rows and 4 probes: the list-major scan seeds each query's bound from
    // the first rows of its first probe (32 KiB of them, at most 256 rows; 8-bit and f16
    // lists; ltokit_ivf::gpu::SEED_MIN_ROWS) and skips rows at or above it. Every metric
    // (cosine's seed allows for the scans' different rounding), every filter kind (a
    // filtered-out row may not count toward the seed), k up to the seed's 32 and past it
    // (no seed). i8 × 64 and u8 × 96 run the register-capped kernels linked for their
    // dimension (lmdim_64, lmdim_96) up to k 32. Batches of 120 queries seed with several
    // warps a query (the first metric of each type) or by list (the second: each block
    // copies a list's first rows once for up to 32 queries whose first probe it is); one
    // of SEED_ONE_WARP_MIN_QUERIES with one warp a query and by list.
    let (engine, s, mut rng) = engine_and_seed();
    let mut checked = 0;
    let n_probes = 4;
    // Each type with two metrics, cosine among them for an 8-bit type and for f16.
    let shapes = [
        (DType::I8, 64, [Metric::L2, Metric::Cosine]),
        (DType::U8, 96, [Metric::Ip, Metric::L2Sqrt]),
        (DType::F16, 72, [Metric::Cosine, Metric::Ip]),
    ];
    for (si, (dtype, dim, metrics)) in shapes.into_iter().enumerate() {
        let base = synthetic(20_000 + rng.below(300), dim, 8, dtype, s ^ si as u64);
        let queries = synthetic(120, dim, 8, dtype, rng.next_u64());
        assert!(n_probes * base.rows / 9 >= ltokit_ivf::gpu::SEED_MIN_ROWS);
        for (metric, by) in metrics.into_iter().zip([SeedBy::Query, SeedBy::List]) {
            engine.set_seed_by(by);
            let (index, gindex) = upload_with_empty_list(&engine, &base, metric, 8, s);
            let probes = gindex.probes(&engine, &queries, n_probes).unwrap();
            let probed = Probed::new(&engine, &index, &gindex, &base, &queries, &probes, n_probes);
            checked += probed.check_all(
                &filters(base.rows, queries.rows, &mut rng),
                &[10, 32, 100],
                &[ScanPath::ListMajor],
                &format!("{dtype:?} dim {dim} {metric:?} seeded by {by:?} (seed {s})"),
            );
        }
    }
    // A batch large enough for one warp a query (each lane's best two rows, one sort), in
    // one phase so that the seed runs.
    let base = synthetic(20_000 + rng.below(300), 64, 8, DType::I8, s ^ 7);
    let nq = ltokit_ivf::gpu::SEED_ONE_WARP_MIN_QUERIES;
    let queries = synthetic(nq, 64, 8, DType::I8, rng.next_u64());
    let (index, gindex) = upload_with_empty_list(&engine, &base, Metric::L2, 8, s);
    let probes = gindex.probes(&engine, &queries, n_probes).unwrap();
    engine.set_probe_phases(ProbePhases::Never);
    let probed = Probed::new(&engine, &index, &gindex, &base, &queries, &probes, n_probes);
    for by in [SeedBy::Query, SeedBy::Auto] {
        engine.set_seed_by(by);
        checked += probed.check_all(
            &[Filter::None],
            &[10, 32],
            &[ScanPath::ListMajor],
            &format!("I8 dim 64 L2, {nq} queries seeded by {by:?} (seed {s})"),
        );
    }
    engine.set_probe_phases(ProbePhases::Auto);
    println!("checked {checked} seeded list-major scans against the CPU reference");
}

#[test]
#[ignore = "needs a GPU"]
fn list_major_lists_longer_than_a_window_of_offers_match_the_cpu() {
    // One list of ~140,000 rows: the list-major scan keeps candidates over many steps
    // between offers, their rows counted in 16 bits from the window's first step, and
    // must offer at least every 1,024 steps (65,536 rows) — twice in this list — with k
    // small (kept rows few, offers rare) and large, in an 8-bit and a float type.
    let (engine, s, mut rng) = engine_and_seed();
    let mut checked = 0;
    for (dtype, metric) in [(DType::I8, Metric::L2), (DType::F32, Metric::Ip)] {
        let base = synthetic(140_000 + rng.below(500), 16, 4, dtype, s);
        let queries = synthetic(100, 16, 4, dtype, s ^ 3);
        let (index, gindex) = upload_with_empty_list(&engine, &base, metric, 1, s);
        let probes: Vec<i64> = (0..queries.rows).flat_map(|_| [0i64, 1]).collect();
        let probed = Probed::new(&engine, &index, &gindex, &base, &queries, &probes, 2);
        checked += probed.check_all(
            &[
                Filter::None,
                Filter::Bitset(Filter::bitset(base.rows, |id| id % 3 != 1)),
            ],
            &[1, 10, 100],
            &[ScanPath::ListMajor],
            &format!("{dtype:?} {metric:?} one list of {} (seed {s})", base.rows),
        );
    }
    println!("checked {checked} scans of one 140,000-row list against the CPU reference");
}

#[test]
#[ignore = "needs a GPU"]
fn eight_bit_distances_are_exact_where_the_norms_pass_f32s_precision() {
    // 784 values of 200 to 255 a row: squared norms up to 51 million, past the 16.8
    // million that f32 holds exactly, while the distances between rows (near 800,000)
    // are exact f32s. The list-major scan forms L2 as ‖q‖² + ‖x‖² − 2 q·x with the rows'
    // norms DeviceLists computed once: only exact integer norms give the exact distances,
    // which both scans must report (compared for equality with the CPU's integer sums).
    let (engine, s, mut rng) = engine_and_seed();
    let dim = 784;
    let n_base = 2_000 + rng.below(200);
    let mut rows = |n: usize| {
        let bytes: Vec<u8> = (0..n * dim).map(|_| 200 + rng.below(56) as u8).collect();
        Matrix::new(DType::U8, n, dim, bytes).unwrap()
    };
    let base = rows(n_base);
    let queries = rows(300);
    let n_lists = 4;
    let ids: Vec<i64> = (0..base.rows as i64).collect();
    let assignment: Vec<u32> = (0..base.rows).map(|i| (i % n_lists) as u32).collect();
    let centers = vec![0.0; n_lists * dim];
    let index = IvfIndex::from_assignment(Metric::L2, &base, &ids, centers, &assignment).unwrap();
    let gindex = GpuIndex::upload(&engine, &index).unwrap();
    let probes: Vec<i64> = (0..queries.rows).flat_map(|_| 0..n_lists as i64).collect();
    let exact_distance = |q: usize, r: usize| -> f32 {
        let (a, b) = (queries.row_bytes(q), base.row_bytes(r));
        let d: i64 = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| (x as i64 - y as i64).pow(2))
            .sum();
        d as f32
    };
    let k = 10;
    for path in [ScanPath::ListMajor, ScanPath::PerQuery] {
        gindex.set_scan_path(path);
        let found = gindex
            .search_with_probes(&engine, &queries, &probes, n_lists, k, &Filter::None)
            .unwrap();
        for q in 0..queries.rows {
            let mut want: Vec<f32> = (0..base.rows).map(|r| exact_distance(q, r)).collect();
            want.sort_by(f32::total_cmp);
            let ctx = format!("{} query {q} (seed {s})", path.name());
            assert_eq!(found.distances_of(q), &want[..k], "{ctx}");
            for (&id, &d) in found.ids_of(q).iter().zip(found.distances_of(q)) {
                assert_eq!(exact_distance(q, id as usize), d, "{ctx}: id {id}");
            }
        }
    }
    println!(
        "u8 × 784 near 255: both scans' distances equal the exact integer sums ({} queries)",
        queries.rows
    );
}

#[test]
#[ignore = "needs a GPU"]
fn small_batches_cut_long_lists_over_blocks_and_match_the_cpu() {
    // Lists of ~2,500 rows and batches of a few queries: the per-query scan cuts each list
    // over several blocks (every 4th 32-row group run to a block), whose candidates the
    // merge combines; with filters, k up to 100, f32, u8 and i8 (its L2 by products).
    let (engine, s, mut rng) = engine_and_seed();
    let mut checked = 0;
    for dtype in [DType::F32, DType::U8, DType::I8] {
        let base = synthetic(20_000 + rng.below(300), 48, 8, dtype, s);
        for metric in [Metric::L2, Metric::Ip] {
            let (index, gindex) = upload_with_empty_list(&engine, &base, metric, 9, s);
            for nq in [1usize, 3, 20] {
                let queries = synthetic(nq, 48, 8, dtype, rng.next_u64());
                for n_probes in [1usize, 3, 8] {
                    let probes = gindex.probes(&engine, &queries, n_probes).unwrap();
                    let probed =
                        Probed::new(&engine, &index, &gindex, &base, &queries, &probes, n_probes);
                    checked += probed.check_all(
                        &filters(base.rows, nq, &mut rng),
                        &[1, 10, 100],
                        &[ScanPath::PerQuery],
                        &format!("{dtype:?} {metric:?} nq {nq} probes {n_probes} (seed {s})"),
                    );
                }
            }
        }
    }
    println!("checked {checked} split-list scans against the CPU reference");
}

#[test]
#[ignore = "needs a GPU"]
fn auto_takes_the_list_major_scan_once_its_one_missing_kernel_has_loaded() {
    // Two f32 tiles: after a search on one, switching the tile leaves exactly one plan to
    // load (the other tile's scan; grouping and merge are loaded). Auto scans per-query
    // until a background thread has loaded it, then list-major — which the profiler shows
    // as grouping time.
    let engine = engine();
    let s = seed();
    let base = synthetic(20_000, 64, 20, DType::F32, s);
    let queries = synthetic(4_000, 64, 20, DType::F32, s ^ 5);
    let (_, gindex) = upload_with_empty_list(&engine, &base, Metric::L2, 64, s);
    gindex.set_scan_path(ScanPath::Auto);
    for tile in TileArith::ALL {
        engine.set_tile_arith(tile);
        gindex
            .search(&engine, &queries, 10, 8, &Filter::None)
            .unwrap();
        engine.wait_for_background_loads();
        engine.set_profiling(true);
        let found = gindex
            .search(&engine, &queries, 10, 8, &Filter::None)
            .unwrap();
        let stages = engine.stage_times();
        engine.set_profiling(false);
        assert!(
            stages.group_s > 0.0,
            "{}: auto still scans per-query after the background load",
            tile.name()
        );
        assert_eq!(found.ids.len(), queries.rows * 10);
    }
    engine.set_tile_arith(TileArith::Mma);
    println!("auto switched to the list-major scan for both f32 tiles (seed {s})");
}

#[test]
#[ignore = "needs a GPU"]
fn a_plan_loaded_for_a_narrow_index_runs_a_wider_one_of_its_type() {
    // A list-major plan serves every dimension of its type; its shared memory grows with
    // the dimension. Loaded first for a narrow index, the engine must raise the kernel's
    // shared-memory limit for a wider one (the launch failed with an invalid-value error
    // when the first load's limit stayed).
    let engine = engine();
    let s = seed();
    for dim in [16, 128] {
        let base = synthetic(6_000, dim, 20, DType::F16, s ^ dim as u64);
        let queries = synthetic(300, dim, 20, DType::F16, s ^ 7);
        let (_, gindex) = upload_with_empty_list(&engine, &base, Metric::L2, 40, s);
        gindex.set_scan_path(ScanPath::ListMajor);
        // Every list probed: the result is the exact search's.
        let got = gindex
            .search(&engine, &queries, 10, 41, &Filter::None)
            .unwrap_or_else(|e| panic!("f16 × {dim}: {e}"));
        let flat = base.to_f32();
        for q in 0..queries.rows {
            let want = exact(Metric::L2, &flat, dim, &queries.row_f32(q), 10);
            for (r, hit) in want.iter().enumerate() {
                assert!(
                    close(got.distances_of(q)[r] as f64, hit.1),
                    "f16 × {dim} q{q} r{r}: {} vs {}",
                    got.distances_of(q)[r],
                    hit.1
                );
            }
        }
    }
    println!("one engine, list-major f16 × 16 then f16 × 128: both equal exact search (seed {s})");
}

#[test]
#[ignore = "needs a GPU"]
fn probing_every_list_equals_exact_search() {
    let engine = engine();
    let s = seed();
    let base = synthetic(20_000, 96, 40, DType::F32, s);
    let queries = synthetic(200, 96, 40, DType::F32, s ^ 1);
    for metric in [Metric::L2, Metric::Ip] {
        let index = ltokit_ivf::build::build(
            &engine,
            &base,
            metric,
            &KMeansParams {
                n_lists: 64,
                iters: 10,
                train_fraction: 0.5,
                seed: s,
            },
        )
        .unwrap();
        let gindex = GpuIndex::upload(&engine, &index).unwrap();
        let ivf = gindex
            .search(&engine, &queries, 10, 64, &Filter::None)
            .unwrap();
        let flat = DeviceLists::chunked(&engine, &base, EXACT_CHUNK).unwrap();
        let exact_gpu = engine
            .exact(&flat, metric, &Filter::None, &queries, 10)
            .unwrap();
        let flat_host = base.to_f32();
        let cpu: Vec<_> = (0..queries.rows)
            .map(|q| exact(metric, &flat_host, 96, &queries.row_f32(q), 10))
            .collect();
        for (q, want) in cpu.iter().enumerate() {
            for (r, hit) in want.iter().enumerate() {
                assert!(
                    close(ivf.distances_of(q)[r] as f64, hit.1),
                    "{metric:?} q{q} r{r}"
                );
                assert!(
                    close(exact_gpu.distances_of(q)[r] as f64, hit.1),
                    "{metric:?} exact q{q} r{r}"
                );
            }
        }
        let recall = ltokit_ivf::reference::recall(&ivf.rows(), &exact_gpu.rows(), 10);
        println!("{metric:?}: recall@10 at n_probes = n_lists: {recall}");
        assert!(recall > 0.999, "{recall}");
    }
}

/// Repeated device-resident searches into the same buffers: the second of each shape is
/// recorded and the later ones replay it (`IvfGpu::replay_counts`); the queries' values are
/// changed in place between calls, so a replay that reused old results, or a recording
/// that missed a kernel, fails against the CPU's scan of the same probes.
#[test]
#[ignore = "needs a GPU"]
fn repeated_device_searches_replay_and_read_the_queries_of_each_call() {
    let engine = engine();
    let s = seed();
    let gpu = engine.gpu();
    let (k, n_probes, rows, dim) = (10, 8, 2_000, 96);
    let mut checked = 0;
    for (dtype, path) in [
        (DType::F32, ScanPath::ListMajor),
        (DType::U8, ScanPath::ListMajor),
        (DType::F16, ScanPath::PerQuery),
    ] {
        let base = synthetic(20_000, dim, 40, dtype, s);
        let params = KMeansParams {
            n_lists: 64,
            iters: 6,
            train_fraction: 0.5,
            seed: s,
        };
        let index = ltokit_ivf::build::build(&engine, &base, Metric::L2, &params).unwrap();
        let gindex = GpuIndex::upload(&engine, &index).unwrap();
        gindex.set_scan_path(path);
        let sets = [
            synthetic(rows, dim, 40, dtype, s ^ 11),
            synthetic(rows, dim, 40, dtype, s ^ 12),
        ];
        // Each set's probes first: nothing between the searches may grow a buffer.
        let probes: Vec<Vec<i64>> = sets
            .iter()
            .map(|q| gindex.probes(&engine, q, n_probes).unwrap())
            .collect();
        let mut q = gpu.alloc::<u8>(sets[0].bytes.len()).unwrap();
        let mut ids = gpu.alloc::<i64>(rows * k).unwrap();
        let mut dist = gpu.alloc::<f32>(rows * k).unwrap();
        let before = engine.replay_counts();
        // Call 1 runs, call 2 is recorded, calls 3 to 6 replay it.
        for (call, &set) in [0, 1, 0, 1, 1, 0].iter().enumerate() {
            let queries = &sets[set];
            gpu.upload_into(&queries.bytes, &mut q).unwrap();
            gpu.upload_into(&vec![i64::MIN; rows * k], &mut ids)
                .unwrap();
            gpu.upload_into(&vec![f32::NAN; rows * k], &mut dist)
                .unwrap();
            gindex
                .search_device_bytes(
                    &engine,
                    &q.slice(0..queries.bytes.len()),
                    k,
                    n_probes,
                    &Filter::None,
                    &mut ids.slice_mut(0..rows * k),
                    &mut dist.slice_mut(0..rows * k),
                )
                .unwrap();
            let found = Neighbors {
                ids: gpu.download(&ids).unwrap(),
                distances: gpu.download(&dist).unwrap(),
                k,
            };
            let ctx = format!("{dtype:?} {} call {call} (set {set})", path.name());
            assert_matches_cpu(
                &index,
                &base,
                queries,
                &probes[set],
                n_probes,
                &Filter::None,
                &found,
                &ctx,
            );
            checked += 1;
        }
        let after = engine.replay_counts();
        let ctx = format!("{dtype:?} {}: {before:?} → {after:?}", path.name());
        assert_eq!(after.recorded - before.recorded, 1, "{ctx}");
        assert_eq!(after.replayed - before.replayed, 4, "{ctx}");
        assert_eq!(after.failed, 0, "{ctx}");
        // Off, the same call launches its kernels: nothing more is recorded or replayed.
        engine.set_replay(false);
        gindex
            .search_device_bytes(
                &engine,
                &q.slice(0..sets[0].bytes.len()),
                k,
                n_probes,
                &Filter::None,
                &mut ids.slice_mut(0..rows * k),
                &mut dist.slice_mut(0..rows * k),
            )
            .unwrap();
        assert_eq!(engine.replay_counts(), after, "{ctx}: replay off");
        engine.set_replay(true);
    }
    println!("checked {checked} recorded and replayed searches against the CPU reference");
}

#[test]
#[ignore = "needs a GPU"]
fn pairs_counted_in_the_coarse_selection_or_by_the_grouping_match_the_cpu() {
    // A list-major batch on the score matrix (MATRIX_MIN_QUERIES queries or more) has its
    // pairs counted by list in the coarse selection below 32,768 pairs (8 probes here) and
    // by the grouping's own count kernel above (60 probes); both must find what the CPU
    // finds in the same probes, and a batch of each kind after the other must not see the
    // counts of the one before.
    use ltokit_ivf::gpu::coarse::MATRIX_MIN_QUERIES;
    let engine = engine();
    let s = seed();
    let (k, dim, n_lists) = (10, 48, 128);
    let rows = MATRIX_MIN_QUERIES + 88;
    let mut checked = 0;
    for dtype in [DType::F32, DType::U8] {
        let base = synthetic(20_000, dim, 60, dtype, s);
        let params = KMeansParams {
            n_lists,
            iters: 6,
            train_fraction: 0.5,
            seed: s,
        };
        let index = ltokit_ivf::build::build(&engine, &base, Metric::L2, &params).unwrap();
        let gindex = GpuIndex::upload(&engine, &index).unwrap();
        gindex.set_scan_path(ScanPath::ListMajor);
        let queries = synthetic(rows, dim, 60, dtype, s ^ 21);
        for n_probes in [8, 60, 8] {
            assert_eq!(
                rows * n_probes < 32_768,
                n_probes == 8,
                "the pairs on either side"
            );
            let probes = gindex.probes(&engine, &queries, n_probes).unwrap();
            let found = gindex
                .search(&engine, &queries, k, n_probes, &Filter::None)
                .unwrap();
            let ctx = format!("{dtype:?} {n_probes} probes, {} pairs", rows * n_probes);
            assert_matches_cpu(
                &index,
                &base,
                &queries,
                &probes,
                n_probes,
                &Filter::None,
                &found,
                &ctx,
            );
            checked += 1;
        }
    }
    println!("checked {checked} list-major batches, counted in the selection or apart");
}

#[test]
#[ignore = "needs a GPU"]
fn device_resident_search_equals_the_host_search_in_every_type() {
    let engine = engine();
    let s = seed();
    let gpu = engine.gpu();
    for dtype in DType::ALL {
        let base = synthetic(30_000, 128, 50, dtype, s);
        let queries = synthetic(3_000, 128, 50, dtype, s ^ 7);
        let index = ltokit_ivf::build::build(
            &engine,
            &base,
            Metric::L2,
            &KMeansParams {
                n_lists: 100,
                iters: 8,
                train_fraction: 0.5,
                seed: s,
            },
        )
        .unwrap();
        let gindex = GpuIndex::upload(&engine, &index).unwrap();
        let k = 10;
        // Each scan path in turn: auto could take per-query for one call and list-major
        // for the next (once its kernel has loaded in the background), and the two sum
        // products in different orders.
        let q = gpu.upload(&queries.bytes).unwrap();
        let mut ids = gpu.alloc::<i64>(queries.rows * k).unwrap();
        let mut dist = gpu.alloc::<f32>(queries.rows * k).unwrap();
        let mut host = None;
        for path in [ScanPath::PerQuery, ScanPath::ListMajor] {
            gindex.set_scan_path(path);
            let host_path = gindex
                .search(&engine, &queries, k, 20, &Filter::None)
                .unwrap();
            // The same queries on the device in their own type, results left there; poisoned
            // outputs, so that anything not written shows.
            gpu.upload_into(&vec![i64::MIN; queries.rows * k], &mut ids)
                .unwrap();
            gpu.upload_into(&vec![f32::NAN; queries.rows * k], &mut dist)
                .unwrap();
            gindex
                .search_device_bytes(
                    &engine,
                    &q.slice(0..queries.bytes.len()),
                    k,
                    20,
                    &Filter::None,
                    &mut ids.slice_mut(0..queries.rows * k),
                    &mut dist.slice_mut(0..queries.rows * k),
                )
                .unwrap();
            let dev_dist = gpu.download(&dist).unwrap();
            let ctx = format!("{dtype:?} {}", path.name());
            assert_eq!(dev_dist, host_path.distances, "{ctx}");
            assert_same_up_to_ties(
                &gpu.download(&ids).unwrap(),
                &host_path.ids,
                &dev_dist,
                k,
                &ctx,
            );
            host = Some(host_path);
        }
        let host = host.unwrap();
        // Recall against exact search in the same type.
        let flat = DeviceLists::chunked(&engine, &base, EXACT_CHUNK).unwrap();
        let truth = engine
            .exact(&flat, Metric::L2, &Filter::None, &queries, k)
            .unwrap();
        let recall = ltokit_ivf::reference::recall(&host.rows(), &truth.rows(), k);
        println!(
            "{dtype:?}: device-resident = host results; recall@10 at 20 of 100 probes {recall:.4}"
        );
        assert!(recall > 0.8, "{dtype:?}: {recall}");
        // Output buffers too small, queries of another type: errors before any launch.
        let mut small = gpu.alloc::<i64>(k).unwrap();
        let err = gindex
            .search_device_bytes(
                &engine,
                &q.slice(0..queries.bytes.len()),
                k,
                20,
                &Filter::None,
                &mut small.slice_mut(0..k),
                &mut dist.slice_mut(0..queries.rows * k),
            )
            .unwrap_err();
        assert!(err.to_string().contains("output buffers"), "{err}");
        if dtype != DType::F32 {
            let floats = gpu.upload(&vec![0f32; 128]).unwrap();
            let err = gindex
                .search_device(
                    &engine,
                    &floats.slice(0..128),
                    k,
                    20,
                    &Filter::None,
                    &mut ids.slice_mut(0..k),
                    &mut dist.slice_mut(0..k),
                )
                .unwrap_err();
            assert!(err.to_string().contains("queries of F32"), "{err}");
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn a_non_finite_query_is_named() {
    let engine = engine();
    let base = synthetic(5_000, 32, 10, DType::F32, 5);
    let index = ltokit_ivf::build::build(
        &engine,
        &base,
        Metric::L2,
        &KMeansParams {
            n_lists: 16,
            iters: 4,
            train_fraction: 0.5,
            seed: 5,
        },
    )
    .unwrap();
    let gindex = GpuIndex::upload(&engine, &index).unwrap();
    let mut values = synthetic(40, 32, 10, DType::F32, 6).to_f32();
    values[17 * 32 + 3] = f32::NAN;
    let queries = Matrix::from_f32(40, 32, &values).unwrap();
    let err = gindex
        .search(&engine, &queries, 5, 4, &Filter::None)
        .unwrap_err();
    assert!(err.to_string().contains("query 17 has a NaN"), "{err}");
    // The next search with clean queries works.
    values[17 * 32 + 3] = 0.0;
    let clean = Matrix::from_f32(40, 32, &values).unwrap();
    gindex.search(&engine, &clean, 5, 4, &Filter::None).unwrap();
}

#[test]
#[ignore = "needs a GPU"]
fn a_non_finite_value_past_the_first_batch_or_part_is_named_by_its_own_index() {
    // A search cuts its queries into batches of at most 65,535 and the score-matrix
    // coarse search cuts a batch (here: the build's assignment) into parts of
    // 2^26 / n_lists rows (65,536 for 1,024 lists); the kernels report a bad value
    // relative to their launch, so each must be told where its launch starts.
    let engine = engine();
    let s = seed();
    let dim = 8;
    let rows = 70_000;
    let mut values = synthetic(rows, dim, 20, DType::F32, s).to_f32();
    let params = KMeansParams {
        n_lists: 1024,
        iters: 2,
        train_fraction: 0.1,
        seed: s,
    };
    // Row 69,999 is not in the training set (every 10th row from 0), only in the
    // assignment's second part.
    let bad_row = rows - 1;
    values[bad_row * dim + 5] = f32::NAN;
    let base = Matrix::from_f32(rows, dim, &values).unwrap();
    let err = ltokit_ivf::build::build(&engine, &base, Metric::L2, &params).unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("vector {bad_row} has a NaN")),
        "{err}"
    );
    values[bad_row * dim + 5] = 0.5;
    let base = Matrix::from_f32(rows, dim, &values).unwrap();
    let index = ltokit_ivf::build::build(&engine, &base, Metric::L2, &params).unwrap();
    let gindex = GpuIndex::upload(&engine, &index).unwrap();
    // 65,535 + 100 queries: the second batch (100) takes the fused coarse kernel.
    let nq = 65_535 + 100;
    let mut queries = synthetic(nq, dim, 20, DType::F32, s ^ 9).to_f32();
    for bad in [65_535 + 50, 1_000] {
        queries[bad * dim + 2] = f32::INFINITY;
        let q = Matrix::from_f32(nq, dim, &queries).unwrap();
        assert_search_names_query(&engine, &gindex, &q, bad);
        queries[bad * dim + 2] = 0.0;
    }
    println!("non-finite values past the first batch and part named by their own index (seed {s})");
}

/// A search of `queries` (k 10, 7 probes) fails, naming query `bad` as non-finite.
fn assert_search_names_query(engine: &IvfGpu, gindex: &GpuIndex, queries: &Matrix, bad: usize) {
    let err = gindex
        .search(engine, queries, 10, 7, &Filter::None)
        .unwrap_err();
    assert!(
        err.to_string().contains(&format!("query {bad} has a NaN")),
        "{err}"
    );
}

#[test]
#[ignore = "needs a GPU"]
fn large_batches_score_every_centre_and_find_the_best_lists() {
    // A batch past MATRIX_MIN_QUERIES takes the score matrix and the separate selection:
    // partial tiles of queries (not a multiple of 32 or 64), centres (601) and dimensions
    // (40 and 37: not a multiple of 32; 37 not of 4, which the tensor-core kernels load
    // value by value; 136: five 32-dimension chunks of the f16 kernel, the last partial),
    // in every query type, every coarse metric and both multiplications of the matrix
    // (tensor cores: 3xTF32 for f32, 2xTF32 for the others at this batch size; CUDA
    // cores). Larger batches of f16 and 8-bit queries take the split centres' score matrix
    // (the next test).
    use ltokit_ivf::gpu::coarse::MATRIX_MIN_QUERIES;
    let (engine, s, mut rng) = engine_and_seed();
    let nq = MATRIX_MIN_QUERIES + 452;
    let mut matrices = Vec::new();
    for arith in TileArith::ALL {
        engine.set_tile_arith(arith);
        matrices.push(engine.coarse_matrix_arith());
        for (dtype, dim) in [
            (DType::F32, 40),
            (DType::U8, 40),
            (DType::F32, 37),
            (DType::F16, 37),
            (DType::I8, 136),
        ] {
            let base = synthetic(8_000, dim, 40, dtype, s);
            for metric in [Metric::L2, Metric::Ip, Metric::Cosine] {
                let (index, gindex) = upload_with_empty_list(&engine, &base, metric, 600, s);
                let queries = synthetic(nq, dim, 40, dtype, rng.next_u64());
                let ctx = format!("{dtype:?} × {dim} nq {nq} {arith:?} (seed {s})");
                assert_probes_match_cpu(&engine, &index, &gindex, &queries, &ctx);
            }
        }
    }
    // Rows of at most 256 centres (200 lists and 255, each with the empty one) at 1 to 8
    // probes take the short-row selection (each lane sorts its eight centres); 9 and 16
    // probes the general one.
    for (dtype, dim) in [(DType::U8, 40), (DType::F32, 37)] {
        let base = synthetic(8_000, dim, 40, dtype, s ^ 11);
        for (n_lists, metric) in [(200, Metric::L2), (255, Metric::Ip)] {
            let (index, gindex) = upload_with_empty_list(&engine, &base, metric, n_lists, s);
            let queries = synthetic(nq, dim, 40, dtype, rng.next_u64());
            let qf = queries.to_f32();
            for n_probes in [1usize, 2, 3, 5, 8, 9, 16] {
                let probes = gindex.probes(&engine, &queries, n_probes).unwrap();
                let ctx =
                    format!("{dtype:?} × {dim}, {n_lists} lists, n_probes {n_probes} (seed {s})");
                assert_best_lists(&index, &qf, &probes, n_probes, &ctx);
            }
        }
    }
    // A non-finite value in a query past the first tiles is named.
    let base = synthetic(8_000, 40, 40, DType::F32, s);
    let (_, gindex) = upload_with_empty_list(&engine, &base, Metric::L2, 600, s);
    let mut values = synthetic(nq, 40, 40, DType::F32, s ^ 3).to_f32();
    let bad = nq - 37;
    values[bad * 40 + 39] = f32::INFINITY;
    let queries = Matrix::from_f32(nq, 40, &values).unwrap();
    assert_search_names_query(&engine, &gindex, &queries, bad);
    println!(
        "score-matrix coarse search ({matrices:?}): 5 type × dimension shapes × 3 metrics × 6 probe counts and short rows (201 and 256 centres) at 1 to 16 probes match the CPU; a non-finite f32 query named (seed {s})"
    );
}

#[test]
#[ignore = "needs a GPU"]
fn large_batches_of_f16_and_8_bit_queries_take_the_score_matrix_of_the_split_centres() {
    // Batches of f16 and 8-bit queries that keep two blocks an SM busy take the f16 score
    // matrix against the centres' f16 halves (kernels/coarse_h16.cu) or, for 8-bit
    // queries, the integer one against their limbs (kernels/coarse_imma.cu): 64-query
    // tiles at 2,000 queries and 128 at 4,000 (601 centres: a partial centre tile). The
    // integer form's blocks go through several tiles each where a batch has more tiles
    // than the SMs hold blocks (kernels/coarse_tile.cuh `ChTiles`): 4,000 8-bit queries
    // are 630 tiles of 64 for 396 blocks on an H100.
    let (engine, s, mut rng) = engine_and_seed();
    engine.set_tile_arith(TileArith::Mma);
    let mut split_matrix_searches = 0;
    // f16 × 136: rows of whole 8-byte groups, copied as they are with cp.async (three
    // stages in the 128-query tiles; five chunks, the last partial); f16 × 37 goes through
    // registers value by value. u8 × 40 takes the integer score matrix's cp.async copy of
    // whole 8-byte groups; u8 × 37 its copy through registers (rows not 8-byte aligned).
    for (dtype, dim) in [
        (DType::U8, 40),
        (DType::U8, 37),
        (DType::F16, 37),
        (DType::F16, 136),
        (DType::I8, 136),
    ] {
        let base = synthetic(8_000, dim, 40, dtype, s);
        for metric in [Metric::L2, Metric::Ip, Metric::Cosine] {
            let (index, gindex) = upload_with_empty_list(&engine, &base, metric, 600, s);
            for nq in [2_000, 4_000] {
                let queries = synthetic(nq, dim, 40, dtype, rng.next_u64());
                let ctx =
                    format!("{dtype:?} × {dim} nq {nq} split centres' score matrix (seed {s})");
                assert_probes_match_cpu(&engine, &index, &gindex, &queries, &ctx);
                split_matrix_searches += 1;
            }
        }
    }
    // And an infinite f16 value past the first batch part, found by the f16 score matrix
    // in the stage it copied (4,000 queries: 128-query tiles; dimension 64: whole groups of
    // four, copied with cp.async).
    let base = synthetic(8_000, 64, 40, DType::F16, s);
    let (_, gindex) = upload_with_empty_list(&engine, &base, Metric::L2, 600, s);
    let (nq, bad) = (4_000, 3_333);
    let mut values = synthetic(nq, 64, 40, DType::F32, s ^ 5).to_f32();
    values[bad * 64 + 62] = f32::INFINITY;
    let bytes: Vec<u8> = values
        .iter()
        .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
        .collect();
    let queries = Matrix::new(DType::F16, nq, 64, bytes).unwrap();
    assert_search_names_query(&engine, &gindex, &queries, bad);
    println!(
        "{split_matrix_searches} searches by the split centres' score matrices (64- and 128-query tiles) match the CPU; a non-finite f16 query named (seed {s})"
    );
}

#[test]
#[ignore = "needs a GPU"]
fn rows_with_more_tied_centres_than_the_ranking_holds_select_the_best_lists() {
    // The selection of rows held in registers ranks the scores under its bound where
    // there are at most 64 (kernels/coarse_select.cu `select_ranked`), else offers them.
    // 300 copies of one centre tie, so that queries near it have hundreds of scores under
    // the bound; queries elsewhere have few. Batch 1,000: the score matrix.
    let (engine, s, mut rng) = engine_and_seed();
    let dim = 24;
    let base = synthetic(6_000, dim, 40, DType::F32, s);
    let mut centers: Vec<f32> = base.to_f32()[..300 * dim].to_vec();
    let tied: Vec<f32> = (0..dim).map(|_| 2.0 * rng.uniform() - 1.0).collect();
    for _ in 0..300 {
        centers.extend_from_slice(&tied);
    }
    let assignment = assign_cpu(&base.to_f32(), &centers, dim);
    let ids: Vec<i64> = (0..base.rows as i64).collect();
    let mut queries = synthetic(1_000, dim, 40, DType::F32, s ^ 13).to_f32();
    for q in queries.chunks_mut(dim).step_by(2) {
        for (v, t) in q.iter_mut().zip(&tied) {
            *v = t + 0.01 * *v;
        }
    }
    let queries = Matrix::from_f32(1_000, dim, &queries).unwrap();
    let qf = queries.to_f32();
    for metric in [Metric::L2, Metric::Ip] {
        let index =
            IvfIndex::from_assignment(metric, &base, &ids, centers.clone(), &assignment).unwrap();
        let gindex = GpuIndex::upload(&engine, &index).unwrap();
        for n_probes in [10usize, 20, 32] {
            let probes = gindex.probes(&engine, &queries, n_probes).unwrap();
            let ctx = format!("600 centres, 300 tied, n_probes {n_probes} (seed {s})");
            assert_best_lists(&index, &qf, &probes, n_probes, &ctx);
        }
    }
    println!("rows with 300 tied centres select the CPU's best lists at 10, 20 and 32 probes, L2 and inner product (seed {s})");
}

#[test]
#[ignore = "needs a GPU"]
fn small_batches_split_the_coarse_search_and_still_find_the_best_lists() {
    // Enough centres (5 tiles of 128) that a batch of a few queries is spread over
    // several blocks, whose partial choices a merge combines.
    let (engine, s, mut rng) = engine_and_seed();
    let base = synthetic(8_000, 32, 40, DType::F32, s);
    for metric in [Metric::L2, Metric::Ip, Metric::Cosine] {
        let (index, gindex) = upload_with_empty_list(&engine, &base, metric, 600, s);
        for nq in [1usize, 3, 9, 100] {
            let queries = synthetic(nq, 32, 40, DType::F32, rng.next_u64());
            let qf = queries.to_f32();
            assert_probes_match_cpu(
                &engine,
                &index,
                &gindex,
                &queries,
                &format!("nq {nq} (seed {s})"),
            );
            // The whole search of a small batch equals the same search inside a large one
            // (both scanned per query: auto would take the list-major scan for the large
            // batch, whose 3xTF32 products may order near-ties differently).
            gindex.set_scan_path(ScanPath::PerQuery);
            let found = gindex
                .search(&engine, &queries, 10, 20, &Filter::None)
                .unwrap();
            let mut big = qf.clone();
            big.extend(synthetic(2_000, 32, 40, DType::F32, s ^ 7).to_f32());
            let big = Matrix::from_f32(nq + 2_000, 32, &big).unwrap();
            let found_big = gindex.search(&engine, &big, 10, 20, &Filter::None).unwrap();
            for qi in 0..nq {
                assert_eq!(
                    found.ids_of(qi),
                    found_big.ids_of(qi),
                    "{metric:?} nq {nq} query {qi}"
                );
            }
        }
    }
    println!(
        "split coarse search: 3 metrics × 4 batch sizes × 4 probe counts match the CPU (seed {s})"
    );
}

#[test]
#[ignore = "needs a GPU"]
fn an_index_built_on_the_device_is_the_host_layout_of_its_assignment() {
    let (engine, s, mut rng) = engine_and_seed();
    // f32 with 16-byte chunks (training rows gathered from the upload), cosine (training
    // rows normalised on the host), f16 with chunks, 8-bit without (20 is no multiple of
    // 16) and with.
    for (dtype, dim, metric) in [
        (DType::F32, 64, Metric::L2),
        (DType::F32, 36, Metric::Cosine),
        (DType::F16, 24, Metric::Ip),
        (DType::I8, 20, Metric::L2),
        (DType::U8, 48, Metric::L2Sqrt),
    ] {
        let ctx = format!("{dtype:?} × {dim} {metric:?} (seed {s})");
        let n = 6_000 + rng.below(500);
        let base = synthetic(n, dim, 30, dtype, rng.next_u64());
        let gpu_base = engine.gpu().upload(&base.bytes).unwrap();
        let params = KMeansParams {
            n_lists: 64 + rng.below(30),
            iters: 6,
            train_fraction: 0.5,
            seed: rng.next_u64(),
        };
        // The training rows gathered on the device are the host's training set.
        let on_device = engine
            .gather_rows_f32(
                &gpu_base.slice(0..base.bytes.len()),
                dtype,
                dim,
                &training_rows(n, &params),
                metric == Metric::Cosine,
            )
            .unwrap();
        let host_train = training_set(&base, &params, metric);
        let device_train = engine.gpu().download(&on_device).unwrap();
        assert_eq!(device_train.len(), host_train.len().max(1), "{ctx}");
        for (i, (d, h)) in device_train.iter().zip(&host_train).enumerate() {
            assert!(
                (d - h).abs() <= 1e-6 * h.abs().max(1.0),
                "{ctx}: training value {i}: device {d}, host {h}"
            );
        }
        let (gindex, times) =
            ltokit_ivf::build::build_on_gpu(&engine, &base, metric, &params).unwrap();
        assert!(times.upload > 0.0 && times.layout > 0.0, "{ctx}: {times:?}");
        let device = gindex.to_host(&engine).unwrap();
        assert_eq!(device.len(), n, "{ctx}");
        assert_eq!(gindex.list_sizes(), device.list_size.as_slice(), "{ctx}");
        // Every row sits in a list whose centre scores as well as the CPU's best…
        let mut assignment = vec![0u32; n];
        for l in 0..device.n_lists() {
            for r in 0..device.list_size[l] as usize {
                let (_, id) = device.row(l, r);
                assignment[id as usize] = l as u32;
            }
        }
        let probes: Vec<i64> = assignment.iter().map(|&l| l as i64).collect();
        assert_best_lists(&device, &base.to_f32(), &probes, 1, &ctx);
        // …and the device layout of those lists is, byte for byte, the host's (each list's
        // rows nearest its centre first, in both).
        let ids: Vec<i64> = (0..n as i64).collect();
        let n_lists = device.n_lists();
        let order =
            ltokit_ivf::build::row_order(&base, &device.centers, &assignment, metric, n_lists)
                .unwrap();
        let host = IvfIndex::from_assignment_order(
            metric,
            &base,
            &ids,
            device.centers.clone(),
            &assignment,
            &order,
        )
        .unwrap();
        assert!(
            device == host,
            "{ctx}: the device layout differs from the host's"
        );
        // Searching it is searching the host index uploaded.
        let queries = synthetic(300, dim, 30, dtype, rng.next_u64());
        gindex.set_scan_path(ScanPath::PerQuery);
        let uploaded = GpuIndex::upload(&engine, &host).unwrap();
        uploaded.set_scan_path(ScanPath::PerQuery);
        let a = gindex
            .search(&engine, &queries, 10, 6, &Filter::None)
            .unwrap();
        let b = uploaded
            .search(&engine, &queries, 10, 6, &Filter::None)
            .unwrap();
        assert_eq!(a.ids, b.ids, "{ctx}");
    }
    println!(
        "device-built indexes of 5 type × metric shapes = host layouts of their assignments; \
         training rows gathered on the device = the host's"
    );
}

#[test]
#[ignore = "needs a GPU"]
fn kernels_linked_ahead_of_the_engine_are_found_in_its_disk_cache() {
    use ltokit::cache::Level;
    use ltokit::Target;
    use ltokit_ivf::gpu::{bundle, IndexShape, LinkAhead};
    keep_the_cuda_cache_in_temp();
    let dir = std::env::temp_dir().join(format!("ltokit-ivf-link-ahead-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = CacheConfig::in_dir(&dir);
    let shape = IndexShape {
        dtype: DType::U8,
        dim: 40,
        metric: Metric::L2,
        n_lists: 16,
    };
    let ahead = LinkAhead::start(&config, 0, shape, None);
    let plans = ahead.plans().to_vec();
    assert!(plans.len() >= 5, "{plans:?}");
    ahead.wait();
    // The engine opened afterwards (its own cache, same directory) finds every one of
    // them on disk under its own keys: the target and linker agree, nothing links again.
    let gpu = Arc::new(Gpu::open(0).unwrap());
    let target = Target::native(gpu.compute_capability());
    let engine = IvfGpu::new(gpu, config).unwrap();
    let bundle = bundle().unwrap();
    for name in &plans {
        let (_, level) = engine
            .cache()
            .cubin(&bundle.plan(name, target).unwrap())
            .unwrap();
        assert_eq!(level, Level::L2, "{name}");
    }
    // And an index of that shape builds and searches from them.
    let base = synthetic(2_000, 40, 16, DType::U8, seed());
    let params = KMeansParams {
        n_lists: 16,
        ..Default::default()
    };
    let (gindex, _) = ltokit_ivf::build::build_on_gpu(&engine, &base, Metric::L2, &params).unwrap();
    let found = gindex.search(&engine, &base, 10, 4, &Filter::None).unwrap();
    assert_eq!(found.ids_of(0).len(), 10);
    println!(
        "linked ahead of the engine and found on its disk: {} plans",
        plans.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
