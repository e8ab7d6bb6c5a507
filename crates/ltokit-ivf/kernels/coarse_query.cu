// Device-function fragment: how the coarse search reads a query value of one stored
// type, as f32. Defines: IVF_DTYPE_{f32,f16,i8,u8}.
#include <cuda_fp16.h>

extern "C" __device__ float ivf_coarse_query_value(const unsigned char* queries, long long j) {
#if defined(IVF_DTYPE_f32)
    return reinterpret_cast<const float*>(queries)[j];
#elif defined(IVF_DTYPE_f16)
    return __half2float(__ushort_as_half(reinterpret_cast<const unsigned short*>(queries)[j]));
#elif defined(IVF_DTYPE_i8)
    return (float)reinterpret_cast<const signed char*>(queries)[j];
#elif defined(IVF_DTYPE_u8)
    return (float)queries[j];
#else
#error "define IVF_DTYPE_<f32|f16|i8|u8>"
#endif
}
