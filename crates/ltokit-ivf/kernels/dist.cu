// Device-function fragment: query staging and the distance accumulator for one data type,
// vector width and metric. Defines: IVF_DTYPE_{f32,f16,i8,u8}, IVF_VEC_{1,max},
// IVF_METRIC_{l2,l2sqrt,ip,cosine}.
//
// f32 and f16 rows are scored in f32 against the query staged as f32 (f16 rows are
// widened two at a time). i8 and u8 rows are scored in exact 32-bit integer arithmetic
// against the query staged in its stored bytes: four bytes per __dp4a; for u8 L2 the
// per-byte absolute difference (__vabsdiffu4) squared and summed by __dp4a; for i8 L2
// ivf_dist takes Σ q² + Σ x² − 2 Σ q·x by three __dp4a (the per-query scan: +6 to +14 %
// device QPS at batches 100 and 1,000 on the H200, session 23, two machines) and
// ivf_dist_by_difference the signed differences (__vabsdiffs4) squared — the seed's form
// (kernels/lmseed.cu), where the product form made whole list-major batches of 1M × 128
// i8 8–10 % slower at 10 probes on three of five H200 machines though the seed's own
// kernel time fell (docs/gpu-runs/2026-12-02-s23/4-recheck/).
#include "ivf_abi.cuh"
#include "ivf_dtype.cuh"

#if defined(IVF_VEC_max)
#define VECLEN (16 / (int)sizeof(T))
#else
#define VECLEN 1
#endif

#if defined(IVF_METRIC_l2) || defined(IVF_METRIC_l2sqrt)
#define IVF_L2 1
#endif

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(signed char v) { return (float)v; }
__device__ __forceinline__ float to_f32(unsigned char v) { return (float)v; }

struct alignas(sizeof(T) * VECLEN) Chunk { T v[VECLEN]; };

#if defined(IVF_BYTES)
// 8-bit types: the query stays in its stored bytes.
extern "C" __device__ float ivf_stage_query(const unsigned char* src, unsigned char* staged, int dim, int tid, int nthreads) {
    float part = 0.f;
    for (int j = tid; j < dim; j += nthreads) {
        T v = reinterpret_cast<const T*>(src)[j];
        reinterpret_cast<T*>(staged)[j] = v;
        float f = (float)v;
        part = fmaf(f, f, part);
    }
    return part;
}

// The 8-bit accumulator; BY_PRODUCTS picks i8 L2's form (other types and metrics have
// one): Σ q² + Σ x² − 2 Σ q·x, or the bytes' absolute differences squared.
template <bool BY_PRODUCTS>
__device__ __forceinline__ float dist_bytes(const unsigned char* group, int lane, const unsigned char* staged, int dim, float* xnorm2) {
#if defined(IVF_DTYPE_i8)
    int acc = 0, xn = 0;
#if defined(IVF_L2) && defined(IVF_VEC_max)
    int qx = 0, qq = 0;
#endif
#else
    unsigned acc = 0, xn = 0;
#endif
#if defined(IVF_VEC_max)
    const uint4* g = reinterpret_cast<const uint4*>(group);
    const uint4* q = reinterpret_cast<const uint4*>(staged);
    const int chunks = dim / 16;
    // Unrolled so that eight chunks' loads are in flight at once: a small batch's scan is
    // one load round trip after another otherwise.
    #pragma unroll 8
    for (int c = 0; c < chunks; ++c) {
        const uint4 x = g[c * 32 + lane];
        const uint4 qv = q[c];
        const unsigned xs[4] = {x.x, x.y, x.z, x.w};
        const unsigned qs[4] = {qv.x, qv.y, qv.z, qv.w};
        #pragma unroll
        for (int e = 0; e < 4; ++e) {
#if defined(IVF_L2)
#if defined(IVF_DTYPE_i8)
            if (BY_PRODUCTS) {
                // Exact in 32 bits: three dp4a a word, where the signed byte difference
                // has no single instruction (__vabsdiffs4 biases both operands first) and
                // its square takes a fourth and an add.
                qx = __dp4a((int)xs[e], (int)qs[e], qx);
                xn = __dp4a((int)xs[e], (int)xs[e], xn);
                qq = __dp4a((int)qs[e], (int)qs[e], qq);
            } else {
                const unsigned d = __vabsdiffs4(xs[e], qs[e]);
                acc += (int)__dp4a(d, d, 0u);
            }
#else
            const unsigned d = __vabsdiffu4(xs[e], qs[e]);
            acc = __dp4a(d, d, acc);
#endif
#else
#if defined(IVF_DTYPE_i8)
            acc = __dp4a((int)xs[e], (int)qs[e], acc);
            xn = __dp4a((int)xs[e], (int)xs[e], xn);
#else
            acc = __dp4a(xs[e], qs[e], acc);
            xn = __dp4a(xs[e], xs[e], xn);
#endif
#endif
        }
    }
#if defined(IVF_DTYPE_i8) && defined(IVF_L2)
    if (BY_PRODUCTS) {
        acc = qq + xn - 2 * qx;
        xn = 0;  // as the other L2 forms: the row's norm is not returned
    }
#endif
#else
    const T* g = reinterpret_cast<const T*>(group);
    const T* q = reinterpret_cast<const T*>(staged);
    for (int c = 0; c < dim; ++c) {
        const int x = g[c * 32 + lane];
        const int qv = q[c];
#if defined(IVF_L2)
        acc += (x - qv) * (x - qv);
#else
        acc += x * qv;
        xn += x * x;
#endif
    }
#endif
    *xnorm2 = (float)xn;
    return (float)acc;
}

extern "C" __device__ float ivf_dist(const unsigned char* group, int lane, const unsigned char* staged, int dim, float* xnorm2) {
    return dist_bytes<true>(group, lane, staged, dim, xnorm2);
}

extern "C" __device__ float ivf_dist_by_difference(const unsigned char* group, int lane, const unsigned char* staged, int dim,
                                                   float* xnorm2) {
    return dist_bytes<false>(group, lane, staged, dim, xnorm2);
}
#else
// f32 and f16: the query is staged as f32.
extern "C" __device__ float ivf_stage_query(const unsigned char* src, unsigned char* staged, int dim, int tid, int nthreads) {
    float part = 0.f;
    float* q = reinterpret_cast<float*>(staged);
    for (int j = tid; j < dim; j += nthreads) {
        float v = to_f32(reinterpret_cast<const T*>(src)[j]);
        q[j] = v;
        part = fmaf(v, v, part);
    }
    return part;
}

extern "C" __device__ float ivf_dist(const unsigned char* group, int lane, const unsigned char* staged, int dim, float* xnorm2) {
    const Chunk* g = reinterpret_cast<const Chunk*>(group);
    const float* q = reinterpret_cast<const float*>(staged);
    float acc = 0.f, xn = 0.f;
    const int chunks = dim / VECLEN;
    #pragma unroll 8  // eight chunks' loads in flight at once (as above)
    for (int c = 0; c < chunks; ++c) {
        Chunk ch = g[c * 32 + lane];
        #pragma unroll
        for (int e = 0; e < VECLEN; ++e) {
            float x = to_f32(ch.v[e]);
            float qv = q[c * VECLEN + e];
#ifdef IVF_L2
            float diff = qv - x;
            acc = fmaf(diff, diff, acc);
#else
            acc = fmaf(qv, x, acc);
            xn = fmaf(x, x, xn);
#endif
        }
    }
    *xnorm2 = xn;
    return acc;
}

// Float rows have one form.
extern "C" __device__ float ivf_dist_by_difference(const unsigned char* group, int lane, const unsigned char* staged, int dim,
                                                   float* xnorm2) {
    return ivf_dist(group, lane, staged, dim, xnorm2);
}
#endif
