// Device-function fragment: the per-element transform.
extern "C" __device__ float ltk_transform(float v, float a) {
    return a * v + 1.0f;
}
