// Entry fragment: seeds the list-major scan's per-query bounds (lm_bound_key, topk.cuh)
// before it runs. A query's first `seed_rows` rows of its first probe (32-row groups) are
// scored by `parts` warps (one in large batches: list_major::seed_block) with the distance
// fragment's ivf_dist_by_difference — warp p of the query takes groups p, p + parts, …,
// lane l row l of each, keeps the best two scores of its rows, and sorts the warp's 64
// into its best 32 (scores only: no row ids travel through the sorting network); the
// first warp merges the others' lists from shared memory and sets bound[q] just above
// the k-th best, each row raised by the most the scan's own arithmetic may score that
// row below this one's. Those k rows are in a list the query probes and pass its filter,
// so k rows the scan scores under the bound exist: nothing of the final top k is
// skipped. Without the seed, every tile's first step keeps all 64 rows for each query
// until some tile of it reaches k (a host simulation of the lowdim bench set: 96
// candidates kept a (query, probe) pair with no bound shared, 24 with a 64-row seed, 15
// with 128). k > 32, or fewer than k rows to look at: no bound (zero, +inf). The host
// launches it only where it pays (list_major::seeds_bounds).
#include "ivf_abi.cuh"
#include "lmseed.cuh"

// The most a score of (acc, qn, xn) computed by a different order of float operations
// may differ, in the accumulator's units: a dot product of `dim` terms has an error under
// dim · 2^-24 · Σ|q_i x_i| ≤ dim · 2^-24 · (qn + xn) / 2 in f32 and about eight times that
// with 3xTF32 products; the list-major L2 form qn + xn - 2 q·x adds the norms' own.
// (dim + 8) · 2^-20 · (qn + xn) covers all of them; for 8-bit L2 and inner products, whose
// accumulators are exact integers in both scans, it only loosens the bound by a little.
__device__ __forceinline__ float lmseed_slack(int dim, float qn, float xn) {
    return (float)(dim + 8) * 0x1p-20f * (qn + xn);
}

// The upper end of the score of the row of `lane` in the 32-row group at `group` against
// the staged query (norm qn).
__device__ __forceinline__ float lmseed_row_bound(const unsigned char* group, const unsigned char* staged, int dim,
                                                  int lane, float qn) {
    float xn = 0.f;
    const float acc = ivf_dist_by_difference(group, lane, staged, dim, &xn);
    // The L2 fragment returns Σ (q - x)² without the row's norm: |x|² ≤ 2 |q|² + 2 acc.
    const float e = lmseed_slack(dim, qn, ivf_metric_l2() ? 2.f * (qn + acc) : xn);
    // Every metric's score is monotonic in the accumulator: the larger of the two ends is
    // the row's highest possible score.
    return fmaxf(ivf_score(acc + e, qn, xn), ivf_score(acc - e, qn, xn));
}

// Launch: blocks of 32 · parts · (queries a block) threads; dynamic shared memory of a
// staged query (dim values of 4 bytes at most, rounded up to 16 bytes) and 32 scores for
// each warp. seed_rows: a multiple of 32.
extern "C" __global__ void __launch_bounds__(128) ivf_lmseed_kernel(
    const unsigned char* __restrict__ queries, int dim, int n_probes, int nq, const long long* __restrict__ probes,
    int seed_rows, int parts,
    const unsigned char* __restrict__ data, int elem_bytes, const long long* __restrict__ list_offset,
    const int* __restrict__ list_size, const long long* __restrict__ ids,
    const unsigned int* __restrict__ filter, long long filter_words, int query_base, int k,
    unsigned int* __restrict__ bound)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int part = warp % parts;
    const int qi = blockIdx.x * (blockDim.x / 32 / parts) + warp / parts;
    const int stage_bytes = (dim * 4 + 15) / 16 * 16;
    float* best = reinterpret_cast<float*>(smem_raw + (long long)(blockDim.x / 32) * stage_bytes);  // [warps][32]
    // k > 32 seeds nothing; the host only launches k ≤ 32 (list_major::seeds_bounds).
    const bool active = qi < nq && k <= 32;
    const float inf = __int_as_float(0x7f800000);
    float d = inf;
    if (active) {
        unsigned char* staged = smem_raw + (long long)warp * stage_bytes;
        float qn = ivf_stage_query(queries + (long long)qi * dim * elem_bytes, staged, dim, lane, 32);
        for (int off = 16; off > 0; off >>= 1) qn += __shfl_xor_sync(IVF_FULL, qn, off);
        __syncwarp();
        const int list = (int)probes[(long long)qi * n_probes];
        const long long off = list_offset[list];
        const int size = min(list_size[list], seed_rows);
        float m1 = inf, m2 = inf;
        for (int g = part; g * 32 < size; g += parts) {
            const int row = g * 32 + lane;
            const unsigned char* group = data + (off + (long long)g * 32) * dim * elem_bytes;
            lmseed_keep_two(ivf_row_counts(ids + off, size, row, query_base + qi, filter, filter_words)
                                ? lmseed_row_bound(group, staged, dim, lane, qn) : inf,
                            m1, m2);
        }
        // A warp with a second group has second bests to merge.
        d = lmseed_best32(m1, m2, (part + parts) * 32 < size, lane);
    }
    best[warp * 32 + lane] = d;
    __syncthreads();
    if (qi >= nq || part != 0) return;
    if (!active) {
        if (lane == 0) bound[qi] = 0u;
        return;
    }
    WsNoId none;
    for (int p = 1; p < parts; ++p) ws_merge32(d, none, best[(warp + p) * 32 + lane], none, lane);
    const float kth = __shfl_sync(IVF_FULL, d, k - 1);
    if (lane == 0) bound[qi] = lmseed_bound_key(kth);
}
