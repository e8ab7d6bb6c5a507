// Entry fragment: the squared norm of every padded row of a set of interleaved lists,
// computed once where the lists reach the device (DeviceLists), so that the list-major
// scan takes each step's norms with its rows instead of summing squares a step. Row r is
// row r % 32 of group r / 32; its value d lies at element ((d / veclen) · 32 + r % 32) ·
// veclen + d % veclen of the group (index/mod.rs), read as f32 by the coarse_query_<dtype>
// fragment. 8-bit types (`integer`) sum exactly in 32-bit integers (784 squares of 255
// pass f32's 24 bits) and store the int's bits; float types store the f32's bits. Padding
// rows are zeros and get 0. One thread a row: a warp reads a group's rows side by side.

extern "C" __device__ float ivf_coarse_query_value(const unsigned char* queries, long long j);

extern "C" __global__ void __launch_bounds__(256) ivf_row_norms(
    const unsigned char* __restrict__ data, long long rows, int dim, int veclen, int integer,
    unsigned int* __restrict__ norms)
{
    const long long threads = (long long)gridDim.x * blockDim.x;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += threads) {
        const long long group = r / 32 * 32 * dim;
        const int in_group = (int)(r % 32);
        float f = 0.f;
        int n = 0;
        for (int d = 0; d < dim; ++d) {
            const float v = ivf_coarse_query_value(data, group + ((long long)(d / veclen) * 32 + in_group) * veclen + d % veclen);
            if (integer) {
                const int x = (int)v;
                n += x * x;
            } else {
                f = fmaf(v, v, f);
            }
        }
        norms[r] = integer ? (unsigned)n : __float_as_uint(f);
    }
}
