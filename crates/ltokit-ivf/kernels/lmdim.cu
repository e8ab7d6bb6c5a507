// Device-function fragment: the list-major scan's dimension as a link-time constant.
// lmdim_<N> returns N, and the scan takes it in place of its `dim` argument (the host
// links it only into plans of dimension N): the link folds it into the staging, the row
// copies' address arithmetic and the k loop of the tile, as no prebuilt kernel can for
// every dimension. lmdim_any returns 0: the scan keeps its argument.
#include "ivf_abi.cuh"

#if !defined(LM_DIM)
#error "define LM_DIM (0: the dimension is the kernel's argument)"
#endif
extern "C" __device__ int ivf_lm_dim() { return LM_DIM; }
