// Device-function fragment: which source ids a query keeps. Define IVF_FILTER_none,
// IVF_FILTER_bitset (one bitset over ids, bit = 1 keeps) or IVF_FILTER_bitmap (one bitset
// per query, `words` 32-bit words each).
#include "ivf_abi.cuh"

extern "C" __device__ bool ivf_keep(long long id, int query, const unsigned int* filter, long long words) {
#if defined(IVF_FILTER_bitset)
    long long w = id >> 5;
    return w < words && ((filter[w] >> (id & 31)) & 1u);
#elif defined(IVF_FILTER_bitmap)
    long long w = id >> 5;
    return w < words && ((filter[(long long)query * words + w] >> (id & 31)) & 1u);
#else
    return true;
#endif
}
