// Device-function fragment: how the transform is combined with the old value.
// LTK_COMBINE picks the variant (a bundle axis; square when compiled alone).
#define LTK_COMBINE_square 0
#define LTK_COMBINE_abs 1
#define LTK_COMBINE_max 2
#ifndef LTK_COMBINE
#define LTK_COMBINE LTK_COMBINE_square
#endif
extern "C" __device__ float ltk_combine(float t, float y) {
#if LTK_COMBINE == LTK_COMBINE_abs
    return fabsf(t) - 0.5f * y;
#elif LTK_COMBINE == LTK_COMBINE_max
    return fmaxf(t, y) - 0.5f * y;
#else
    return t * t - 0.5f * y;
#endif
}
