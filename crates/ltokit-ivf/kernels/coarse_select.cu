// Entry fragment: the second kernel of the coarse search of large batches — each query's
// n_probes best centres from its row of the score matrix that ivf_coarse_scores_kernel
// (coarse.cu) wrote. One kernel ivf_coarse_select_c<CAP>_kernel per top-k capacity.
#include "topk.cuh"
#include "warpsort.cuh"

// Each query's n_probes best centres from its row of the score matrix, best first: one
// warp a query (8 a block), 32 scores at a time offered to the warp's running top-k.
template <int CAP>
__device__ __forceinline__ void ivf_coarse_select_body(
    const float* __restrict__ scores, int nq, int n_centers, int n_probes, long long* __restrict__ out_probes)
{
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
    float thr = inf;
    // n_probes ≤ 32: the list in registers (lane j: entry j), as in the fused kernel.
    float rd = inf, kth = inf;
    int rid = -1;
    // The next 32 scores are loaded before the current ones are offered, so that the
    // load's round trip overlaps the insertions.
    float next = lane < n_centers ? row[lane] : inf;
    for (int c0 = 0; c0 < n_centers; c0 += 32) {
        const float s = next;
        const int c_next = c0 + 32 + lane;
        next = c_next < n_centers ? row[c_next] : inf;
        if (CAP <= 32) kth = ws_offer(rd, rid, n_probes, lane, kth, inf, s, c0 + lane);
        else thr = topk_offer<CAP>(d, id, n_probes, lane, thr, s, c0 + lane);
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
