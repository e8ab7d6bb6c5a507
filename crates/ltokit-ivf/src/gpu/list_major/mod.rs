//! The list-major scan: the batch's (query, probe) pairs grouped by the list they probe,
//! then one block per tile of 16 to 64 pairs of one list, which reads the list once for
//! all of them — a small matrix product per 64-row step (`kernels/lmtile.cu`) instead of
//! one pass over the list per query. It writes the per-query scan's candidate layout (k
//! per pair) and shares its merge. Worth it when many queries probe each list (large
//! batches); [`ScanPath::Auto`] picks it from the batch shape. Tiles skip rows that
//! cannot enter their query's final top k: a per-query bound each tile lowers as its pair
//! fills, which `kernels/lmseed.cu` may first set from the first rows of the query's
//! first probe (`seed`) — or, in batches with many pairs a list, a first phase
//! that scans each query's first probe alone sets from its whole nearest list before the
//! other probes are scanned (`phased`).
//!
//! Here: the phases and the scan's launches. `group`: the pairs grouped by list
//! (kernels/group.cu). `seed`: the bounds' seed (kernels/lmseed.cu). `path`: which scan a
//! search runs
//! (the thresholds `Auto` uses). `tile`: the tile's arithmetic, its queries per tile and
//! the shared memory a block needs.

use ltokit::launch::{
    CudaSlice, CudaViewMut, DeviceElem, Elem, Extent, Kernel, Launch, LaunchConfig, Param,
};
use ltokit::{Error, Result};

use super::merge::merge_kernel;
use super::profile::Stage;
use super::scan::{scan_signature, ScanBatch};
use super::workspace::Buffer;
use super::{capacity, vec_name, DeviceLists, IvfGpu, KernelSpec};
use crate::metric::{Filter, Metric};

mod group;
mod path;
mod seed;
mod tile;

use group::{FirstProbes, Grid, GroupKernels, Grouped, Grouping, TileSizes};
pub(crate) use path::ScanPathCell;
pub use path::{
    min_pairs_per_list, ScanPath, MIN_PAIRS_PER_LIST_8BIT, MIN_PAIRS_PER_LIST_F16,
    MIN_PAIRS_PER_LIST_F32, SHORT_LIST_FACTOR,
};
use seed::{seed_kernel, SeedForm, SeedKernel, SEED_BY_LIST_QUERIES};
pub use seed::{SEED_BY_LIST_MIN_QUERIES, SEED_MIN_ROWS, SEED_ONE_WARP_MIN_QUERIES};
pub(crate) use tile::SharedMemory;
use tile::{block_layout, BlockLayout, LmKernel, LM_THREADS};
pub use tile::{max_queries_per_tile, preferred_queries_per_tile, shared_bytes, LmTile, TileArith};

/// `ivf_lmscan`'s parameters (kernels/lmscan.cu).
const LMSCAN_SIGNATURE: &[Param] = scan_signature!(
    [
        Param::Ptr,                            // queries, in the lists' type
        Param::I32,                            // dim
        Param::I32,                            // veclen
        Param::I32,                            // n_probes
        Param::I32,                            // queries per tile
        Param::I32,                            // step buffers
        Param::I32,                            // work area offset (BlockLayout)
        Param::Buffer(Elem::I32, Extent::Any), // pairs grouped by list
        Param::Buffer(Elem::I32, Extent::Any), // the grid's tile records: list, first pair, pairs, 0
        Param::Buffer(Elem::U32, Extent::Any), // the lists' row norms
    ],
    [
        Param::BufferMut(Elem::U32, Extent::Any), // per-query bounds (seeded)
        Param::BufferMut(Elem::F32, Extent::Any), // candidate distances
        Param::BufferMut(Elem::I64, Extent::Any), // candidate ids
    ]
);

/// The kernels of one list-major scan shape.
pub(crate) struct ListMajorKernels {
    /// `ivf_lmscan`.
    pub scan: KernelSpec,
    /// The grouping of (query, probe) pairs by list: count, offsets, fill.
    pub group: [KernelSpec; 3],
    /// The merge of each query's candidates.
    pub merge: KernelSpec,
    /// `ivf_lmseed`, where the scan seeds its queries' bounds ([`seed_kernel`]).
    pub seed: Option<SeedKernel>,
    /// Which scan kernel `scan` is (its blocks an SM decide the block layout).
    pub kernel: LmKernel,
    /// Whether the batch scans in two phases ([`phased`]).
    pub two_phases: bool,
}

impl ListMajorKernels {
    /// All of them, to load or link.
    pub fn into_vec(self) -> Vec<KernelSpec> {
        let mut all = vec![self.scan];
        all.extend(self.group);
        all.push(self.merge);
        all.extend(self.seed.map(|seed| seed.spec));
        all
    }
}

/// The kernels of a list-major scan of `batch` = (queries, probes): lmscan, the three
/// grouping kernels, merge, and where it pays the seed of the queries' bounds. The scan is
/// allowed the shared memory of its largest block layout, up to the device's limit per
/// block (each launch uses what its tile needs), and is the register-capped kernel where
/// more blocks an SM pay ([`LmKernel::choose`]).
pub(crate) fn list_major_kernels(
    lists: &DeviceLists,
    tile: LmTile,
    metric: Metric,
    filter: &Filter,
    k: usize,
    (batch, choice): ((usize, usize), ListMajorChoice),
    shared: SharedMemory,
) -> Result<ListMajorKernels> {
    let (nb, n_probes) = batch;
    let cap = capacity(k)?;
    let kernel = LmKernel::choose(tile, lists.dim, k, shared)?;
    let two_phases = phased(choice.phases, n_probes, nb * n_probes, lists.n_lists);
    let seed = seed_kernel(
        lists,
        (tile, metric, filter),
        k,
        batch,
        (two_phases, choice.seed),
    );
    Ok(ListMajorKernels {
        scan: KernelSpec {
            plan: format!(
                "lmscan_{}c{cap}_{}{}{}_{}_{}",
                kernel.plan_prefix(),
                tile.name(),
                kernel.tile_suffix(),
                kernel.dim_suffix(lists.dim, tile, cap),
                metric.name(),
                filter.name()
            ),
            signature: LMSCAN_SIGNATURE,
            shared: largest_block(tile, lists.dim, k, kernel, shared)?,
        },
        group: group::group_kernels(),
        merge: merge_kernel(metric, k, nb, n_probes * k)?,
        seed,
        kernel,
        two_phases,
    })
}

/// The most shared memory a list-major block of this shape takes, over the tile sizes it
/// may run with (a smaller tile may take a second step buffer a larger one has no room
/// for), within the device's limit per block.
fn largest_block(
    tile: LmTile,
    dim: usize,
    k: usize,
    kernel: LmKernel,
    shared: SharedMemory,
) -> Result<usize> {
    let mut largest = 0;
    for qt in tile::queries_per_tile_choices(capacity(k)?) {
        largest = largest.max(block_layout(tile, dim, k, qt, kernel, shared)?.shared_bytes);
    }
    Ok(largest.min(shared.per_block))
}

/// Device buffers of the list-major scan, reused across calls.
#[derive(Default)]
pub(crate) struct PairGroups {
    /// The pairs grouped by list; its counters are also the coarse selection's to count
    /// into ([`Grouping::selection_counters`]).
    pub(crate) grouping: Grouping,
    /// Per query of the batch: the best k-th score any of its pairs reached (lmscan.cu).
    bound: Buffer<u32>,
}

/// Whether a list-major batch scans in two phases (the queries' first probes alone, then the
/// rest): by its shape (`phased`), always, or never.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbePhases {
    /// Two phases where the batch has at least [`MIN_PAIRS_PER_LIST_PHASED`] pairs a list.
    Auto,
    /// Two phases wherever a query has more than one probe.
    Always,
    /// One phase.
    Never,
}

impl ProbePhases {
    /// Every choice, in CLI order.
    pub const ALL: [ProbePhases; 3] = [ProbePhases::Auto, ProbePhases::Always, ProbePhases::Never];

    /// The CLI name: auto, always or never.
    pub fn name(self) -> &'static str {
        match self {
            ProbePhases::Auto => "auto",
            ProbePhases::Always => "always",
            ProbePhases::Never => "never",
        }
    }

    /// The choice named `name` ([`ProbePhases::name`]).
    pub fn parse(name: &str) -> Result<ProbePhases> {
        named(
            &ProbePhases::ALL,
            ProbePhases::name,
            name,
            "list-major phase choice",
        )
    }
}

/// How a list-major batch's bounds are seeded where it seeds them (kernels/lmseed.cu):
/// by list where the batch has several queries a list ([`SEED_BY_LIST_MIN_QUERIES`]), or
/// either way, to compare or to test both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedBy {
    /// By list where the batch's first probes are several a list, else by query.
    Auto,
    /// Each query's warps read its rows from global memory.
    Query,
    /// A block a list's first probes, wherever its rows fit the block's shared memory.
    List,
}

/// The engine's list-major settings that decide a batch's launches besides its shape
/// ([`IvfGpu::set_probe_phases`], [`IvfGpu::set_seed_by`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListMajorChoice {
    pub phases: ProbePhases,
    pub seed: SeedBy,
}

impl Default for ListMajorChoice {
    fn default() -> Self {
        ListMajorChoice {
            phases: ProbePhases::Auto,
            seed: SeedBy::Auto,
        }
    }
}

/// The choice of `all` whose `name_of` is `name`, or an error naming `what` and every
/// choice ("use a, b or c").
fn named<T: Copy>(all: &[T], name_of: fn(T) -> &'static str, name: &str, what: &str) -> Result<T> {
    all.iter()
        .copied()
        .find(|&c| name_of(c) == name)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|&c| name_of(c)).collect();
            let choices = match names.split_last() {
                Some((last, [])) => (*last).to_string(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            };
            Error::InvalidArgument(format!("unknown {what} {name:?}; use {choices}"))
        })
}

/// Pairs a probed list must have on average for a list-major batch to scan in two phases
/// (`phased`). The second phase starts from each query's exact k-th over its whole
/// nearest list and keeps far fewer rows (lowdim-i8 × 10: its scan 391 → 313 µs for 9/10
/// of the pairs), but the first phase's tiles are the lists' first probes alone — mostly
/// partial — so each list takes about one tile more. Measured on the H200 (session 19,
/// `docs/gpu-runs/2026-12-02-s19/2-lean-phase-ab/`, three rounds, device QPS of two
/// phases without the seed against one phase, both with the lean step): at 390 or more
/// pairs a list, images × 10 / × 20 +5.6 / +8.2 %, wide-f16 × 20 / × 50 +2.4 / +3.7 %,
/// wide-i8 +1.7 / +3.6 %, i8 × 50 +1.5 %, f16 and f32 × 50 +0.4 / +0.7 %; at 195, f16 and
/// f32 × 20 −3.1 / −4.0 %, i8 × 20 −1.4 %, images × 5 −2.3 % (wide-i8 × 10 +1.9 %); at 98
/// or fewer, −8 to −28 %, and −17 to −36 % at every batch of 1,000.
pub const MIN_PAIRS_PER_LIST_PHASED: usize = 300;

/// Whether a batch of `n_pairs` pairs over `n_lists` lists scans in two phases under
/// `choice`.
pub(crate) fn phased(choice: ProbePhases, n_probes: usize, n_pairs: usize, n_lists: usize) -> bool {
    n_probes > 1
        && match choice {
            ProbePhases::Auto => n_pairs >= MIN_PAIRS_PER_LIST_PHASED * n_lists.max(1),
            ProbePhases::Always => true,
            ProbePhases::Never => false,
        }
}

impl IvfGpu {
    /// The list-major scan of one batch and its merge: candidates into `cand` (at least
    /// `nb × n_probes × k` each), each query's top `k` into `out` (at least `nb × k`).
    pub(crate) fn list_major_batch<T: DeviceElem>(
        &self,
        b: &ScanBatch<'_, T>,
        groups: &mut PairGroups,
        counted: bool,
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
        let shared = self.shared_limit()?;
        let ListMajorKernels {
            scan,
            group: [count, offsets, fill],
            seed,
            kernel,
            two_phases,
            ..
        } = list_major_kernels(
            lists,
            tile,
            b.metric,
            b.filter,
            b.k,
            ((b.nb, b.n_probes), self.list_major_choice()),
            shared,
        )?;
        let scan_k = self
            .kernels
            .kernel(&scan.plan, scan.signature, scan.shared)?;
        let group_k = GroupKernels {
            count: self.kernels.kernel(&count.plan, count.signature, 0)?,
            offsets: self.kernels.kernel(&offsets.plan, offsets.signature, 0)?,
            fill: self.kernels.kernel(&fill.plan, fill.signature, 0)?,
        };
        let gpu = &self.gpu;
        let bound = groups.bound.at_least(gpu, b.nb)?;
        let seed = match seed {
            Some(seed) => {
                let spec = &seed.spec;
                Some((
                    self.kernels
                        .kernel(&spec.plan, spec.signature, spec.shared)?,
                    seed,
                ))
            }
            None => None,
        };
        // The seed by list runs once the pairs are grouped, the other before.
        match &seed {
            Some((
                seed_k,
                SeedKernel {
                    rows,
                    form: SeedForm::PerQuery(block),
                    ..
                },
            )) => self.seed_bounds_per_query(seed_k, (*rows, *block), b, bound)?,
            Some(_) => {}
            None => gpu.clear(bound)?,
        }
        // Two phases: the first probes alone, so that the rest start from bounds that are
        // each query's exact k-th over its whole nearest list (the first phase's scan lowers
        // them as it goes), not from the seed's first rows or from nothing. Every pair is
        // scanned once and writes its own candidates, so the merge is the same either way.
        let tiles_for = |n_pairs| {
            self.list_major_tile(lists.dtype, lists.dim, b.k, n_pairs, lists.n_lists)?
                .map_err(Error::InvalidArgument)
        };
        let sizes = if two_phases {
            TileSizes {
                first: FirstProbes::Phase(tiles_for(b.nb)?),
                rest: tiles_for(b.nb * (b.n_probes - 1))?,
            }
        } else {
            let by_list = matches!(
                &seed,
                Some((
                    _,
                    SeedKernel {
                        form: SeedForm::ByList { .. },
                        ..
                    }
                ))
            );
            TileSizes {
                first: if by_list {
                    FirstProbes::Seed(SEED_BY_LIST_QUERIES)
                } else {
                    FirstProbes::WithTheRest
                },
                rest: tiles_for(n_pairs)?,
            }
        };
        let g = self.group_pairs(&group_k, &mut groups.grouping, b, sizes, counted)?;
        self.profiler.lap(gpu, Stage::Group)?;
        if let (Some((seed_k, seed)), Some(grid)) = (&seed, g.grids.seed) {
            if let SeedForm::ByList { tile } = seed.form {
                self.seed_bounds_by_list(seed_k, (tile, seed.rows), b, (&g, grid), bound)?;
            }
        }
        let (cand_d, cand_i) = cand;
        for &grid in &g.grids.scans {
            let layout = block_layout(tile, lists.dim, b.k, grid.qt, kernel, shared)?;
            self.launch_scan(&scan_k, b, (&g, grid), layout, bound, (cand_d, cand_i))?;
            self.profiler.lap(gpu, Stage::Scan)?;
        }
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

    /// Launches `ivf_lmscan` (`scan_k`) over the tiles of `grid` that grouping `g` made of
    /// batch `b`'s pairs, blocks of `layout`.
    fn launch_scan<T: DeviceElem>(
        &self,
        scan_k: &Kernel,
        b: &ScanBatch<'_, T>,
        (g, grid): (&Grouped<'_>, Grid),
        layout: BlockLayout,
        bound: &mut CudaSlice<u32>,
        (cand_d, cand_i): (&mut CudaSlice<f32>, &mut CudaSlice<i64>),
    ) -> Result<()> {
        let lists = b.lists;
        let cfg = LaunchConfig {
            grid_dim: (grid.tiles as u32, 1, 1),
            block_dim: (LM_THREADS, 1, 1),
            shared_mem_bytes: layout.shared_bytes as u32,
        };
        let (dim_i, veclen_i, probes_i, qt_i) = (
            lists.dim as i32,
            lists.veclen as i32,
            b.n_probes as i32,
            grid.qt as i32,
        );
        let records = g.records(grid);
        let (step_buffers_i, work_offset_i) =
            (layout.step_buffers as i32, layout.work_offset as i32);
        let scalars = b.list_scalars();
        let launch = Launch::on(self.gpu.stream(), scan_k, cfg)
            .view(&b.queries)
            .scalar(&dim_i)
            .scalar(&veclen_i)
            .scalar(&probes_i)
            .scalar(&qt_i)
            .scalar(&step_buffers_i)
            .scalar(&work_offset_i)
            .buffer(g.pairs)
            .view(&records)
            .buffer(&lists.row_norms);
        let launch = b
            .list_and_filter_args(launch, &scalars)
            .buffer_mut(bound)
            .buffer_mut(cand_d)
            .buffer_mut(cand_i);
        // SAFETY: blocks whose record holds no pair return at once; a tile reads its
        // record's pairs (built by group_pairs from this batch's probes: pair numbers below
        // nb × n_probes, within its list's range), their queries (pair / n_probes < nb,
        // checked by check_buffers), its list's whole 32-row groups (lists are padded to 32
        // rows) and their row norms (one a padded row), the filter within its words, and
        // writes k candidates at pair × k < nb × n_probes × k, within cand (checked), and
        // the bounds of its queries (< nb: the caller's buffer holds nb).
        unsafe { launch.run() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_scan_in_two_phases_from_300_pairs_a_list_with_more_than_one_probe() {
        let auto = ProbePhases::Auto;
        // Images × 10 at 10,000 queries: 390 pairs a list; × 5: 195.
        assert!(phased(auto, 10, 100_000, 256));
        assert!(!phased(auto, 5, 50_000, 256));
        assert!(phased(auto, 2, 300 * 256, 256));
        assert!(!phased(auto, 2, 300 * 256 - 1, 256));
        // One probe has nothing to scan after its first; forcing does not change that.
        assert!(!phased(ProbePhases::Always, 1, 1_000_000, 2));
        assert!(phased(ProbePhases::Always, 2, 2, 1000));
        assert!(!phased(ProbePhases::Never, 50, 1_000_000, 1));
    }

    #[test]
    fn phase_choices_parse_from_their_names_and_nothing_else() {
        for p in ProbePhases::ALL {
            assert_eq!(ProbePhases::parse(p.name()).unwrap(), p);
        }
        let err = ProbePhases::parse("twice").unwrap_err().to_string();
        assert!(
            err.contains("\"twice\"") && err.contains("auto, always or never"),
            "{err}"
        );
    }
}
