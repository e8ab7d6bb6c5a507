// Device-function fragment: distance accumulator for one data type, vector width and
// metric. Defines: IVF_DTYPE_{f32,f16,i8,u8}, IVF_VEC_{1,max}, IVF_METRIC_{l2,l2sqrt,ip,cosine}.
#include <cuda_fp16.h>
#include "ivf_abi.cuh"

#if defined(IVF_DTYPE_f32)
typedef float T;
__device__ __forceinline__ float to_f32(T v) { return v; }
#elif defined(IVF_DTYPE_f16)
typedef __half T;
__device__ __forceinline__ float to_f32(T v) { return __half2float(v); }
#elif defined(IVF_DTYPE_i8)
typedef signed char T;
__device__ __forceinline__ float to_f32(T v) { return (float)v; }
#elif defined(IVF_DTYPE_u8)
typedef unsigned char T;
__device__ __forceinline__ float to_f32(T v) { return (float)v; }
#else
#error "define IVF_DTYPE_<f32|f16|i8|u8>"
#endif

#if defined(IVF_VEC_max)
#define VECLEN (16 / (int)sizeof(T))
#else
#define VECLEN 1
#endif

#if defined(IVF_METRIC_l2) || defined(IVF_METRIC_l2sqrt)
#define IVF_L2 1
#endif

struct alignas(sizeof(T) * VECLEN) Chunk { T v[VECLEN]; };

extern "C" __device__ float ivf_dist(const unsigned char* group, int lane, const float* q, int dim, float* xnorm2) {
    const Chunk* g = reinterpret_cast<const Chunk*>(group);
    float acc = 0.f, xn = 0.f;
    const int chunks = dim / VECLEN;
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
