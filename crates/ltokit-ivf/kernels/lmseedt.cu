// Entry fragment: the list-major scan's bounds seeded by list on the scan's own tile
// arithmetic (plans lmseedt_<tile>_<metric>_<filter>, linked with the scan's tile fragment
// lmtile_<tile>). Block b takes record b of the first probes' tiles (group.cu: list, first
// pair, pairs — up to qt queries whose first probe is that list), stages those queries
// once as the scan does, and goes through the list's first seed_steps 64-row steps; each
// step's scores for every (query, row) come from ivf_lm_step_scores — a small matrix
// product on the tensor cores where the tile is an mma.sync one — and each warp folds its
// query slots' scores into each lane's best two (lmseed.cuh). At the end each slot's k-th
// best, just raised, is its query's bound (kernels/lmseed.cu says what a bound promises).
// The scores are the scan's own (the same tile functions, the same order of operations),
// so no slack is added for a different arithmetic. The seed by list of lmseed.cu scored a
// row at a time with __dp4a, a warp's query at a time (51.5 µs for lowdim-i8 × 10, ncu,
// session 33).
#include "ivf_abi.cuh"
#include "lmseed.cuh"

#define LMSEEDT_WARPS (LM_THREADS / 32)
// Query slots a warp folds: qt ≤ 32 (list_major::seed: SEED_BY_LIST_QUERIES).
#define LMSEEDT_SLOTS 4

#define LMSEEDT_PARAMS                                                                             \
    const unsigned char* __restrict__ queries, int dim, int veclen, int n_probes, int qt, int seed_steps, \
    int work_off, const int4* __restrict__ tile_info, const int* __restrict__ pairs,              \
    const unsigned* __restrict__ row_norms,                                                        \
    const unsigned char* __restrict__ data, int elem_bytes, const long long* __restrict__ list_offset, \
    const int* __restrict__ list_size, const long long* __restrict__ ids,                         \
    const unsigned int* __restrict__ filter, long long filter_words, int query_base, int k,       \
    unsigned int* __restrict__ bound
#define LMSEEDT_ARGS queries, dim, veclen, n_probes, qt, seed_steps, work_off, tile_info, pairs, row_norms, \
    data, elem_bytes, list_offset, list_size, ids, filter, filter_words, query_base, k, bound

// Launch: LM_THREADS threads a record; dynamic shared memory of the step's scores (qt × 64
// floats), the slots' query numbers (qt ints), then from work_off (128-byte aligned) the
// tile's work area for qt queries and one step buffer.
__device__ __forceinline__ void ivf_lmseed_tile_body(LMSEEDT_PARAMS)
{
    const int4 info = tile_info[blockIdx.x];
    const int list = info.x, first = info.y, count = info.z;
    if (count == 0) return;  // past the grid's last record
    extern __shared__ __align__(128) unsigned char smem_raw[];
    float* scores = reinterpret_cast<float*>(smem_raw);               // [qt][64]
    int* qidx = reinterpret_cast<int*>(scores + qt * LM_STEP_ROWS);   // [qt]
    unsigned char* work = smem_raw + work_off;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = threadIdx.x; i < qt; i += LM_THREADS) qidx[i] = i < count ? pairs[first + i] / n_probes : -1;
    __syncthreads();
    ivf_lm_stage_queries(queries, qidx, qt, dim, 1, work);

    const long long off = list_offset[list];
    const int size = list_size[list];
    const int steps = min(seed_steps, (size + LM_STEP_ROWS - 1) / LM_STEP_ROWS);
    const long long step_bytes = (long long)LM_STEP_ROWS * dim * elem_bytes;
    const unsigned char* rows = data + off * dim * elem_bytes;
    const unsigned* norms = row_norms + off;
    const float inf = __int_as_float(0x7f800000);
    float m1[LMSEEDT_SLOTS], m2[LMSEEDT_SLOTS];
    #pragma unroll
    for (int u = 0; u < LMSEEDT_SLOTS; ++u) m1[u] = m2[u] = inf;
    LmRegs regs;
    if (steps > 0) ivf_lm_fetch(rows, norms, min(2, (size + 31) / 32), dim, veclen, &regs, work, qt, 0);
    for (int st = 0; st < steps; ++st) {
        const int base = st * LM_STEP_ROWS;
        const unsigned char* next_rows = rows + (st + 1) * step_bytes;
        const int next_groups = min(2, (size - base - LM_STEP_ROWS + 31) / 32);
        ivf_lm_store(rows + st * step_bytes, min(2, (size - base + 31) / 32), dim, veclen, &regs, work, qt, 0);
        __syncthreads();
        // Rows through registers load the next step while this one is scored; cp.async ones
        // (one buffer) once it is.
        if (!ivf_lm_async_rows() && st + 1 < steps)
            ivf_lm_fetch(next_rows, norms + base + LM_STEP_ROWS, next_groups, dim, veclen, &regs, work, qt, 0);
        ivf_lm_step_scores(dim, qt, count, work, 0, scores, LM_STEP_ROWS);
        __syncthreads();
        if (ivf_lm_async_rows() && st + 1 < steps)
            ivf_lm_fetch(next_rows, norms + base + LM_STEP_ROWS, next_groups, dim, veclen, &regs, work, qt, 0);
        #pragma unroll
        for (int u = 0; u < LMSEEDT_SLOTS; ++u) {
            const int i = warp + LMSEEDT_WARPS * u;
            if (i < count) {
                #pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int r = h * 32 + lane, row = base + r;
                    const bool counts = ivf_row_counts(ids + off, size, row, query_base + qidx[i], filter, filter_words);
                    lmseed_keep_two(counts ? scores[i * LM_STEP_ROWS + r] : inf, m1[u], m2[u]);
                }
            }
        }
        __syncthreads();  // the scores read before the next step's are written
    }
    #pragma unroll
    for (int u = 0; u < LMSEEDT_SLOTS; ++u) {
        const int i = warp + LMSEEDT_WARPS * u;
        if (i < count) {
            // k > 32 seeds nothing; the host only launches k ≤ 32 (list_major::seed).
            const float d = lmseed_best32(m1[u], m2[u], steps > 0, lane);
            const float kth = k <= 32 ? __shfl_sync(IVF_FULL, d, k - 1) : inf;
            if (lane == 0) bound[qidx[i]] = lmseed_bound_key(kth);
        }
    }
}

// Blocks as many an SM as their registers allow (the register tiles hold a step in
// registers), and with registers capped for three an SM (80) for the tiles that copy rows
// with cp.async (the 8-bit mma tiles' lmtile_<i8|u8>tc_async): a block's seed is a short
// chain of barriered steps, so more blocks in flight is what shortens it.
extern "C" __global__ void __launch_bounds__(LM_THREADS) ivf_lmseed_tile_kernel(LMSEEDT_PARAMS) {
    ivf_lmseed_tile_body(LMSEEDT_ARGS);
}
extern "C" __global__ void __launch_bounds__(LM_THREADS, 3) ivf_lmseed_tile_o3_kernel(LMSEEDT_PARAMS) {
    ivf_lmseed_tile_body(LMSEEDT_ARGS);
}
