// Entry fragment: seeds the list-major scan's per-query bounds (lm_bound_key, topk.cuh)
// before it runs. A query's first `seed_rows` rows of its first probe (32-row groups) are
// scored by `parts` warps (one in large batches: list_major::seed_block) with the distance
// fragment's ivf_dist_by_difference — warp p of the query takes groups p, p + parts, …,
// lane l row l of each, keeps the best two scores of its rows, and sorts the warp's 64
// into its best 32 (scores only: no row ids travel through the sorting network); the
// first warp merges the others' lists from shared memory and sets bound[q] just above
// the k-th best, each row raised by the most the scan's own arithmetic may score that
// row below this one's. Those k rows are in a list the query probes and pass its filter,
// so k rows the scan scores under the bound exist: nothing of the final top k is
// skipped. Without the seed, every tile's first step keeps all 64 rows for each query
// until some tile of it reaches k (a host simulation of the lowdim bench set: 96
// candidates kept a (query, probe) pair with no bound shared, 24 with a 64-row seed, 15
// with 128). k > 32, or fewer than k rows to look at: no bound (zero, +inf). The host
// launches it only where it pays (list_major::seeds_bounds).
#include "ivf_abi.cuh"
#include "topk.cuh"
#include "warpsort.cuh"

// The most a score of (acc, qn, xn) computed by a different order of float operations
// may differ, in the accumulator's units: a dot product of `dim` terms has an error under
// dim · 2^-24 · Σ|q_i x_i| ≤ dim · 2^-24 · (qn + xn) / 2 in f32 and about eight times that
// with 3xTF32 products; the list-major L2 form qn + xn - 2 q·x adds the norms' own.
// (dim + 8) · 2^-20 · (qn + xn) covers all of them; for 8-bit L2 and inner products, whose
// accumulators are exact integers in both scans, it only loosens the bound by a little.
__device__ __forceinline__ float lmseed_slack(int dim, float qn, float xn) {
    return (float)(dim + 8) * 0x1p-20f * (qn + xn);
}

// The upper end of the score of the row of `lane` in the 32-row group at `group` against
// the staged query (norm qn).
__device__ __forceinline__ float lmseed_row_bound(const unsigned char* group, const unsigned char* staged, int dim,
                                                  int lane, float qn) {
    float xn = 0.f;
    const float acc = ivf_dist_by_difference(group, lane, staged, dim, &xn);
    // The L2 fragment returns Σ (q - x)² without the row's norm: |x|² ≤ 2 |q|² + 2 acc.
    const float e = lmseed_slack(dim, qn, ivf_metric_l2() ? 2.f * (qn + acc) : xn);
    // Every metric's score is monotonic in the accumulator: the larger of the two ends is
    // the row's highest possible score.
    return fmaxf(ivf_score(acc + e, qn, xn), ivf_score(acc - e, qn, xn));
}

// Whether row `row` of the list at `off` (`size` rows) is one the query may be given.
__device__ __forceinline__ bool lmseed_row_counts(long long off, int size, int row, const long long* ids, int query,
                                                  const unsigned int* filter, long long filter_words) {
    return row < size && ivf_keep(ids[off + row], query, filter, filter_words);
}

// Folds a row's bound into the lane's best two. A lane's rows are distinct, so the k-th of
// the warp's 64 kept is at or above the k-th of all its rows: no sorting network a group,
// one sort of each half and a merge at the end (lmseed_best32).
__device__ __forceinline__ void lmseed_keep_two(float s, float& m1, float& m2) {
    m2 = fminf(m2, fmaxf(m1, s));
    m1 = fminf(m1, s);
}

// The warp's best 32 of its lanes' best two, sorted (lane j holds the j-th); `second`:
// whether any lane saw a second row.
__device__ __forceinline__ float lmseed_best32(float m1, float m2, bool second, int lane) {
    WsNoId none;  // scores only: the bound is the k-th score, whichever rows hold it
    ws_sort32(m1, none, lane);
    if (second) {
        ws_sort32(m2, none, lane);
        ws_merge32(m1, none, m2, none, lane);
    }
    return m1;
}

// The bound key just above the k-th best score (0: no bound, where there is no k-th).
__device__ __forceinline__ unsigned int lmseed_bound_key(float kth) {
    const float inf = __int_as_float(0x7f800000);
    return kth < inf ? lm_bound_key(nextafterf(kth, inf)) : 0u;
}

// Launch: blocks of 32 · parts · (queries a block) threads; dynamic shared memory of a
// staged query (dim values of 4 bytes at most, rounded up to 16 bytes) and 32 scores for
// each warp. seed_rows: a multiple of 32.
extern "C" __global__ void __launch_bounds__(128) ivf_lmseed_kernel(
    const unsigned char* __restrict__ queries, int dim, int n_probes, int nq, const long long* __restrict__ probes,
    int seed_rows, int parts,
    const unsigned char* __restrict__ data, int elem_bytes, const long long* __restrict__ list_offset,
    const int* __restrict__ list_size, const long long* __restrict__ ids,
    const unsigned int* __restrict__ filter, long long filter_words, int query_base, int k,
    unsigned int* __restrict__ bound)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int part = warp % parts;
    const int qi = blockIdx.x * (blockDim.x / 32 / parts) + warp / parts;
    const int stage_bytes = (dim * 4 + 15) / 16 * 16;
    float* best = reinterpret_cast<float*>(smem_raw + (long long)(blockDim.x / 32) * stage_bytes);  // [warps][32]
    // k > 32 seeds nothing; the host only launches k ≤ 32 (list_major::seeds_bounds).
    const bool active = qi < nq && k <= 32;
    const float inf = __int_as_float(0x7f800000);
    float d = inf;
    if (active) {
        unsigned char* staged = smem_raw + (long long)warp * stage_bytes;
        float qn = ivf_stage_query(queries + (long long)qi * dim * elem_bytes, staged, dim, lane, 32);
        for (int off = 16; off > 0; off >>= 1) qn += __shfl_xor_sync(IVF_FULL, qn, off);
        __syncwarp();
        const int list = (int)probes[(long long)qi * n_probes];
        const long long off = list_offset[list];
        const int size = min(list_size[list], seed_rows);
        float m1 = inf, m2 = inf;
        for (int g = part; g * 32 < size; g += parts) {
            const int row = g * 32 + lane;
            const unsigned char* group = data + (off + (long long)g * 32) * dim * elem_bytes;
            lmseed_keep_two(lmseed_row_counts(off, size, row, ids, query_base + qi, filter, filter_words)
                                ? lmseed_row_bound(group, staged, dim, lane, qn) : inf,
                            m1, m2);
        }
        // A warp with a second group has second bests to merge.
        d = lmseed_best32(m1, m2, (part + parts) * 32 < size, lane);
    }
    best[warp * 32 + lane] = d;
    __syncthreads();
    if (qi >= nq || part != 0) return;
    if (!active) {
        if (lane == 0) bound[qi] = 0u;
        return;
    }
    WsNoId none;
    for (int p = 1; p < parts; ++p) ws_merge32(d, none, best[(warp + p) * 32 + lane], none, lane);
    const float kth = __shfl_sync(IVF_FULL, d, k - 1);
    if (lane == 0) bound[qi] = lmseed_bound_key(kth);
}

// The upper end of the score of a row whose dot product with the query (norm qn) is
// `dot` and whose squared norm is xn_bits (row_norms: an exact integer for 8-bit rows,
// `int_norms`, f32 bits for float rows): L2 as qn + xn − 2 dot, the list-major tiles'
// form, raised by the slack as lmseed_row_bound's (which covers the f32 rounding of this
// form's sums as well: 8-bit sums past 2^24 round here, not in the tiles).
__device__ __forceinline__ float lmseed_dot_bound(float dot, unsigned xn_bits, bool int_norms, int dim, float qn) {
    const float xn = int_norms ? (float)(int)xn_bits : __uint_as_float(xn_bits);
    const float acc = ivf_metric_l2() ? fmaxf(qn + xn - 2.f * dot, 0.f) : dot;
    const float e = lmseed_slack(dim, qn, xn);
    return fmaxf(ivf_score(acc + e, qn, xn), ivf_score(acc - e, qn, xn));
}

// The same seed for the first probes of a batch grouped by list (group.cu): block b takes
// record b of tile_info (list, first pair, pairs — queries whose first probe is that list),
// copies the list's first seed_rows rows into shared memory once, and each warp seeds one
// of the record's queries at a time from them, as ivf_lmseed_kernel's warp does from global
// memory — but by the dot product alone (ivf_dot: one __dp4a a word of 8-bit rows), the
// rows' squared norms taken from row_norms, where the per-query seed forms each row's
// distance (two or three operations a word). Where a batch has several queries a list,
// the rows are read once a list, not once a query (list_major::seed_kernel).
// Launch: LMSEED_GROUPED_THREADS threads; dynamic shared memory of seed_rows rows of
// dim × elem_bytes bytes (rounded up to 16 bytes), then a staged query a warp (as above).
#define LMSEED_GROUPED_THREADS 256
extern "C" __global__ void __launch_bounds__(LMSEED_GROUPED_THREADS) ivf_lmseed_grouped_kernel(
    const unsigned char* __restrict__ queries, int dim, int n_probes, const int4* __restrict__ tile_info,
    const int* __restrict__ pairs, const unsigned* __restrict__ row_norms, int seed_rows,
    const unsigned char* __restrict__ data, int elem_bytes, const long long* __restrict__ list_offset,
    const int* __restrict__ list_size, const long long* __restrict__ ids,
    const unsigned int* __restrict__ filter, long long filter_words, int query_base, int k,
    unsigned int* __restrict__ bound)
{
    const int4 info = tile_info[blockIdx.x];
    const int list = info.x, first = info.y, count = info.z;
    if (count == 0) return;  // past the grid's last record
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row_bytes = dim * elem_bytes;
    const long long off = list_offset[list];
    const int size = min(list_size[list], seed_rows);
    const int groups = (size + 31) / 32;
    // Whole 32-row groups as stored (lists are padded to them; a group is 32 · row_bytes
    // bytes, a multiple of 16, at a multiple of it from the data's start).
    const uint4* src = reinterpret_cast<const uint4*>(data + off * row_bytes);
    uint4* rows = reinterpret_cast<uint4*>(smem_raw);
    const int chunks = groups * 32 * row_bytes / 16;
    for (int c = threadIdx.x; c < chunks; c += LMSEED_GROUPED_THREADS) rows[c] = src[c];
    const int rows_bytes = (seed_rows * row_bytes + 15) / 16 * 16;
    const int stage_bytes = (dim * 4 + 15) / 16 * 16;
    unsigned char* staged = smem_raw + rows_bytes + warp * stage_bytes;
    __syncthreads();
    const float inf = __int_as_float(0x7f800000);
    for (int i = warp; i < count; i += LMSEED_GROUPED_THREADS / 32) {
        const int qi = pairs[first + i] / n_probes;
        // k > 32 seeds nothing; the host only launches k ≤ 32 (list_major::seeds_bounds).
        if (k > 32) {
            if (lane == 0) bound[qi] = 0u;
            continue;
        }
        float qn = ivf_stage_query(queries + (long long)qi * row_bytes, staged, dim, lane, 32);
        for (int o = 16; o > 0; o >>= 1) qn += __shfl_xor_sync(IVF_FULL, qn, o);
        __syncwarp();
        float m1 = inf, m2 = inf;
        for (int g = 0; g < groups; ++g) {
            const int row = g * 32 + lane;
            const unsigned char* group = smem_raw + (long long)g * 32 * row_bytes;
            lmseed_keep_two(lmseed_row_counts(off, size, row, ids, query_base + qi, filter, filter_words)
                                ? lmseed_dot_bound(ivf_dot(group, lane, staged, dim), row_norms[off + row],
                                                   elem_bytes == 1, dim, qn)
                                : inf,
                            m1, m2);
        }
        const float d = lmseed_best32(m1, m2, groups > 1, lane);
        const float kth = __shfl_sync(IVF_FULL, d, k - 1);
        if (lane == 0) bound[qi] = lmseed_bound_key(kth);
        __syncwarp();  // the staged query is the next one's
    }
}
