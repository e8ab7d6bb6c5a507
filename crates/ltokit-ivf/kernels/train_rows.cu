// Entry fragment: k-means' training rows gathered on the device from a base already
// there, in its stored type: out row r = base row order[r] as f32 (values read by the
// coarse_query_<dtype> fragment), scaled to unit length when `normalise` (cosine). One
// warp a row, lanes over dimensions; the same values kmeans::training_set makes on the
// host.

extern "C" __device__ float ivf_coarse_query_value(const unsigned char* queries, long long j);

extern "C" __global__ void __launch_bounds__(256) ivf_train_rows(
    const unsigned char* __restrict__ base, const unsigned int* __restrict__ order, int n, int dim,
    int normalise, float* __restrict__ out)
{
    const int lane = threadIdx.x % 32;
    const long long warps = (long long)gridDim.x * (blockDim.x / 32);
    for (long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < n; r += warps) {
        const long long src = (long long)order[r] * dim;
        float* dst = out + r * dim;
        float part = 0.f;
        for (int j = lane; j < dim; j += 32) {
            const float v = ivf_coarse_query_value(base, src + j);
            dst[j] = v;
            part = fmaf(v, v, part);
        }
        if (!normalise) continue;
        for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
        if (part > 0.f) {
            const float norm = sqrtf(part);
            for (int j = lane; j < dim; j += 32) dst[j] /= norm;
        }
    }
}
