// The element type T of a fragment compiled once for each list type (the spec's
// IVF_DTYPE_<f32|f16|i8|u8> define), and IVF_BYTES for the 8-bit types, whose arithmetic
// is exact in 32-bit integers.
#pragma once
#include <cuda_fp16.h>

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
