// Device-function fragment: the list-major scan's tile arithmetic for one data type.
// Defines: IVF_DTYPE_{f32,f16,i8,u8}, LM_MMA for the sm_80 tiles, and LM_ASYNC_ROWS for the 8-bit
// mma tiles that copy their steps with cp.async (below). Whether the accumulator is an L2 distance or a dot
// product comes from the metric fragment (ivf_metric_l2, a constant after linking), so
// one fragment per type serves every metric.
//
// The block computes a (qt queries) × (64 rows) tile of inner products, turns each into
// the metric's score and keeps those that beat their query's threshold (LmCandidates).
//
// Two families of tiles. Built with LM_MMA (fragments lmtile_<type>tc, compiled for sm_80,
// where mma.sync takes TF32, f16 at m16n8k16 and 8-bit at m16n8k32), every type runs on
// the tensor cores with its products left in registers: warp w multiplies the 16 step rows
// 16 (w % 4) … against its half of the tile's queries and scores its own accumulators —
// no product goes through shared memory, and no second pass reads them back. f16 and
// 8-bit fragments load through ldmatrix; f32 runs as 3xTF32 (below). 8-bit products and
// sums are exact (32-bit integers); f16 products accumulate in f32.
//
// Without LM_MMA (sm_75, or to compare) f16, i8 and u8 use WMMA 16×16×16 (f16 with f32
// accumulation, 8-bit exact): warp w computes the 16×16 output tiles of row block w % 4
// against query blocks w / 4 and w / 4 + 2 and stores them; the block then scores the
// stored dot products, a warp's 32 lanes on 32 rows of one query. f32 stays on the CUDA
// cores: queries and rows are staged dimension-major (slot d of query i at d × (qt + 4)
// + i, of row r at d × 64 + r) so that a thread reads its 4 rows and its QPT queries
// (qt = 16 × QPT) with one vector load each, and scores its QPT × 4 products in
// registers.
//
// Every tensor-core tile stages queries and rows in their own type, one per shared-memory
// row (query i at i × ld, row r at r × ld; ld = the dimension rounded up to the k step's
// multiple, 16 or 32 values, plus 16 bytes against bank conflicts). L2 distances are
// formed from the norms (‖q‖² + ‖x‖² − 2 q·x): exact for 8-bit types, clamped at 0 in f32.
// The rows' norms come with each step from the lists' row_norms (computed once where the
// lists reach the device: kernels/row_norms.cu), not summed from the rows a step.
#include "ivf_abi.cuh"
#include "ivf_dtype.cuh"

#if defined(LM_MMA)
#define LM_ROW_MAJOR 1
#elif !defined(IVF_DTYPE_f32)
#define LM_WMMA 1
#define LM_ROW_MAJOR 1
#endif

// The room for kept candidates a query slot has (ivf_abi.cuh, ivf_lm_cand_cap): 96 in the
// wide-room tiles (LM_WIDE_ROOM: the fragments lmtile_<f16|i8|u8>tcw), 80 in every other.
// Measured on the H200: 96 against 80 in session 11 (`1-deferred-ab/`, every tile): f16
// +2 to +6 %, 8-bit +1 to +3 %, but f32's TF32 tile −10 to −16 % (two blocks an SM no
// longer fit); in session 12 (`3-cand-cap-const-ab/`, f16 and 8-bit register tiles): f16
// +0.7 to +3.2 %, the images +0.5 to +5.0 %. The host takes the wide room only where the
// SM holds as many blocks of each tile size with it (list_major::tile::LmKernel::choose);
// a room read from a kernel argument instead cost f32 about 2 % (docs/wip/README.md).
#if defined(LM_WIDE_ROOM) && (!defined(LM_MMA) || defined(IVF_DTYPE_f32) || defined(LM_ASYNC_ROWS))
#error "LM_WIDE_ROOM is for the f16 and 8-bit mma tiles that load rows through registers"
#endif
#if defined(LM_WIDE_ROOM)
#define LM_TILE_CAND_CAP 96
#else
#define LM_TILE_CAND_CAP 80
#endif
extern "C" __device__ int ivf_lm_cand_cap() { return LM_TILE_CAND_CAP; }

// The mma tiles that test keep bounds (ivf_abi.cuh): 8-bit where the score is linear
// (lm_keep_exact), f16 and f32 for L2 (lm_keep_biased).
extern "C" __device__ bool ivf_lm_bounded() {
#if defined(LM_MMA) && defined(IVF_BYTES)
    return ivf_score_linear();
#elif defined(LM_MMA)
    return ivf_score_linear() && ivf_metric_l2();
#else
    return false;
#endif
}

// With LM_ASYNC_ROWS (8-bit mma tiles only: the fragments lmtile_<i8|u8>tc_async, which
// the register-capped kernels link), the step rows go straight from global to shared
// memory with cp.async — no rows held in registers across the multiply, which the capped
// kernel's 80 registers would spill, and no store pass — into one of `step_buffers`
// buffers, the rows' norms with them.
#if defined(LM_ASYNC_ROWS) && !(defined(LM_MMA) && defined(IVF_BYTES))
#error "LM_ASYNC_ROWS is for the 8-bit mma tiles"
#endif

#define LM_WARPS (LM_THREADS / 32)
// Values of T in one 16-byte chunk of the interleaved layout.
#define LM_CHUNK_ELEMS (16 / (int)sizeof(T))

#if defined(IVF_BYTES)
typedef int Sum;    // exact: 8-bit products and their sums are integers
#else
typedef float Sum;
#endif

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ Sum lm_square(T v) {
#if defined(IVF_BYTES)
    return (int)v * (int)v;
#else
    const float f = to_f32(v);
    return f * f;
#endif
}

// ---- the work area --------------------------------------------------------------------
#if defined(LM_ROW_MAJOR)
// (WMMA only: dots [qt][LM_ACC_STRIDE] (Sum),) Qs [qt][ld] and Xs [64][ld] of T,
// xn [64], qn [qt] (Sum). Every part starts 32-byte aligned, as WMMA needs.
// The staged width: the dimension rounded up to the k step (8-bit mma: 32 values).
#if defined(LM_MMA) && defined(IVF_BYTES)
__device__ __forceinline__ int lm_kpad(int dim) { return (dim + 31) / 32 * 32; }
#else
__device__ __forceinline__ int lm_kpad(int dim) { return (dim + 15) / 16 * 16; }
#endif
struct LmWork {
    Sum* dots;
    T* qs;
    T* xs;
    Sum* xn;
    Sum* qn;
    int ld;
};
#if defined(LM_ASYNC_ROWS)
// cp.async tiles: qn [qt], xn [2][64] (the norms of each step buffer's rows), Qs [qt][ld],
// then the step buffers Xs [step_buffers][64][ld]; `slot` picks the buffer and its norms.
// Every part starts 16-byte aligned (qt is a multiple of 16, ld of 16 bytes), as cp.async
// and ldmatrix need.
__device__ __forceinline__ LmWork lm_work(unsigned char* work, int dim, int qt, int slot) {
    LmWork w;
    w.ld = lm_kpad(dim) + 16;
    w.dots = nullptr;
    w.qn = reinterpret_cast<Sum*>(work);
    w.xn = w.qn + qt + slot * LM_STEP_ROWS;
    w.qs = reinterpret_cast<T*>(w.qn + qt + 2 * LM_STEP_ROWS);
    w.xs = w.qs + (qt + slot * LM_STEP_ROWS) * w.ld;
    return w;
}
#else
__device__ __forceinline__ LmWork lm_work(unsigned char* work, int dim, int qt, int) {
    LmWork w;
    w.ld = lm_kpad(dim) + 16 / (int)sizeof(T);
#if defined(LM_WMMA)
    w.dots = reinterpret_cast<Sum*>(work);
    w.qs = reinterpret_cast<T*>(w.dots + qt * LM_ACC_STRIDE);
#else
    w.dots = nullptr;
    w.qs = reinterpret_cast<T*>(work);
#endif
    w.xs = w.qs + qt * w.ld;
    w.xn = reinterpret_cast<Sum*>(w.xs + LM_STEP_ROWS * w.ld);
    w.qn = w.xn + LM_STEP_ROWS;
    return w;
}
#endif
// Where element d of step row `row` goes.
__device__ __forceinline__ int lm_row_slot(const LmWork& w, int row, int d) { return row * w.ld + d; }
#else
// Qs [dim][qt + 4], Xs [dim][64], xn [64], qn [qt].
struct LmWork {
    float* qs;
    float* xs;
    float* xn;
    float* qn;
};
__device__ __forceinline__ LmWork lm_work(unsigned char* work, int dim, int qt, int) {
    LmWork w;
    w.qs = reinterpret_cast<float*>(work);
    w.xs = w.qs + dim * (qt + 4);
    w.xn = w.xs + dim * LM_STEP_ROWS;
    w.qn = w.xn + LM_STEP_ROWS;
    return w;
}
__device__ __forceinline__ int lm_row_slot(const LmWork&, int row, int d) { return d * LM_STEP_ROWS + row; }
#endif

extern "C" __device__ int ivf_lm_keep_bound(float t, unsigned char* work, int dim, int qt, int i) {
#if defined(LM_MMA) && defined(IVF_BYTES)
    // ceil(t), saturated (+inf → INT_MAX, -inf → INT_MIN), less L2's query norm (ceil(t)
    // raised to at least INT_MIN + the norm first, so that the subtraction cannot wrap).
    const int bias = ivf_metric_l2() ? lm_work(work, dim, qt, 0).qn[i] : 0;
    const int int_min = -2147483647 - 1;
    return max(__float2int_ru(t), int_min + bias) - bias;
#elif defined(LM_MMA)
    // t − qn, loosened by 2^-20 of |t| + qn (lm_keep_biased says why that covers the
    // rounding); ±inf stay (an empty slot keeps nothing, an open one everything).
    if (isinf(t)) return __float_as_int(t);
    const float qn = lm_work(work, dim, qt, 0).qn[i];
    return __float_as_int((t - qn) + (fabsf(t) + qn) * 0x1p-20f);
#else
    return 0;
#endif
}

// The squared norm of a 16-byte chunk's values.
__device__ __forceinline__ Sum lm_chunk_norm(uint4 x) {
    Sum part = 0;
#if defined(IVF_BYTES)
    // Four values a word: the squares summed by __dp4a.
    const unsigned words[4] = {x.x, x.y, x.z, x.w};
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
#if defined(IVF_DTYPE_i8)
        part = __dp4a((int)words[j], (int)words[j], part);
#else
        part = (int)__dp4a(words[j], words[j], (unsigned)part);
#endif
    }
#else
    const T* v = reinterpret_cast<const T*>(&x);
    #pragma unroll
    for (int j = 0; j < LM_CHUNK_ELEMS; ++j) part += lm_square(v[j]);
#endif
    return part;
}

// ---- queries ----------------------------------------------------------------------------
extern "C" __device__ void ivf_lm_stage_queries(const unsigned char* queries, const int* qidx, int qt, int dim, int step_buffers, unsigned char* work) {
    const LmWork w = lm_work(work, dim, qt, 0);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const T* q = reinterpret_cast<const T*>(queries);
    const T zero = T(0);
#if defined(LM_ROW_MAJOR)
    const int width = lm_kpad(dim);
#else
    const int width = dim;
#endif
#if defined(LM_ROW_MAJOR)
    // Rows of whole 16-byte chunks at a 16-byte aligned address: a lane loads a chunk (a
    // query's loads all in flight at once) instead of one value per round trip — a
    // 784-byte query was 25 dependent loads, and a tile stages 64. A warp stages two
    // queries at a time, slots i and i + LM_WARPS (qt is a multiple of 16, so both
    // exist), their loads in flight together: a block's first step waits on this (the
    // images' scan spent 8.7 % of its warp samples here, session 18's ncu profile).
    // Measured on the H200 (session 18, `docs/gpu-runs/2026-12-01-s18/3-tile-seed-ab/`,
    // `stq` against main, three rounds): device QPS at batch 10,000 images +0.3 to +2.9 %,
    // every set −0.8 to +5.9 % (mean +1.2 %); at 1,000 −1.1 to +1.5 % (mean +0.3 %).
    const int chunks = dim / LM_CHUNK_ELEMS;
    if (dim % LM_CHUNK_ELEMS == 0 && (reinterpret_cast<unsigned long long>(queries) & 15) == 0) {
        // Four slots a warp at a time (i0, i0 + LM_WARPS, …): every query's loads of a
        // 64-query tile in flight in two rounds a warp instead of four. Two in the f32
        // tiles and the cp.async ones (which the register-capped kernels link): four spill
        // there. Measured with lmscan.cu's early first-step fetch (its comment, session 51).
#if defined(LM_ASYNC_ROWS) || defined(IVF_DTYPE_f32)
        constexpr int SLOTS = 2;
#else
        constexpr int SLOTS = 4;
#endif
        for (int i0 = warp; i0 < qt; i0 += SLOTS * LM_WARPS) {
            int slot[SLOTS];
            long long qi[SLOTS];
            const uint4* src[SLOTS];
            Sum part[SLOTS];
            #pragma unroll
            for (int j = 0; j < SLOTS; ++j) {
                slot[j] = i0 + j * LM_WARPS;
                qi[j] = slot[j] < qt ? qidx[slot[j]] : -1;
                src[j] = reinterpret_cast<const uint4*>(q + (qi[j] >= 0 ? qi[j] : 0) * dim);
                part[j] = 0;
            }
            #pragma unroll 2
            for (int c = lane; c < chunks; c += 32) {
                uint4 x[SLOTS];
                #pragma unroll
                for (int j = 0; j < SLOTS; ++j) x[j] = qi[j] >= 0 ? src[j][c] : make_uint4(0, 0, 0, 0);
                #pragma unroll
                for (int j = 0; j < SLOTS; ++j) {
                    if (slot[j] < qt) *reinterpret_cast<uint4*>(w.qs + slot[j] * w.ld + c * LM_CHUNK_ELEMS) = x[j];
                    part[j] += lm_chunk_norm(x[j]);
                }
            }
            #pragma unroll
            for (int j = 0; j < SLOTS; ++j) {
                if (slot[j] >= qt) continue;
                for (int d = dim + lane; d < width; d += 32) w.qs[slot[j] * w.ld + d] = zero;
                for (int off = 16; off > 0; off >>= 1) part[j] += __shfl_xor_sync(0xffffffffu, part[j], off);
                if (lane == 0) w.qn[slot[j]] = part[j];
            }
        }
    } else
#endif
    for (int i = warp; i < qt; i += LM_WARPS) {
        const long long qi = qidx[i];
        Sum part = 0;
        for (int d = lane; d < width; d += 32) {
            const T v = (qi >= 0 && d < dim) ? q[qi * dim + d] : zero;
#if defined(LM_ROW_MAJOR)
            w.qs[i * w.ld + d] = v;
#else
            w.qs[d * (qt + 4) + i] = v;
#endif
            part += lm_square(v);
        }
        for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
        if (lane == 0) w.qn[i] = part;
    }
#if defined(LM_ROW_MAJOR)
    // The rows' padding columns (dim .. kpad) are never written by a step: zero them once
    // in every step buffer (they follow one another).
    const int pad = width - dim;
    for (int e = threadIdx.x; e < step_buffers * LM_STEP_ROWS * pad; e += LM_THREADS)
        w.xs[(e / pad) * w.ld + dim + e % pad] = zero;
#endif
}

// ---- rows -------------------------------------------------------------------------------
// Whether a step of this shape is made of 16-byte chunks: then its first
// LM_PREFETCH × LM_THREADS chunks travel through registers (all of a step up to 32 KiB:
// f32 up to 128 dimensions, f16 256, 8-bit 512), the rest is loaded when stored.
__device__ __forceinline__ bool lm_chunked(int dim, int veclen) {
    return veclen == LM_CHUNK_ELEMS && dim % LM_CHUNK_ELEMS == 0;
}

// A row chunk's place in a step (two 32-row groups of per_group chunks each, chunk c of a
// group holding values (c / 32) · LM_CHUNK_ELEMS … of row c % 32 = `lane`): its group, its
// row and its first value.
struct LmChunkAt { bool second; int row, d0; };

// Two forms place a step's chunks. 8-bit rows take the form by warp columns (below), which
// covers groups of any chunk count with a constant group a round where the dimension is
// linked; f32 and f16 rows keep the form by rounds where a group is whole rounds and by chunk
// index elsewhere. Measured on the H100 (session 38, same calls, two to three calls of two
// rounds, device QPS, against the second form everywhere): the images (784 bytes, groups
// not whole rounds) +1.8 to +4.3 % at every probe count and batch, wide-i8 +0.6 to +1.6 %,
// lowdim-i8 −0.7 to +1.7 %; but lowdim and lowdim-f16 −2.0 to −4.9 %, whose generic plans
// (no linked dimension) it left with 6 to 23 fewer registers and a slower copy.
#if defined(IVF_BYTES)
// Where the thread's chunk of round j goes (chunk j · LM_THREADS + threadIdx.x of a step).
// A group's chunk count (per_group) is a multiple of 32, so a warp's 32 chunks of a round are one 32-chunk column
// of one group: the group is a comparison of the warp's column (the same for all its lanes)
// with a group's columns, a constant of the link where the dimension is (lmdim and widedim
// plans) — no division, and no compare, shift and select a chunk. The capped i8 × 128
// kernel's row copy went from 74 to about 48 instructions a warp a step with the round form
// (ncu source counters, session 19); the images' 784-wide rows, whose groups are not whole
// rounds, took about 20 instructions a chunk in the form by chunk index (SASS, session 37).
__device__ __forceinline__ LmChunkAt lm_round_chunk(int j, int per_group, int warp, int lane) {
    const int column = j * LM_WARPS + warp, columns = per_group >> 5;
    // Decided by j alone unless the round straddles the groups (constants of an unrolled j).
    const bool second = (j + 1) * LM_WARPS <= columns ? false : j * LM_WARPS >= columns ? true : column >= columns;
    return {second, (second ? 32 : 0) + lane, (second ? column - columns : column) * LM_CHUNK_ELEMS};
}

// Rounds of a step of per_group chunks a group: the whole ones, and whether a partial one
// follows (in which only the warps whose column is under 2 · per_group / 32 take part).
__device__ __forceinline__ int lm_whole_rounds(int per_group) { return 2 * per_group / LM_THREADS; }
__device__ __forceinline__ bool lm_in_partial_round(int per_group, int warp) {
    return lm_whole_rounds(per_group) * LM_THREADS + warp * 32 < 2 * per_group;
}
#else
// Where chunk c of a step goes. A step is two groups, so the group is a comparison, not a
// division by the runtime chunk count.
__device__ __forceinline__ LmChunkAt lm_chunk_at(int c, int per_group, int lane) {
    const bool second = c >= per_group;
    const int in_group = second ? c - per_group : c;
    return {second, (second ? 32 : 0) + lane, (in_group >> 5) * LM_CHUNK_ELEMS};
}

// Whether a group's chunks are a whole number of the block's rounds (LM_THREADS chunks
// each): then every round lies in one group, and lm_round_chunk places a thread's chunks.
__device__ __forceinline__ bool lm_groups_are_whole_rounds(int per_group) { return per_group % LM_THREADS == 0; }

// Where the thread's chunk of round j goes (chunk j · LM_THREADS + threadIdx.x), where
// lm_groups_are_whole_rounds: its group and its first value's offset are functions of j
// alone plus the warp, and no compare or shift a chunk where lm_chunk_at takes one of each.
__device__ __forceinline__ LmChunkAt lm_round_chunk(int j, int per_group, int warp, int lane) {
    const int first = j * LM_THREADS;
    const bool second = first >= per_group;
    const int first_in_group = second ? first - per_group : first;
    return {second, (second ? 32 : 0) + lane, ((first_in_group >> 5) + warp) * LM_CHUNK_ELEMS};
}
#endif

#if defined(LM_ASYNC_ROWS)
extern "C" __device__ bool ivf_lm_async_rows() { return true; }

// Starts copying the step at `rows` and its norms into step buffer `slot` (16-byte
// chunks, zero-filled past the list's last group); ivf_lm_store waits for them. Layouts
// without 16-byte chunks are copied by ivf_lm_store instead (their norms are copied here).
extern "C" __device__ void ivf_lm_fetch(const unsigned char* rows, const unsigned* norms, int groups, int dim, int veclen, LmRegs*, unsigned char* work, int qt, int slot) {
    const LmWork w = lm_work(work, dim, qt, slot);
    // src-size 0 reads nothing and writes 16 zero bytes. The step's 64 norms: 16 threads a
    // chunk of four (the lists' norms of a step start 256-byte aligned: lists and steps
    // start at multiples of 32 rows).
    if (threadIdx.x < LM_STEP_ROWS / 4) {
        const bool have = (int)threadIdx.x < 8 * groups;
        const unsigned dst = (unsigned)__cvta_generic_to_shared(w.xn + 4 * threadIdx.x);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                     :: "r"(dst), "l"(norms + (have ? 4 * threadIdx.x : 0)), "r"(have ? 16 : 0) : "memory");
    }
    if (!lm_chunked(dim, veclen)) return;
    const int per_group = (dim / LM_CHUNK_ELEMS) * 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    auto copy = [&](int c, const LmChunkAt& at) {
        const bool have = (at.second ? 1 : 0) < groups;
        const unsigned dst = (unsigned)__cvta_generic_to_shared(w.xs + lm_row_slot(w, at.row, at.d0));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                     :: "r"(dst), "l"(rows + (have ? c : 0) * 16), "r"(have ? 16 : 0) : "memory");
    };
    const int rounds = lm_whole_rounds(per_group);
    #pragma unroll 4
    for (int j = 0; j < rounds; ++j) copy(j * LM_THREADS + (int)threadIdx.x, lm_round_chunk(j, per_group, warp, lane));
    if (lm_in_partial_round(per_group, warp))
        copy(rounds * LM_THREADS + (int)threadIdx.x, lm_round_chunk(rounds, per_group, warp, lane));
}

extern "C" __device__ void ivf_lm_store(const unsigned char* rows, int groups, int dim, int veclen, const LmRegs*, unsigned char* work, int qt, int slot) {
    asm volatile("cp.async.wait_all;" ::: "memory");
    if (lm_chunked(dim, veclen)) return;
    // veclen 1: element (r, d) of a group at d × 32 + r.
    const LmWork w = lm_work(work, dim, qt, slot);
    const int lane = threadIdx.x % 32;
    for (int c = threadIdx.x; c < dim * 32 * 2; c += LM_THREADS) {
        const int g = c / (dim * 32);
        const int d = (c % (dim * 32)) / 32;
        w.xs[lm_row_slot(w, g * 32 + lane, d)] = g < groups ? reinterpret_cast<const T*>(rows)[(long long)g * 32 * dim + d * 32 + lane] : T(0);
    }
}
#else
extern "C" __device__ bool ivf_lm_async_rows() { return false; }

extern "C" __device__ void ivf_lm_fetch(const unsigned char* rows, const unsigned* norms, int groups, int dim, int veclen, LmRegs* regs, unsigned char*, int, int) {
    if (threadIdx.x < LM_STEP_ROWS) regs->norm = (int)threadIdx.x < 32 * groups ? norms[threadIdx.x] : 0u;
    if (!lm_chunked(dim, veclen)) return;
    const int chunks = (dim / LM_CHUNK_ELEMS) * 32 * groups;
    const uint4* src = reinterpret_cast<const uint4*>(rows);
    #pragma unroll
    for (int j = 0; j < LM_PREFETCH; ++j) {
        const int c = threadIdx.x + j * LM_THREADS;
        if (c < chunks) regs->v[j] = src[c];
    }
    // The chunks past the registers' (a step over 32 KiB: the images' 784-byte rows leave
    // 17 KiB) are loaded when the step is stored, after this multiply, and the block waits
    // on those loads: start their lines toward L2 now, a 128-byte line a thread (steps
    // start 128-byte aligned: lists and steps are whole 32-row groups of 16-byte chunks).
    // Measured on the H100 (session 46, docs/gpu-runs/2026-12-07-s46/, three calls of one
    // to three rounds, device QPS against main): the images at batch 10,000 × 2 / 5 / 10 /
    // 20 +0.3 / +1.1 / +0.9 / −0.3 %, +1.4 / +1.2 / +1.9 / +1.2 %, +0.9 / +1.4 / +1.3 /
    // +1.4 %; at 1,000 −0.8 to +3.0 %. Steps within the registers (lowdim-f16, lowdim-i8)
    // take no prefetch: −1.6 to +1.9 %, noise.
    const int lines = (chunks + 7) / 8;
    for (int l = LM_PREFETCH * LM_THREADS / 8 + (int)threadIdx.x; l < lines; l += LM_THREADS)
        asm volatile("prefetch.global.L2 [%0];" :: "l"(src + 8 * l));
}

// Writes one 16-byte chunk (elements d0 .. d0 + LM_CHUNK_ELEMS of step row `row`) to Xs.
__device__ __forceinline__ void lm_put_chunk(const LmWork& w, uint4 x, int d0, int row) {
#if defined(LM_ROW_MAJOR)
    *reinterpret_cast<uint4*>(w.xs + lm_row_slot(w, row, d0)) = x;
#else
    const T* v = reinterpret_cast<const T*>(&x);
    #pragma unroll
    for (int j = 0; j < LM_CHUNK_ELEMS; ++j) w.xs[lm_row_slot(w, row, d0 + j)] = v[j];
#endif
}

extern "C" __device__ void ivf_lm_store(const unsigned char* rows, int groups, int dim, int veclen, const LmRegs* regs, unsigned char* work, int qt, int) {
    const LmWork w = lm_work(work, dim, qt, 0);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // The norms as loaded (the bits of Sum).
    if (threadIdx.x < LM_STEP_ROWS) reinterpret_cast<unsigned*>(w.xn)[threadIdx.x] = regs->norm;
    // A thread's row within its group is always `lane` (chunk counts and strides are
    // multiples of 32).
    const int per_group = (dim / LM_CHUNK_ELEMS) * 32;  // chunks of a group, where chunked
#if defined(IVF_BYTES)
    if (lm_chunked(dim, veclen)) {
        const int rounds = lm_whole_rounds(per_group);
        const uint4* src = reinterpret_cast<const uint4*>(rows);
        // Round j's chunk: from the registers for the first LM_PREFETCH rounds, else loaded
        // here (four in flight at a time); zeros past the list's last group (whether a
        // warp's chunk lies there is the same for its 32 lanes).
        auto put = [&](int j) {
            const LmChunkAt at = lm_round_chunk(j, per_group, warp, lane);
            if (at.second && groups < 2) lm_put_chunk(w, make_uint4(0, 0, 0, 0), at.d0, at.row);
            else lm_put_chunk(w, j < LM_PREFETCH ? regs->v[j] : src[j * LM_THREADS + threadIdx.x], at.d0, at.row);
        };
        // (j stays a constant of the unrolled loop wherever it indexes the registers.)
        const bool partial = lm_in_partial_round(per_group, warp);
        #pragma unroll
        for (int j = 0; j < LM_PREFETCH; ++j)
            if (j < rounds || (j == rounds && partial)) put(j);
        #pragma unroll 4
        for (int j = LM_PREFETCH; j < rounds; ++j) put(j);
        if (rounds >= LM_PREFETCH && partial) put(rounds);
    }
#else
    const uint4 none = make_uint4(0, 0, 0, 0);
    if (lm_chunked(dim, veclen) && lm_groups_are_whole_rounds(per_group)) {
        const int rounds = 2 * per_group / LM_THREADS;
        const uint4* src = reinterpret_cast<const uint4*>(rows);
        // Round j's chunk: from the registers for the first LM_PREFETCH rounds, else loaded
        // here (four in flight at a time); zeros past the list's last group.
        auto put = [&](int j) {
            const LmChunkAt at = lm_round_chunk(j, per_group, warp, lane);
            const bool have = (at.second ? 1 : 0) < groups;
            const uint4 x = !have ? none : j < LM_PREFETCH ? regs->v[j] : src[j * LM_THREADS + threadIdx.x];
            lm_put_chunk(w, x, at.d0, at.row);
        };
        #pragma unroll
        for (int j = 0; j < LM_PREFETCH; ++j)
            if (j < rounds) put(j);
        #pragma unroll 4
        for (int j = LM_PREFETCH; j < rounds; ++j) put(j);
    } else if (lm_chunked(dim, veclen)) {
        auto put = [&](uint4 x, int c) {
            const LmChunkAt at = lm_chunk_at(c, per_group, lane);
            lm_put_chunk(w, x, at.d0, at.row);
        };
        #pragma unroll
        for (int j = 0; j < LM_PREFETCH; ++j) {
            const int c = threadIdx.x + j * LM_THREADS;
            if (c < per_group * 2) put(c < per_group * groups ? regs->v[j] : none, c);
        }
        // Chunks beyond what the registers hold: loaded here, four in flight at a time.
        const uint4* src = reinterpret_cast<const uint4*>(rows);
        #pragma unroll 4
        for (int c = threadIdx.x + LM_PREFETCH * LM_THREADS; c < per_group * 2; c += LM_THREADS)
            put(c < per_group * groups ? src[c] : none, c);
    }
#endif
    else {
        // veclen 1: element (r, d) of a group at d × 32 + r.
        const T* src = reinterpret_cast<const T*>(rows);
        for (int c = threadIdx.x; c < dim * 32 * 2; c += LM_THREADS) {
            const int g = c / (dim * 32);
            const int d = (c % (dim * 32)) / 32;
            w.xs[lm_row_slot(w, g * 32 + lane, d)] = g < groups ? src[(long long)g * 32 * dim + d * 32 + lane] : T(0);
        }
    }
}
#endif

// ---- products ---------------------------------------------------------------------------
// Keeps `n` candidates for slot i: reserves their places in its list (the first marks the
// slot busy) and raises the flush flag when the list passes LM_TILE_CAND_CAP - 64, so that the
// next step cannot overflow it. Returns the first place.
__device__ __forceinline__ int lm_reserve(const LmCandidates& cand, int i, int n) {
    const int at = atomicAdd(&cand.count[i], n);
    if (at == 0) lm_mark_busy(cand, i);
    constexpr int flush_at = LM_TILE_CAND_CAP - LM_STEP_ROWS;
    if (at <= flush_at && at + n > flush_at) *cand.flush = 1;
    return at;
}

// Writes candidate `at` of slot i: its score and its row (step row r of this step).
__device__ __forceinline__ void lm_put(const LmCandidates& cand, int i, int at, float s, int r) {
    cand.score[i * LM_TILE_CAND_CAP + at] = s;
    cand.row[i * LM_TILE_CAND_CAP + at] = (unsigned short)(cand.row_base + r);
}

// Keeps one candidate (score s, step row r) for slot i.
__device__ __forceinline__ void lm_keep(const LmCandidates& cand, int i, float s, int r) {
    lm_put(cand, i, lm_reserve(cand, i, 1), s, r);
}


// The metric's score (ivf_score's convention) from a dot product and the two squared
// norms: the L2 accumulator is formed from the norms.
__device__ __forceinline__ float lm_score(Sum dot, Sum qn, Sum xn, bool l2) {
#if defined(IVF_BYTES)
    const float acc = l2 ? (float)(qn + xn - 2 * dot) : (float)dot;
#else
    const float acc = l2 ? fmaxf(qn + xn - 2.f * dot, 0.f) : dot;
#endif
    return ivf_score(acc, (float)qn, (float)xn);
}

#if defined(LM_WMMA)
#include <mma.h>
// The step's dot products into w.dots ([qt][LM_ACC_STRIDE]), then a block barrier.
__device__ __forceinline__ void lm_wmma_dots(int dim, int qt, const LmWork& w) {
    using namespace nvcuda;
    const int warp = threadIdx.x / 32;
    const int kpad = lm_kpad(dim);
    // Warp w computes the 16-row column block tn = w % 4 of the step against query tiles
    // tm = w / 4 and w / 4 + 2 (as many as qt has), sharing each B fragment.
    const int tn = warp % (LM_STEP_ROWS / 16);
    const int tm0 = warp / (LM_STEP_ROWS / 16);
    const int m_tiles = qt / 16;
    if (tm0 < m_tiles) {
        const bool two = tm0 + 2 < m_tiles;
#if defined(IVF_BYTES)
        typedef int Acc;
#else
        typedef float Acc;
#endif
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a0, a1;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> b;
        wmma::fragment<wmma::accumulator, 16, 16, 16, Acc> c0, c1;
        wmma::fill_fragment(c0, Acc(0));
        wmma::fill_fragment(c1, Acc(0));
        const T* qa0 = w.qs + tm0 * 16 * w.ld;
        const T* qa1 = w.qs + (tm0 + 2) * 16 * w.ld;
        const T* xb = w.xs + tn * 16 * w.ld;
        for (int k0 = 0; k0 < kpad; k0 += 16) {
            wmma::load_matrix_sync(b, xb + k0, w.ld);
            wmma::load_matrix_sync(a0, qa0 + k0, w.ld);
            wmma::mma_sync(c0, a0, b, c0);
            if (two) {
                wmma::load_matrix_sync(a1, qa1 + k0, w.ld);
                wmma::mma_sync(c1, a1, b, c1);
            }
        }
        Sum* out = w.dots + tn * 16;
        wmma::store_matrix_sync(out + tm0 * 16 * LM_ACC_STRIDE, c0, LM_ACC_STRIDE, wmma::mem_row_major);
        if (two) wmma::store_matrix_sync(out + (tm0 + 2) * 16 * LM_ACC_STRIDE, c1, LM_ACC_STRIDE, wmma::mem_row_major);
    }
    __syncthreads();
}

extern "C" __device__ void ivf_lm_multiply(int dim, int qt, int, unsigned char* work, int, LmCandidates cand) {
    const LmWork w = lm_work(work, dim, qt, 0);
    const int lane = threadIdx.x % 32;
    lm_wmma_dots(dim, qt, w);
    // A warp scores 32 rows of one query slot at a time and keeps what beats its threshold
    // with one shared-memory atomic for the warp.
    const bool l2 = ivf_metric_l2();
    for (int e = threadIdx.x; e < qt * LM_STEP_ROWS; e += LM_THREADS) {
        const int i = e / LM_STEP_ROWS, r = e % LM_STEP_ROWS;
        const float s = lm_score(w.dots[i * LM_ACC_STRIDE + r], w.qn[i], w.xn[r], l2);
        const unsigned kept = __ballot_sync(0xffffffffu, s < cand.thr[i]);
        if (kept) {
            int base = 0;
            if (lane == 0) base = lm_reserve(cand, i, __popc(kept));
            base = __shfl_sync(0xffffffffu, base, 0);
            if (kept & (1u << lane)) lm_put(cand, i, base + __popc(kept & ((1u << lane) - 1)), s, r);
        }
    }
}

extern "C" __device__ void ivf_lm_step_scores(int dim, int qt, int, unsigned char* work, int, float* scores, int ld) {
    const LmWork w = lm_work(work, dim, qt, 0);
    lm_wmma_dots(dim, qt, w);
    const bool l2 = ivf_metric_l2();
    for (int e = threadIdx.x; e < qt * LM_STEP_ROWS; e += LM_THREADS) {
        const int i = e / LM_STEP_ROWS, r = e % LM_STEP_ROWS;
        scores[i * ld + r] = lm_score(w.dots[i * LM_ACC_STRIDE + r], w.qn[i], w.xn[r], l2);
    }
}
#elif defined(LM_MMA)
// f32 products are 3xTF32 (mma.cuh); the other types' mma form and its accumulator's
// register constraint are below.
#include "mma.cuh"

#if !defined(IVF_DTYPE_f32)
// The mma form of the type, and its accumulator's register constraint.
#if defined(IVF_DTYPE_f16)
#define LM_MMA_FORM "m16n8k16.row.col.f32.f16.f16.f32"
#define LM_ACC "f"
#elif defined(IVF_DTYPE_i8)
#define LM_MMA_FORM "m16n8k32.row.col.s32.s8.s8.s32"
#define LM_ACC "r"
#else
#define LM_MMA_FORM "m16n8k32.row.col.s32.u8.u8.s32"
#define LM_ACC "r"
#endif
__device__ __forceinline__ void lm_mma_op(Sum (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned." LM_MMA_FORM " "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+" LM_ACC(c[0]), "+" LM_ACC(c[1]), "+" LM_ACC(c[2]), "+" LM_ACC(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif

// The warp layout: warp w multiplies the 16 step rows 16 (w % 4) … (the mma's A operand)
// with its half of the tile's queries, NT blocks of 8 from query (w / 4) · 8 NT (the B
// operands; qt = 16 NT). A row block is loaded (and for f32 split) once per k step for
// all NT products — the queries' side is the one the warps share, so splitting rows, not
// queries, is what 3xTF32 repeats least.
template <int NT>
__device__ __forceinline__ void lm_products(int dim, const LmWork& w, Sum (&c)[NT][4]) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    constexpr int KSTEP = 32 / (int)sizeof(T);  // values in a k step (32 bytes)
    constexpr int HALF = KSTEP / 2;             // values in one 8 × 8 matrix's row
    // A: rows 0–7 and 8–15 of the row block at k0, then at k0 + HALF. B: matrix 0 = the
    // block's 8 queries at k0 (lanes 0–7), matrix 1 the same at k0 + HALF (lanes 8–15).
    const T* xa = w.xs + ((warp % 4) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * w.ld + (lane >> 4) * HALF;
    const T* qb = w.qs + ((warp / 4) * 8 * NT + (lane & 7)) * w.ld + ((lane >> 3) & 1) * HALF;
    const int kpad = lm_kpad(dim);
    for (int k0 = 0; k0 < kpad; k0 += KSTEP) {
        unsigned a[4];
        mma_ldsm_x4(a, xa + k0);
#if defined(IVF_DTYPE_f32)
        const MmaSplit<4> as = mma_split_all(a);
#endif
        #pragma unroll
        for (int n = 0; n < NT; ++n) {
            unsigned b0, b1;
            mma_ldsm_x2(b0, b1, qb + n * 8 * w.ld + k0);
#if defined(IVF_DTYPE_f32)
            const unsigned b[2] = {b0, b1};
            mma_3xtf32(c[n], as, mma_split_all(b));
#else
            lm_mma_op(c[n], a, b0, b1);
#endif
        }
    }
}

// The outcomes of warp w's keep test as bits (bit 4 n + j; no branch per accumulator):
// kept(n, j, i, jr) for accumulator j = 2 jr + jq of block n, query slot i = i0 + 8 n + jq,
// row half jr (row r0 + 8 jr). Most steps keep nothing once a pair's first rows are past,
// so whether the warp keeps any is asked first (LM_KEEP_ASK_FIRST), the compares chained
// into one predicate (one instruction an accumulator); the bits (a select and an or more
// each) are formed only where some lane keeps one. Measured on the H200 (session 17,
// `docs/gpu-runs/2026-12-01-s17/1-lmdim-epi-ab/`, three rounds): with the exact tiles'
// bias (ivf_lm_keep_bound) the i8 × 128 kernel's 64-query step went from 190 to 138
// instructions a warp, its scan 426 → 418 µs (ncu), lowdim i8's device QPS +0.7 to
// +4.4 % at batch 10,000, f32's −1.6 to +1.7 % and wide-f16's (f16 × 256, the 80-room
// tile) +3.8 to +5.7 % at 10–20 probes; but lowdim f16's scan (f16 × 128, the wide-room
// tile lmtile_f16tcw) lost 1.2–2.0 % in every round (0.84 → 0.85 ms at 20 probes), so
// that tile keeps the single pass. The two f16 tiles' code differs only in their room:
// what differs is how often the shapes that take them keep rows (the extra pass is pure
// cost where most steps keep some), so a choice by the expected keep rate (probes, k,
// the seed) would be the finer rule; this one follows the two measured shapes.
// 8-bit tiles form the bits without asking: their rounds (lm_keep_rows) ask whether any
// lane kept one anyway, and lowdim-i8 × 10 keeps about 2 rows a warp-step, so the answer
// is yes in most steps. With the rounds, measured on the H100 (session 44,
// docs/gpu-runs/2026-12-07-s44/2-ab/, two rounds, device QPS at batch 10,000, against
// the bit-by-bit keep that asked first): lowdim-i8 × 10 / 20 / 50 +10.4 / +6.6 / +2.1 %,
// wide-i8 +5.5 / +5.0 / +4.9 %, images −1.3 to +0.3 %; at batch 1,000 −0.2 to +5.2 %.
// The f16 tiles keep in the same rounds since session 45 but still ask first (their
// rounds then ask once more where some lane kept): f16 without asking is not measured.
#if defined(IVF_BYTES)
#define LM_KEEP_ASK_FIRST 0
#else
#define LM_KEEP_ASK_FIRST 1
#endif
template <int NT, typename Kept>
__device__ __forceinline__ unsigned lm_keep_bits(int i0, Kept kept) {
    if (LM_KEEP_ASK_FIRST) {
        bool any = false;
        #pragma unroll
        for (int n = 0; n < NT; ++n)
            #pragma unroll
            for (int j = 0; j < 4; ++j) any |= kept(n, j, i0 + 8 * n + (j & 1), j >> 1);
        if (!__any_sync(0xffffffffu, any)) return 0u;
    }
    unsigned keep = 0;
    #pragma unroll
    for (int n = 0; n < NT; ++n) {
        #pragma unroll
        for (int jq = 0; jq < 2; ++jq) {
            #pragma unroll
            for (int jr = 0; jr < 2; ++jr) {
                const int j = 2 * jr + jq;
                keep |= (kept(n, j, i0 + 8 * n + jq, jr) ? 1u : 0u) << (4 * n + j);
            }
        }
    }
    return keep;
}

// Accumulator b (= 4 n + j, a runtime index) of v, by a tree of selects on b's bits
// (15 SEL for 16 accumulators) — indexing v by b would put it in local memory.
template <int NT, typename V>
__device__ __forceinline__ V lm_select(const V (&v)[NT][4], int b) {
    constexpr int E = 4 * NT;
    V t[E];
    #pragma unroll
    for (int n = 0; n < NT; ++n)
        #pragma unroll
        for (int j = 0; j < 4; ++j) t[4 * n + j] = v[n][j];
    constexpr int LEVELS = NT == 4 ? 4 : NT == 2 ? 3 : 2;  // log2(E)
    #pragma unroll
    for (int level = 0; level < LEVELS; ++level)
        #pragma unroll
        for (int e = 0; e < E / 2; ++e)
            if (e < (E >> (level + 1))) t[e] = (b >> level) & 1 ? t[2 * e + 1] : t[2 * e];
    return t[0];
}

// Appends warp w's kept accumulators (bit 4 n + j of `keep`; accumulator values v[n][j],
// scored by score(v, i, b) for slot i) to their slots' candidates, once some lane of the
// warp kept one.
// - 8-bit tiles: one kept accumulator a lane a round (its lowest bit, its value by
//   lm_select), as long as some lane of the warp has one left. After a pair's first steps
//   most steps keep a few of the warp's 512 accumulators, and a test and a branch for
//   each of the 16 bits (about 64 instructions a warp, taken or not) cost more than the
//   few rounds: lowdim-i8's d128 scan plan went from 57,472 to 46,848 bytes of code.
// - f16 tiles: the same rounds. Their c16 plans reach 128 registers with 8 bytes of spill
//   (two shared-memory addresses of the row copy, refilled once a step, not in the keep).
//   Against the block-by-block keep below (H100, session 45, two calls, device QPS,
//   docs/gpu-runs/2026-12-07-s45/2-ab/ and 4-kr16h/): lowdim-f16 × 10 / 20 / 50 at batch
//   10,000 +4.1 / +1.3 / −0.9 % and +3.3 / +1.6 / −1.2 %; at 1,000 −2.7 / +0.4 / +0.5 %
//   and −2.4 / +0.3 / +0.1 %. Taken for the 10,000 × 10 row, the f16 row furthest under
//   ten times cuVS on the H200.
// - f32 tiles: bit by bit, passing over each block of 8 slots that no lane of the warp
//   kept in with one warp-uniform test. Against the bit-by-bit keep of every block (H100,
//   sessions 44–45, three calls, device QPS at batch 10,000): lowdim-f16 × 10 / 20 / 50
//   +1.5 to +3.3 %, f32 −0.8 to +1.9 % (docs/gpu-runs/2026-12-07-s45/1-kb-land/). The
//   rounds cost f32 −2.8 to +1.4 % (session 45, 2-ab/).
template <int NT, typename V, typename Score>
__device__ __forceinline__ void lm_keep_rows(const LmCandidates& cand, unsigned keep, int i0, int r0,
                                             const V (&v)[NT][4], Score score) {
#if defined(IVF_BYTES) || defined(IVF_DTYPE_f16)
    while (__any_sync(0xffffffffu, keep != 0)) {
        if (keep != 0) {
            const int b = __ffs(keep) - 1;
            keep &= keep - 1;
            const int i = i0 + 8 * (b >> 2) + (b & 1);
            lm_keep(cand, i, score(lm_select<NT>(v, b), i, b), r0 + (b & 2 ? 8 : 0));
        }
    }
#else
    // The warp's bits together: a block of 8 query slots whose 4 bits no lane set is
    // passed over with one warp-uniform test instead of 4.
    const unsigned any = __reduce_or_sync(0xffffffffu, keep);
    if (any == 0) return;
    #pragma unroll
    for (int n = 0; n < NT; ++n) {
        if (((any >> (4 * n)) & 0xfu) == 0) continue;
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int i = i0 + 8 * n + (j & 1);
            if (keep & (1u << (4 * n + j))) lm_keep(cand, i, score(v[n][j], i, 4 * n + j), r0 + (j >= 2 ? 8 : 0));
        }
    }
#endif
}

#if defined(IVF_BYTES)
// lm_mma's filter where the score is the exact integer accumulator or its negation (8-bit
// L2 and inner products: ivf_score_linear): L2's qn + xn − 2 dot beats thr only if xn −
// 2 dot < ceil(thr) − qn, the inner product's −dot only if −dot < ceil(thr) (float() is
// monotonic, so this keeps every row the float test keeps, and at most ties of thr
// besides); the scan stores the right-hand side as the slot's bound (ivf_lm_keep_bound).
// A multiply-add and a compare an accumulator, the query's bound read once for its four;
// no conversion (an int → float conversion runs at a quarter of the FP32 rate, and the
// float test took one for each of the 4,096 scores of a 64-query step). Only the kept
// rows are scored in float.
template <int NT>
__device__ __forceinline__ void lm_keep_exact(const LmWork& w, const LmCandidates& cand, const Sum (&c)[NT][4],
                                              Sum xn0, Sum xn1, int i0, int r0, bool l2) {
    const int a = l2 ? -2 : -1;
    const unsigned keep = lm_keep_bits<NT>(i0, [&](int n, int j, int i, int jr) {
        return a * c[n][j] + (l2 ? (jr ? xn1 : xn0) : 0) < cand.keep_bound[i];
    });
    lm_keep_rows<NT>(cand, keep, i0, r0, c, [&](Sum dot, int i, int b) {
        return lm_score(dot, w.qn[i], b & 2 ? xn1 : xn0, l2);
    });
}
#else
// lm_mma's filter for f16 and f32 L2: a row is kept where fl(xn − 2 dot) is below the
// slot's bound fl(t − qn) + 2^-20 (|t| + qn) (ivf_lm_keep_bound), one multiply-add and a
// compare an accumulator where the score (an addition, a multiply-add, a clamp at 0) and
// its compare took four. It keeps every row whose float score beats t: such a row is
// within t of the query, so its xn ≤ 2 (qn + |t|) (‖x‖ ≤ ‖q‖ + √t), and the rounding of
// the score, of xn − 2 dot and of the bound add up to a few units of 2^-24 (qn + |t|),
// under the slack; the few rows it keeps besides (within about 10^-6 of t) are scored as
// before and rejected by the top-k lists.
template <int NT>
__device__ __forceinline__ void lm_keep_biased(const LmWork& w, const LmCandidates& cand, const Sum (&c)[NT][4],
                                               Sum xn0, Sum xn1, int i0, int r0) {
    const unsigned keep = lm_keep_bits<NT>(i0, [&](int n, int j, int i, int jr) {
        return fmaf(-2.f, c[n][j], jr ? xn1 : xn0) < __int_as_float(cand.keep_bound[i]);
    });
    lm_keep_rows<NT>(cand, keep, i0, r0, c, [&](Sum dot, int i, int b) {
        return lm_score(dot, w.qn[i], b & 2 ? xn1 : xn0, true);
    });
}
#endif

// Whether warp w's query slots ((w / 4) · 8 NT onwards) are all past the tile's `used`
// occupied ones: a tile of up to 8 queries leaves warps 4–7 nothing to multiply.
template <int NT>
__device__ __forceinline__ bool lm_warp_idle(int used) { return (int)(threadIdx.x / 32 / 4) * 8 * NT >= used; }

// Warp w's accumulators of one step's products (lm_products), from zero.
template <int NT>
__device__ __forceinline__ void lm_step_products(int dim, const LmWork& w, Sum (&c)[NT][4]) {
    #pragma unroll
    for (int n = 0; n < NT; ++n)
        #pragma unroll
        for (int j = 0; j < 4; ++j) c[n][j] = Sum(0);
    lm_products<NT>(dim, w, c);
}

// Scores warp w's accumulators and keeps those under their query's threshold. Accumulator
// j of block n: step row 16 (w % 4) + g (+ 8 for j ≥ 2), query (w / 4) · 8 NT + 8 n + 2 t
// (+ 1 for odd j).
template <int NT>
__device__ __forceinline__ void lm_mma(int dim, const LmWork& w, const LmCandidates& cand, int used) {
    if (lm_warp_idle<NT>(used)) return;
    Sum c[NT][4];
    lm_step_products<NT>(dim, w, c);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int r0 = (warp % 4) * 16 + g;
    const int i0 = (warp / 4) * 8 * NT + 2 * t;
    const Sum xn0 = w.xn[r0], xn1 = w.xn[r0 + 8];
    const bool l2 = ivf_metric_l2();
    if (ivf_lm_bounded()) {
#if defined(IVF_BYTES)
        lm_keep_exact<NT>(w, cand, c, xn0, xn1, i0, r0, l2);
#else
        lm_keep_biased<NT>(w, cand, c, xn0, xn1, i0, r0);
#endif
        return;
    }
    // Every accumulator scored and compared first, then the appends.
    float sc[NT][4];
    const unsigned keep = lm_keep_bits<NT>(i0, [&](int n, int j, int i, int jr) {
        sc[n][j] = lm_score(c[n][j], w.qn[i], jr ? xn1 : xn0, l2);
        return sc[n][j] < cand.thr[i];
    });
    lm_keep_rows<NT>(cand, keep, i0, r0, sc, [](float score, int, int) { return score; });
}

// The products go by the tile's occupied slots, not its size: lm_mma<NT>'s warps cover
// slots 0 .. 16 NT − 1 in any tile (the queries' rows are laid out by slot), so a 64-slot
// tile holding at most 32 queries (most lists' last tile) is multiplied as a 32-slot one
// by all eight warps, at half the products and keep tests, and at most 16 as a 16-slot one
// (at most 8: by warps 0–3 alone, lm_warp_idle). Lowdim-i8 × 10's 2,586 scan tiles of 64
// hold 39 queries on average. Measured on the H100 (session 39,
// docs/gpu-runs/2026-12-06-s39/, `ts` against main, same call, three rounds, device QPS):
// lowdim-i8 +0.8 / +1.2 / +0.8 % at 10,000 × 10 / 20 / 50, wide-i8 +0.3 to +1.4 %,
// lowdim-f16 −0.2 to +1.7 %, the images −0.7 to +0.3 %, lowdim (f32) −1.7 to −0.5 % at
// 10,000 and +2.0 to +3.5 % at 1,000; ncu: lowdim-i8 × 10's scan 362 → 350 µs, its seed
// tiles (lmseedt.cu, 7.5 queries a 32-slot tile) 33.7 → 31.6 µs.
extern "C" __device__ void ivf_lm_multiply(int dim, int qt, int count, unsigned char* work, int slot, LmCandidates cand) {
    const LmWork w = lm_work(work, dim, qt, slot);
    const int used = min(qt, count);
    if (used > 32) lm_mma<4>(dim, w, cand, used);
    else if (used > 16) lm_mma<2>(dim, w, cand, used);
    else lm_mma<1>(dim, w, cand, used);
}

// Every accumulator of warp w scored into scores[slot × ld + row] (lm_mma's layout).
template <int NT>
__device__ __forceinline__ void lm_mma_scores(int dim, const LmWork& w, float* scores, int ld, int used) {
    if (lm_warp_idle<NT>(used)) return;
    Sum c[NT][4];
    lm_step_products<NT>(dim, w, c);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int r0 = (warp % 4) * 16 + lane / 4;
    const int i0 = (warp / 4) * 8 * NT + 2 * (lane % 4);
    const Sum xn0 = w.xn[r0], xn1 = w.xn[r0 + 8];
    const bool l2 = ivf_metric_l2();
    #pragma unroll
    for (int n = 0; n < NT; ++n) {
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int i = i0 + 8 * n + (j & 1), r = r0 + (j >= 2 ? 8 : 0);
            scores[i * ld + r] = lm_score(c[n][j], w.qn[i], j >= 2 ? xn1 : xn0, l2);
        }
    }
}

// By the occupied slots, as ivf_lm_multiply.
extern "C" __device__ void ivf_lm_step_scores(int dim, int qt, int count, unsigned char* work, int slot, float* scores, int ld) {
    const LmWork w = lm_work(work, dim, qt, slot);
    const int used = min(qt, count);
    if (used > 32) lm_mma_scores<4>(dim, w, scores, ld, used);
    else if (used > 16) lm_mma_scores<2>(dim, w, scores, ld, used);
    else lm_mma_scores<1>(dim, w, scores, ld, used);
}
#else
template <int QPT> __device__ __forceinline__ void lm_load_queries(const float* p, float* q);
template <> __device__ __forceinline__ void lm_load_queries<1>(const float* p, float* q) { q[0] = p[0]; }
template <> __device__ __forceinline__ void lm_load_queries<2>(const float* p, float* q) {
    const float2 v = *reinterpret_cast<const float2*>(p); q[0] = v.x; q[1] = v.y;
}
template <> __device__ __forceinline__ void lm_load_queries<4>(const float* p, float* q) {
    const float4 v = *reinterpret_cast<const float4*>(p); q[0] = v.x; q[1] = v.y; q[2] = v.z; q[3] = v.w;
}

// Thread t's QPT × 4 dot products (slots QPT (t / 16) …, rows 4 (t % 16) …) scored, each
// handed to use(slot, row, score).
template <int QPT, typename Use>
__device__ __forceinline__ void lm_fma_scores(int dim, int qt, const LmWork& w, Use use) {
    const int rq = threadIdx.x % 16;         // rows 4 rq .. 4 rq + 3
    const int qg = threadIdx.x / 16;         // query slots QPT qg .. QPT qg + QPT - 1
    const int stride = qt + 4;
    float s[QPT][4];
    #pragma unroll
    for (int a = 0; a < QPT; ++a)
        #pragma unroll
        for (int b = 0; b < 4; ++b) s[a][b] = 0.f;
    const float* qp = w.qs + qg * QPT;
    const float* xp = w.xs + rq * 4;
    #pragma unroll 4
    for (int d = 0; d < dim; ++d) {
        float q[QPT];
        const float4 x4 = *reinterpret_cast<const float4*>(xp + d * LM_STEP_ROWS);
        const float x[4] = {x4.x, x4.y, x4.z, x4.w};
        lm_load_queries<QPT>(qp + d * stride, q);
        #pragma unroll
        for (int a = 0; a < QPT; ++a)
            #pragma unroll
            for (int b = 0; b < 4; ++b) s[a][b] = fmaf(q[a], x[b], s[a][b]);
    }
    float xn[4];
    #pragma unroll
    for (int b = 0; b < 4; ++b) xn[b] = w.xn[rq * 4 + b];
    const bool l2 = ivf_metric_l2();
    #pragma unroll
    for (int a = 0; a < QPT; ++a) {
        const int i = qg * QPT + a;
        const float qn = w.qn[i];
        #pragma unroll
        for (int b = 0; b < 4; ++b) use(i, rq * 4 + b, lm_score(s[a][b], qn, xn[b], l2));
    }
}

template <int QPT>
__device__ __forceinline__ void lm_multiply(int dim, int qt, const LmWork& w, const LmCandidates& cand) {
    lm_fma_scores<QPT>(dim, qt, w, [&](int i, int r, float sc) {
        if (sc < cand.thr[i]) lm_keep(cand, i, sc, r);
    });
}

extern "C" __device__ void ivf_lm_multiply(int dim, int qt, int, unsigned char* work, int, LmCandidates cand) {
    const LmWork w = lm_work(work, dim, qt, 0);
    if (qt == 64) lm_multiply<4>(dim, qt, w, cand);
    else if (qt == 32) lm_multiply<2>(dim, qt, w, cand);
    else lm_multiply<1>(dim, qt, w, cand);
}

extern "C" __device__ void ivf_lm_step_scores(int dim, int qt, int, unsigned char* work, int, float* scores, int ld) {
    const LmWork w = lm_work(work, dim, qt, 0);
    auto store = [&](int i, int r, float sc) { scores[i * ld + r] = sc; };
    if (qt == 64) lm_fma_scores<4>(dim, qt, w, store);
    else if (qt == 32) lm_fma_scores<2>(dim, qt, w, store);
    else lm_fma_scores<1>(dim, qt, w, store);
}
#endif

