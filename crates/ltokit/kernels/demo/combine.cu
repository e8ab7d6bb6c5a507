// Device-function fragment: how the transform is combined with the old value.
extern "C" __device__ float ltk_combine(float t, float y) {
    return t * t - 0.5f * y;
}
