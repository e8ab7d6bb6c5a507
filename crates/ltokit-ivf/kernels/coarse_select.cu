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

// Each query's n_probes best centres from its row of the score matrix, best first: one
// warp a query (8 a block). First a bound: each lane keeps the M = ⌈CAP / 32⌉ smallest
// scores it reads, and the n_probes-th smallest of those 32 · M distinct entries is at
// least the row's n_probes-th smallest. Then only the scores at or under the bound — on
// the order of n_probes, not the ~n_probes · ln(n_centers / n_probes) insertions of
// offering every score — go to the warp's running top-k (the row's second read comes
// from the cache), in the same order as before, so the choice among ties is unchanged.
template <int CAP>
__device__ __forceinline__ void ivf_coarse_select_body(
    const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes)
{
    constexpr int M = CAP <= 32 ? 1 : CAP / 32;
    __shared__ float top_d[8 * CAP];
    __shared__ int top_i[8 * CAP];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q = blockIdx.x * 8 + warp;
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
    #pragma unroll 4
    for (int c = lane; c < n_centers; c += 32) {
        unsigned v = topk_score_key(row[c]);
        #pragma unroll
        for (int m = 0; m < M; ++m) {
            const unsigned lo = min(low[m], v);
            v = max(low[m], v);
            low[m] = lo;
        }
    }
    const float bound = topk_key_score(select_kth_key(low, n_probes));

    float thr = inf;
    // n_probes ≤ 32: the list in registers (lane j: entry j), as in the fused kernel.
    float rd = inf, kth = inf;
    int rid = -1;
    for (int c0 = 0; c0 < n_centers; c0 += 32) {
        const int c = c0 + lane;
        const float v = c < n_centers ? row[c] : inf;
        const float s = v <= bound ? v : inf;
        if (__ballot_sync(IVF_FULL, s < inf) == 0) continue;
        if (CAP <= 32) kth = ws_offer(rd, rid, n_probes, lane, kth, inf, s, c);
        else thr = topk_offer<CAP>(d, id, n_probes, lane, thr, s, c);
    }
    if (CAP <= 32 && lane < n_probes) id[lane] = rid;
    __syncwarp();
    long long* out = out_probes + (long long)q * n_probes;
    for (int j = lane; j < n_probes; j += 32) out[j] = id[j] >= 0 ? id[j] : 0;
}

#define IVF_COARSE_SELECT_KERNEL(CAP)                                                          \
    extern "C" __global__ void __launch_bounds__(256) ivf_coarse_select_c##CAP##_kernel(      \
        const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes) { \
        ivf_coarse_select_body<CAP>(scores, nq, n_centers, n_probes, out_probes);              \
    }
IVF_FOR_EACH_CAPACITY(IVF_COARSE_SELECT_KERNEL)
