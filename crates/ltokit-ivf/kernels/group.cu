// Entry fragment: the (query, probe slot) pairs of a batch grouped by the list they probe,
// for the list-major scan. Pair i is number i of the batch (query i / n_probes, probe slot
// i % n_probes), probing list probes[i]. Three kernels, in this order on one stream, after
// `counts` (2 × n_lists ints) was zeroed:
//   ivf_group_count_kernel   — pairs per list, and of those the queries' first probes
//                              (slot 0) at counts[n_lists + list] (atomics; two forms,
//                              below), or counted as the coarse selection writes
//                              them (coarse_select.cu `select_put`; the host then skips
//                              this kernel) where it would take its thread-a-pair form;
//   ivf_group_offsets_kernel — one block: the fill cursors (from the exclusive prefix
//                              sums of the counts, by list number) and a record for
//                              every tile of the scan's grids;
//   ivf_group_fill_kernel    — each pair's number at its list's cursor: the first probes
//                              first, then the others. The order within each does not
//                              matter: each pair's candidates are computed on their own.
//
// One grouping serves both phases of a two-phase scan (list_major::phased: the first
// probes alone, then the rest): the first probes of a list are the front of its range, so
// the first phase's tiles (qt_first pairs) cover those fronts and the second phase's (qt
// pairs) the rest (`first_apart`). Grouping each phase's pairs apart took three kernels
// more a batch: measured on the H100 (session 33, docs/gpu-runs/2026-12-06-s33/1-split/,
// three rounds, device QPS at batch 10,000), images × 10 / × 20 +6.0 / +4.1 %. In one
// phase (qt_first = 0) the tiles cover whole ranges; where the bounds are seeded by list
// (lmseed.cu's grouped seed), the fronts are also tiled for the seed, apart from the
// scan's tiles of whole ranges (first_apart = 0).
//
// Tile records (tile_info, four ints a tile: list, first pair, pairs, 0): the first
// phase's (or the seed's), by rank in `order` (the lists longest first, so that the blocks of the longest
// lists start first and the short ones fill the last wave), at tile_info[0 .. grid_first);
// then the other tiles' grid at tile_info[grid_first ..], in two runs: first the first
// tile of every list, then the rest of each list's tiles, each run by rank. In one phase
// the first run's blocks — the queries' nearest lists, whose pairs lead their tiles —
// lower their queries' bounds (lmscan.cu) before most blocks of the second start, so that
// those keep fewer rows; a scan block reads its record with one 16-byte load instead of a
// chain of dependent ones (tile → rank → list → list start). Records past a grid's last
// tile have no pairs (count 0): their blocks return.
// Measured on the H200 (session 20, docs/gpu-runs/2026-12-02-s20/1-ft-grid/, same call,
// three rounds, against the tiles by rank alone): device QPS at batch 10,000 lowdim-i8
// +3.2 / +6.2 / +1.7 % (10 / 20 / 50 probes; its scan 392 → 371 µs at 10), lowdim-f16
// +3.8 / +4.0 / −0.2 %, images × 5 +7.3 %, wide-i8 × 10 +7.1 %; others within ±2 %, and
// within −2.5 to +4.7 % at batch 1,000.

// The count and the fill take one of two forms, by `per_block` (the host's choice,
// list_major::group_shared_pairs, measured there):
//   0: a thread a pair (a grid-stride loop), each pair one atomic on its list's global
//      counter — where lists are many;
//   > 0: each block takes per_block = GROUP_PAIRS_PER_THREAD × blockDim.x consecutive
//      pairs and counts them in shared memory (2 × n_lists ints of dynamic shared memory,
//      its probes' lists and the first probes'), then adds each non-zero count to the
//      global one once (the fill: reserves the block's range of each list with one
//      atomic) — for large batches over at most 1,024 lists, whose pairs would otherwise
//      queue on the same few hundred global counters.
#define GROUP_PAIRS_PER_THREAD 4

// The list counter (of 2 × n_lists: the first probes' second) that batch pair i goes to.
__device__ __forceinline__ int group_counter(const long long* probes, int i, int n_probes, int n_lists)
{
    return (i % n_probes == 0 ? n_lists : 0) + (int)probes[i];
}

// Counts counter c (group_counter) in `counters` (2 × n_lists, global or shared): in its
// list's count, and a first probe's also in the first probes' count.
__device__ __forceinline__ void group_count_pair(int* counters, int c, int n_lists)
{
    atomicAdd(&counters[c - (c >= n_lists ? n_lists : 0)], 1);
    if (c >= n_lists) atomicAdd(&counters[c], 1);
}

extern "C" __global__ void ivf_group_count_kernel(const long long* __restrict__ probes, int n_pairs, int n_probes,
                                                   int n_lists, int per_block, int* __restrict__ counts)
{
    if (per_block == 0) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_pairs; i += gridDim.x * blockDim.x)
            group_count_pair(counts, group_counter(probes, i, n_probes, n_lists), n_lists);
        return;
    }
    extern __shared__ int hist[];  // 2 × n_lists
    for (int l = threadIdx.x; l < 2 * n_lists; l += blockDim.x) hist[l] = 0;
    __syncthreads();
    #pragma unroll
    for (int u = 0; u < GROUP_PAIRS_PER_THREAD; ++u) {
        const int i = blockIdx.x * per_block + u * blockDim.x + threadIdx.x;
        if (i < n_pairs) group_count_pair(hist, group_counter(probes, i, n_probes, n_lists), n_lists);
    }
    __syncthreads();
    for (int l = threadIdx.x; l < 2 * n_lists; l += blockDim.x)
        if (hist[l] > 0) atomicAdd(&counts[l], hist[l]);
}

// Block-wide exclusive prefix sums of four values per thread (blockDim.x = 1024) at once:
// returns the thread's prefixes and writes the totals to *total.
__device__ __forceinline__ int4 group_block_scan(int4 v, int4* warp_sums, int4* total)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int4 inc = v;
    for (int off = 1; off < 32; off <<= 1) {
        const int4 n = make_int4(__shfl_up_sync(0xffffffffu, inc.x, off), __shfl_up_sync(0xffffffffu, inc.y, off),
                                 __shfl_up_sync(0xffffffffu, inc.z, off), __shfl_up_sync(0xffffffffu, inc.w, off));
        if (lane >= off) inc = make_int4(inc.x + n.x, inc.y + n.y, inc.z + n.z, inc.w + n.w);
    }
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        int4 w = lane < blockDim.x / 32 ? warp_sums[lane] : make_int4(0, 0, 0, 0);
        for (int off = 1; off < 32; off <<= 1) {
            const int4 n = make_int4(__shfl_up_sync(0xffffffffu, w.x, off), __shfl_up_sync(0xffffffffu, w.y, off),
                                     __shfl_up_sync(0xffffffffu, w.z, off), __shfl_up_sync(0xffffffffu, w.w, off));
            if (lane >= off) w = make_int4(w.x + n.x, w.y + n.y, w.z + n.z, w.w + n.w);
        }
        warp_sums[lane] = w;  // inclusive over warps
    }
    __syncthreads();
    const int4 below = warp > 0 ? warp_sums[warp - 1] : make_int4(0, 0, 0, 0);
    const int4 before = make_int4(below.x + inc.x - v.x, below.y + inc.y - v.y, below.z + inc.z - v.z, below.w + inc.w - v.w);
    if (threadIdx.x == blockDim.x - 1) *total = make_int4(before.x + v.x, before.y + v.y, before.z + v.z, before.w + v.w);
    __syncthreads();
    return before;
}

// A list's tiles: `first` pairs at the front of its range in tiles of qt_first (none in one
// phase: qt_first = 0), then from `rest_from` (after them, or the range's start where
// they are tiled for the seed alone) `rest` pairs in tiles of qt.
struct GroupTiles { int first, first_tiles, rest_from, rest, rest_tiles; };
__device__ __forceinline__ GroupTiles group_tiles(const int* counts, int n_lists, int list, int qt_first,
                                                  int first_apart, int qt)
{
    GroupTiles t;
    t.first = qt_first > 0 ? counts[n_lists + list] : 0;
    t.first_tiles = qt_first > 0 ? (t.first + qt_first - 1) / qt_first : 0;
    t.rest_from = first_apart ? t.first : 0;
    t.rest = counts[list] - t.rest_from;
    t.rest_tiles = (t.rest + qt - 1) / qt;
    return t;
}

extern "C" __global__ void __launch_bounds__(1024) ivf_group_offsets_kernel(
    const int* __restrict__ counts, int n_lists, int qt_first, int first_apart, int qt, const int* __restrict__ order,
    int4* __restrict__ tile_info, int grid_first, int grid_tiles, int* __restrict__ cursor)
{
    __shared__ int4 warp_sums[32];
    __shared__ int4 totals;
    const int per = (n_lists + blockDim.x - 1) / blockDim.x;
    const int begin = min(n_lists, threadIdx.x * per), end = min(n_lists, begin + per);
    // Pairs by list number; by rank, the first phase's tiles, the other grid's first run
    // (one tile a list that has any) and its second run.
    int4 mine = make_int4(0, 0, 0, 0);
    for (int l = begin; l < end; ++l) {
        mine.x += counts[l];
        const GroupTiles t = group_tiles(counts, n_lists, order[l], qt_first, first_apart, qt);
        mine.y += t.first_tiles;
        mine.z += t.rest_tiles > 0;
        mine.w += max(t.rest_tiles - 1, 0);
    }
    const int4 at = group_block_scan(mine, warp_sums, &totals);
    int p = at.x, f = at.y, a = at.z, b = totals.z + at.w;
    for (int l = begin; l < end; ++l) {
        cursor[n_lists + l] = p;               // the first probes': the list's start
        cursor[l] = p + counts[n_lists + l];   // the others'
        p += counts[l];
    }
    __syncthreads();  // every list's start, for the records by rank
    int4* rest_info = tile_info + grid_first;
    for (int r = begin; r < end; ++r) {
        const int list = order[r], start = cursor[n_lists + list];
        const GroupTiles t = group_tiles(counts, n_lists, list, qt_first, first_apart, qt);
        for (int j = 0; j < t.first_tiles; ++j)
            tile_info[f++] = make_int4(list, start + j * qt_first, min(qt_first, t.first - j * qt_first), 0);
        for (int j = 0; j < t.rest_tiles; ++j)
            rest_info[j == 0 ? a++ : b++] = make_int4(list, start + t.rest_from + j * qt, min(qt, t.rest - j * qt), 0);
    }
    for (int i = totals.y + threadIdx.x; i < grid_first; i += blockDim.x) tile_info[i] = make_int4(0, 0, 0, 0);
    for (int i = totals.z + totals.w + threadIdx.x; i < grid_tiles; i += blockDim.x) rest_info[i] = make_int4(0, 0, 0, 0);
}

extern "C" __global__ void ivf_group_fill_kernel(const long long* __restrict__ probes, int n_pairs, int n_probes,
                                                  int n_lists, int per_block, int* __restrict__ cursor,
                                                  int* __restrict__ pairs)
{
    if (per_block == 0) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_pairs; i += gridDim.x * blockDim.x)
            pairs[atomicAdd(&cursor[group_counter(probes, i, n_probes, n_lists)], 1)] = i;
        return;
    }
    // Each pair's rank among the block's pairs of its counter, then one global atomic a
    // counter reserves the block's range there (written over the count), then the pairs.
    extern __shared__ int hist[];  // 2 × n_lists
    for (int l = threadIdx.x; l < 2 * n_lists; l += blockDim.x) hist[l] = 0;
    __syncthreads();
    int counter[GROUP_PAIRS_PER_THREAD], rank[GROUP_PAIRS_PER_THREAD];
    #pragma unroll
    for (int u = 0; u < GROUP_PAIRS_PER_THREAD; ++u) {
        const int i = blockIdx.x * per_block + u * blockDim.x + threadIdx.x;
        counter[u] = -1;
        if (i < n_pairs) {
            counter[u] = group_counter(probes, i, n_probes, n_lists);
            rank[u] = atomicAdd(&hist[counter[u]], 1);
        }
    }
    __syncthreads();
    for (int l = threadIdx.x; l < 2 * n_lists; l += blockDim.x)
        if (hist[l] > 0) hist[l] = atomicAdd(&cursor[l], hist[l]);
    __syncthreads();
    #pragma unroll
    for (int u = 0; u < GROUP_PAIRS_PER_THREAD; ++u)
        if (counter[u] >= 0) pairs[hist[counter[u]] + rank[u]] = blockIdx.x * per_block + u * blockDim.x + threadIdx.x;
}
