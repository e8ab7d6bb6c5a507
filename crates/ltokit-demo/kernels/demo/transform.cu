// Device-function fragment: the per-element transform, scaled by LTK_SCALE
// (a bundle axis; 1 when compiled alone).
#ifndef LTK_SCALE
#define LTK_SCALE 1.0f
#endif
extern "C" __device__ float ltk_transform(float v, float a) {
    return a * v * LTK_SCALE + 1.0f;
}
