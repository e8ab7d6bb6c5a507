// Entry fragment: the IVF-Flat interleaved scan with a fused per-block top-k, one kernel
// ivf_scan_c<CAP>_kernel per top-k capacity.
// Block (x, query q) scans the lists probes[q * n_probes + p] for p in
// [g * probes_per_block, (g + 1) * probes_per_block), g = x / row_splits, one after the
// other (short lists: the query is staged once and the top-k carries over); each of its 4
// warps takes 32-row groups in turn, lane l scoring row l of the group; each warp keeps its
// own top-k, and warp 0 merges the four and writes k candidates for (q, x). Small batches
// also cut each list over row_splits blocks (split x % row_splits takes every row_splits-th
// run of 4 groups), so that a few queries still fill the GPU. ivf_merge then selects the
// final top-k of each query across its gridDim.x candidate sets. Queries arrive in the lists' own type
// (`elem_bytes` per value) and are staged in shared memory by the distance fragment.
#include "ivf_abi.cuh"
#include "topk.cuh"
#include "warpsort.cuh"

#define IVF_WARPS 4

#define IVF_SCAN_PARAMS                                                                          \
    const unsigned char* __restrict__ queries, int dim, int n_probes, int probes_per_block,   \
    int row_splits, const long long* __restrict__ probes,                                     \
    const unsigned char* __restrict__ data, int elem_bytes, const long long* __restrict__ list_offset, \
    const int* __restrict__ list_size, const long long* __restrict__ ids,                     \
    const unsigned int* __restrict__ filter, long long filter_words, int query_base,          \
    int k, float* __restrict__ out_d, long long* __restrict__ out_id
#define IVF_SCAN_ARGS queries, dim, n_probes, probes_per_block, row_splits, probes, data, elem_bytes, \
    list_offset, list_size, ids, filter, filter_words, query_base, k, out_d, out_id

template <int CAP>
__device__ __forceinline__ void ivf_scan_body(IVF_SCAN_PARAMS)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    long long* wid = reinterpret_cast<long long*>(smem_raw);                // [WARPS][CAP]
    float* wd = reinterpret_cast<float*>(wid + IVF_WARPS * CAP);   // [WARPS][CAP]
    unsigned char* q = reinterpret_cast<unsigned char*>(wd + IVF_WARPS * CAP); // [dim] staged
    __shared__ float qnorm_parts[IVF_WARPS];

    const int qi = blockIdx.y;
    const int split = blockIdx.x % row_splits;
    const int p_begin = blockIdx.x / row_splits * probes_per_block;
    const int p_end = min(n_probes, p_begin + probes_per_block);
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const unsigned char* qsrc = queries + (long long)qi * dim * elem_bytes;
    float part = ivf_stage_query(qsrc, q, dim, threadIdx.x, blockDim.x);
    for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(IVF_FULL, part, off);
    if (lane == 0) qnorm_parts[warp] = part;
    float* d = wd + warp * CAP;
    long long* id = wid + warp * CAP;
    topk_init<CAP>(d, id, lane);
    __syncthreads();
    const float qnorm2 = qnorm_parts[0] + qnorm_parts[1] + qnorm_parts[2] + qnorm_parts[3];

    const float inf = __int_as_float(0x7f800000);
    float thr = inf;
    // k ≤ 32: each warp's list in registers (lane j: entry j), a few shuffles an insertion;
    // larger k: the shared-memory top-k.
    float rd = inf, kth = inf;
    long long rid = -1;
    for (int pi = p_begin; pi < p_end; ++pi) {
        const int list = (int)probes[(long long)qi * n_probes + pi];
        const long long off = list_offset[list];
        const int size = list_size[list];
        for (int g = split * IVF_WARPS + warp; g * 32 < size; g += IVF_WARPS * row_splits) {
            const int row = g * 32 + lane;
            float s = inf;
            long long sid = -1;
            if (row < size) {
                sid = ids[off + row];
                if (ivf_keep(sid, query_base + qi, filter, filter_words)) {
                    float xn = 0.f;
                    const unsigned char* group = data + (off + (long long)g * 32) * dim * elem_bytes;
                    float acc = ivf_dist(group, lane, q, dim, &xn);
                    s = ivf_score(acc, qnorm2, xn);
                }
            }
            if (CAP <= 32) kth = ws_offer(rd, rid, k, lane, kth, inf, s, sid);
            else thr = topk_offer<CAP>(d, id, k, lane, thr, s, sid);
        }
    }
    if (CAP <= 32) {
        // The warps' lists, sorted and padded to 32 with empty entries, merge into warp 0's.
        if (lane < k) { d[lane] = rd; id[lane] = rid; }
        else { rd = inf; rid = -1; }
        __syncthreads();
        if (warp == 0) {
            for (int w = 1; w < IVF_WARPS; ++w) {
                const bool in = lane < k;
                ws_merge32(rd, rid, in ? wd[w * CAP + lane] : inf, in ? wid[w * CAP + lane] : -1LL, lane);
            }
            const long long out = ((long long)qi * gridDim.x + blockIdx.x) * k;
            if (lane < k) { out_d[out + lane] = rd; out_id[out + lane] = rid; }
        }
        return;
    }
    __syncthreads();
    if (warp == 0) {
        for (int w = 1; w < IVF_WARPS; ++w) {
            const float* od = wd + w * CAP;
            const long long* oi = wid + w * CAP;
            for (int base = 0; base < k; base += 32) {
                int j = base + lane;
                float s = j < k ? od[j] : inf;
                long long sid = j < k ? oi[j] : -1;
                thr = topk_offer<CAP>(d, id, k, lane, thr, s, sid);
            }
        }
        long long out = ((long long)qi * gridDim.x + blockIdx.x) * k;
        for (int j = lane; j < k; j += 32) { out_d[out + j] = d[j]; out_id[out + j] = id[j]; }
    }
}

#define IVF_SCAN_KERNEL(CAP) \
    extern "C" __global__ void __launch_bounds__(128) ivf_scan_c##CAP##_kernel(IVF_SCAN_PARAMS) { ivf_scan_body<CAP>(IVF_SCAN_ARGS); }
IVF_FOR_EACH_CAPACITY(IVF_SCAN_KERNEL)
