// Entry fragment (sm_80 on): the coarse search's score matrix for 8-bit queries (i8, u8)
// on the integer tensor cores — the same output as the f16 form (coarse_h16.cu), whose
// tile, staging and copies it shares (coarse_tile.cuh), with each product formed by two
// mma.sync m16n8k32 against the centres cut into two 8-bit limbs.
//
// The limbs arrive cut once per index (DeviceCenters, gpu/centers.rs `split_limbs`):
// each centre scaled by the power of two that puts its largest magnitude in [2^14, 2^15),
// each value rounded to an integer v, then v = 256 hi + lo with hi signed (s8) and lo in
// [0, 255] (u8): the value to 2^-16 of its centre's largest magnitude. A query (u8 or s8)
// times either limb is exact in s32, and so is its sum over a row (|q · hi| ≤ 255 · 128 ·
// dim, q · lo ≤ 255 · 255 · dim: dimensions up to 33,000, which the host checks). The
// epilogue forms 256 · hi + lo in f32 and multiplies by the centre's 2^-scale, stored as
// f32 after the limb rows (`split` + 2 n_pad dim_pad words; the host's `inv_scale` is 1).
//
// Against the f16 form, a byte holds a dimension instead of half of one, and each
// 16-query × 8-centre block takes two IMMA a k step of 32 dimensions where the f16 form
// takes four HMMA: half the tensor-core instructions, a third fewer ldmatrix, half the
// shared memory and L2 bytes a dimension. Each warp multiplies 32 queries × 16 centres
// (two accumulators a block, one for each limb), so a 64-centre tile takes four warps
// across the centres; the queries' 8-byte groups are staged as they are in memory
// (cp.async where they are 8-byte aligned: ci_scores, ch_pipeline), in chunks of 128
// bytes (CI_KC) where the f16 form's are 64.
#include "coarse.cuh"
#include "coarse_tile.cuh"

#define CI_WC 4                 // warps across the centres: 16 centres each
#define CI_KC 128               // dimensions of a chunk (128 bytes, four m16n8k32 steps)
#define CI_LD (ChRow<CI_KC>::LD)  // 16-bit words of a staged row

// The IMMA of the query type: A (16 queries × 32 values) against B (8 centres' limb,
// signed for hi, unsigned for lo), s32 accumulation.
#if defined(IVF_DTYPE_i8)
#define CI_FORM_HI "m16n8k32.row.col.s32.s8.s8.s32"
#define CI_FORM_LO "m16n8k32.row.col.s32.s8.u8.s32"
#else
#define CI_FORM_HI "m16n8k32.row.col.s32.u8.s8.s32"
#define CI_FORM_LO "m16n8k32.row.col.s32.u8.u8.s32"
#endif
MMA_M16N8(ci_imma_hi, CI_FORM_HI, int, "r")
MMA_M16N8(ci_imma_lo, CI_FORM_LO, int, "r")

// The tile's shape for WQ warps across the queries (and CI_WC across the centres): its
// thread count is the f16 tile's of twice the warps across the queries, whose centre
// copies (ch_copy_centres<2 WQ>) it shares.
template <int WQ> struct CiTile {
    static constexpr int TQ = 32 * WQ;                           // queries of a tile
    static constexpr int THREADS = 32 * WQ * CI_WC;
    static constexpr int QGROUPS = TQ * ChRow<CI_KC>::GROUPS / THREADS;  // 8-byte query groups a thread stages
    static constexpr int QSTAGE = TQ * CI_LD, CSTAGE = 2 * CH_TC * CI_LD;  // 16-bit words of a stage
    static_assert(THREADS == ChTile<2 * WQ>::THREADS, "the copies of the f16 tile of twice the warps");
};

// One chunk's query bytes of this thread: group u is row ch_query_row(u), bytes
// 8 (threadIdx.x % 8) … + 7 of the chunk (zeros past the batch or the dimension).
template <int WQ> struct CiQueries { uint2 raw[CiTile<WQ>::QGROUPS]; };

// Loads one chunk's query bytes of this thread one byte at a time (queries whose groups
// are not 8-byte aligned; the others are copied with cp.async: ch_copy_query_groups).
template <int WQ>
__device__ __forceinline__ void ci_load_queries(CiQueries<WQ>& r, const unsigned char* queries, int nq, int dim,
                                                int q0, int k0) {
    using T = CiTile<WQ>;
    #pragma unroll
    for (int u = 0; u < T::QGROUPS; ++u) {
        const int q = q0 + ch_query_row<T::THREADS, CI_KC>(u);
        const int d = k0 + 8 * ((int)threadIdx.x % ChRow<CI_KC>::GROUPS);
        const long long at = (long long)q * dim + d;
        unsigned w[2] = {0u, 0u};
        #pragma unroll
        for (int i = 0; i < 8; ++i) {
            const bool ok = q < nq && d + i < dim;
            const unsigned b = queries[ok ? at + i : 0];
            w[i / 4] |= (ok ? b : 0u) << (8 * (i % 4));
        }
        r.raw[u] = make_uint2(w[0], w[1]);
    }
}

// Stores a loaded chunk's query bytes (after the chunk in hand is multiplied: the empty
// asm keeps the loads in flight behind it, as in coarse_h16.cu).
template <int WQ>
__device__ __forceinline__ void ci_store_queries(CiQueries<WQ>& r, unsigned char* qs) {
    using T = CiTile<WQ>;
    #pragma unroll
    for (int u = 0; u < T::QGROUPS; ++u) {
        const int row = ch_query_row<T::THREADS, CI_KC>(u);
        const int col = 8 * ((int)threadIdx.x % ChRow<CI_KC>::GROUPS);
        asm volatile("" : "+r"(r.raw[u].x), "+r"(r.raw[u].y));
        *reinterpret_cast<uint2*>(qs + row * (2 * CI_LD) + col) = r.raw[u];
    }
}

// The warp's products of one staged chunk (q, c: its ldmatrix rows in the stage) into
// its hi and lo accumulators.
__device__ __forceinline__ void ci_multiply_chunk(const __half* q, const __half* c, int (&hi)[2][2][4],
                                                  int (&lo)[2][2][4]) {
    #pragma unroll
    for (int k = 0; k < CI_KC / 2; k += 16) {  // 16 words: a k step of 32 bytes
        unsigned a[2][4];
        mma_ldsm_x4(a[0], q + k);
        mma_ldsm_x4(a[1], q + 16 * CI_LD + k);
        #pragma unroll
        for (int n = 0; n < 2; ++n) {
            unsigned b[4];  // hi at k, hi at k + 16 bytes, lo at k, lo at k + 16 bytes
            mma_ldsm_x4(b, c + n * 8 * CI_LD + k);
            #pragma unroll
            for (int m = 0; m < 2; ++m) {
                ci_imma_lo(lo[m][n], a[m], b[2], b[3]);
                ci_imma_hi(hi[m][n], a[m], b[0], b[1]);
            }
        }
    }
}

// Stages of the cp.async pipeline: chunk k + 1 in flight while chunk k is multiplied, 128
// bytes ahead as three stages of 64-byte chunks were. Two stages of 128-byte chunks are
// 55,296 bytes of dynamic shared memory, three blocks an SM 166 KB.
//
// Chunks of 128 bytes, not 64: every chunk costs a warp a barrier, the copies' address
// arithmetic, the tile's pipeline counters and the accumulators' moves after its products
// (main's SASS, sm_90: about 219 instructions a 64-byte chunk for 16 IMMA; about 250 a
// 128-byte chunk for 32), so 128-byte chunks issue about 40 % fewer instructions a
// dimension, for 64 bytes more padding at most a row (the images' 784: 896 bytes, not 832).
// Measured on the H100 (session 48, `docs/gpu-runs/2026-12-07-s48/`, `c128` against main,
// two calls): the images' score matrix 43.2 → 39.7 µs (× 2, ncu), lowdim-i8's 33.4 → 32.5
// µs (× 10); device QPS at batch 10,000 images +0.9 / −0.5 / +1.1 / −0.3 % and +2.6 / +1.4
// / +0.9 / +0.7 % (2 / 5 / 10 / 20 probes), at 1,000 −0.2 to +1.0 %, lowdim-i8 −1.0 to
// +1.0 %, wide-i8 −0.2 to +1.0 %. The form that loads queries through registers (rows not
// 8-byte aligned) spills 64 bytes at 80 registers (sm_90); the aligned form, which every
// bench set takes, refills one register a tile.
#define CI_STAGES 2

// The tile of 32 WQ queries × 64 centres, 4 WQ warps (warp w: queries 32 (w % WQ) …,
// centres 16 (w / WQ) …). `dim_pad` counts the limb rows' 16-bit words (half their
// bytes), as ch_copy_centres reads them. qs: CI_STAGES stages of TQ query rows of CI_LD
// words; cs: as many of CH_TC hi rows then CH_TC lo rows.
//   VEC8: the queries' bytes too are copied with cp.async, CI_STAGES stages deep — with
//     one 64-byte chunk in flight, the score matrix of the images (784 dimensions, 13 chunks)
//     waited on its loads ("long scoreboard") in 41 % of its samples (ncu, session 32,
//     `docs/gpu-runs/2026-12-06-s32/2-profiles/`). Measured on the H100 (session 32,
//     `3-pdim-cimma3/`, `cimma3` against main, three rounds): the images' score matrix
//     43.8 → 37.7 µs (× 2, ncu), device QPS at batch 10,000 images +4.1 / +1.1 / +1.3 /
//     +1.1 % (2 / 5 / 10 / 20 probes), wide-i8 +0.0 to +0.6 %, lowdim-i8 (128
//     dimensions: two chunks) −1.2 to +0.2 %, batch 1,000 −0.4 to +0.8 %;
//   else: the queries' bytes one at a time through registers, two stages (loaded while
//     the chunk before is multiplied, stored after it).
// Each block goes through several tiles (ChTiles), the copies of the next in flight behind
// the products and stores of this one. Measured on the H100 (session 34, call 3,
// `docs/gpu-runs/2026-12-06-s34/3-persist/`, `pers`, with the f16 form going through several
// too, against main, three rounds): lowdim-i8 × 10's score matrix 42.2 → 34.1 µs (ncu),
// device QPS at batch 10,000 lowdim-i8 × 10 / × 20 +2.1 / +1.3 %, the images (13 chunks a
// tile) −0.6 / −1.0 / −0.0 / +0.1 % at 2 / 5 / 10 / 20 probes.
template <int WQ, bool VEC8>
__device__ __forceinline__ void ci_scores(CH_PARAMS, __half* qs, __half* cs)
{
    using T = CiTile<WQ>;
    const ChTiles tiles(nq, T::TQ, n_pad);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wq = warp % WQ, wc = warp / WQ;
    // ldmatrix row addresses in 16-bit words, as in coarse_h16.cu: A = 16 of the warp's
    // queries at bytes k and k + 16; B = 8 centres, lanes 0–15 their hi limb, 16–31 lo.
    const int qa = (wq * 32 + (lane & 7) + ((lane >> 3) & 1) * 8) * CI_LD + (lane >> 4) * 8;
    const int cb = ((lane >> 4) * CH_TC + wc * 16 + (lane & 7)) * CI_LD + ((lane >> 3) & 1) * 8;
    int hi[2][2][4], lo[2][2][4];
    auto clear = [&]() {
        #pragma unroll
        for (int m = 0; m < 2; ++m)
            #pragma unroll
            for (int n = 0; n < 2; ++n)
                #pragma unroll
                for (int j = 0; j < 4; ++j) hi[m][n][j] = lo[m][n][j] = 0;
    };
    // Each centre's scale (lane (g, t): centres 2 t and 2 t + 1 of each 8-centre block; the
    // padded rows' are there too).
    const float* row_scale = reinterpret_cast<const float*>(split + 2 * (long long)n_pad * dim_pad);
    auto store = [&](int q0, int c0) {
        #pragma unroll
        for (int n = 0; n < 2; ++n) {
            const float2 rs = *reinterpret_cast<const float2*>(row_scale + c0 + wc * 16 + n * 8 + 2 * (lane % 4));
            coarse_store_blocks<2>(scores, nq, n_centers, metric, center_norms, inv_scale, q0 + wq * 32,
                                   c0 + wc * 16 + n * 8, [&](int m, int j) {
                                       return fmaf(256.f, (float)hi[m][n][j], (float)lo[m][n][j]) * ((j & 1) ? rs.y : rs.x);
                                   });
        }
        clear();
    };
    clear();
    auto stage_q = [&](int s) { return reinterpret_cast<unsigned char*>(qs + s * T::QSTAGE); };
    const int chunks = (dim + CI_KC - 1) / CI_KC;
    if (VEC8) {
        ch_pipeline_tiles<CI_STAGES>(
            tiles, chunks,
            [&](int i, int chunk, int s) {
                ch_copy_query_groups<T::THREADS, T::QGROUPS, CI_KC>(stage_q(s), queries, nq, dim, tiles.q0(i),
                                                                    chunk * CI_KC);
                ch_copy_centres<WQ * 2, CI_KC>(cs + s * T::CSTAGE, split, dim_pad, n_pad, tiles.c0(i), chunk * CI_KC / 2);
            },
            [&](int i, int chunk, int s) {
                ci_multiply_chunk(qs + s * T::QSTAGE + qa, cs + s * T::CSTAGE + cb, hi, lo);
                if (chunk == chunks - 1) store(tiles.q0(i), tiles.c0(i));
            });
        return;
    }
    for (int i = 0; i < tiles.count; ++i) {
        const int q0 = tiles.q0(i), c0 = tiles.c0(i);
        CiQueries<WQ> next;
        __syncthreads();  // the tile before's last readers of stage 0 are done
        ch_copy_centres<WQ * 2, CI_KC>(cs, split, dim_pad, n_pad, c0, 0);
        ci_load_queries<WQ>(next, queries, nq, dim, q0, 0);
        ci_store_queries<WQ>(next, stage_q(0));
        for (int k0 = 0, s = 0; k0 < dim; k0 += CI_KC, s ^= 1) {
            asm volatile("cp.async.wait_all;" ::: "memory");
            __syncthreads();  // this chunk is staged; the other stage's last readers are done
            const bool more = k0 + CI_KC < dim;
            if (more) {
                ch_copy_centres<WQ * 2, CI_KC>(cs + (s ^ 1) * T::CSTAGE, split, dim_pad, n_pad, c0, (k0 + CI_KC) / 2);
                ci_load_queries<WQ>(next, queries, nq, dim, q0, k0 + CI_KC);
            }
            ci_multiply_chunk(qs + s * T::QSTAGE + qa, cs + s * T::CSTAGE + cb, hi, lo);
            if (more) ci_store_queries<WQ>(next, stage_q(s ^ 1));
        }
        store(q0, c0);
    }
}

template <int WQ>
__device__ __forceinline__ void ci_kernel(CH_PARAMS)
{
    using T = CiTile<WQ>;
    // CI_STAGES stages of queries, then as many of centres (gpu/coarse/plan.rs
    // `IMMA_SHARED_BYTES`): past the 48 KiB a kernel may declare statically.
    extern __shared__ __align__(16) __half ci_stages[];
    __half* qs = ci_stages;
    __half* cs = ci_stages + CI_STAGES * T::QSTAGE;
    if (dim % 8 == 0 && (reinterpret_cast<size_t>(queries) & 7) == 0) ci_scores<WQ, true>(CH_ARGS, qs, cs);
    else ci_scores<WQ, false>(CH_ARGS, qs, cs);
}

// Tiles of 64 queries (8 warps, 64 accumulator registers a thread where the f16 form has
// 32): three blocks an SM, 24 warps. (128-query tiles would need 16 warps a block, whose
// round of centre copies spans both limbs' rows: not written.)
extern "C" __global__ void __launch_bounds__(256, 3) ivf_coarse_scores_imma_q64_kernel(CH_PARAMS) {
    ci_kernel<2>(CH_ARGS);
}
