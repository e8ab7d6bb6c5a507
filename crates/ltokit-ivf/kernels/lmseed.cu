// Entry fragment: seeds the list-major scan's per-query bounds (lm_bound_key, topk.cuh)
// before it runs. Warp w of block b takes query q = b · warps + w: it scores the first 64
// rows of the query's first probe (two 32-row groups, lane l rows l and 32 + l, with the
// per-query scan's distance fragment) and sets bound[q] just above the k-th best of them,
// each raised by the most the scan's own arithmetic may score that row below this one's.
// Those k rows are in a list the query probes and pass its filter, so k rows the scan
// scores under the bound exist: nothing of the final top k is skipped. Without the seed,
// every tile's first step keeps all 64 rows for each query until some tile of it reaches
// k (a host simulation of the lowdim bench set: 96 candidates kept a (query, probe) pair
// with no bound shared, 24 with this seed). k > 32, or fewer than k rows to look at: no
// bound (zero, +inf). The host launches it only where it pays (list_major::seeds_bounds).
#include "ivf_abi.cuh"
#include "topk.cuh"
#include "warpsort.cuh"

// Rows a query's seed scores: two 32-row groups.
#define LMSEED_ROWS 64

// The most a score of (acc, qn, xn) computed by a different order of float operations
// may differ, in the accumulator's units: a dot product of `dim` terms has an error under
// dim · 2^-24 · Σ|q_i x_i| ≤ dim · 2^-24 · (qn + xn) / 2 in f32 and about eight times that
// with 3xTF32 products; the list-major L2 form qn + xn - 2 q·x adds the norms' own.
// (dim + 8) · 2^-20 · (qn + xn) covers all of them; for 8-bit L2 and inner products, whose
// accumulators are exact integers in both scans, it only loosens the bound by a little.
__device__ __forceinline__ float lmseed_slack(int dim, float qn, float xn) {
    return (float)(dim + 8) * 0x1p-20f * (qn + xn);
}

extern "C" __global__ void __launch_bounds__(128) ivf_lmseed_kernel(
    const unsigned char* __restrict__ queries, int dim, int n_probes, int nq, const long long* __restrict__ probes,
    const unsigned char* __restrict__ data, int elem_bytes, const long long* __restrict__ list_offset,
    const int* __restrict__ list_size, const long long* __restrict__ ids,
    const unsigned int* __restrict__ filter, long long filter_words, int query_base, int k,
    unsigned int* __restrict__ bound)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int qi = blockIdx.x * (blockDim.x / 32) + warp;
    if (qi >= nq) return;  // no block-wide barrier below
    if (k > 32) {
        if (lane == 0) bound[qi] = 0u;
        return;
    }
    // A warp's staged query: dim values of 4 bytes at most, 16-byte aligned (the host
    // gives each warp that much).
    unsigned char* staged = smem_raw + (long long)warp * ((dim * 4 + 15) / 16 * 16);
    float qn = ivf_stage_query(queries + (long long)qi * dim * elem_bytes, staged, dim, lane, 32);
    for (int off = 16; off > 0; off >>= 1) qn += __shfl_xor_sync(IVF_FULL, qn, off);
    __syncwarp();
    const int list = (int)probes[(long long)qi * n_probes];
    const long long off = list_offset[list];
    const int size = list_size[list];
    const float inf = __int_as_float(0x7f800000);
    const bool l2 = ivf_metric_l2();
    float up[2];
    #pragma unroll
    for (int g = 0; g < 2; ++g) {
        const int row = g * 32 + lane;
        up[g] = inf;
        if (row < size && ivf_keep(ids[off + row], query_base + qi, filter, filter_words)) {
            float xn = 0.f;
            const unsigned char* group = data + (off + (long long)g * 32) * dim * elem_bytes;
            const float acc = ivf_dist(group, lane, staged, dim, &xn);
            // The L2 fragment returns Σ (q - x)² without the row's norm: |x|² ≤ 2 |q|² + 2 acc.
            const float e = lmseed_slack(dim, qn, l2 ? 2.f * (qn + acc) : xn);
            // Every metric's score is monotonic in the accumulator: the larger of the two
            // ends is the row's highest possible score.
            up[g] = fmaxf(ivf_score(acc + e, qn, xn), ivf_score(acc - e, qn, xn));
        }
    }
    float a = up[0], b = up[1];
    long long ia = lane, ib = 32 + lane;
    ws_sort32(a, ia, lane);
    ws_sort32(b, ib, lane);
    ws_merge32(a, ia, b, ib, lane);
    const float kth = __shfl_sync(IVF_FULL, a, k - 1);
    if (lane == 0) bound[qi] = kth < inf ? lm_bound_key(nextafterf(kth, inf)) : 0u;
}
