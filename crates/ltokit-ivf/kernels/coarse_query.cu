// Device-function fragment: how the coarse search reads a query value of one stored
// type, as f32 — in one step (ivf_coarse_query_value), or as its stored bits and their
// value apart (ivf_coarse_query_bits, ivf_coarse_query_decode), so that a kernel can keep
// a load in flight past other work and convert only where it uses the value; and four
// values at a time as f16 for the score matrix of types exact in f16 (coarse_h16.cu).
// Defines: IVF_DTYPE_{f32,f16,i8,u8}.
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

// The stored bits of the four values at position j … j + 3 (j a multiple of 4, the batch
// 8-byte aligned): one load — f16's 8 bytes, the 8-bit types' 4 in .x. f32 (which no plan
// multiplies in f16: its values are not exact there) loads and rounds them one by one.
extern "C" __device__ uint2 ivf_coarse_query_bits4(const unsigned char* queries, long long j) {
#if defined(IVF_DTYPE_f16)
    return *reinterpret_cast<const uint2*>(queries + 2 * j);
#elif defined(IVF_DTYPE_i8) || defined(IVF_DTYPE_u8)
    return make_uint2(*reinterpret_cast<const unsigned*>(queries + j), 0u);
#else
    const float* f = reinterpret_cast<const float*>(queries) + j;
    return make_uint2(__half_as_ushort(__float2half_rn(f[0])) | (unsigned)__half_as_ushort(__float2half_rn(f[1])) << 16,
                      __half_as_ushort(__float2half_rn(f[2])) | (unsigned)__half_as_ushort(__float2half_rn(f[3])) << 16);
#endif
}

// Those bits as four f16 (two packed pairs, the first value in the low half), exactly. An
// 8-bit value b goes into the significand of 1024 (0x6400 | b is 1024 + b), and 1024 (u8)
// or 1152 (i8, its sign bit flipped: 1024 + 128 + b) is subtracted — exact, as every
// integer up to 2048 is an f16.
extern "C" __device__ uint2 ivf_coarse_query_halves4(uint2 bits) {
#if defined(IVF_DTYPE_i8) || defined(IVF_DTYPE_u8)
#if defined(IVF_DTYPE_i8)
    const unsigned x = bits.x ^ 0x80808080u;
    const __half2 bias = __half2half2(__ushort_as_half(0x6480));  // 1152
#else
    const unsigned x = bits.x;
    const __half2 bias = __half2half2(__ushort_as_half(0x6400));  // 1024
#endif
    unsigned lo = __byte_perm(x, 0x64646464u, 0x4140), hi = __byte_perm(x, 0x64646464u, 0x4342);
    const __half2 l = __hsub2(*reinterpret_cast<const __half2*>(&lo), bias);
    const __half2 h = __hsub2(*reinterpret_cast<const __half2*>(&hi), bias);
    return make_uint2(*reinterpret_cast<const unsigned*>(&l), *reinterpret_cast<const unsigned*>(&h));
#else
    return bits;
#endif
}

// Bytes of one stored value: the score matrix copies f16 queries (2) into shared memory
// as they are (coarse_h16.cu); the link folds the test.
extern "C" __device__ int ivf_coarse_query_bytes() {
#if defined(IVF_DTYPE_f32)
    return 4;
#elif defined(IVF_DTYPE_f16)
    return 2;
#else
    return 1;
#endif
}
