// A warp's running top-k: a sorted (ascending) list of CAP (score, id) pairs in shared
// memory, padded with +inf. Insertions are done by the whole warp in parallel. The id is
// whatever the caller keeps (a source id, or a row position that is turned into one later).
//
// Each entry fragment instantiates its kernel once per capacity (IVF_FOR_EACH_CAPACITY),
// named <kernel>_c<CAP>_kernel; a plan links one of them (nvJitLink -kernels-used drops
// the rest; it matches names by prefix, hence the suffix: ivf_scan_c1 would keep c16,
// c128 and c1024 too). One module of all capacities stores the shared code once, where one fragment
// per capacity stored it eleven times.
#pragma once

#define IVF_FULL 0xffffffffu

// A score's order-preserving unsigned key (a < b exactly when key(a) < key(b); NaNs sort
// past +inf), and back: for selections by bits and for atomics on scores.
__device__ __forceinline__ unsigned topk_score_key(float s) {
    const unsigned b = __float_as_uint(s);
    return b & 0x80000000u ? ~b : b | 0x80000000u;
}
__device__ __forceinline__ float topk_key_score(unsigned key) {
    return __uint_as_float(key & 0x80000000u ? key & 0x7fffffffu : ~key);
}

// A query's bound in the list-major scan: a score no better than its final k-th (k rows
// scoring under it exist among those it probes), kept as an order-reversing key so that
// a zeroed buffer means +inf and atomicMax lowers it. ivf_lmseed (lmseed.cu) sets it from
// a first look at each query's nearest list; every tile of ivf_lmscan (lmscan.cu) lowers
// it to the k-th score its pair reaches and skips rows scoring at or above it — most of a
// tile's first rows, which would otherwise rebuild each pair's top k from nothing.
__device__ __forceinline__ unsigned int lm_bound_key(float score) {
    return ~topk_score_key(score);
}
__device__ __forceinline__ float lm_bound_score(unsigned int key) {
    return key == 0u ? __int_as_float(0x7f800000) : topk_key_score(~key);
}

// Calls X(CAP) for every top-k capacity (powers of two up to the largest k, 1024).
#define IVF_FOR_EACH_CAPACITY(X) X(1) X(2) X(4) X(8) X(16) X(32) X(64) X(128) X(256) X(512) X(1024)

template <int CAP, typename Id>
__device__ __forceinline__ void topk_init(float* d, Id* id, int lane) {
    for (int j = lane; j < CAP; j += 32) { d[j] = __int_as_float(0x7f800000); id[j] = -1; }
    __syncwarp();
}

// Inserts (s, sid) into the first `k` entries if it beats the k-th; all lanes call it with
// the same arguments. Returns the new k-th score.
template <int CAP, typename Id>
__device__ __forceinline__ float topk_insert(float* d, Id* id, int k, int lane, float s, Id sid) {
    constexpr int PER_LANE = (CAP + 31) / 32;
    int below = 0;
    for (int j = lane; j < k; j += 32) below += (d[j] <= s) ? 1 : 0;
    for (int off = 16; off > 0; off >>= 1) below += __shfl_xor_sync(IVF_FULL, below, off);
    int pos = below;
    if (pos < k) {
        float od[PER_LANE];
        Id oi[PER_LANE];
        #pragma unroll
        for (int r = 0; r < PER_LANE; ++r) {
            int j = lane + 32 * r;
            if (j > pos && j < k) { od[r] = d[j - 1]; oi[r] = id[j - 1]; }
        }
        __syncwarp();
        #pragma unroll
        for (int r = 0; r < PER_LANE; ++r) {
            int j = lane + 32 * r;
            if (j > pos && j < k) { d[j] = od[r]; id[j] = oi[r]; }
            if (j == pos) { d[j] = s; id[j] = sid; }
        }
        __syncwarp();
    }
    return d[k - 1];
}

// Offers one candidate per lane; the warp inserts those that beat the current k-th.
template <int CAP, typename Id>
__device__ __forceinline__ float topk_offer(float* d, Id* id, int k, int lane, float thr, float s, Id sid) {
    unsigned m = __ballot_sync(IVF_FULL, s < thr);
    while (m) {
        int src = __ffs(m) - 1;
        m &= m - 1;
        float cs = __shfl_sync(IVF_FULL, s, src);
        Id cid = __shfl_sync(IVF_FULL, sid, src);
        if (cs < thr) thr = topk_insert<CAP>(d, id, k, lane, cs, cid);
    }
    return thr;
}
