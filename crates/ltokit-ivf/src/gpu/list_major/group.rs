//! The grouping of a list-major batch's (query, probe slot) pairs by the list they probe
//! (kernels/group.cu): counts, offsets and tile records, fill — its kernels, its device
//! buffers, and the launches.

use std::ops::Range;
use std::sync::Arc;

use ltokit::launch::{CudaSlice, DeviceElem, Elem, Extent, Kernel, Launch, LaunchConfig, Param};
use ltokit::Result;

use crate::gpu::scan::ScanBatch;
use crate::gpu::workspace::Buffer;
use crate::gpu::{IvfGpu, KernelSpec};

/// `ivf_group_count` and `ivf_group_fill`: probes, pair count, the pairs' numbering
/// (n_probes, the first probe slot and the slots a query: group.cu), n_lists, the pairs a
/// block counts in shared memory (0: none, [`group_shared_pairs`]), counts or cursors, and
/// for the fill the pairs.
macro_rules! group_pairs_signature {
    ($($out:expr),+) => {
        &[
            Param::Buffer(Elem::I64, Extent::Any),
            Param::I32, // pairs
            Param::I32, // n_probes
            Param::I32, // first slot
            Param::I32, // slots a query
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

/// `ivf_group_offsets`: counts, n_lists, queries per tile, the lists longest first,
/// the tile records, the grid's tiles, cursors.
const GROUP_OFFSETS_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::I32, Extent::Any),
    Param::I32,
    Param::I32,
    Param::Buffer(Elem::I32, Extent::Any),
    Param::BufferMut(Elem::I32, Extent::Any),
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

/// Device buffers of one grouping of pairs by list (group.cu); each phase of a batch
/// ([`probe_phases`]) groups its pairs into them again.
#[derive(Default)]
pub(super) struct Grouping {
    /// Pairs per list, then first probes per list (2 × n_lists).
    counts: Buffer<i32>,
    /// A record a tile of the scan's grid: list, first pair, pairs, 0 (group.cu).
    tile_info: Buffer<i32>,
    /// The others' cursors per list, then the first probes' (2 × n_lists).
    cursor: Buffer<i32>,
    pairs: Buffer<i32>,
}

/// One grouping's result on the device, for the scan's launch.
pub(super) struct Grouped<'g> {
    pub(super) pairs: &'g CudaSlice<i32>,
    pub(super) tile_info: &'g CudaSlice<i32>,
    /// The scan's grid: at least as many blocks as tiles.
    pub(super) tiles: usize,
}

/// The grouping's three kernels.
pub(super) struct GroupKernels {
    pub(super) count: Arc<Kernel>,
    pub(super) offsets: Arc<Kernel>,
    pub(super) fill: Arc<Kernel>,
}

impl IvfGpu {
    /// Groups the pairs of probe slots `slots` of batch `b`'s queries by list into `g`
    /// (the three kernels of group.cu), tiles of `qt` pairs.
    pub(super) fn group_pairs<'g, T: DeviceElem>(
        &self,
        kernels: &GroupKernels,
        g: &'g mut Grouping,
        b: &ScanBatch<'_, T>,
        slots: Range<usize>,
        qt: usize,
    ) -> Result<Grouped<'g>> {
        let gpu = &self.gpu;
        let stream = gpu.stream();
        let n_lists = b.lists.n_lists;
        let n_pairs = b.nb * slots.len();
        // Tiles: at most one partial tile per probed list besides the full ones.
        let tiles = n_lists.min(n_pairs) + n_pairs / qt;
        let Grouping {
            counts,
            tile_info,
            cursor,
            pairs,
        } = g;
        let counts = counts.at_least(gpu, 2 * n_lists)?;
        let tile_info = tile_info.at_least(gpu, 4 * tiles)?;
        let cursor = cursor.at_least(gpu, 2 * n_lists)?;
        let pairs = pairs.at_least(gpu, n_pairs)?;
        let (n_pairs_i, n_probes_i, first_i, slots_i) = (
            n_pairs as i32,
            b.n_probes as i32,
            slots.start as i32,
            slots.len() as i32,
        );
        let (n_lists_i, qt_i, tiles_i) = (n_lists as i32, qt as i32, tiles as i32);
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
                .scalar(&first_i)
                .scalar(&slots_i)
                .scalar(&n_lists_i)
                .scalar(&per_block_i)
        };
        gpu.clear(counts)?;
        let launch = pairs_launch(&kernels.count).buffer_mut(counts);
        // SAFETY: reads the probes of the pairs' numbers q × n_probes + s (q < nb, s in
        // `slots` within n_probes: below nb × n_probes, ScanBatch::check_buffers), each
        // a list number below n_lists (from the coarse search or range-checked by the
        // caller), and increments counts[list] and counts[n_lists + list] within its
        // 2 × n_lists entries; in the shared-memory form (per_block > 0) each block takes
        // per_block pairs, a grid covering n_pairs, its 2 × n_lists counters the dynamic
        // shared memory given.
        unsafe { launch.run() }?;
        let one_block = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 0,
        };
        let launch = Launch::on(stream, &kernels.offsets, one_block)
            .buffer(counts)
            .scalar(&n_lists_i)
            .scalar(&qt_i)
            .buffer(&b.lists.list_order)
            .buffer_mut(tile_info)
            .scalar(&tiles_i)
            .buffer_mut(cursor);
        // SAFETY: reads 2 × n_lists counts and the n_lists entries of list_order (a
        // permutation of the list numbers, DeviceLists), writes a 4-int record for each of the grid's `tiles` tiles (Σ ⌈count / qt⌉ ≤ `tiles`
        // of them hold pairs) and 2 × n_lists cursors, the lengths allocated above.
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
            tiles,
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
}
