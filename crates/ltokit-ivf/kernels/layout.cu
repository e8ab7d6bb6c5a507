// Entry fragment: an index's interleaved lists laid out on the device from rows already
// there, so that an index built on the GPU never sends its rows through the host. Row r
// of `rows` (row_bytes each) goes to padded row slot[r] of the lists: in the layout of
// index/mod.rs, its chunk c (chunk_bytes: 16, or one value where the dimension has no 16-byte
// chunks) lands at byte (slot / 32) · 32 · row_bytes + (c · 32 + slot % 32) · chunk_bytes.
// One warp a row, its lanes over the chunks; padding is left as the caller zeroed it.

template <typename Chunk>
__device__ __forceinline__ void ivf_layout_row(const unsigned char* src, unsigned char* group, int lane_in_group,
                                               int chunks, int lane) {
    const Chunk* s = reinterpret_cast<const Chunk*>(src);
    Chunk* d = reinterpret_cast<Chunk*>(group);
    for (int c = lane; c < chunks; c += 32) d[c * 32 + lane_in_group] = s[c];
}

extern "C" __global__ void __launch_bounds__(256) ivf_layout_scatter(
    const unsigned char* __restrict__ rows, const unsigned int* __restrict__ slot, int n, int row_bytes,
    int chunk_bytes, unsigned char* __restrict__ data)
{
    const int lane = threadIdx.x % 32;
    const long long warps = (long long)gridDim.x * (blockDim.x / 32);
    const int chunks = row_bytes / chunk_bytes;
    for (long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < n; r += warps) {
        const long long s = slot[r];
        const unsigned char* src = rows + r * row_bytes;
        unsigned char* group = data + (s / 32) * 32 * row_bytes;
        const int in_group = (int)(s % 32);
        switch (chunk_bytes) {
            case 16: ivf_layout_row<uint4>(src, group, in_group, chunks, lane); break;
            case 4: ivf_layout_row<unsigned int>(src, group, in_group, chunks, lane); break;
            case 2: ivf_layout_row<unsigned short>(src, group, in_group, chunks, lane); break;
            default: ivf_layout_row<unsigned char>(src, group, in_group, chunks, lane); break;
        }
    }
}
