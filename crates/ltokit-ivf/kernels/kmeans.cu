// Entry fragment: the k-means centre update on the device (the training rows are
// gathered by train_rows.cu). ivf_kmeans_sum adds every point into its centre's sum (one
// warp per point, lanes over dimensions; float atomics) and counts the members; ivf_kmeans_divide turns sums into means (centres with no member
// keep their place) and, for spherical k-means, scales each centre to unit length; it
// also refreshes the norms the coarse search reads.

extern "C" __global__ void __launch_bounds__(256) ivf_kmeans_sum(
    const float* __restrict__ points, const long long* __restrict__ labels, int n, int dim,
    float* __restrict__ sums, unsigned int* __restrict__ counts)
{
    const int lane = threadIdx.x % 32;
    const long long warps = (long long)gridDim.x * (blockDim.x / 32);
    for (long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < n; p += warps) {
        const long long l = labels[p];
        const float* x = points + p * dim;
        float* s = sums + l * dim;
        for (int j = lane; j < dim; j += 32) atomicAdd(s + j, x[j]);
        if (lane == 0) atomicAdd(counts + l, 1u);
    }
}

extern "C" __global__ void __launch_bounds__(128) ivf_kmeans_divide(
    float* __restrict__ centers, float* __restrict__ norms, const float* __restrict__ sums,
    const unsigned int* __restrict__ counts, int n_centers, int dim, int normalise)
{
    __shared__ float parts[4];
    const int c = blockIdx.x;
    if (c >= n_centers || counts[c] == 0) return;
    const float inv = 1.f / (float)counts[c];
    float part = 0.f;
    for (int j = threadIdx.x; j < dim; j += blockDim.x) {
        const float v = sums[(long long)c * dim + j] * inv;
        part = fmaf(v, v, part);
    }
    for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
    if (threadIdx.x % 32 == 0) parts[threadIdx.x / 32] = part;
    __syncthreads();
    const float norm = sqrtf(parts[0] + parts[1] + parts[2] + parts[3]);
    const float scale = (normalise && norm > 0.f) ? inv / norm : inv;
    for (int j = threadIdx.x; j < dim; j += blockDim.x)
        centers[(long long)c * dim + j] = sums[(long long)c * dim + j] * scale;
    // What the coarse search needs of the centre: its squared norm (1 once normalised).
    if (threadIdx.x == 0) norms[c] = normalise ? 1.f : norm * norm;
}
