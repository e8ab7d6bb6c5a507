//! The grouping of a list-major batch's (query, probe slot) pairs by the list they probe
//! (kernels/group.cu): counts, offsets and tile records, fill — its kernels, its device
//! buffers, and the launches. One grouping serves both phases of a two-phase scan.

use std::sync::Arc;

use ltokit::launch::{
    CudaSlice, CudaView, DeviceElem, Elem, Extent, Gpu, Kernel, Launch, LaunchConfig, Param,
};
use ltokit::Result;

use crate::gpu::scan::ScanBatch;
use crate::gpu::workspace::Buffer;
use crate::gpu::{IvfGpu, KernelSpec};

/// `ivf_group_count` and `ivf_group_fill`: probes, pair count, n_probes, n_lists, the
/// pairs a block counts in shared memory (0: none, [`group_shared_pairs`]), counts or
/// cursors, and for the fill the pairs.
macro_rules! group_pairs_signature {
    ($($out:expr),+) => {
        &[
            Param::Buffer(Elem::I64, Extent::Any),
            Param::I32, // pairs
            Param::I32, // n_probes
            Param::I32, // n_lists
            Param::I32, // pairs a block in shared memory
            $($out),+
        ]
    };
}
const GROUP_COUNT_SIGNATURE: &[Param] =
    group_pairs_signature!(Param::BufferMut(Elem::I32, Extent::Any));
const GROUP_FILL_SIGNATURE: &[Param] = group_pairs_signature!(
    Param::BufferMut(Elem::I32, Extent::Any),
    Param::BufferMut(Elem::I32, Extent::Any)
);

/// `ivf_group_offsets`: counts, n_lists, the first probes' queries per tile (0: not tiled
/// apart), whether the other tiles leave them out, the other tiles' queries per tile, the
/// lists longest first, the tile records, the first probes' grid and the other one,
/// cursors.
const GROUP_OFFSETS_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::I32, Extent::Any),
    Param::I32,
    Param::I32,
    Param::I32,
    Param::I32,
    Param::Buffer(Elem::I32, Extent::Any),
    Param::BufferMut(Elem::I32, Extent::Any),
    Param::I32,
    Param::I32,
    Param::BufferMut(Elem::I32, Extent::Any),
];

/// Threads per block of the grouping's element-wise kernels.
const GROUP_THREADS: usize = 256;

/// Pairs a thread of the grouping's shared-memory form takes (group.cu
/// `GROUP_PAIRS_PER_THREAD`).
const GROUP_PAIRS_PER_THREAD: usize = 4;

/// Lists up to which the grouping may count each block's pairs in shared memory (2 ints
/// a list), one global atomic a list a block, instead of one a pair.
const GROUP_SHARED_MAX_LISTS: usize = 1024;

/// Pairs from which the grouping takes its shared-memory form: 32 blocks of it.
const GROUP_SHARED_MIN_PAIRS: usize = 32 * GROUP_PAIRS_PER_THREAD * GROUP_THREADS;

/// The pairs a block of the grouping's count and fill takes in their shared-memory form,
/// or 0 for the form of a thread a pair (group.cu), for a batch of `n_pairs` pairs over
/// `n_lists` lists. Measured on the H200 (session 20, `docs/gpu-runs/2026-12-02-s20/
/// 3-select-group-ab/`, the shared form wherever n_lists ≤ 1,024, same call, three
/// rounds): images × 10's second-phase count 12.8 → 5.1 µs and fill 22.2 → 7.0 µs
/// (ncu), lowdim-i8 × 10's 9.5 → 5.6 and 11.5 → 9.9; device QPS at batch 10,000 +2.5 %
/// on average (images × 20 +7.2 %, wide-i8 × 50 +6.5 %, lowdim-i8 × 50 +3.7 %; −1.0 to
/// +7.2 %), but −0.5 % at batch 1,000, where 10,000 to 20,000 pairs made 10 to 20 blocks
/// (lowdim-i8 × 10 / × 20 −2.4 / −2.0 %, f16 −2.9 / −1.7 %): hence the floor of
/// [`GROUP_SHARED_MIN_PAIRS`] (above it at batch 1,000, the 50,000 pairs of 50 probes:
/// −0.0 to +2.8 %).
fn group_shared_pairs(n_lists: usize, n_pairs: usize) -> usize {
    if n_lists <= GROUP_SHARED_MAX_LISTS && n_pairs >= GROUP_SHARED_MIN_PAIRS {
        GROUP_PAIRS_PER_THREAD * GROUP_THREADS
    } else {
        0
    }
}
/// The grouping's three kernels' plans: count, offsets, fill.
pub(super) fn group_kernels() -> [KernelSpec; 3] {
    let spec = |plan: &str, signature| KernelSpec {
        plan: plan.into(),
        signature,
        shared: 0,
    };
    [
        spec("group_count", GROUP_COUNT_SIGNATURE),
        spec("group_offsets", GROUP_OFFSETS_SIGNATURE),
        spec("group_fill", GROUP_FILL_SIGNATURE),
    ]
}

/// Device buffers of one grouping of pairs by list (group.cu).
#[derive(Default)]
pub(crate) struct Grouping {
    /// Pairs per list, then first probes per list (2 × n_lists).
    counts: Buffer<i32>,
    /// A record a tile of the scan's grids: list, first pair, pairs, 0 (group.cu).
    tile_info: Buffer<i32>,
    /// The others' cursors per list, then the first probes' (2 × n_lists).
    cursor: Buffer<i32>,
    pairs: Buffer<i32>,
}

impl Grouping {
    /// The pair counters (2 × `n_lists`; the coarse selection zeroes them where it counts:
    /// `IvfGpu::coarse`) for the coarse selection to count a batch of `n_pairs` pairs into
    /// (kernels/coarse_select.cu `select_put`), where the grouping would count them with a
    /// thread a pair; `None` where it counts them in shared memory
    /// ([`group_shared_pairs`]: one global atomic a list a block, which atomics a pair in
    /// the selection would not beat). The count kernel's launch is what this saves.
    pub(crate) fn selection_counters(
        &mut self,
        gpu: &Gpu,
        n_lists: usize,
        n_pairs: usize,
    ) -> Result<Option<&mut CudaSlice<i32>>> {
        if group_shared_pairs(n_lists, n_pairs) > 0 {
            return Ok(None);
        }
        Ok(Some(self.counts.at_least(gpu, 2 * n_lists)?))
    }
}

/// How a batch's first probes (each query's slot 0, the front of each list's range) are
/// tiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FirstProbes {
    /// With the rest: they lead their lists' first tiles.
    WithTheRest,
    /// In a phase of their own ([`super::phased`]), in tiles of this many pairs, before
    /// the rest.
    Phase(usize),
    /// With the rest, and also in tiles of this many pairs of their own, for the bounds'
    /// seed by list (kernels/lmseed.cu's grouped form).
    Seed(usize),
}

/// The tiles a batch's pairs are cut into: the first probes' ([`FirstProbes`]), and the
/// others' (every pair's, unless the first probes are a phase of their own) in tiles of
/// `rest` pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TileSizes {
    pub(super) first: FirstProbes,
    pub(super) rest: usize,
}

/// One grid of tile records: `tiles` of them (at least as many as tiles with pairs) of
/// `qt` pairs at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Grid {
    /// The grid's first record in the grouping's `tile_info` (records, not ints).
    first_record: usize,
    /// The grid's blocks.
    pub(super) tiles: usize,
    /// Queries per tile.
    pub(super) qt: usize,
}

/// The grids of one grouping: the seed's, and the scan's launches in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Grids {
    /// The first probes' tiles for the seed ([`FirstProbes::Seed`]).
    pub(super) seed: Option<Grid>,
    /// The scan's grids: the first phase's (if any), then the other one.
    pub(super) scans: Vec<Grid>,
}

impl TileSizes {
    /// The grids for `nb` queries of `n_probes` probes over `n_lists` lists. Each holds at
    /// most one partial tile per list besides the full ones.
    pub(super) fn grids(self, nb: usize, n_probes: usize, n_lists: usize) -> Grids {
        let bound = |pairs: usize, qt: usize| n_lists.min(pairs) + pairs / qt;
        let first = |qt| Grid {
            first_record: 0,
            tiles: bound(nb, qt),
            qt,
        };
        let rest = |first_record, pairs| Grid {
            first_record,
            tiles: bound(pairs, self.rest),
            qt: self.rest,
        };
        match self.first {
            FirstProbes::WithTheRest => Grids {
                seed: None,
                scans: vec![rest(0, nb * n_probes)],
            },
            FirstProbes::Phase(qt) => {
                let phase = first(qt);
                Grids {
                    seed: None,
                    scans: vec![phase, rest(phase.tiles, nb * (n_probes - 1))],
                }
            }
            FirstProbes::Seed(qt) => {
                let seed = first(qt);
                Grids {
                    seed: Some(seed),
                    scans: vec![rest(seed.tiles, nb * n_probes)],
                }
            }
        }
    }
}

/// One grouping's result on the device, for the seed's and the scan's launches.
pub(super) struct Grouped<'g> {
    pub(super) pairs: &'g CudaSlice<i32>,
    tile_info: &'g CudaSlice<i32>,
    /// Its grids ([`TileSizes::grids`]).
    pub(super) grids: Grids,
}

impl Grouped<'_> {
    /// The tile records of `grid`, four ints each.
    pub(super) fn records(&self, grid: Grid) -> CudaView<'_, i32> {
        self.tile_info
            .slice(4 * grid.first_record..4 * (grid.first_record + grid.tiles))
    }
}

/// The grouping's three kernels.
pub(super) struct GroupKernels {
    pub(super) count: Arc<Kernel>,
    pub(super) offsets: Arc<Kernel>,
    pub(super) fill: Arc<Kernel>,
}

impl IvfGpu {
    /// Groups every pair of batch `b` by list into `g` (the three kernels of group.cu), in
    /// tiles of `sizes`. Where `counted`, the coarse selection already counted the pairs
    /// into `g`'s counters ([`Grouping::selection_counters`]) and the count kernel is
    /// skipped.
    pub(super) fn group_pairs<'g, T: DeviceElem>(
        &self,
        kernels: &GroupKernels,
        g: &'g mut Grouping,
        b: &ScanBatch<'_, T>,
        sizes: TileSizes,
        counted: bool,
    ) -> Result<Grouped<'g>> {
        let gpu = &self.gpu;
        let stream = gpu.stream();
        let n_lists = b.lists.n_lists;
        let n_pairs = b.nb * b.n_probes;
        let grids = sizes.grids(b.nb, b.n_probes, n_lists);
        let records: usize = grids
            .seed
            .iter()
            .chain(&grids.scans)
            .map(|grid| grid.tiles)
            .sum();
        let Grouping {
            counts,
            tile_info,
            cursor,
            pairs,
        } = g;
        let counts = counts.at_least(gpu, 2 * n_lists)?;
        let tile_info = tile_info.at_least(gpu, 4 * records)?;
        let cursor = cursor.at_least(gpu, 2 * n_lists)?;
        let pairs = pairs.at_least(gpu, n_pairs)?;
        let (n_pairs_i, n_probes_i, n_lists_i) =
            (n_pairs as i32, b.n_probes as i32, n_lists as i32);
        let (qt_first, first_apart) = match sizes.first {
            FirstProbes::WithTheRest => (0, false),
            FirstProbes::Phase(qt) => (qt, true),
            FirstProbes::Seed(qt) => (qt, false),
        };
        let (qt_first_i, first_apart_i, qt_i) =
            (qt_first as i32, first_apart as i32, sizes.rest as i32);
        // The first probes' grid (the seed's or the first phase's) comes first.
        let rest = grids.scans.last().map_or(0, |grid| grid.tiles);
        let (grid_first_i, grid_rest_i) = ((records - rest) as i32, rest as i32);
        let per_block = group_shared_pairs(n_lists, n_pairs);
        let grid = if per_block > 0 {
            LaunchConfig {
                grid_dim: (n_pairs.div_ceil(per_block).max(1) as u32, 1, 1),
                block_dim: (GROUP_THREADS as u32, 1, 1),
                shared_mem_bytes: (2 * n_lists * std::mem::size_of::<i32>()) as u32,
            }
        } else {
            LaunchConfig {
                grid_dim: (n_pairs.div_ceil(GROUP_THREADS).clamp(1, 4096) as u32, 1, 1),
                block_dim: (GROUP_THREADS as u32, 1, 1),
                shared_mem_bytes: 0,
            }
        };
        let per_block_i = per_block as i32;
        // The count's and the fill's arguments up to their counters (group_pairs_signature).
        let pairs_launch = |kernel| {
            Launch::on(stream, kernel, grid)
                .view(&b.probes)
                .scalar(&n_pairs_i)
                .scalar(&n_probes_i)
                .scalar(&n_lists_i)
                .scalar(&per_block_i)
        };
        if !counted {
            gpu.clear(counts)?;
            let launch = pairs_launch(&kernels.count).buffer_mut(counts);
            // SAFETY: reads the probes of the nb × n_probes pairs (ScanBatch::check_buffers),
            // each a list number below n_lists (from the coarse search or range-checked by
            // the caller), and increments counts[list] and counts[n_lists + list] within its
            // 2 × n_lists entries; in the shared-memory form (per_block > 0) each block takes
            // per_block pairs, a grid covering n_pairs, its 2 × n_lists counters the dynamic
            // shared memory given.
            unsafe { launch.run() }?;
        }
        let one_block = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 0,
        };
        let launch = Launch::on(stream, &kernels.offsets, one_block)
            .buffer(counts)
            .scalar(&n_lists_i)
            .scalar(&qt_first_i)
            .scalar(&first_apart_i)
            .scalar(&qt_i)
            .buffer(&b.lists.list_order)
            .buffer_mut(tile_info)
            .scalar(&grid_first_i)
            .scalar(&grid_rest_i)
            .buffer_mut(cursor);
        // SAFETY: reads 2 × n_lists counts and the n_lists entries of list_order (a
        // permutation of the list numbers, DeviceLists), writes a 4-int record for each
        // tile of the grids (`grids`: each holds its tiles with pairs, Σ ⌈count / qt⌉ over
        // the lists' first probes or the rest, and they lie one after the other within
        // `records`) and 2 × n_lists cursors, the lengths allocated above.
        unsafe { launch.run() }?;
        let launch = pairs_launch(&kernels.fill)
            .buffer_mut(cursor)
            .buffer_mut(pairs);
        // SAFETY: the same probes as the count; each pair takes one slot of its list's
        // range of `pairs` (the counts sum to n_pairs, the length allocated above).
        unsafe { launch.run() }?;
        Ok(Grouped {
            pairs,
            tile_info,
            grids,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grouping_counts_in_shared_memory_for_large_batches_over_few_lists() {
        let per_block = GROUP_PAIRS_PER_THREAD * GROUP_THREADS;
        // lowdim × 10 at batch 10,000 and images × 2: 100,000 pairs over 1,024 lists, and
        // 20,000 over 256.
        assert_eq!(group_shared_pairs(1024, 100_000), per_block);
        assert_eq!(group_shared_pairs(256, 20_000), 0);
        assert_eq!(group_shared_pairs(256, GROUP_SHARED_MIN_PAIRS), per_block);
        assert_eq!(group_shared_pairs(256, GROUP_SHARED_MIN_PAIRS - 1), 0);
        // More lists than the shared counters hold: a thread a pair.
        assert_eq!(group_shared_pairs(1025, 1_000_000), 0);
    }

    #[test]
    fn the_first_probes_grid_comes_first_and_every_grid_holds_its_tiles() {
        // Images × 10 at 10,000 queries: 10,000 first probes in tiles of 32, 90,000 others
        // in tiles of 64, over 256 lists.
        let phased = TileSizes {
            first: FirstProbes::Phase(32),
            rest: 64,
        };
        let grids = phased.grids(10_000, 10, 256);
        assert_eq!(grids.seed, None);
        let [first, rest] = grids.scans[..] else {
            panic!("two phases, two grids: {grids:?}")
        };
        assert_eq!((first.first_record, first.qt), (0, 32));
        assert_eq!(first.tiles, 256 + 10_000 / 32);
        assert_eq!(rest.first_record, first.tiles);
        assert_eq!((rest.tiles, rest.qt), (256 + 90_000 / 64, 64));
        // Seeded by list (lowdim × 10): the first probes' tiles for the seed, then the
        // scan's over every pair.
        let seeded = TileSizes {
            first: FirstProbes::Seed(32),
            rest: 64,
        };
        let grids = seeded.grids(10_000, 10, 1024);
        let seed = grids.seed.expect("a seed grid");
        assert_eq!(
            (seed.first_record, seed.tiles, seed.qt),
            (0, 1024 + 10_000 / 32, 32)
        );
        assert_eq!(grids.scans.len(), 1);
        assert_eq!(grids.scans[0].first_record, seed.tiles);
        assert_eq!(grids.scans[0].tiles, 1024 + 100_000 / 64);
        // Fewer pairs than lists: at most one tile a pair.
        let one = TileSizes {
            first: FirstProbes::WithTheRest,
            rest: 16,
        };
        let grids = one.grids(3, 2, 1_000);
        assert_eq!(grids.seed, None);
        assert_eq!(grids.scans.len(), 1);
        let only = grids.scans[0];
        assert_eq!((only.first_record, only.tiles, only.qt), (0, 6, 16));
        // Any split of n pairs over l lists in tiles of qt takes at most min(l, n) + n / qt.
        for (pairs_per_list, qt) in [(vec![1, 0, 31, 33], 32), (vec![64, 65, 0, 129], 64)] {
            let n: usize = pairs_per_list.iter().sum();
            let tiles: usize = pairs_per_list.iter().map(|&p: &usize| p.div_ceil(qt)).sum();
            let sizes = TileSizes {
                first: FirstProbes::WithTheRest,
                rest: qt,
            };
            assert!(tiles <= sizes.grids(n, 1, pairs_per_list.len()).scans[0].tiles);
        }
    }
}
