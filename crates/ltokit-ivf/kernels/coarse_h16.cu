// Entry fragment (sm_80 on): the coarse search's score matrix for queries whose values
// are exact in f16 (f16, i8, u8) — the same output as ivf_coarse_scores_mma_kernel
// (coarse_mma.cu), scores[q × n_centers + c], with each product formed by two f16 mma.sync
// m16n8k16 against the centres split into two f16 halves.
//
// The centres arrive split once per index (DeviceCenters, gpu/centers.rs): scaled by a
// power of two so that the largest magnitude lies in [2^14, 2^15), then hi = f16(c) and
// lo = f16(c − hi), which together hold c to 2^-22 of itself (down to 2^-25 absolute in
// the scaled units, where lo is subnormal) — finer than 2xTF32's split (2^-20). A query
// value times either half is exact in f32 (11 × 11 bits), so the products are those of
// the 2xTF32 form at half the tensor-core instructions (k16 steps instead of k8), with no
// split in the kernel and half the shared-memory bytes for the queries. Accumulation is in
// f32, as in the TF32 form; the epilogue multiplies by 2^-scale (exact).
//
// Each warp multiplies 32 queries × 32 centres (two A blocks of 16 queries, four B blocks
// of 8 centres: 16 products a k step for 6 ldmatrix). A block of WQ × 2 warps takes a tile
// of 32 WQ queries × 64 centres (warp w: queries 32 (w % WQ) …, centres 32 (w / WQ) …):
// every copy of a centre chunk serves 32 WQ queries, a quarter of 32-query tiles' re-reads
// of the centres from L2 at 128 (250 MB a batch of 10,000 images against 256 centres at
// 32). Measured on images (ncu, docs/gpu-runs/2026-12-01-s13/): 78 µs at 32 queries, 68
// at 128 — what is left is latency (two blocks an SM) and a last partial wave, not L2
// bandwidth. Dimensions go through in chunks of 32, staged in shared memory: the centres'
// halves copied with cp.async (their split rows are padded with zeros to whole chunks and
// whole tiles, so no copy is bounds-checked); f16 queries copied with them, three chunks
// deep in 128-query tiles (ch_scores ASYNC), other types' loaded into registers four values
// at a time and converted when stored, after the chunk in hand is multiplied — one barrier
// a chunk. Blocks of the first centre tile report non-finite query values.
#include <cuda_fp16.h>
#include "coarse.cuh"
#include "mma.cuh"

#include "coarse_tile.cuh"

// One chunk's query values of this thread: group u is row ch_query_row(u), dimensions
// 4 (threadIdx.x % 8) … + 3 of the chunk, held as stored (`ok`: which groups are real;
// zeros are stored for the others).
template <int WQ> struct ChQueries { uint2 raw[ChTile<WQ>::QGROUPS]; unsigned ok; };

// VEC4: the dimension divisible by 4 and the batch 8-byte aligned, so that a group is one
// aligned load; else four loads of one value (converted to f16 here: exact for these
// types).
template <int WQ, bool VEC4>
__device__ __forceinline__ void ch_load_queries(ChQueries<WQ>& r, const unsigned char* queries, int nq, int dim,
                                                int q0, int k0) {
    using T = ChTile<WQ>;
    r.ok = 0;
    #pragma unroll
    for (int u = 0; u < T::QGROUPS; ++u) {
        const int q = q0 + ch_query_row<T::THREADS>(u);
        const int d = k0 + 4 * ((int)threadIdx.x % (CH_KC / 4));
        const long long at = (long long)q * dim + d;
        if (VEC4) {
            // Unconditional loads (position 0 stands in), every one in flight at once.
            const bool ok = q < nq && d < dim;
            r.raw[u] = ivf_coarse_query_bits4(queries, ok ? at : 0);
            r.ok |= (ok ? 1u : 0u) << u;
        } else {
            unsigned short h[4];
            #pragma unroll
            for (int i = 0; i < 4; ++i)
                h[i] = __half_as_ushort(__float2half_rn(coarse_query_or_zero(queries, q < nq && d + i < dim, at + i)));
            r.raw[u] = make_uint2(h[0] | (unsigned)h[1] << 16, h[2] | (unsigned)h[3] << 16);
            r.ok |= 1u << u;
        }
    }
}

// Whether either f16 of a packed pair is infinite or NaN (exponent bits all ones).
__device__ __forceinline__ bool ch_non_finite(unsigned pair) {
    return (pair & 0x7c00u) == 0x7c00u || (pair & 0x7c000000u) == 0x7c000000u;
}

// Stores a loaded chunk's queries as f16, converting (VEC4) and checking them here: the
// empty asm keeps the conversions after the multiply of the chunk in hand, so that the
// loads stay in flight behind it (as in coarse_mma.cu).
template <int WQ, bool VEC4>
__device__ __forceinline__ void ch_store_queries(ChQueries<WQ>& r, __half* qs, int q0, int& bad) {
    using T = ChTile<WQ>;
    #pragma unroll
    for (int u = 0; u < T::QGROUPS; ++u) {
        const int row = ch_query_row<T::THREADS>(u);  // as loaded
        const int col = 4 * ((int)threadIdx.x % (CH_KC / 4));
        asm volatile("" : "+r"(r.raw[u].x), "+r"(r.raw[u].y));
        uint2 h = VEC4 ? ivf_coarse_query_halves4(r.raw[u]) : r.raw[u];
        if (!((r.ok >> u) & 1u)) h = make_uint2(0u, 0u);
        if (ch_non_finite(h.x) || ch_non_finite(h.y)) bad = min(bad, q0 + row);
        *reinterpret_cast<uint2*>(qs + row * CH_LD + col) = h;
    }
}

// The warp's products of one staged chunk (q, c: its ldmatrix rows in the stage) into its
// accumulators.
__device__ __forceinline__ void ch_multiply_chunk(const __half* q, const __half* c, float (&acc)[2][4][4]) {
    #pragma unroll
    for (int k = 0; k < CH_KC; k += 16) {
        unsigned a[2][4];
        mma_ldsm_x4(a[0], q + k);
        mma_ldsm_x4(a[1], q + 16 * CH_LD + k);
        #pragma unroll
        for (int n = 0; n < 4; ++n) {
            unsigned b[4];  // hi at k, hi at k + 8, lo at k, lo at k + 8
            mma_ldsm_x4(b, c + n * 8 * CH_LD + k);
            #pragma unroll
            for (int m = 0; m < 2; ++m) {
                mma_f16(acc[m][n], a[m], b[2], b[3]);  // the small part first, as in 3xTF32
                mma_f16(acc[m][n], a[m], b[0], b[1]);
            }
        }
    }
}

// Checks this thread's query groups of a stage copied by cp.async (ASYNC), which passed no
// register: the first row of the tile with a non-finite value into `bad`.
template <int WQ>
__device__ __forceinline__ void ch_check_staged(const __half* qs, int q0, int& bad) {
    using T = ChTile<WQ>;
    #pragma unroll
    for (int u = 0; u < T::QGROUPS; ++u) {
        const int row = ch_query_row<T::THREADS>(u);
        const uint2 h = *reinterpret_cast<const uint2*>(qs + row * CH_LD + 4 * ((int)threadIdx.x % (CH_KC / 4)));
        if (ch_non_finite(h.x) || ch_non_finite(h.y)) bad = min(bad, q0 + row);
    }
}

// The stages a tile of WQ warps across the queries keeps: three for 128-query tiles (61,440
// bytes of dynamic shared memory, three blocks an SM), two for 64-query tiles (30,720: five
// blocks an SM, as their static two stages were). gpu/coarse/plan.rs `half_shared_bytes` is
// the same rule.
template <int WQ> struct ChStages { static constexpr int N = WQ >= 4 ? 3 : 2; };

// qs: ChStages stages of TQ query rows; cs: as many of CH_TC hi rows then CH_TC lo rows.
//   ASYNC: f16 queries whose rows are 8-byte aligned, copied as they are with cp.async
//     (ch_pipeline), ChStages deep; checked for non-finite values in shared memory;
//   else: four values at a time (VEC4) or one through registers, converted to f16 and
//     checked as stored, two stages (loaded while the chunk before is multiplied, stored
//     after it).
template <int WQ, bool VEC4, bool ASYNC>
__device__ __forceinline__ void ch_scores(CH_PARAMS, __half* qs, __half* cs)
{
    using T = ChTile<WQ>;
    const int q0 = blockIdx.x * T::TQ, c0 = blockIdx.y * CH_TC;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wq = warp % WQ, wc = warp / WQ;
    // ldmatrix row addresses (mma.cuh): A = 16 of the warp's queries, rows 0–7 and 8–15 at
    // dimensions k and k + 8; B = the 8 centres of a block, lanes 0–15 their hi rows at k
    // and k + 8, lanes 16–31 their lo rows.
    const int qa = (wq * 32 + (lane & 7) + ((lane >> 3) & 1) * 8) * CH_LD + (lane >> 4) * 8;
    const int cb = ((lane >> 4) * CH_TC + wc * 32 + (lane & 7)) * CH_LD + ((lane >> 3) & 1) * 8;
    float acc[2][4][4];
    #pragma unroll
    for (int m = 0; m < 2; ++m)
        #pragma unroll
        for (int n = 0; n < 4; ++n)
            #pragma unroll
            for (int j = 0; j < 4; ++j) acc[m][n][j] = 0.f;

    int bad = 0x7fffffff;
    if (ASYNC) {
        ch_pipeline<ChStages<WQ>::N>(
            (dim + CH_KC - 1) / CH_KC,
            [&](int chunk, int s) {
                ch_copy_query_groups<T::THREADS, T::QGROUPS>(reinterpret_cast<unsigned char*>(qs + s * T::QSTAGE),
                                                             queries, nq, 2LL * dim, q0, 2 * chunk * CH_KC);
                ch_copy_centres<WQ>(cs + s * T::CSTAGE, split, dim_pad, n_pad, c0, chunk * CH_KC);
            },
            [&](int s) {
                if (blockIdx.y == 0) ch_check_staged<WQ>(qs + s * T::QSTAGE, q0, bad);
                ch_multiply_chunk(qs + s * T::QSTAGE + qa, cs + s * T::CSTAGE + cb, acc);
            });
    } else {
        ChQueries<WQ> next;
        ch_copy_centres<WQ>(cs, split, dim_pad, n_pad, c0, 0);
        ch_load_queries<WQ, VEC4>(next, queries, nq, dim, q0, 0);
        ch_store_queries<WQ, VEC4>(next, qs, q0, bad);
        for (int k0 = 0, s = 0; k0 < dim; k0 += CH_KC, s ^= 1) {
            asm volatile("cp.async.wait_all;" ::: "memory");
            __syncthreads();  // this chunk is staged; the other stage's last readers are done
            const bool more = k0 + CH_KC < dim;
            if (more) {
                ch_copy_centres<WQ>(cs + (s ^ 1) * T::CSTAGE, split, dim_pad, n_pad, c0, k0 + CH_KC);
                ch_load_queries<WQ, VEC4>(next, queries, nq, dim, q0, k0 + CH_KC);
            }
            ch_multiply_chunk(qs + s * T::QSTAGE + qa, cs + s * T::CSTAGE + cb, acc);
            if (more) ch_store_queries<WQ, VEC4>(next, qs + (s ^ 1) * T::QSTAGE, q0, bad);
        }
    }
    if (blockIdx.y == 0) coarse_report_bad(bad_query, query_base, bad);
    #pragma unroll
    for (int n = 0; n < 4; ++n)
        coarse_store_blocks<2>(scores, nq, n_centers, metric, center_norms, inv_scale, q0 + wq * 32,
                               c0 + wc * 32 + n * 8, [&](int m, int j) { return acc[m][n][j]; });
}

template <int WQ>
__device__ __forceinline__ void ch_kernel(CH_PARAMS)
{
    using T = ChTile<WQ>;
    // Dynamic: three stages of a 128-query tile pass the 48 KiB a kernel may declare.
    extern __shared__ __align__(16) unsigned char ch_shared[];
    __half* qs = reinterpret_cast<__half*>(ch_shared);
    __half* cs = qs + ChStages<WQ>::N * T::QSTAGE;
    const bool aligned = (reinterpret_cast<size_t>(queries) & 7) == 0;
    if (ivf_coarse_query_bytes() == 2 && dim % 4 == 0 && aligned) ch_scores<WQ, true, true>(CH_ARGS, qs, cs);
    else if (dim % 4 == 0 && aligned) ch_scores<WQ, true, false>(CH_ARGS, qs, cs);
    else ch_scores<WQ, false, false>(CH_ARGS, qs, cs);
}

// Tiles of 64 queries (4 warps) and 128 (8 warps); the host takes the largest that still
// gives the batch two blocks an SM (64 where 128 would leave one part-full wave), and smaller batches the 2xTF32 kernel (gpu/coarse/plan.rs).
extern "C" __global__ void __launch_bounds__(128, 5) ivf_coarse_scores_h16_q64_kernel(CH_PARAMS) {
    ch_kernel<2>(CH_ARGS);
}
// Three blocks an SM (80 registers; no spill since the copies' and stores' addresses are
// constant offsets of one, ch_query_row and ch_copy_centres): 10,000 images against 256
// centres are 316 blocks, one wave of 396 instead of 1.2 of 264. Measured on the H200 (session 14, `1-wip-ab/`, against two an
// SM): images × 2 score matrix 68.0 → 52.0 µs (ncu), device QPS +1.2 to +5.5 % at batch
// 10,000; the 128-dimension sets within ±1 %.
extern "C" __global__ void __launch_bounds__(256, 3) ivf_coarse_scores_h16_q128_kernel(CH_PARAMS) {
    ch_kernel<4>(CH_ARGS);
}
