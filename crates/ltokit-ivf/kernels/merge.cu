// Entry fragment: final top-k of each query over its candidates (n_cand a query), reported
// through the metric's ivf_report (e.g. sqrt for L2). Four kernels: for large batches a
// warp per query, its running top-k in registers for k ≤ 32 (ivf_merge_regs_kernel, eight
// queries a block) or in shared memory (ivf_merge_c<CAP>_kernel, one kernel per top-k
// capacity); and for small batches, where one query's merge is the latency, a block per
// query: ivf_merge_warps_kernel (k ≤ 32) with each warp's best 32 in registers, merged
// over the block in a tree, and ivf_merge_sort_kernel (larger k) sorting all candidates
// in shared memory (bitonic; up to IVF_SORT_MAX).
#include "ivf_abi.cuh"
#include "topk.cuh"
#include "warpsort.cuh"

#define IVF_MERGE_PARAMS const float* __restrict__ cand_d, const long long* __restrict__ cand_id, \
    int n_cand, int k, float* __restrict__ out_d, long long* __restrict__ out_id

template <int CAP>
__device__ __forceinline__ void ivf_merge_body(IVF_MERGE_PARAMS)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    long long* id = reinterpret_cast<long long*>(smem_raw);
    float* d = reinterpret_cast<float*>(id + CAP);
    const int qi = blockIdx.x;
    const int lane = threadIdx.x;
    topk_init<CAP>(d, id, lane);
    const float inf = __int_as_float(0x7f800000);
    float thr = inf;
    const float* cd = cand_d + (long long)qi * n_cand;
    const long long* ci = cand_id + (long long)qi * n_cand;
    // Each round loads the next 32 candidates before offering the current ones, so that
    // the loads' round trip overlaps the insertions.
    float next_s = lane < n_cand ? cd[lane] : inf;
    long long next_id = lane < n_cand ? ci[lane] : -1;
    for (int base = 0; base < n_cand; base += 32) {
        const float s = next_id >= 0 ? next_s : inf;
        const long long sid = next_id >= 0 ? next_id : -1;
        const int j = base + 32 + lane;
        next_s = j < n_cand ? cd[j] : inf;
        next_id = j < n_cand ? ci[j] : -1;
        thr = topk_offer<CAP>(d, id, k, lane, thr, s, sid);
    }
    for (int j = lane; j < k; j += 32) {
        bool found = id[j] >= 0;
        out_d[(long long)qi * k + j] = found ? ivf_report(d[j]) : inf;
        out_id[(long long)qi * k + j] = id[j];
    }
}

#define IVF_MERGE_KERNEL(CAP)                                                   \
    extern "C" __global__ void __launch_bounds__(32) ivf_merge_c##CAP##_kernel(IVF_MERGE_PARAMS) { \
        ivf_merge_body<CAP>(cand_d, cand_id, n_cand, k, out_d, out_id);       \
    }
IVF_FOR_EACH_CAPACITY(IVF_MERGE_KERNEL)

#define IVF_SORT_MAX 2048     // candidates a query, at most (merge.rs SORT_MAX_CANDIDATES)
#define IVF_SORT_THREADS 256  // merge.rs SORT_THREADS


extern "C" __global__ void __launch_bounds__(IVF_SORT_THREADS) ivf_merge_sort_kernel(IVF_MERGE_PARAMS)
{
    __shared__ float sd[IVF_SORT_MAX];
    __shared__ long long si[IVF_SORT_MAX];
    const int qi = blockIdx.x;
    const float inf = __int_as_float(0x7f800000);
    int n = 1;
    while (n < n_cand) n <<= 1;
    const float* cd = cand_d + (long long)qi * n_cand;
    const long long* ci = cand_id + (long long)qi * n_cand;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        float s = inf;
        long long id = -1;
        if (j < n_cand) {
            const long long c = ci[j];
            if (c >= 0) { s = cd[j]; id = c; }
        }
        sd[j] = s;
        si[j] = id;
    }
    __syncthreads();
    // Bitonic sort, ascending: n / 2 compare-exchanges a stage.
    for (int size = 2; size <= n; size <<= 1) {
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            for (int t = threadIdx.x; t < n / 2; t += blockDim.x) {
                const int lo = 2 * t - (t & (stride - 1));
                const int hi = lo + stride;
                const bool ascending = (lo & size) == 0;
                const float dl = sd[lo], dh = sd[hi];
                const long long il = si[lo], ih = si[hi];
                if (ascending ? ws_before(dh, ih, dl, il) : ws_before(dl, il, dh, ih)) {
                    sd[lo] = dh; si[lo] = ih;
                    sd[hi] = dl; si[hi] = il;
                }
            }
            __syncthreads();
        }
    }
    for (int j = threadIdx.x; j < k; j += blockDim.x) {
        // As the warp merge: an infinite score is no neighbour.
        const bool found = j < n && si[j] >= 0 && sd[j] < inf;
        out_d[(long long)qi * k + j] = found ? ivf_report(sd[j]) : inf;
        out_id[(long long)qi * k + j] = found ? si[j] : -1;
    }
}

#define IVF_WMERGE_WARPS 16  // merge.rs WARPS_MERGE_THREADS / 32

// k ≤ 32: warp w takes candidates w·32 + lane, stepping by the block; each round it sorts
// its 32 and merges them into its running best 32 (skipped when none beats the k-th);
// then the warps' lists merge pairwise in shared memory, and warp 0 writes the top k.
extern "C" __global__ void __launch_bounds__(32 * IVF_WMERGE_WARPS) ivf_merge_warps_kernel(IVF_MERGE_PARAMS)
{
    __shared__ float sd[IVF_WMERGE_WARPS][32];
    __shared__ long long si[IVF_WMERGE_WARPS][32];
    const int qi = blockIdx.x;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float inf = __int_as_float(0x7f800000);
    const float* cd = cand_d + (long long)qi * n_cand;
    const long long* ci = cand_id + (long long)qi * n_cand;
    const int step = 32 * IVF_WMERGE_WARPS;
    float d = inf;
    long long id = -1;
    // The next round's candidates load before this round is sorted.
    int j = warp * 32 + lane;
    float next_s = j < n_cand ? cd[j] : inf;
    long long next_id = j < n_cand ? ci[j] : -1;
    for (int base = warp * 32; base < n_cand; base += step) {
        float s = next_id >= 0 ? next_s : inf;
        long long sid = next_id >= 0 ? next_id : -1;
        j = base + step + lane;
        next_s = j < n_cand ? cd[j] : inf;
        next_id = j < n_cand ? ci[j] : -1;
        const float kth = __shfl_sync(WS_FULL, d, k - 1);
        if (!__ballot_sync(WS_FULL, s <= kth)) continue;
        ws_sort32(s, sid, lane);
        ws_merge32(d, id, s, sid, lane);
    }
    sd[warp][lane] = d;
    si[warp][lane] = id;
    __syncthreads();
    #pragma unroll
    for (int half = IVF_WMERGE_WARPS / 2; half > 0; half >>= 1) {
        if (warp < half) {
            ws_merge32(d, id, sd[warp + half][lane], si[warp + half][lane], lane);
            sd[warp][lane] = d;
            si[warp][lane] = id;
        }
        __syncthreads();
    }
    if (warp == 0 && lane < k) {
        // As the other merges: an infinite score is no neighbour.
        const bool found = id >= 0 && d < inf;
        out_d[(long long)qi * k + lane] = found ? ivf_report(d) : inf;
        out_id[(long long)qi * k + lane] = found ? id : -1;
    }
}

#define IVF_RMERGE_WARPS 8  // merge.rs REGS_MERGE_QUERIES_PER_BLOCK

// Large batches, k ≤ 32: warp w of block b takes query b · IVF_RMERGE_WARPS + w and keeps
// its best 32 in registers (lane j: entry j, warpsort.cuh). Its candidates come 32 at a
// time, the next round loading while this one is merged: a round where many beat the k-th
// is sorted and merged at once (the first, while the list is empty), one with a few
// inserts them one by one, one with none is skipped.
extern "C" __global__ void __launch_bounds__(32 * IVF_RMERGE_WARPS) ivf_merge_regs_kernel(IVF_MERGE_PARAMS, int nq)
{
    const int lane = threadIdx.x % 32;
    const int qi = blockIdx.x * IVF_RMERGE_WARPS + threadIdx.x / 32;
    if (qi >= nq) return;
    const float inf = __int_as_float(0x7f800000);
    const float* cd = cand_d + (long long)qi * n_cand;
    const long long* ci = cand_id + (long long)qi * n_cand;
    float d = inf;
    long long id = -1;
    float kth = inf;
    float next_s = lane < n_cand ? cd[lane] : inf;
    long long next_id = lane < n_cand ? ci[lane] : -1;
    for (int base = 0; base < n_cand; base += 32) {
        float s = next_id >= 0 ? next_s : inf;
        long long sid = next_id >= 0 ? next_id : -1;
        const int j = base + 32 + lane;
        next_s = j < n_cand ? cd[j] : inf;
        next_id = j < n_cand ? ci[j] : -1;
        const int passing = __popc(__ballot_sync(WS_FULL, s < kth));
        if (passing >= WS_MANY) {
            ws_sort32(s, sid, lane);
            ws_merge32(d, id, s, sid, lane);
            kth = __shfl_sync(WS_FULL, d, k - 1);
        } else if (passing > 0) {
            kth = ws_offer(d, id, k, lane, kth, inf, s, sid);
        }
    }
    if (lane < k) {
        // As the other merges: an infinite score is no neighbour.
        const bool found = id >= 0 && d < inf;
        out_d[(long long)qi * k + lane] = found ? ivf_report(d) : inf;
        out_id[(long long)qi * k + lane] = found ? id : -1;
    }
}
