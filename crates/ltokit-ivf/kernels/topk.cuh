// A warp's running top-k: a sorted (ascending) list of IVF_CAPACITY (score, id) pairs in
// shared memory, padded with +inf. Insertions are done by the whole warp in parallel.
#pragma once

#ifndef IVF_CAPACITY
#error "compile with -DIVF_CAPACITY=<power of two>"
#endif

#define IVF_FULL 0xffffffffu
#define IVF_PER_LANE ((IVF_CAPACITY + 31) / 32)

__device__ __forceinline__ void topk_init(float* d, long long* id, int lane) {
    for (int j = lane; j < IVF_CAPACITY; j += 32) { d[j] = __int_as_float(0x7f800000); id[j] = -1; }
    __syncwarp();
}

// Inserts (s, sid) into the first `k` entries if it beats the k-th; all lanes call it with
// the same arguments. Returns the new k-th score.
__device__ __forceinline__ float topk_insert(float* d, long long* id, int k, int lane, float s, long long sid) {
    int below = 0;
    for (int j = lane; j < k; j += 32) below += (d[j] <= s) ? 1 : 0;
    for (int off = 16; off > 0; off >>= 1) below += __shfl_xor_sync(IVF_FULL, below, off);
    int pos = below;
    if (pos < k) {
        float od[IVF_PER_LANE];
        long long oi[IVF_PER_LANE];
        #pragma unroll
        for (int r = 0; r < IVF_PER_LANE; ++r) {
            int j = lane + 32 * r;
            if (j > pos && j < k) { od[r] = d[j - 1]; oi[r] = id[j - 1]; }
        }
        __syncwarp();
        #pragma unroll
        for (int r = 0; r < IVF_PER_LANE; ++r) {
            int j = lane + 32 * r;
            if (j > pos && j < k) { d[j] = od[r]; id[j] = oi[r]; }
            if (j == pos) { d[j] = s; id[j] = sid; }
        }
        __syncwarp();
    }
    return d[k - 1];
}

// Offers one candidate per lane; the warp inserts those that beat the current k-th.
__device__ __forceinline__ float topk_offer(float* d, long long* id, int k, int lane, float thr, float s, long long sid) {
    unsigned m = __ballot_sync(IVF_FULL, s < thr);
    while (m) {
        int src = __ffs(m) - 1;
        m &= m - 1;
        float cs = __shfl_sync(IVF_FULL, s, src);
        long long cid = __shfl_sync(IVF_FULL, sid, src);
        if (cs < thr) thr = topk_insert(d, id, k, lane, cs, cid);
    }
    return thr;
}
