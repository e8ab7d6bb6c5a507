// Entry fragment: the (query, probe slot) pairs of a batch grouped by the list they probe,
// for the list-major scan. The pairs grouped are probe slots first_slot … first_slot +
// slots − 1 of every query: pair i of them is number (i / slots) × n_probes + first_slot +
// i % slots of the batch, probing list probes[number] (the scan's phases group the first
// probes alone, then the rest: list_major::probe_phases). Three kernels, in this order on
// one stream, after `counts` (2 × n_lists ints) was zeroed:
//   ivf_group_count_kernel   — pairs per list, and of those the queries' first probes
//                              (slot 0) at counts[n_lists + list] (atomics; two forms,
//                              below);
//   ivf_group_offsets_kernel — one block: the fill cursors (from the exclusive prefix
//                              sums of the counts, by list number) and a record for
//                              every tile of the scan's grid;
//   ivf_group_fill_kernel    — each pair's number (query × n_probes + slot) at its list's
//                              cursor: the first probes first, so that they fall in the
//                              list's first tile. The order of the others does not matter:
//                              each pair's candidates are computed on their own.
//
// Tile records (tile_info, four ints a tile: list, first pair, pairs, 0) go in two runs:
// first the first tile of every probed list, then the rest of each list's tiles, each run
// by rank in `order` (the lists longest first, so that the blocks of the longest lists
// start first and the short ones fill the last wave). The blocks of the first run — the
// queries' nearest lists — lower their queries' bounds (lmscan.cu) before most blocks of
// the second start, so that those keep fewer rows; a scan block reads its record with one
// 16-byte load instead of a chain of dependent ones (tile → rank → list → list start).
// Records past the grid's last tile have no pairs (count 0): their blocks return.
// Measured on the H200 (session 20, docs/gpu-runs/2026-12-02-s20/1-ft-grid/, same call,
// three rounds, against the tiles by rank alone): device QPS at batch 10,000 lowdim-i8
// +3.2 / +6.2 / +1.7 % (10 / 20 / 50 probes; its scan 392 → 371 µs at 10), lowdim-f16
// +3.8 / +4.0 / −0.2 %, images × 5 +7.3 %, wide-i8 × 10 +7.1 %; others within ±2 %, and
// within −2.5 to +4.7 % at batch 1,000.
// The batch's number of grouped pair i.
__device__ __forceinline__ int group_pair_number(int i, int n_probes, int first_slot, int slots)
{
    return slots == n_probes ? i : (i / slots) * n_probes + first_slot + i % slots;
}

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

// The list counter (of 2 × n_lists: the first probes' second) that batch pair i goes to,
// and its number.
__device__ __forceinline__ int group_counter(const long long* probes, int i, int n_probes, int first_slot, int slots,
                                             int n_lists, int& number)
{
    number = group_pair_number(i, n_probes, first_slot, slots);
    return (number % n_probes == 0 ? n_lists : 0) + (int)probes[number];
}

// Counts counter c (group_counter) in `counters` (2 × n_lists, global or shared): in its
// list's count, and a first probe's also in the first probes' count.
__device__ __forceinline__ void group_count_pair(int* counters, int c, int n_lists)
{
    atomicAdd(&counters[c - (c >= n_lists ? n_lists : 0)], 1);
    if (c >= n_lists) atomicAdd(&counters[c], 1);
}

extern "C" __global__ void ivf_group_count_kernel(const long long* __restrict__ probes, int n_pairs, int n_probes,
                                                   int first_slot, int slots, int n_lists, int per_block,
                                                   int* __restrict__ counts)
{
    if (per_block == 0) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_pairs; i += gridDim.x * blockDim.x) {
            int p;
            group_count_pair(counts, group_counter(probes, i, n_probes, first_slot, slots, n_lists, p), n_lists);
        }
        return;
    }
    extern __shared__ int hist[];  // 2 × n_lists
    for (int l = threadIdx.x; l < 2 * n_lists; l += blockDim.x) hist[l] = 0;
    __syncthreads();
    #pragma unroll
    for (int u = 0; u < GROUP_PAIRS_PER_THREAD; ++u) {
        const int i = blockIdx.x * per_block + u * blockDim.x + threadIdx.x;
        if (i < n_pairs) {
            int p;
            group_count_pair(hist, group_counter(probes, i, n_probes, first_slot, slots, n_lists, p), n_lists);
        }
    }
    __syncthreads();
    for (int l = threadIdx.x; l < 2 * n_lists; l += blockDim.x)
        if (hist[l] > 0) atomicAdd(&counts[l], hist[l]);
}

// Block-wide exclusive prefix sum of one value per thread (blockDim.x = 1024); returns the
// thread's prefix and writes the total to *total.
__device__ __forceinline__ int group_block_scan(int v, int* warp_sums, int* total)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int inc = v;
    for (int off = 1; off < 32; off <<= 1) {
        const int n = __shfl_up_sync(0xffffffffu, inc, off);
        if (lane >= off) inc += n;
    }
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        int w = lane < blockDim.x / 32 ? warp_sums[lane] : 0;
        for (int off = 1; off < 32; off <<= 1) {
            const int n = __shfl_up_sync(0xffffffffu, w, off);
            if (lane >= off) w += n;
        }
        warp_sums[lane] = w;  // inclusive over warps
    }
    __syncthreads();
    const int before = (warp > 0 ? warp_sums[warp - 1] : 0) + inc - v;
    if (threadIdx.x == blockDim.x - 1) *total = before + v;
    __syncthreads();
    return before;
}

extern "C" __global__ void __launch_bounds__(1024) ivf_group_offsets_kernel(
    const int* __restrict__ counts, int n_lists, int qt, const int* __restrict__ order,
    int4* __restrict__ tile_info, int grid_tiles, int* __restrict__ cursor)
{
    __shared__ int warp_sums[32];
    __shared__ int totals[3];
    const int per = (n_lists + blockDim.x - 1) / blockDim.x;
    const int begin = min(n_lists, threadIdx.x * per), end = min(n_lists, begin + per);
    // Pairs by list number; the first run's tiles (one a probed list) and the second's by
    // rank.
    int pairs = 0, firsts = 0, rest = 0;
    for (int l = begin; l < end; ++l) {
        pairs += counts[l];
        const int tiles_l = (counts[order[l]] + qt - 1) / qt;
        firsts += tiles_l > 0;
        rest += max(tiles_l - 1, 0);
    }
    int p = group_block_scan(pairs, warp_sums, &totals[0]);
    int a = group_block_scan(firsts, warp_sums, &totals[1]);
    int b = totals[1] + group_block_scan(rest, warp_sums, &totals[2]);
    for (int l = begin; l < end; ++l) {
        cursor[n_lists + l] = p;               // the first probes': the list's start
        cursor[l] = p + counts[n_lists + l];   // the others'
        p += counts[l];
    }
    __syncthreads();  // every list's start, for the records by rank
    for (int r = begin; r < end; ++r) {
        const int list = order[r], n = counts[list], start = cursor[n_lists + list];
        const int tiles_l = (n + qt - 1) / qt;
        for (int j = 0; j < tiles_l; ++j) {
            const int t = j == 0 ? a++ : b++;
            tile_info[t] = make_int4(list, start + j * qt, min(qt, n - j * qt), 0);
        }
    }
    const int total = totals[1] + totals[2];
    for (int t = total + threadIdx.x; t < grid_tiles; t += blockDim.x) tile_info[t] = make_int4(0, 0, 0, 0);
}

extern "C" __global__ void ivf_group_fill_kernel(const long long* __restrict__ probes, int n_pairs, int n_probes,
                                                  int first_slot, int slots, int n_lists, int per_block,
                                                  int* __restrict__ cursor, int* __restrict__ pairs)
{
    if (per_block == 0) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_pairs; i += gridDim.x * blockDim.x) {
            int p;
            const int c = group_counter(probes, i, n_probes, first_slot, slots, n_lists, p);
            pairs[atomicAdd(&cursor[c], 1)] = p;
        }
        return;
    }
    // Each pair's rank among the block's pairs of its counter, then one global atomic a
    // counter reserves the block's range there (written over the count), then the pairs.
    extern __shared__ int hist[];  // 2 × n_lists
    for (int l = threadIdx.x; l < 2 * n_lists; l += blockDim.x) hist[l] = 0;
    __syncthreads();
    int number[GROUP_PAIRS_PER_THREAD], counter[GROUP_PAIRS_PER_THREAD], rank[GROUP_PAIRS_PER_THREAD];
    #pragma unroll
    for (int u = 0; u < GROUP_PAIRS_PER_THREAD; ++u) {
        const int i = blockIdx.x * per_block + u * blockDim.x + threadIdx.x;
        counter[u] = -1;
        if (i < n_pairs) {
            counter[u] = group_counter(probes, i, n_probes, first_slot, slots, n_lists, number[u]);
            rank[u] = atomicAdd(&hist[counter[u]], 1);
        }
    }
    __syncthreads();
    for (int l = threadIdx.x; l < 2 * n_lists; l += blockDim.x)
        if (hist[l] > 0) hist[l] = atomicAdd(&cursor[l], hist[l]);
    __syncthreads();
    #pragma unroll
    for (int u = 0; u < GROUP_PAIRS_PER_THREAD; ++u)
        if (counter[u] >= 0) pairs[hist[counter[u]] + rank[u]] = number[u];
}
