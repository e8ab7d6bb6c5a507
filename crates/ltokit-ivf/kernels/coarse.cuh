// What the coarse search's kernels share (coarse.cu, coarse_mma.cu): how a query value is
// read, a centre's score as an affine form of the dot product, the non-finite report.
#pragma once

// The query value at position j of a batch stored in the plan's type, as f32: a device
// fragment (coarse_query.cu, one per type), so that each plan holds one type's loads
// instead of a switch over four in every unrolled load (a quarter of the code to link).
extern "C" __device__ float ivf_coarse_query_value(const unsigned char* queries, long long j);
// The same value as its stored bits, and those bits' value (the load and the conversion
// apart).
extern "C" __device__ unsigned ivf_coarse_query_bits(const unsigned char* queries, long long j);
extern "C" __device__ float ivf_coarse_query_decode(unsigned bits);
// Four values at position j (a multiple of 4; the batch 8-byte aligned) as their stored
// bits in one load, and those bits as four f16 (packed pairs) — exact for f16, i8, u8.
extern "C" __device__ uint2 ivf_coarse_query_bits4(const unsigned char* queries, long long j);
extern "C" __device__ uint2 ivf_coarse_query_halves4(uint2 bits);
// Bytes of one stored value (4, 2 or 1).
extern "C" __device__ int ivf_coarse_query_bytes();
// Whether the query type's values are all exact in TF32 (no split needed in 3xTF32).
extern "C" __device__ bool ivf_coarse_query_exact_tf32();

// Query value j as f32, or 0 where `valid` is false. The load is unconditional (position
// 0 stands in for an invalid j; a batch is never empty) so that a thread's loads are all
// in flight before any value is checked: a load inside the branch of a bounds check,
// followed by the finiteness check, waits for its data before the next load issues —
// which made each 32-dimension chunk of the score matrix a chain of eight to sixteen
// memory round trips.
__device__ __forceinline__ float coarse_query_or_zero(const unsigned char* queries, bool valid, long long j) {
    const float v = ivf_coarse_query_value(queries, valid ? j : 0);
    return valid ? v : 0.f;
}

// metric codes: 0 l2, 1 ip, 2 cosine.
// A centre's score is affine in the dot product: alpha · dot + beta — squared L2 up to
// the query's own norm (−2 · dot + ‖c‖²), −inner product, or −cosine up to the query's
// norm (−dot / ‖c‖). One form for every metric keeps the epilogues free of per-metric
// copies (they were most of the kernels' code, and of their link time).
struct CoarseAffine { float alpha, beta; };
__device__ __forceinline__ CoarseAffine coarse_affine(int metric, float cn) {
    if (metric == 0) return {-2.f, cn};
    if (metric == 1) return {-1.f, 0.f};
    return {cn > 0.f ? -1.f / cn : 0.f, 0.f};
}

// Writes the scores of M m16n8 accumulator blocks of a score matrix that share their 8
// centres c0 … c0 + 7: block m holds queries q0 + 16 m … + 15, lane (g, t) the entries
// (q0 + 16 m + g (+ 8 for j ≥ 2), c0 + 2 t (+ 1 for odd j)) as acc(m, j). Each score is
// alpha · scale · acc + beta of its centre's affine form (computed once for the M blocks),
// where the query and the centre exist; `scale` undoes a scaling of the products (1 where
// there is none). A lane's two centres are adjacent: with an even number of centres (c0
// is a multiple of 8, so every pair starts 8-byte aligned) both go out in one 8-byte
// store — a warp's store then fills whole 32-byte sectors of its 8 rows, where two 4-byte
// stores each wrote half of every sector. Measured on the H200 (session 17, ncu, batch
// 10,000): the f16 score matrix against 1,024 centres (lowdim i8) 84.0 → 50.6 µs, against
// 256 (images) 69.2 → 65.8 µs; device QPS lowdim i8 +2.2 to +6.9 %.
template <int M, class Acc>
__device__ __forceinline__ void coarse_store_blocks(float* scores, int nq, int n_centers, int metric,
                                                    const float* center_norms, float scale, int q0, int c0,
                                                    Acc acc) {
    const int g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4;
    const int c = c0 + 2 * t;
    if (n_centers % 2 == 0 && c < n_centers) {
        const CoarseAffine a0 = coarse_affine(metric, center_norms[c]);
        const CoarseAffine a1 = coarse_affine(metric, center_norms[c + 1]);
        const float alpha0 = a0.alpha * scale, alpha1 = a1.alpha * scale;
        #pragma unroll
        for (int m = 0; m < M; ++m)
            #pragma unroll
            for (int jq = 0; jq < 2; ++jq) {
                const int q = q0 + 16 * m + g + 8 * jq;
                if (q < nq)
                    *reinterpret_cast<float2*>(scores + (long long)q * n_centers + c) =
                        make_float2(fmaf(alpha0, acc(m, 2 * jq), a0.beta), fmaf(alpha1, acc(m, 2 * jq + 1), a1.beta));
            }
        return;
    }
    #pragma unroll
    for (int jc = 0; jc < 2; ++jc) {
        const int cj = c + jc;
        if (cj >= n_centers) continue;
        const CoarseAffine af = coarse_affine(metric, center_norms[cj]);
        const float alpha = af.alpha * scale;
        #pragma unroll
        for (int m = 0; m < M; ++m)
            #pragma unroll
            for (int jq = 0; jq < 2; ++jq) {
                const int q = q0 + 16 * m + g + 8 * jq;
                if (q < nq) scores[(long long)q * n_centers + cj] = fmaf(alpha, acc(m, 2 * jq + jc), af.beta);
            }
    }
}

// Reports the first non-finite query a thread saw (`first`, a batch position, or INT_MAX
// for none) with one atomic, instead of one per value checked.
__device__ __forceinline__ void coarse_report_bad(int* bad_query, int query_base, int first) {
    if (first != 0x7fffffff) atomicCAS(bad_query, 0, query_base + first + 1);
}
