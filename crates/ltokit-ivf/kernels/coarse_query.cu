// Device-function fragment: how the coarse search reads a query value of one stored
// type, as f32 — in one step (ivf_coarse_query_value), or as its stored bits and their
// value apart (ivf_coarse_query_bits, ivf_coarse_query_decode), so that a kernel can keep
// a load in flight past other work and convert only where it uses the value. Defines:
// IVF_DTYPE_{f32,f16,i8,u8}.
#include <cuda_fp16.h>

extern "C" __device__ unsigned ivf_coarse_query_bits(const unsigned char* queries, long long j) {
#if defined(IVF_DTYPE_f32)
    return reinterpret_cast<const unsigned*>(queries)[j];
#elif defined(IVF_DTYPE_f16)
    return reinterpret_cast<const unsigned short*>(queries)[j];
#elif defined(IVF_DTYPE_i8) || defined(IVF_DTYPE_u8)
    return queries[j];
#else
#error "define IVF_DTYPE_<f32|f16|i8|u8>"
#endif
}

extern "C" __device__ float ivf_coarse_query_decode(unsigned bits) {
#if defined(IVF_DTYPE_f32)
    return __uint_as_float(bits);
#elif defined(IVF_DTYPE_f16)
    return __half2float(__ushort_as_half((unsigned short)bits));
#elif defined(IVF_DTYPE_i8)
    return (float)(signed char)bits;
#else
    return (float)bits;
#endif
}

extern "C" __device__ float ivf_coarse_query_value(const unsigned char* queries, long long j) {
    return ivf_coarse_query_decode(ivf_coarse_query_bits(queries, j));
}

// Whether every value of the type is exact in TF32 (8 bits of significand, 10 stored,
// and f32's exponents): then a product with a TF32 operand needs no split of the query's
// side (mma.cuh, mma_2xtf32). f16 and the 8-bit types are; f32 is not.
extern "C" __device__ bool ivf_coarse_query_exact_tf32() {
#if defined(IVF_DTYPE_f32)
    return false;
#else
    return true;
#endif
}
