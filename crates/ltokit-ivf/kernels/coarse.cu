// Entry fragment: the coarse search, centres × queries as a tiled product with the
// selection of each query's n_probes best centres fused (one kernel ivf_coarse_c<CAP>_kernel per
// top-k capacity).
//
// A block takes IVF_COARSE_Q queries, one warp each. The queries, converted to f32 from
// their stored type, stay in shared memory; the centres stream through in tiles of 128
// rows × 32 dimensions. Lane l of warp w accumulates the dot products of query w with
// centres l, l+32, l+64 and l+96 of the tile, turns them into scores (squared L2 up to the
// query's own norm, −inner product, or −cosine up to the query's norm), and offers them
// to the warp's running top-k. Non-finite query values are reported through `bad_query`
// (query_base + 1 + the first such query seen: query_base numbers the batch's first query
// in the caller's numbering), so that no host pass over the batch is needed.
//
// Large batches take two kernels instead: the score of every (query, centre) as a
// register-tiled product into a matrix (below), then the selection, one warp a query
// (coarse_select.cu).
//
// Small batches split the centres over gridDim.y blocks (`centers_per_split` each), so
// that a single query uses many SMs: block (x, y) then writes its best n_probes of split y
// — ids (−1 where it has fewer) and scores — at ((q · gridDim.y + y) · n_probes), and a
// merge (ivf_merge with the identity report) picks each query's best n_probes of them.
#include "coarse.cuh"
#include "topk.cuh"
#include "warpsort.cuh"

#define IVF_COARSE_Q 8
#define IVF_COARSE_C 128
#define IVF_COARSE_K 32
#define IVF_COARSE_THREADS (32 * IVF_COARSE_Q)

#define IVF_COARSE_PARAMS                                                                 \
    const unsigned char* __restrict__ queries, int nq, int dim, int metric,               \
    const float* __restrict__ centers, const float* __restrict__ center_norms, int n_centers, \
    int query_base, int centers_per_split, int n_probes, long long* __restrict__ out_probes,  \
    float* __restrict__ out_scores, int* __restrict__ bad_query
#define IVF_COARSE_ARGS queries, nq, dim, metric, centers, center_norms, n_centers, \
    query_base, centers_per_split, n_probes, out_probes, out_scores, bad_query

template <int CAP>
__device__ __forceinline__ void ivf_coarse_body(IVF_COARSE_PARAMS)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    long long* wid = reinterpret_cast<long long*>(smem_raw);                       // [Q][CAP]
    float* wd = reinterpret_cast<float*>(wid + IVF_COARSE_Q * CAP);        // [Q][CAP]
    float* cs = wd + IVF_COARSE_Q * CAP;                                   // [C][K+1]
    float* qs = cs + IVF_COARSE_C * (IVF_COARSE_K + 1);                             // [Q][dim]

    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * IVF_COARSE_Q;
    const int c_begin = blockIdx.y * centers_per_split;
    const int c_end = min(n_centers, c_begin + centers_per_split);

    int bad = 0x7fffffff;
    #pragma unroll 4  // a constant stride: the loads of several rounds in flight together
    for (int i = threadIdx.x; i < IVF_COARSE_Q * dim; i += IVF_COARSE_THREADS) {
        const int w = i / dim, j = i % dim;
        const float v = coarse_query_or_zero(queries, q0 + w < nq, (long long)(q0 + w) * dim + j);
        if (!isfinite(v)) bad = min(bad, q0 + w);
        qs[i] = v;
    }
    coarse_report_bad(bad_query, query_base, bad);
    float* d = wd + warp * CAP;
    long long* id = wid + warp * CAP;
    topk_init<CAP>(d, id, lane);
    const float inf = __int_as_float(0x7f800000);
    float thr = inf;
    // n_probes ≤ 32: the warp's list in registers (lane j: entry j), a few shuffles an
    // insertion; larger: the shared-memory top-k.
    float rd = inf, kth = inf;
    int rid = -1;
    const float* q = qs + warp * dim;

    for (int c0 = c_begin; c0 < c_end; c0 += IVF_COARSE_C) {
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
        // The lane's centres' affine score forms, before the product (the offers below
        // then have nothing that depends on the metric).
        float alpha[4], beta[4];
        #pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int c = c0 + lane + 32 * r;
            const CoarseAffine af = coarse_affine(metric, c < c_end ? center_norms[c] : 0.f);
            alpha[r] = af.alpha;
            beta[r] = af.beta;
        }
        for (int k0 = 0; k0 < dim; k0 += IVF_COARSE_K) {
            __syncthreads();
            // A constant stride, unrolled: each thread's 16 loads are in flight together
            // (a loop over blockDim.x waited on each in turn: one round trip a load).
            #pragma unroll
            for (int r = 0; r < IVF_COARSE_C * IVF_COARSE_K / IVF_COARSE_THREADS; ++r) {
                const int i = threadIdx.x + r * IVF_COARSE_THREADS;
                const int c = i / IVF_COARSE_K, kk = i % IVF_COARSE_K;
                float v = 0.f;
                if (c0 + c < c_end && k0 + kk < dim) v = centers[(long long)(c0 + c) * dim + k0 + kk];
                cs[c * (IVF_COARSE_K + 1) + kk] = v;
            }
            __syncthreads();
            const int kend = min(IVF_COARSE_K, dim - k0);
            for (int kk = 0; kk < kend; ++kk) {
                const float qv = q[k0 + kk];
                #pragma unroll
                for (int r = 0; r < 4; ++r) acc[r] = fmaf(qv, cs[(lane + 32 * r) * (IVF_COARSE_K + 1) + kk], acc[r]);
            }
        }
        #pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int c = c0 + lane + 32 * r;
            const float s = c < c_end && q0 + warp < nq ? fmaf(alpha[r], acc[r], beta[r]) : inf;
            if (CAP <= 32) kth = ws_offer(rd, rid, n_probes, lane, kth, inf, s, s < inf ? c : -1);
            else thr = topk_offer<CAP>(d, id, n_probes, lane, thr, s, s < inf ? (long long)c : -1);
        }
    }
    if (CAP <= 32 && lane < n_probes) {
        d[lane] = rd;
        id[lane] = rid;
    }
    __syncwarp();
    if (q0 + warp < nq) {
        if (gridDim.y == 1) {
            long long* out = out_probes + (long long)(q0 + warp) * n_probes;
            for (int j = lane; j < n_probes; j += 32) out[j] = id[j] >= 0 ? id[j] : 0;
        } else {
            const long long at = ((long long)(q0 + warp) * gridDim.y + blockIdx.y) * n_probes;
            for (int j = lane; j < n_probes; j += 32) { out_probes[at + j] = id[j]; out_scores[at + j] = d[j]; }
        }
    }
}

#define IVF_COARSE_KERNEL(CAP)                                                              \
    extern "C" __global__ void __launch_bounds__(IVF_COARSE_THREADS) ivf_coarse_c##CAP##_kernel(IVF_COARSE_PARAMS) { \
        ivf_coarse_body<CAP>(IVF_COARSE_ARGS);                                                \
    }
IVF_FOR_EACH_CAPACITY(IVF_COARSE_KERNEL)

// ---- large batches: the score matrix, then the selection ---------------------------------
#define IVF_GEMM_T 64    // queries and centres of a block's tile
#define IVF_GEMM_K 32    // dimensions of a chunk
#define IVF_GEMM_S (IVF_GEMM_T + 4)

// scores[q × n_centers + c] for the 64 × 64 tile (blockIdx.x, blockIdx.y) of queries ×
// centres: thread (tq, tc) accumulates queries 4 tq … and centres 4 tc … in registers from
// 32-dimension chunks staged dimension-major in shared memory (two vector loads per 16
// FMAs). The blocks of the first centre tile report non-finite query values.
extern "C" __global__ void __launch_bounds__(256) ivf_coarse_scores_kernel(
    const unsigned char* __restrict__ queries, int nq, int dim, int metric,
    const float* __restrict__ centers, const float* __restrict__ center_norms, int n_centers,
    int query_base, float* __restrict__ scores, int* __restrict__ bad_query)
{
    __shared__ __align__(16) float qs[IVF_GEMM_K * IVF_GEMM_S];
    __shared__ __align__(16) float cs[IVF_GEMM_K * IVF_GEMM_S];
    const int q0 = blockIdx.x * IVF_GEMM_T, c0 = blockIdx.y * IVF_GEMM_T;
    const int tq = threadIdx.x / 16, tc = threadIdx.x % 16;
    float acc[4][4];
    #pragma unroll
    for (int a = 0; a < 4; ++a)
        #pragma unroll
        for (int b = 0; b < 4; ++b) acc[a][b] = 0.f;
    // Each of the thread's centres' affine score form, before the product (the epilogue
    // then has nothing that depends on the metric).
    float alpha[4], beta[4];
    #pragma unroll
    for (int b = 0; b < 4; ++b) {
        const int c = c0 + tc * 4 + b;
        const CoarseAffine af = coarse_affine(metric, c < n_centers ? center_norms[c] : 0.f);
        alpha[b] = af.alpha;
        beta[b] = af.beta;
    }
    // Staging: thread t loads dimension t % 32 of rows t / 32 + 8 u (u < 8) of both tiles.
    const int kk_t = threadIdx.x % IVF_GEMM_K, r_t = threadIdx.x / IVF_GEMM_K;
    int bad = 0x7fffffff;
    for (int k0 = 0; k0 < dim; k0 += IVF_GEMM_K) {
        __syncthreads();
        const bool in_dim = k0 + kk_t < dim;
        constexpr int LOADS = IVF_GEMM_T * IVF_GEMM_K / 256;
        float qv[LOADS], cv[LOADS];
        #pragma unroll
        for (int u = 0; u < LOADS; ++u) {  // every load in flight before any value is used
            const int r = r_t + u * (256 / IVF_GEMM_K);
            qv[u] = coarse_query_or_zero(queries, in_dim && q0 + r < nq, (long long)(q0 + r) * dim + k0 + kk_t);
            cv[u] = in_dim && c0 + r < n_centers ? centers[(long long)(c0 + r) * dim + k0 + kk_t] : 0.f;
        }
        #pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const int r = r_t + u * (256 / IVF_GEMM_K);
            if (!isfinite(qv[u])) bad = min(bad, q0 + r);
            qs[kk_t * IVF_GEMM_S + r] = qv[u];
            cs[kk_t * IVF_GEMM_S + r] = cv[u];
        }
        __syncthreads();
        #pragma unroll 8
        for (int kk = 0; kk < IVF_GEMM_K; ++kk) {
            const float4 q4 = *reinterpret_cast<const float4*>(qs + kk * IVF_GEMM_S + tq * 4);
            const float4 c4 = *reinterpret_cast<const float4*>(cs + kk * IVF_GEMM_S + tc * 4);
            const float q[4] = {q4.x, q4.y, q4.z, q4.w}, c[4] = {c4.x, c4.y, c4.z, c4.w};
            #pragma unroll
            for (int a = 0; a < 4; ++a)
                #pragma unroll
                for (int b = 0; b < 4; ++b) acc[a][b] = fmaf(q[a], c[b], acc[a][b]);
        }
    }
    if (blockIdx.y == 0) coarse_report_bad(bad_query, query_base, bad);
    #pragma unroll
    for (int a = 0; a < 4; ++a) {
        const int q = q0 + tq * 4 + a;
        if (q >= nq) break;
        float* row = scores + (long long)q * n_centers;
        #pragma unroll
        for (int b = 0; b < 4; ++b) {
            const int c = c0 + tc * 4 + b;
            if (c < n_centers) row[c] = fmaf(alpha[b], acc[a][b], beta[b]);
        }
    }
}
