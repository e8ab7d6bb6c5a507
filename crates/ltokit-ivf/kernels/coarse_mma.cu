// Entry fragment (sm_80 on): the coarse search's score matrix on the tensor cores — the
// same output as ivf_coarse_scores_kernel (coarse.cu), scores[q × n_centers + c] for every
// (query, centre), with the products as 3xTF32 mma.sync (mma.cuh: f32's accuracy; two
// products where the query type is exact in TF32).
//
// A block of 4 warps takes a tile of 32 queries × 64 centres: warp w multiplies the 16
// queries 16 (w % 2) … (the mma's A operand) by the 32 centres 32 (w / 2) … (four B
// operands of 8). The dimensions go through in chunks of 32, staged in shared memory as
// f32 (queries converted from their stored type) one row per 36 floats, which ldmatrix
// reads without bank conflicts; the next chunk's values load into registers while this
// one is multiplied. Small tiles keep a 1,000-query batch over 256 centres on 128 blocks
// (the 64 × 64 tiles of the CUDA-core kernel gave it 64, each a chain of 25 chunks).
// Blocks of the first centre tile report non-finite query values.
#include "coarse.cuh"
#include "mma.cuh"

#define CM_TQ 32       // queries of a tile
#define CM_TC 64       // centres of a tile
#define CM_KC 32       // dimensions of a chunk
#define CM_LD 36       // shared-memory row stride (floats)
#define CM_THREADS 128
#define CM_QLOADS (CM_TQ * CM_KC / CM_THREADS)  // query values a thread stages per chunk
#define CM_CLOADS (CM_TC * CM_KC / CM_THREADS)  // centre values a thread stages per chunk

// One chunk's values of this thread. Queries: element e = threadIdx.x + CM_THREADS · u of
// the 32 × 32 (row e / 32, dimension e % 32), held as their stored bits (`qok`: which are
// real) and converted when stored. Centres: with VEC4 (a dimension divisible by 4, so
// that every row is 16-byte aligned) four vectors of 4 — group threadIdx.x % 8 of rows
// threadIdx.x / 8 + 16 u — else sixteen values laid out like the queries'. Zeros past the
// batch, the centres or the dimension.
struct CmChunk { unsigned q[CM_QLOADS]; unsigned qok; float c[CM_CLOADS]; };

template <bool VEC4>
__device__ __forceinline__ void cm_load(CmChunk& v, const unsigned char* queries, int nq, int dim,
                                        const float* centers, int n_centers, int q0, int c0, int k0) {
    const int kk = threadIdx.x % CM_KC, r0 = threadIdx.x / CM_KC;
    const bool in_dim = k0 + kk < dim;
    v.qok = 0;
    #pragma unroll
    for (int u = 0; u < CM_QLOADS; ++u) {
        // Unconditional loads (position 0 stands in), every one in flight at once.
        const int q = q0 + r0 + u * (CM_THREADS / CM_KC);
        const bool ok = in_dim && q < nq;
        v.q[u] = ivf_coarse_query_bits(queries, ok ? (long long)q * dim + k0 + kk : 0);
        v.qok |= (ok ? 1u : 0u) << u;
    }
    if (VEC4) {
        const int g = threadIdx.x % (CM_KC / 4), rv = threadIdx.x / (CM_KC / 4);
        const bool g_in = k0 + 4 * g < dim;
        const float* p = centers + (long long)(c0 + rv) * dim + k0 + 4 * g;
        const long long row16 = 16LL * dim;  // 16 centre rows, in floats
        #pragma unroll
        for (int u = 0; u < CM_CLOADS / 4; ++u) {
            const float4 x = g_in && c0 + rv + 16 * u < n_centers
                ? *reinterpret_cast<const float4*>(p + u * row16) : make_float4(0.f, 0.f, 0.f, 0.f);
            v.c[4 * u] = x.x; v.c[4 * u + 1] = x.y; v.c[4 * u + 2] = x.z; v.c[4 * u + 3] = x.w;
        }
    } else {
        #pragma unroll
        for (int u = 0; u < CM_CLOADS; ++u) {
            const int c = c0 + r0 + u * (CM_THREADS / CM_KC);
            v.c[u] = in_dim && c < n_centers ? centers[(long long)c * dim + k0 + kk] : 0.f;
        }
    }
}

// Stores a loaded chunk, converting and checking its query values here: the empty asm
// (volatile, like the ldmatrix and mma asm) keeps the conversions after the products of
// the chunk in hand, so that the loads stay in flight behind them — the compiler
// otherwise converts right after the loads and waits for them there.
template <bool VEC4>
__device__ __forceinline__ void cm_store(CmChunk& v, float* qs, float* cs, int q0, int& bad) {
    const int kk = threadIdx.x % CM_KC, r0 = threadIdx.x / CM_KC;
    #pragma unroll
    for (int u = 0; u < CM_QLOADS; ++u) {
        const int r = r0 + u * (CM_THREADS / CM_KC);
        asm volatile("" : "+r"(v.q[u]));
        const float x = (v.qok >> u) & 1u ? ivf_coarse_query_decode(v.q[u]) : 0.f;
        if (!isfinite(x)) bad = min(bad, q0 + r);
        qs[r * CM_LD + kk] = x;
    }
    if (VEC4) {
        const int g = threadIdx.x % (CM_KC / 4), rv = threadIdx.x / (CM_KC / 4);
        #pragma unroll
        for (int u = 0; u < CM_CLOADS / 4; ++u)
            *reinterpret_cast<float4*>(cs + (rv + 16 * u) * CM_LD + 4 * g) =
                make_float4(v.c[4 * u], v.c[4 * u + 1], v.c[4 * u + 2], v.c[4 * u + 3]);
    } else {
        #pragma unroll
        for (int u = 0; u < CM_CLOADS; ++u) cs[(r0 + u * (CM_THREADS / CM_KC)) * CM_LD + kk] = v.c[u];
    }
}

#define CM_PARAMS                                                                                \
    const unsigned char* __restrict__ queries, int nq, int dim, int metric,                     \
    const float* __restrict__ centers, const float* __restrict__ center_norms, int n_centers,   \
    int query_base, float* __restrict__ scores, int* __restrict__ bad_query
#define CM_ARGS queries, nq, dim, metric, centers, center_norms, n_centers, query_base, scores, bad_query

// The kernel's body for one way of loading the centres; qs and cs: the staged chunk's
// queries (CM_TQ rows) and centres (CM_TC rows), CM_LD floats a row.
template <bool VEC4>
__device__ __forceinline__ void cm_scores(CM_PARAMS, float* qs, float* cs)
{
    const int q0 = blockIdx.x * CM_TQ, c0 = blockIdx.y * CM_TC;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Fragment addresses (mma.cuh): A = rows 0–7 and 8–15 of the warp's 16 queries at
    // dimensions k and k + 4; B = the 8 centres of a block at k (lanes 0–7) and k + 4
    // (lanes 8–15).
    const float* qa = qs + ((warp % 2) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * CM_LD + (lane >> 4) * 4;
    const float* cb = cs + ((warp / 2) * 32 + (lane & 7)) * CM_LD + ((lane >> 3) & 1) * 4;
    float acc[4][4];
    #pragma unroll
    for (int n = 0; n < 4; ++n)
        #pragma unroll
        for (int j = 0; j < 4; ++j) acc[n][j] = 0.f;

    int bad = 0x7fffffff;
    CmChunk next;
    cm_load<VEC4>(next, queries, nq, dim, centers, n_centers, q0, c0, 0);
    for (int k0 = 0; k0 < dim; k0 += CM_KC) {
        __syncthreads();  // the previous chunk's fragments are read
        cm_store<VEC4>(next, qs, cs, q0, bad);
        __syncthreads();
        if (k0 + CM_KC < dim) cm_load<VEC4>(next, queries, nq, dim, centers, n_centers, q0, c0, k0 + CM_KC);
        #pragma unroll
        for (int k = 0; k < CM_KC; k += 8) {
            unsigned a[4];
            mma_ldsm_x4(a, qa + k);
            if (ivf_coarse_query_exact_tf32()) {
                // f16 and 8-bit queries: nothing to split on their side.
                #pragma unroll
                for (int n = 0; n < 4; ++n) {
                    unsigned b[2];
                    mma_ldsm_x2(b[0], b[1], cb + n * 8 * CM_LD + k);
                    mma_2xtf32(acc[n], a, mma_split_all(b));
                }
                continue;
            }
            const MmaSplit<4> as = mma_split_all(a);
            #pragma unroll
            for (int n = 0; n < 4; ++n) {
                unsigned b[2];
                mma_ldsm_x2(b[0], b[1], cb + n * 8 * CM_LD + k);
                mma_3xtf32(acc[n], as, mma_split_all(b));
            }
        }
    }
    if (blockIdx.y == 0) coarse_report_bad(bad_query, query_base, bad);
    #pragma unroll
    for (int n = 0; n < 4; ++n)
        coarse_store_blocks<1>(scores, nq, n_centers, metric, center_norms, 1.f, q0 + (warp % 2) * 16,
                               c0 + (warp / 2) * 32 + n * 8, [&](int, int j) { return acc[n][j]; });
}

extern "C" __global__ void __launch_bounds__(CM_THREADS, 5) ivf_coarse_scores_mma_kernel(CM_PARAMS)
{
    // Rows of a dimension divisible by 4 start 16-byte aligned (the centres are one
    // allocation): vector loads, a quarter of the load and address instructions.
    __shared__ __align__(16) float qs[CM_TQ * CM_LD];
    __shared__ __align__(16) float cs[CM_TC * CM_LD];
    if (dim % 4 == 0) cm_scores<true>(CM_ARGS, qs, cs);
    else cm_scores<false>(CM_ARGS, qs, cs);
}
