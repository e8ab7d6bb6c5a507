// Entry fragment: final top-k of each query over its n_probes * k scan candidates (one
// warp per query; one kernel ivf_merge_c<CAP>_kernel per top-k capacity), reported through the metric's ivf_report (e.g. sqrt for L2).
#include "ivf_abi.cuh"
#include "topk.cuh"

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
    for (int base = 0; base < n_cand; base += 32) {
        int j = base + lane;
        float s = inf;
        long long sid = -1;
        if (j < n_cand && ci[j] >= 0) { s = cd[j]; sid = ci[j]; }
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
