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
//     session 20's call, without the replay, had them within its noise.
// Warps (queries) a block of capacity CAP holds: eight, or four where eight warps' top-k
// lists would pass the 48 KiB of static shared memory a kernel may declare (CAP 1,024:
// 64 KiB, which ptxas refuses). gpu/coarse/plan.rs `select_queries_per_block` launches so.
template <int CAP>
__host__ __device__ constexpr int select_warps() { return 8 * CAP * 8 <= 48 * 1024 ? 8 : 4; }

template <int CAP, int ROW_CHUNKS>
__device__ __forceinline__ void ivf_coarse_select_body(
    const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes)
{
    constexpr int M = CAP <= 32 ? 1 : CAP / 32;
    constexpr int WARPS = select_warps<CAP>();
    __shared__ float top_d[WARPS * CAP];
    __shared__ int top_i[WARPS * CAP];
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
        float v[ROW_CHUNKS > 0 ? ROW_CHUNKS : 1];
        #pragma unroll
        for (int j = 0; j < ROW_CHUNKS; ++j) {
            const int c = 32 * j + lane;
            v[j] = c < n_centers ? row[c] : inf;
        }
        #pragma unroll
        for (int j = 0; j < ROW_CHUNKS; ++j) select_keep_low(low, v[j]);
        const float bound = topk_key_score(select_kth_key(low, n_probes));
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
    long long* out = out_probes + (long long)q * n_probes;
    for (int j = lane; j < n_probes; j += 32) out[j] = id[j] >= 0 ? id[j] : 0;
}

#define IVF_COARSE_SELECT_KERNEL(CAP)                                                          \
    extern "C" __global__ void __launch_bounds__(256) ivf_coarse_select_c##CAP##_kernel(      \
        const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes) { \
        ivf_coarse_select_body<CAP, 0>(scores, nq, n_centers, n_probes, out_probes);           \
    }
IVF_FOR_EACH_CAPACITY(IVF_COARSE_SELECT_KERNEL)

// Rows of up to 1,024 centres in registers, for capacities up to 32 (larger ones keep
// M > 1 keys a lane and would spill beside the row): gpu/coarse/plan.rs `select_kernel`.
#define SELECT_ROW_CHUNKS 32
#define IVF_COARSE_SELECT_ROWS_KERNEL(CAP)                                                     \
    extern "C" __global__ void __launch_bounds__(256) ivf_coarse_select_rows_c##CAP##_kernel( \
        const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes) { \
        ivf_coarse_select_body<CAP, SELECT_ROW_CHUNKS>(scores, nq, n_centers, n_probes, out_probes); \
    }
IVF_COARSE_SELECT_ROWS_KERNEL(1) IVF_COARSE_SELECT_ROWS_KERNEL(2) IVF_COARSE_SELECT_ROWS_KERNEL(4)
IVF_COARSE_SELECT_ROWS_KERNEL(8) IVF_COARSE_SELECT_ROWS_KERNEL(16) IVF_COARSE_SELECT_ROWS_KERNEL(32)
