// Entry fragment of the demo kernel: y[i] = combine(transform(x[i], a), y[i]).
// The two device functions live in other fragments and are resolved (and inlined) by
// nvJitLink at link time.
extern "C" __device__ float ltk_transform(float v, float a);
extern "C" __device__ float ltk_combine(float t, float y);

extern "C" __global__ void ltk_demo(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = ltk_combine(ltk_transform(x[i], a), y[i]);
    }
}
