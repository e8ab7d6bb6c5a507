// The score-matrix tile that the f16 form (coarse_h16.cu) and the 8-bit integer form
// (coarse_imma.cu) share: a block of 32 WQ queries × 64 centres, dimensions in chunks of 64
// bytes (32 f16 or 64 8-bit values) staged two chunks deep (the 8-bit form with aligned
// queries three: coarse_imma.cu), the centres' two parts (f16 hi and lo
// halves, or the 8-bit limbs) copied with cp.async from rows padded to whole chunks and
// tiles. Byte for byte the two forms stage, copy and load (ldmatrix) alike: an mma k
// step is 32 bytes of a row in both (mma.cuh).
#pragma once
#include <cuda_fp16.h>
#include "mma.cuh"

#define CH_TC 64        // centres of a tile
#define CH_KC 32        // dimensions of a chunk (two m16n8k16 steps)
#define CH_LD 40        // shared-memory row stride in halves: 80 bytes, 16-byte aligned,
                        // eight rows on distinct banks for ldmatrix
#define CH_WC (CH_TC / 32)  // warps across the centres

// A staged chunk row of ROW_BYTES bytes (64: the f16 form's CH_KC halves; 128: the 8-bit
// form's, coarse_imma.cu CI_KC): its stride LD in 16-bit words (16 bytes more than the row,
// so that eight rows fall on distinct banks for ldmatrix: CH_LD for 64), its 8-byte query
// groups and its 16-byte centre pieces.
template <int ROW_BYTES> struct ChRow {
    static_assert(ROW_BYTES == 64 || ROW_BYTES == 128, "chunks of 64 or 128 bytes");
    static constexpr int LD = ROW_BYTES / 2 + 8;
    static constexpr int GROUPS = ROW_BYTES / 8;
    static constexpr int PIECES = ROW_BYTES / 16;
};
static_assert(ChRow<2 * CH_KC>::LD == CH_LD, "the f16 form's stride");

// The tile's shape for WQ warps across the queries.
template <int WQ> struct ChTile {
    static constexpr int TQ = 32 * WQ;                               // queries of a tile
    static constexpr int THREADS = 32 * WQ * CH_WC;
    static constexpr int QGROUPS = TQ * CH_KC / 4 / THREADS;         // query groups of 4 a thread stages
    static constexpr int QSTAGE = TQ * CH_LD, CSTAGE = 2 * CH_TC * CH_LD;  // halves of a stage
};

// The tile row of this thread's query group u (8 threads a row: CH_KC / 4 groups of four
// values). The rows of u are (THREADS / 8) u apart, a constant: every group's address is a
// constant offset of one, which took the q128 kernel's spill away (20 local loads and
// stores in its SASS, 0 after). Taking each aligned 8 rows in the order 0, 4, 1, 5, … so
// that a half-warp's two 8-byte stores fall 16 banks apart (ncu, session 20: 4.3
// wavefronts a store request) was measured beside it and gained nothing (session 21,
// `docs/gpu-runs/2026-12-02-s21/1-coarse-ab/`, `rows`: the score matrix 65.3 µs on images
// × 2 like main's, device QPS within the noise).
// (ROW_BYTES: the bytes of a staged chunk row, ChRow.)
template <int THREADS, int ROW_BYTES = 2 * CH_KC>
__device__ __forceinline__ int ch_query_row(int u) {
    constexpr int GROUPS = ChRow<ROW_BYTES>::GROUPS;
    static_assert(THREADS % (8 * GROUPS) == 0, "whole groups of 8 rows a round");
    const int j = (int)threadIdx.x / GROUPS;
    return j + THREADS / GROUPS * u;
}

// Starts the copy of the chunk at 16-bit word k0 of centres c0 … c0 + 63, both halves (or
// limbs), into cs (hi rows, then lo rows, ChRow<ROW_BYTES>::LD words a row: ROW_BYTES / 2
// words of each row are copied). `halves`: hi of every padded row, then lo, `dim_pad`
// words a row, `n_pad` rows each.
template <int WQ, int ROW_BYTES = 2 * CH_KC>
__device__ __forceinline__ void ch_copy_centres(__half* cs, const unsigned short* halves, int dim_pad, int n_pad,
                                                int c0, int k0) {
    using T = ChTile<WQ>;
    using R = ChRow<ROW_BYTES>;
    constexpr int COPIES = 2 * CH_TC * R::PIECES / T::THREADS;
    // Copy e = threadIdx.x + THREADS · u is piece e % PIECES of row e / PIECES of hi then
    // lo rows: with THREADS / PIECES dividing CH_TC, its part and its row's distance from
    // threadIdx.x / PIECES are constants of u, so that the copies of u are constant
    // offsets of one address.
    static_assert(CH_TC % (T::THREADS / R::PIECES) == 0, "a round of copies within one part");
    #pragma unroll
    for (int u = 0; u < COPIES; ++u) {
        const int rows_before = T::THREADS / R::PIECES * u;
        const int part = rows_before / CH_TC;
        const int row = (int)threadIdx.x / R::PIECES + rows_before % CH_TC;
        const int piece = (int)threadIdx.x % R::PIECES;
        const unsigned short* src =
            halves + ((long long)part * n_pad + c0 + row) * dim_pad + k0 + 8 * piece;
        const unsigned dst = mma_shared_address(cs + (part * CH_TC + row) * R::LD + 8 * piece);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Starts the copy of one chunk's query bytes of this thread into stage `qs` with cp.async:
// group u is row ch_query_row(u) of the tile, bytes `byte0` + 8 (threadIdx.x % GROUPS) … + 7 of
// each query's `row_bytes`, zeros past the batch or the row. The groups are whole (the
// caller's rows are 8-byte aligned and a whole number of groups); the caller commits.
// (ROW_BYTES: the chunk's bytes a row, ChRow.)
template <int THREADS, int QGROUPS, int ROW_BYTES = 2 * CH_KC>
__device__ __forceinline__ void ch_copy_query_groups(unsigned char* qs, const unsigned char* queries, int nq,
                                                     long long row_bytes, int q0, int byte0) {
    using R = ChRow<ROW_BYTES>;
    #pragma unroll
    for (int u = 0; u < QGROUPS; ++u) {
        const int row = ch_query_row<THREADS, ROW_BYTES>(u);
        const int col = 8 * ((int)threadIdx.x % R::GROUPS);
        const int q = q0 + row, b = byte0 + col;
        const bool ok = q < nq && b < row_bytes;
        const unsigned char* src = queries + (ok ? (long long)q * row_bytes + b : 0);
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;"
                     :: "r"(mma_shared_address(qs + row * (2 * R::LD) + col)), "l"(src), "r"(ok ? 8 : 0) : "memory");
    }
}

// A STAGES-deep cp.async pipeline over `chunks` chunks: `copy(chunk, stage)` starts one
// chunk's copies into a stage and commits them as one group, `multiply(stage)` takes a
// staged chunk's products. Chunks k + 1 … k + STAGES − 1 are in flight while chunk k is
// multiplied; every round commits one group (empty past the last chunk), so that "all but
// the newest STAGES − 2" is the chunk in hand, and one barrier a chunk covers both that
// it is staged and that the stage copied next was last read a round ago.
template <int STAGES, class Copy, class Multiply>
__device__ __forceinline__ void ch_pipeline(int chunks, Copy copy, Multiply multiply) {
    auto start = [&](int chunk) {
        if (chunk < chunks) copy(chunk, chunk % STAGES);
        else asm volatile("cp.async.commit_group;" ::: "memory");
    };
    #pragma unroll
    for (int chunk = 0; chunk < STAGES - 1; ++chunk) start(chunk);
    for (int chunk = 0; chunk < chunks; ++chunk) {
        asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 2) : "memory");
        __syncthreads();
        start(chunk + STAGES - 1);
        multiply(chunk % STAGES);
    }
}

// The score-matrix tiles of this block (the 8-bit form's; the f16 form keeps a block a tile,
// whose 128-query kernel spilled when it went through several): tile t of n_qtiles ×
// n_ctiles (centre tiles fastest)
// for t = blockIdx.x, + gridDim.x, … — a grid of the blocks an SM holds, each going
// through its tiles with the copies of the next one in flight behind the products and
// stores of this one (ch_pipeline_tiles), where a block a tile paid its pipeline's
// start, a barrier and its stores' drain on every tile: 128 dimensions are two 64-byte
// chunks. `n_pad` is a whole number of centre tiles.
struct ChTiles {
    int tq, n_ct, count;
    __device__ __forceinline__ ChTiles(int nq, int tq_, int n_pad) : tq(tq_), n_ct(n_pad / CH_TC) {
        const int n = (nq + tq - 1) / tq * n_ct;
        count = (int)blockIdx.x < n ? (n - 1 - (int)blockIdx.x) / (int)gridDim.x + 1 : 0;
    }
    // The first query and centre of this block's i-th tile.
    __device__ __forceinline__ int q0(int i) const { return ((int)blockIdx.x + i * (int)gridDim.x) / n_ct * tq; }
    __device__ __forceinline__ int c0(int i) const { return ((int)blockIdx.x + i * (int)gridDim.x) % n_ct * CH_TC; }
};

// ch_pipeline over every chunk of every tile of this block, as one sequence:
// `copy(tile, chunk, stage)` and `multiply(tile, chunk, stage)` (which stores a tile's
// scores after its last chunk). The stages are copied ahead across a tile's end.
template <int STAGES, class Copy, class Multiply>
__device__ __forceinline__ void ch_pipeline_tiles(const ChTiles& tiles, int chunks, Copy copy, Multiply multiply) {
    int copy_tile = 0, copy_chunk = 0, mul_tile = 0, mul_chunk = 0;
    ch_pipeline<STAGES>(
        tiles.count * chunks,
        [&](int, int s) {
            copy(copy_tile, copy_chunk, s);
            if (++copy_chunk == chunks) copy_chunk = 0, ++copy_tile;
        },
        [&](int s) {
            multiply(mul_tile, mul_chunk, s);
            if (++mul_chunk == chunks) mul_chunk = 0, ++mul_tile;
        });
}

// The score-matrix kernels' parameters (gpu/coarse/plan.rs SCORES_H16_SIGNATURE): `split`
// is the centres' f16 halves or 8-bit limbs, `dim_pad` 16-bit words a row of it.
#define CH_PARAMS                                                                              \
    const unsigned char* __restrict__ queries, int nq, int dim, int metric,                   \
    const unsigned short* __restrict__ split, const float* __restrict__ center_norms,         \
    int n_centers, int query_base, int dim_pad, int n_pad, float inv_scale,                    \
    float* __restrict__ scores, int* __restrict__ bad_query
#define CH_ARGS queries, nq, dim, metric, split, center_norms, n_centers, query_base, dim_pad, n_pad, \
    inv_scale, scores, bad_query
