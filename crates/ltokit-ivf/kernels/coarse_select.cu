// Entry fragment: the second kernel of the coarse search of large batches — each query's
// n_probes best centres from its row of the score matrix that ivf_coarse_scores_kernel
// (coarse.cu) wrote. One kernel ivf_coarse_select_c<CAP>_kernel per top-k capacity.
#include "topk.cuh"
#include "warpsort.cuh"

// The k-th smallest (1-based) of the warp's 32 · M keys (M a lane), found bit by bit
// from the top: each round counts the keys that share the prefix found so far and have a
// 0 in the next bit.
template <int M>
__device__ __forceinline__ unsigned select_kth_key(const unsigned (&key)[M], int k) {
    unsigned prefix = 0, mask = 0;
    for (int bit = 31; bit >= 0; --bit) {
        const unsigned b = 1u << bit;
        int below = 0;
        #pragma unroll
        for (int m = 0; m < M; ++m) below += __popc(__ballot_sync(IVF_FULL, (key[m] & (mask | b)) == prefix));
        if (below < k) { k -= below; prefix |= b; }
        mask |= b;
    }
    return prefix;
}

// The lane's M smallest keys of the values it offers, ascending: an insertion network.
template <int M>
__device__ __forceinline__ void select_keep_low(unsigned (&low)[M], float value) {
    unsigned v = topk_score_key(value);
    #pragma unroll
    for (int m = 0; m < M; ++m) {
        const unsigned lo = min(low[m], v);
        v = max(low[m], v);
        low[m] = lo;
    }
}

// Offers the scores of centres c0 + lane at or under the bound to the warp's running top
// k (registers for CAP ≤ 32, shared memory above), skipping a chunk of 32 none of whose
// scores is.
template <int CAP>
__device__ __forceinline__ void select_offer_chunk(float v, int c, float bound, int n_probes, int lane, float& rd,
                                                   int& rid, float& kth, float& thr, float* d, int* id) {
    const float inf = __int_as_float(0x7f800000);
    const float s = v <= bound ? v : inf;
    if (__ballot_sync(IVF_FULL, s < inf) == 0) return;
    if (CAP <= 32) kth = ws_offer(rd, rid, n_probes, lane, kth, inf, s, c);
    else thr = topk_offer<CAP>(d, id, n_probes, lane, thr, s, c);
}

// The warp's 32 keys in ascending order across its lanes (lane i: the (i + 1)-th smallest):
// a bitonic network, 15 dependent exchanges where select_kth_key takes 32 ballot rounds.
__device__ __forceinline__ unsigned select_sort_lanes(unsigned key, int lane) {
    #pragma unroll
    for (int size = 2; size <= 32; size <<= 1)
        #pragma unroll
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            const unsigned other = __shfl_xor_sync(IVF_FULL, key, stride);
            const bool ascending = (lane & size) == 0, lower = (lane & stride) == 0;
            key = lower == ascending ? min(key, other) : max(key, other);
        }
    return key;
}

// Candidates of one query that select_ranked ranks at most (two a lane).
#define SELECT_RANKED 64
// Rows of more centres than this take the sorted bound and select_ranked; shorter ones
// the ballot rounds and offers, which offer only their few chunks. Measured on the H100
// (session 34, `docs/gpu-runs/2026-12-06-s34/1-ab/`, `selrank` against main, three rounds,
// batch 10,000): with every row ranked, 1,024 centres gained (lowdim-i8 × 10 / × 20 +3.3 /
// +2.8 %, the selection 32.6 → 18.2 µs at × 10; f32 × 5 +3.2 %, f16 × 10 / × 20 +1.5 /
// +1.8 %) and the images' 256 lost a little at 10 / 20 probes (−0.5 / −1.3 %).
#define SELECT_RANKED_MIN_CENTERS 256

// Where a query's probes go: its row of `out`, and — where `counts` is given (the
// list-major scan's grouping, kernels/group.cu: 2 × n_centers counters, zeroed by the
// host) — each probe counted in its list's pairs, and a first probe (slot 0) also in the
// list's first probes, as ivf_group_count_kernel would count it: the grouping then skips
// that kernel. Each slot is written once.
struct SelectOut {
    long long* out;
    int* counts;
    int n_centers;
};
__device__ __forceinline__ void select_put(const SelectOut& o, int j, int c) {
    o.out[j] = c;
    if (o.counts != nullptr) {
        atomicAdd(&o.counts[c], 1);
        if (j == 0) atomicAdd(&o.counts[o.n_centers + c], 1);
    }
}

// The row's n_probes best centres, best first, into `out`, where at most SELECT_RANKED of
// its scores are at or under `bound` (the caller's bound, at least the n_probes-th
// smallest; `v`: the lane's chunks of the row, NaN past it): those candidates go into
// the warp's `cand_key` / `cand_c` as (score key, centre), re-read from the row (a lane
// has a few: its chunks are registers, which an index known only at run time would put
// in local memory), and each one's rank is the count of candidates before it by key, then
// centre — the order of the offers among equal scores. Returns false, writing nothing,
// where there are more candidates; the caller offers them.
template <int ROW_CHUNKS>
__device__ __forceinline__ bool select_ranked(const float (&v)[ROW_CHUNKS], const float* row, float bound, int n_probes,
                                              int lane, unsigned* cand_key, int* cand_c, const SelectOut& out) {
    unsigned mask = 0;
    #pragma unroll
    for (int j = 0; j < ROW_CHUNKS; ++j) mask |= (v[j] <= bound ? 1u : 0u) << j;
    const int count = __popc(mask);
    int end = count;  // the lanes' counts up to this one's
    #pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const int o = __shfl_up_sync(IVF_FULL, end, off);
        if (lane >= off) end += o;
    }
    const int total = __shfl_sync(IVF_FULL, end, 31);
    if (total > SELECT_RANKED) return false;
    for (int at = end - count; mask != 0; mask &= mask - 1, ++at) {
        const int c = 32 * (__ffs(mask) - 1) + lane;
        cand_key[at] = topk_score_key(row[c]);
        cand_c[at] = c;
    }
    __syncwarp();
    // Candidates lane and lane + 32 of this lane.
    const unsigned k0 = lane < total ? cand_key[lane] : 0u, k1 = lane + 32 < total ? cand_key[lane + 32] : 0u;
    const int c0 = lane < total ? cand_c[lane] : 0, c1 = lane + 32 < total ? cand_c[lane + 32] : 0;
    int r0 = 0, r1 = 0;
    #pragma unroll 4
    for (int t = 0; t < total; ++t) {
        const unsigned k = cand_key[t];
        const int c = cand_c[t];
        r0 += k < k0 || (k == k0 && c < c0);
        r1 += k < k1 || (k == k1 && c < c1);
    }
    if (lane < total && r0 < n_probes) select_put(out, r0, c0);
    if (lane + 32 < total && r1 < n_probes) select_put(out, r1, c1);
    // Fewer candidates than probes (fewer centres): the rest is centre 0, as the offers leave it.
    for (int j = total + lane; j < n_probes; j += 32) select_put(out, j, 0);
    __syncwarp();
    return true;
}

// Each query's n_probes best centres from its row of the score matrix, best first: one
// warp a query (select_warps a block). First a bound: each lane keeps the M = ⌈CAP / 32⌉ smallest
// scores it reads, and the n_probes-th smallest of those 32 · M distinct entries is at
// least the row's n_probes-th smallest. Then only the scores at or under the bound — on
// the order of n_probes, not the ~n_probes · ln(n_centers / n_probes) insertions of
// offering every score — go to the warp's running top-k, centre c from lane c % 32 in
// order of c / 32, so the choice among ties is the same in both forms:
//   ROW_CHUNKS = 0: the row read twice (the second read from the cache);
//   ROW_CHUNKS > 0: the row (n_centers ≤ 32 · ROW_CHUNKS, the host's choice) held in
//     registers, a value a lane a chunk: every load in flight at once (the first form
//     makes ⌈n / 128⌉ dependent rounds of four loads) and no second read. Its registers
//     keep three blocks an SM instead of eight, which pays only where rows are long:
//     measured on the H200 (session 18, ncu): 1,024 centres 43.2 → 33.8 µs, 256 centres
//     (the first form's whole row in two rounds) 16.2 → 22.0 µs. Device QPS (session 21,
//     `docs/gpu-runs/2026-12-02-s21/3-final/`, `fcsr` against `final` in the same call,
//     two rounds, the search replayed): the 1,024-centre sets +0.3 to +2.2 % at batch
//     10,000 (i8 × 10 +2.2 %: the kernel 43.3 → 33.5 µs) and +0.0 to +1.5 % at 1,000;
//     session 20's call, without the replay, had them within its noise. Past
//     SELECT_RANKED_MIN_CENTERS centres its bound is the n_probes-th of the lanes' minima
//     sorted across the warp (select_sort_lanes), and where at most SELECT_RANKED scores
//     are under it (about 12 at 10 probes of 1,024 centres, 31 at 20) they are ranked
//     against each other (select_ranked) instead of offered: 1,226 instructions a query at
//     10 probes went mostly to the bound's 32 ballot rounds and the offers' ballot a chunk
//     and insertions, one chain.
// Warps (queries) a block of capacity CAP holds: eight, or four where eight warps' top-k
// lists would pass the 48 KiB of static shared memory a kernel may declare (CAP 1,024:
// 64 KiB, which ptxas refuses). gpu/coarse/plan.rs `select_queries_per_block` launches so.
template <int CAP>
__host__ __device__ constexpr int select_warps() { return 8 * CAP * 8 <= 48 * 1024 ? 8 : 4; }

template <int CAP, int ROW_CHUNKS>
__device__ __forceinline__ void ivf_coarse_select_body(
    const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes,
    int* __restrict__ counts)
{
    constexpr int M = CAP <= 32 ? 1 : CAP / 32;
    constexpr int WARPS = select_warps<CAP>();
    __shared__ float top_d[WARPS * CAP];
    __shared__ int top_i[WARPS * CAP];
    // select_ranked's candidates (rows in registers only).
    __shared__ unsigned cand_key[ROW_CHUNKS > 0 ? WARPS * SELECT_RANKED : 1];
    __shared__ int cand_c[ROW_CHUNKS > 0 ? WARPS * SELECT_RANKED : 1];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q = blockIdx.x * WARPS + warp;
    if (q >= nq) return;
    float* d = top_d + warp * CAP;
    int* id = top_i + warp * CAP;
    topk_init<CAP>(d, id, lane);
    const float* row = scores + (long long)q * n_centers;
    const float inf = __int_as_float(0x7f800000);

    // The lane's M smallest, ascending (as keys: +inf's key where it read fewer).
    unsigned low[M];
    #pragma unroll
    for (int m = 0; m < M; ++m) low[m] = topk_score_key(inf);
    float thr = inf;
    // n_probes ≤ 32: the list in registers (lane j: entry j), as in the fused kernel.
    float rd = inf, kth = inf;
    int rid = -1;
    if (ROW_CHUNKS > 0 && n_centers <= 32 * ROW_CHUNKS) {
        // Past the row: NaN, which no comparison takes and fminf passes over.
        float v[ROW_CHUNKS > 0 ? ROW_CHUNKS : 1];
        #pragma unroll
        for (int j = 0; j < ROW_CHUNKS; ++j) {
            const int c = 32 * j + lane;
            v[j] = c < n_centers ? row[c] : __int_as_float(0x7fffffff);
        }
        float bound;
        if (n_centers > SELECT_RANKED_MIN_CENTERS) {
            float lane_min = v[0];
            #pragma unroll
            for (int j = 1; j < ROW_CHUNKS; ++j) lane_min = fminf(lane_min, v[j]);
            bound = topk_key_score(
                __shfl_sync(IVF_FULL, select_sort_lanes(topk_score_key(lane_min), lane), n_probes - 1));
            const SelectOut out = {out_probes + (long long)q * n_probes, counts, n_centers};
            if (select_ranked(v, row, bound, n_probes, lane, cand_key + warp * SELECT_RANKED,
                              cand_c + warp * SELECT_RANKED, out))
                return;
        } else {
            #pragma unroll
            for (int j = 0; j < ROW_CHUNKS; ++j) select_keep_low(low, v[j]);
            bound = topk_key_score(select_kth_key(low, n_probes));
        }
        #pragma unroll
        for (int j = 0; j < ROW_CHUNKS; ++j)
            if (32 * j < n_centers)
                select_offer_chunk<CAP>(v[j], 32 * j + lane, bound, n_probes, lane, rd, rid, kth, thr, d, id);
    } else {
        #pragma unroll 4
        for (int c = lane; c < n_centers; c += 32) select_keep_low(low, row[c]);
        const float bound = topk_key_score(select_kth_key(low, n_probes));
        for (int c0 = 0; c0 < n_centers; c0 += 32) {
            const int c = c0 + lane;
            select_offer_chunk<CAP>(c < n_centers ? row[c] : inf, c, bound, n_probes, lane, rd, rid, kth, thr, d, id);
        }
    }
    if (CAP <= 32 && lane < n_probes) id[lane] = rid;
    __syncwarp();
    const SelectOut out = {out_probes + (long long)q * n_probes, counts, n_centers};
    for (int j = lane; j < n_probes; j += 32) select_put(out, j, id[j] >= 0 ? id[j] : 0);
}

#define IVF_COARSE_SELECT_KERNEL(CAP)                                                          \
    extern "C" __global__ void __launch_bounds__(256) ivf_coarse_select_c##CAP##_kernel(      \
        const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes, \
        int count_pairs, int* __restrict__ counts) { \
        ivf_coarse_select_body<CAP, 0>(scores, nq, n_centers, n_probes, out_probes, count_pairs ? counts : nullptr);           \
    }
IVF_FOR_EACH_CAPACITY(IVF_COARSE_SELECT_KERNEL)

// Rows of up to 1,024 centres in registers, for capacities up to 32 (larger ones keep
// M > 1 keys a lane and would spill beside the row): gpu/coarse/plan.rs `select_kernel`.
#define SELECT_ROW_CHUNKS 32
#define IVF_COARSE_SELECT_ROWS_KERNEL(CAP)                                                     \
    extern "C" __global__ void __launch_bounds__(256) ivf_coarse_select_rows_c##CAP##_kernel( \
        const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes, \
        int count_pairs, int* __restrict__ counts) { \
        ivf_coarse_select_body<CAP, SELECT_ROW_CHUNKS>(scores, nq, n_centers, n_probes, out_probes, count_pairs ? counts : nullptr); \
    }
IVF_COARSE_SELECT_ROWS_KERNEL(1) IVF_COARSE_SELECT_ROWS_KERNEL(2) IVF_COARSE_SELECT_ROWS_KERNEL(4)
IVF_COARSE_SELECT_ROWS_KERNEL(8) IVF_COARSE_SELECT_ROWS_KERNEL(16) IVF_COARSE_SELECT_ROWS_KERNEL(32)

// Short rows and few probes (n_centers ≤ 256, CAP ≤ 8: the images' 256 lists at 2 to 8
// probes): each lane holds its eight centres c = 32 j + lane as 64-bit keys (the score's
// key, then c: distinct, and among equal scores the lower centre first, as in the forms
// above), sorts them, and the warp takes n_probes rounds of its smallest head, whose lane
// pops it, where the bound and offers above took 678 instructions a query at 2 probes.
// Measured on the H100 (session 32, `docs/gpu-runs/2026-12-06-s32/4-sshort/`, against
// main, three rounds; ncu at batch 10,000): the images' selection 16.4 → 9.9 µs at 2
// probes, 17.7 → 15.3 µs at 5; device QPS images +2.6 / +1.2 % (× 2 / × 5) at 10,000 and
// +2.1 / +1.6 % at 1,000. At 10 probes (CAP 16, eight rounds more) it was level with the
// form above (20.7 against 20.6 µs), so the form stops at 8.
#define SELECT_SHORT_CHUNKS 8
typedef unsigned long long SelectKey;

// The compare-exchange of a sorting network: a ≤ b after.
__device__ __forceinline__ void select_order(SelectKey& a, SelectKey& b) {
    const SelectKey lo = a < b ? a : b;
    b = a < b ? b : a;
    a = lo;
}

template <int CAP>
__device__ __forceinline__ void ivf_coarse_select_short_body(
    const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes,
    int* __restrict__ counts)
{
    static_assert(CAP <= SELECT_SHORT_CHUNKS, "a lane gives at most its eight centres");
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q = blockIdx.x * select_warps<CAP>() + warp;
    if (q >= nq) return;
    const float* row = scores + (long long)q * n_centers;
    const SelectKey none = ~0ull;
    SelectKey v[SELECT_SHORT_CHUNKS];
    #pragma unroll
    for (int j = 0; j < SELECT_SHORT_CHUNKS; ++j) {
        const int c = 32 * j + lane;
        v[j] = c < n_centers ? (SelectKey)topk_score_key(row[c]) << 32 | (unsigned)c : none;
    }
    if (CAP == 1) {
        #pragma unroll
        for (int j = 1; j < SELECT_SHORT_CHUNKS; ++j) v[0] = v[j] < v[0] ? v[j] : v[0];
    } else {
        // Batcher's 19-comparator network for eight.
        select_order(v[0], v[1]); select_order(v[2], v[3]); select_order(v[4], v[5]); select_order(v[6], v[7]);
        select_order(v[0], v[2]); select_order(v[1], v[3]); select_order(v[4], v[6]); select_order(v[5], v[7]);
        select_order(v[1], v[2]); select_order(v[5], v[6]); select_order(v[0], v[4]); select_order(v[3], v[7]);
        select_order(v[1], v[5]); select_order(v[2], v[6]);
        select_order(v[1], v[4]); select_order(v[3], v[6]);
        select_order(v[2], v[4]); select_order(v[3], v[5]);
        select_order(v[3], v[4]);
    }
    SelectKey mine = none;
    for (int p = 0; p < n_probes; ++p) {
        SelectKey m = v[0];
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            const SelectKey o = __shfl_xor_sync(IVF_FULL, m, off);
            m = o < m ? o : m;
        }
        if (v[0] == m) {
            #pragma unroll
            for (int i = 0; i + 1 < CAP; ++i) v[i] = v[i + 1];
            v[CAP - 1] = none;
        }
        if (lane == p) mine = m;
    }
    const SelectOut out = {out_probes + (long long)q * n_probes, counts, n_centers};
    if (lane < n_probes) select_put(out, lane, mine == none ? 0 : (int)(mine & 0xffffffffu));
}

#define IVF_COARSE_SELECT_SHORT_KERNEL(CAP)                                                    \
    extern "C" __global__ void __launch_bounds__(256) ivf_coarse_select_short_c##CAP##_kernel( \
        const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes, \
        int count_pairs, int* __restrict__ counts) { \
        ivf_coarse_select_short_body<CAP>(scores, nq, n_centers, n_probes, out_probes, count_pairs ? counts : nullptr);        \
    }
IVF_COARSE_SELECT_SHORT_KERNEL(1) IVF_COARSE_SELECT_SHORT_KERNEL(2) IVF_COARSE_SELECT_SHORT_KERNEL(4)
IVF_COARSE_SELECT_SHORT_KERNEL(8)
