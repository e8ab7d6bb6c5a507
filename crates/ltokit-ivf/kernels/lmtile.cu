// Device-function fragment: the list-major scan's tile arithmetic for one data type.
// Defines: IVF_DTYPE_{f32,f16,i8,u8}. Whether the accumulator is an L2 distance or a dot
// product comes from the metric fragment (ivf_metric_l2, a constant after linking), so
// one fragment per type serves every metric.
//
// The block computes a (qt queries) × (64 rows) tile of inner products on the CUDA cores,
// each thread a QPT × 4 register tile (qt = 16 × QPT). Queries and rows are staged in
// shared memory dimension-major (slot d of query i at d × (qt + 4) + i, of row r at
// d × 64 + r) so that a thread reads its 4 rows and its QPT queries with one vector load
// each. f32 and f16 are multiplied in f32 (f16 widened exactly); i8 and u8 are packed four
// per 32-bit word and multiplied with __dp4a in exact 32-bit integers, so an 8-bit L2
// distance (‖q‖² + ‖x‖² − 2 q·x, all integers) is exact, as in the per-query scan. For
// float types the L2 distance is formed from the norms the same way, in f32 (clamped at 0).
#include <cuda_fp16.h>
#include "ivf_abi.cuh"

#if defined(IVF_DTYPE_f32)
typedef float T;
#elif defined(IVF_DTYPE_f16)
typedef __half T;
#elif defined(IVF_DTYPE_i8)
typedef signed char T;
#define IVF_BYTES 1
#elif defined(IVF_DTYPE_u8)
typedef unsigned char T;
#define IVF_BYTES 1
#else
#error "define IVF_DTYPE_<f32|f16|i8|u8>"
#endif

#define LM_WARPS (LM_THREADS / 32)

#if defined(IVF_BYTES)
typedef int Word;   // four 8-bit values
typedef int Sum;    // exact integer accumulator
__device__ __forceinline__ int lm_dot4(int a, int b, int c) {
#if defined(IVF_DTYPE_i8)
    return __dp4a(a, b, c);
#else
    return (int)__dp4a((unsigned)a, (unsigned)b, (unsigned)c);
#endif
}
__device__ __forceinline__ int lm_slots(int dim) { return (dim + 3) / 4; }
#else
typedef float Word;
typedef float Sum;
__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ int lm_slots(int dim) { return dim; }
#endif

// Values of T in one 16-byte chunk, and the slots (words or floats) they fill.
#define LM_CHUNK_ELEMS (16 / (int)sizeof(T))
#if defined(IVF_BYTES)
#define LM_CHUNK_SLOTS 4
#else
#define LM_CHUNK_SLOTS LM_CHUNK_ELEMS
#endif

// The work area: Qs [D][qt + 4], Xs [D][64], xpart [LM_WARPS][64], qn [qt].
struct LmWork {
    Word* qs;
    Word* xs;
    Sum* xpart;
    Sum* qn;
};
__device__ __forceinline__ LmWork lm_work(unsigned char* work, int dim, int qt) {
    const int d = lm_slots(dim);
    LmWork w;
    w.qs = reinterpret_cast<Word*>(work);
    w.xs = w.qs + (long long)d * (qt + 4);
    w.xpart = reinterpret_cast<Sum*>(w.xs + d * LM_STEP_ROWS);
    w.qn = w.xpart + LM_WARPS * LM_STEP_ROWS;
    return w;
}

extern "C" __device__ void ivf_lm_stage_queries(const unsigned char* queries, const int* qidx, int qt, int dim, unsigned char* work, float* qnorm2) {
    const LmWork w = lm_work(work, dim, qt);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int d_slots = lm_slots(dim);
    const int stride = qt + 4;
    const T* q = reinterpret_cast<const T*>(queries);
    for (int i = warp; i < qt; i += LM_WARPS) {
        const long long qi = qidx[i];
        Sum part = 0;
        for (int d = lane; d < d_slots; d += 32) {
#if defined(IVF_BYTES)
            unsigned word = 0;
            if (qi >= 0) {
                #pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int dd = 4 * d + e;
                    if (dd < dim) word |= ((unsigned)(unsigned char)q[qi * dim + dd]) << (8 * e);
                }
            }
            w.qs[d * stride + i] = (int)word;
            part = lm_dot4((int)word, (int)word, part);
#else
            const float v = qi >= 0 ? to_f32(q[qi * dim + d]) : 0.f;
            w.qs[d * stride + i] = v;
            part = fmaf(v, v, part);
#endif
        }
        for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
        if (lane == 0) { w.qn[i] = part; qnorm2[i] = (float)part; }
    }
}

// Whether a step of this shape travels through registers: 16-byte chunks, and few enough.
__device__ __forceinline__ bool lm_prefetchable(int dim, int veclen) {
    return veclen == LM_CHUNK_ELEMS && dim % LM_CHUNK_ELEMS == 0
        && (dim / LM_CHUNK_ELEMS) * LM_STEP_ROWS <= LM_THREADS * LM_PREFETCH;
}

extern "C" __device__ void ivf_lm_fetch(const unsigned char* rows, int groups, int dim, int veclen, LmRegs* regs) {
    if (!lm_prefetchable(dim, veclen)) return;
    const int chunks = (dim / LM_CHUNK_ELEMS) * 32 * groups;
    const uint4* src = reinterpret_cast<const uint4*>(rows);
    #pragma unroll
    for (int j = 0; j < LM_PREFETCH; ++j) {
        const int c = threadIdx.x + j * LM_THREADS;
        if (c < chunks) regs->v[j] = src[c];
    }
}

// Writes one 16-byte chunk of row `row`, slots from `slot0`, to Xs; returns its part of
// the row's squared norm.
__device__ __forceinline__ Sum lm_put_chunk(const LmWork& w, uint4 x, int slot0, int row) {
    Sum part = 0;
#if defined(IVF_BYTES)
    const int words[4] = {(int)x.x, (int)x.y, (int)x.z, (int)x.w};
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        w.xs[(slot0 + j) * LM_STEP_ROWS + row] = words[j];
        part = lm_dot4(words[j], words[j], part);
    }
#else
    const T* v = reinterpret_cast<const T*>(&x);
    #pragma unroll
    for (int j = 0; j < LM_CHUNK_ELEMS; ++j) {
        const float f = to_f32(v[j]);
        w.xs[(slot0 + j) * LM_STEP_ROWS + row] = f;
        part = fmaf(f, f, part);
    }
#endif
    return part;
}

extern "C" __device__ void ivf_lm_store(const unsigned char* rows, int groups, int dim, int veclen, const LmRegs* regs, unsigned char* work, int qt) {
    const LmWork w = lm_work(work, dim, qt);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // A thread's row within its group is always `lane` (chunks and strides are multiples
    // of 32); its parts are kept per group.
    Sum part[2] = {0, 0};
    if (lm_prefetchable(dim, veclen)) {
        const int per_group = (dim / LM_CHUNK_ELEMS) * 32;
        #pragma unroll
        for (int j = 0; j < LM_PREFETCH; ++j) {
            const int c = threadIdx.x + j * LM_THREADS;
            if (c < per_group * 2) {
                const int g = c / per_group;
                const uint4 x = c < per_group * groups ? regs->v[j] : make_uint4(0, 0, 0, 0);
                const Sum p = lm_put_chunk(w, x, ((c % per_group) / 32) * LM_CHUNK_SLOTS, g * 32 + lane);
                if (g == 0) part[0] += p; else part[1] += p;
            }
        }
    } else if (veclen == LM_CHUNK_ELEMS && dim % LM_CHUNK_ELEMS == 0) {
        // 16-byte chunks, more than the registers hold: loaded here.
        const int per_group = (dim / LM_CHUNK_ELEMS) * 32;
        const uint4* src = reinterpret_cast<const uint4*>(rows);
        for (int c = threadIdx.x; c < per_group * 2; c += LM_THREADS) {
            const int g = c / per_group;
            const uint4 x = c < per_group * groups ? src[c] : make_uint4(0, 0, 0, 0);
            const Sum p = lm_put_chunk(w, x, ((c % per_group) / 32) * LM_CHUNK_SLOTS, g * 32 + lane);
            if (g == 0) part[0] += p; else part[1] += p;
        }
    } else {
        // veclen 1: element (r, d) of a group at d × 32 + r.
        const int d_slots = lm_slots(dim);
        const T* src = reinterpret_cast<const T*>(rows);
        for (int c = threadIdx.x; c < d_slots * 32 * 2; c += LM_THREADS) {
            const int g = c / (d_slots * 32), within = c % (d_slots * 32);
            const int d = within / 32;
            const bool valid = g < groups;
            const T* grp = src + (long long)g * 32 * dim;
#if defined(IVF_BYTES)
            unsigned word = 0;
            #pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int dd = 4 * d + e;
                if (valid && dd < dim) word |= ((unsigned)(unsigned char)grp[dd * 32 + lane]) << (8 * e);
            }
            w.xs[d * LM_STEP_ROWS + g * 32 + lane] = (int)word;
            const Sum p = lm_dot4((int)word, (int)word, 0);
#else
            const float f = valid ? to_f32(grp[d * 32 + lane]) : 0.f;
            w.xs[d * LM_STEP_ROWS + g * 32 + lane] = f;
            const Sum p = f * f;
#endif
            if (g == 0) part[0] += p; else part[1] += p;
        }
    }
    w.xpart[warp * LM_STEP_ROWS + lane] = part[0];
    w.xpart[warp * LM_STEP_ROWS + 32 + lane] = part[1];
}

template <int QPT> struct QLoad;
template <> struct QLoad<1> {
    static __device__ __forceinline__ void load(const Word* p, Word* q) { q[0] = p[0]; }
};
#if defined(IVF_BYTES)
template <> struct QLoad<2> {
    static __device__ __forceinline__ void load(const Word* p, Word* q) { int2 v = *reinterpret_cast<const int2*>(p); q[0] = v.x; q[1] = v.y; }
};
template <> struct QLoad<4> {
    static __device__ __forceinline__ void load(const Word* p, Word* q) { int4 v = *reinterpret_cast<const int4*>(p); q[0] = v.x; q[1] = v.y; q[2] = v.z; q[3] = v.w; }
};
#else
template <> struct QLoad<2> {
    static __device__ __forceinline__ void load(const Word* p, Word* q) { float2 v = *reinterpret_cast<const float2*>(p); q[0] = v.x; q[1] = v.y; }
};
template <> struct QLoad<4> {
    static __device__ __forceinline__ void load(const Word* p, Word* q) { float4 v = *reinterpret_cast<const float4*>(p); q[0] = v.x; q[1] = v.y; q[2] = v.z; q[3] = v.w; }
};
#endif

template <int QPT>
__device__ __forceinline__ void lm_multiply(int dim, int qt, const LmWork& w, float* acc, float* xnorm2) {
    const int rq = threadIdx.x % 16;         // rows 4 rq .. 4 rq + 3
    const int qg = threadIdx.x / 16;         // query slots QPT qg .. QPT qg + QPT - 1
    const int d_slots = lm_slots(dim);
    const int stride = qt + 4;
    Sum s[QPT][4];
    #pragma unroll
    for (int a = 0; a < QPT; ++a)
        #pragma unroll
        for (int b = 0; b < 4; ++b) s[a][b] = 0;
    const Word* qp = w.qs + qg * QPT;
    const Word* xp = w.xs + rq * 4;
    #pragma unroll 4
    for (int d = 0; d < d_slots; ++d) {
        Word x[4], q[QPT];
        QLoad<4>::load(xp + d * LM_STEP_ROWS, x);
        QLoad<QPT>::load(qp + d * stride, q);
        #pragma unroll
        for (int a = 0; a < QPT; ++a)
            #pragma unroll
            for (int b = 0; b < 4; ++b) {
#if defined(IVF_BYTES)
                s[a][b] = lm_dot4(q[a], x[b], s[a][b]);
#else
                s[a][b] = fmaf(q[a], x[b], s[a][b]);
#endif
            }
    }
    Sum xn[4];
    #pragma unroll
    for (int b = 0; b < 4; ++b) {
        const int r = rq * 4 + b;
        Sum t = 0;
        #pragma unroll
        for (int wp = 0; wp < LM_WARPS; ++wp) t += w.xpart[wp * LM_STEP_ROWS + r];
        xn[b] = t;
        if (qg == 0) xnorm2[r] = (float)t;
    }
    const bool l2 = ivf_metric_l2();
    #pragma unroll
    for (int a = 0; a < QPT; ++a) {
        const int i = qg * QPT + a;
        const Sum qn = w.qn[i];
        #pragma unroll
        for (int b = 0; b < 4; ++b) {
#if defined(IVF_BYTES)
            const float v = l2 ? (float)(qn + xn[b] - 2 * s[a][b]) : (float)s[a][b];
#else
            const float v = l2 ? fmaxf(qn + xn[b] - 2.f * s[a][b], 0.f) : s[a][b];
#endif
            acc[i * (LM_STEP_ROWS + 1) + rq * 4 + b] = v;
        }
    }
}

extern "C" __device__ void ivf_lm_multiply(int dim, int qt, unsigned char* work, float* acc, float* xnorm2) {
    const LmWork w = lm_work(work, dim, qt);
    if (qt == 64) lm_multiply<4>(dim, qt, w, acc, xnorm2);
    else if (qt == 32) lm_multiply<2>(dim, qt, w, acc, xnorm2);
    else lm_multiply<1>(dim, qt, w, acc, xnorm2);
}
