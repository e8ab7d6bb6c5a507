// Entry fragment: the list-major scan, one kernel ivf_lmscan_c<CAP>_kernel per top-k
// capacity. The (query, probe slot) pairs of a batch arrive grouped by list (group.cu),
// cut into tiles of qt pairs, tile b's record tile_info[b] = (list, first pair, pairs):
// the first tiles of every list first (the queries' first probes), then the rest, each
// run the longest lists first. Block b takes tile b: it stages the tile's
// queries once, then goes through the list 64 rows at a time, each step scored against
// all its queries at once by the tile fragment (the next step's rows load while this one
// is multiplied). The fragment keeps only the rows that beat their query's threshold —
// the better of the pair's k-th so far and the query's bound — and the block offers
// those to each query's top-k of this list (each slot that kept rows to the next free
// warp; row positions, turned into source ids at the end) once some slot has kept more
// than ivf_lm_cand_cap() - 64 since the last offer, or at the list's end: most steps keep a few
// rows for a few slots, and an offer each step cost most of the scan. A tile whose slots
// start with no bound sorts its first step's scores instead (lm_first_step). It writes k
// candidates for each pair at pair × k — the per-query scan's layout with one candidate
// set per probe — so ivf_merge finishes both scans alike.
#include "ivf_abi.cuh"
#include "topk.cuh"
#include "warpsort.cuh"

#define LM_WARPS (LM_THREADS / 32)

// qt (16, 32 or 64 queries per tile) is chosen by the host from the batch shape, the
// capacity and the shared memory (`list_major::queries_per_tile`); the shared-memory
// layout below is kept in step with `list_major::shared_bytes`.

#define IVF_LMSCAN_PARAMS                                                                        \
    const unsigned char* __restrict__ queries, int dim, int veclen, int n_probes, int qt,       \
    int step_buffers, int work_off,                                                             \
    const int* __restrict__ pairs, const int4* __restrict__ tile_info,                          \
    const unsigned* __restrict__ row_norms,                                                     \
    const unsigned char* __restrict__ data, int elem_bytes, const long long* __restrict__ list_offset, \
    const int* __restrict__ list_size, const long long* __restrict__ ids,                       \
    const unsigned int* __restrict__ filter, long long filter_words, int query_base,            \
    int k, unsigned int* __restrict__ bound, float* __restrict__ out_d, long long* __restrict__ out_id
#define IVF_LMSCAN_ARGS queries, dim, veclen, n_probes, qt, step_buffers, work_off, pairs, tile_info, row_norms, \
    data, elem_bytes, list_offset, list_size, ids, filter, filter_words, query_base, k, bound, out_d, out_id

// Candidate j of slot i's kept rows (n of them, counted from row `base` of a list of
// `size`): its score, or +inf where there is none or the filter drops it, and its row
// position.
struct LmOffer { float s; int row; };
__device__ __forceinline__ LmOffer lm_candidate(const float* cand_score, const unsigned short* cand_row, int i, int j,
                                                int n, int base, int size, const long long* list_ids, int query,
                                                const unsigned int* filter, long long filter_words) {
    LmOffer o = {__int_as_float(0x7f800000), 0};
    if (j < n) {
        const int at = i * ivf_lm_cand_cap() + j;
        o.row = base + cand_row[at];
        if (ivf_row_counts(list_ids, size, o.row, query, filter, filter_words)) o.s = cand_score[at];
    }
    return o;
}

// Sets slot i's threshold and, for tiles that test against keep bounds, its bound. The
// work area's queries must be staged (L2's bounds take out their norms).
__device__ __forceinline__ void lm_set_threshold(float* thr, int* keep_bound, int i, float t, unsigned char* work,
                                                 int dim, int qt) {
    thr[i] = t;
    if (ivf_lm_bounded()) keep_bound[i] = ivf_lm_keep_bound(t, work, dim, qt, i);
}

// The first step of a tile in which some slot starts with no bound (no seed, and no other
// tile of its query finished yet): every row would pass, and the keep and the first
// offer would put all 64 of each such slot through the top-k list. Instead every score
// of the step goes to the slots' candidate rooms (ivf_lm_step_scores, `cap` apart), and
// each slot's warp takes its own:
// - a slot with no bound sorts its 64 scores (two sorts of 32 and a merge) and takes the
//   first k as its list — rows past the list or dropped by the filter score +inf — and
//   publishes its k-th as its query's bound;
// - a slot with a bound keeps its rows under it in its room, as the tile's keep would
//   (busy, and the flush flag where the room passes cap − 64).
// Warp w takes slots w, w + LM_WARPS, …; a slot's reads come before its writes (one warp
// owns its room). Measured on the H100 (session 47, docs/gpu-runs/2026-12-07-s47/, three
// calls of two or three rounds, device QPS against main): the images (no seed: 234-row
// lists) at batch 10,000 × 2 / 5 / 10 / 20 +1.2 / +0.3 / +0.8 / −0.4 %, +3.1 / +1.6 /
// +2.0 / −0.0 %, +1.8 / +0.4 / +1.1 / −0.1 %, at 1,000 +0.8 to +3.3 % in all twelve rows;
// lowdim-f16 +0.8 to +2.1 % in twelve of twelve rows over two calls (seeded: the path
// rarely runs there, so that is the kernel's other code, not this path); lowdim f32 −0.7
// to +0.8 %, lowdim-i8 (capped kernels, which leave it out) −1.4 to +1.3 %. The scan plans
// grow by about 25 KB of code (images 52 → 77 KB), no spill.
template <int CAP>
__device__ __forceinline__ void lm_first_step(const LmCandidates& cand, float* top_d, int* top_pos, int count,
                                              int k, int size, const long long* list_ids, const int* qidx,
                                              int query_base, const unsigned int* filter, long long filter_words,
                                              unsigned int* bound) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int cap = ivf_lm_cand_cap();
    const float inf = __int_as_float(0x7f800000);
    for (int i = warp; i < count; i += LM_WARPS) {
        const float t = cand.thr[i];
        float s[2];
        bool pass[2];
        #pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = h * 32 + lane;
            s[h] = cand.score[i * cap + r];
            pass[h] = s[h] < t && ivf_row_counts(list_ids, size, r, query_base + qidx[i], filter, filter_words);
        }
        if (t < inf) {
            const unsigned m0 = __ballot_sync(IVF_FULL, pass[0]), m1 = __ballot_sync(IVF_FULL, pass[1]);
            const int n0 = __popc(m0), n = n0 + __popc(m1);
            const unsigned below = (1u << lane) - 1u;
            __syncwarp();
            if (pass[0]) {
                const int at = i * cap + __popc(m0 & below);
                cand.score[at] = s[0];
                cand.row[at] = (unsigned short)(cand.row_base + lane);
            }
            if (pass[1]) {
                const int at = i * cap + n0 + __popc(m1 & below);
                cand.score[at] = s[1];
                cand.row[at] = (unsigned short)(cand.row_base + 32 + lane);
            }
            if (lane == 0 && n > 0) {
                cand.count[i] = n;
                lm_mark_busy(cand, i);
                if (n > cap - LM_STEP_ROWS) *cand.flush = 1;
            }
        } else {
            float d0 = pass[0] ? s[0] : inf, d1 = pass[1] ? s[1] : inf;
            int p0 = pass[0] ? lane : -1, p1 = pass[1] ? 32 + lane : -1;
            ws_sort32(d0, p0, lane);
            ws_sort32(d1, p1, lane);
            ws_merge32(d0, p0, d1, p1, lane);
            if (lane < k) {
                top_d[i * CAP + lane] = d0;
                top_pos[i * CAP + lane] = p0;
            }
            const float kth = __shfl_sync(IVF_FULL, d0, k - 1);
            if (lane == 0 && kth < inf) atomicMax(&bound[qidx[i]], lm_bound_key(kth));
        }
    }
}

// Rounds of the block's threads whose source-id loads the end of a tile puts in flight at
// once (64 slots × k 10 are 640 entries: three rounds of 256).
#define LM_OUT_ROUNDS 4

// SORT_FIRST: whether the scan may sort its first step (lm_first_step); the kernels with
// capped registers do not (their 64 registers would spill).
template <int CAP, bool SORT_FIRST>
__device__ __forceinline__ void ivf_lmscan_body(IVF_LMSCAN_PARAMS)
{
    // A plan linked for one dimension (lmdim_<N>) has it as a constant from here on.
    if (ivf_lm_dim() > 0) dim = ivf_lm_dim();
    const int tile = blockIdx.x;
    const int4 info = tile_info[tile];
    const int list = info.x, first = info.y, count = info.z;
    if (count == 0) return;  // past the grid's last tile

    extern __shared__ __align__(128) unsigned char smem_raw[];
    float* top_d = reinterpret_cast<float*>(smem_raw);               // [qt][CAP]
    int* top_pos = reinterpret_cast<int*>(top_d + qt * CAP);         // [qt][CAP]
    const int cand_cap = ivf_lm_cand_cap();
    float* cand_score = reinterpret_cast<float*>(top_pos + qt * CAP); // [qt][cand_cap]
    float* thr = cand_score + qt * cand_cap;                         // [qt]
    float* qbound = thr + qt;                                        // [qt]
    int* cand_count = reinterpret_cast<int*>(qbound + qt);           // [qt]
    int* qidx = cand_count + qt;                                     // [qt]
    int* pair = qidx + qt;                                           // [qt]
    int* busy = pair + qt;                                           // [qt]
    int* keep_bound = busy + qt;                                     // [qt]
    // Per offer parity: the busy slots' count and how many the top-k pass handed out.
    int* busy_ctl = keep_bound + qt;                                 // [2][2]
    // Per step parity: whether a slot's candidates passed cand_cap - LM_STEP_ROWS.
    int* flush = busy_ctl + 4;                                       // [2]
    unsigned short* cand_row = reinterpret_cast<unsigned short*>(flush + 2); // [qt][cand_cap]
    unsigned char* busy_flag = reinterpret_cast<unsigned char*>(cand_row + qt * cand_cap); // [qt]
    // The work area starts at work_off, the end of the arrays above rounded up to 128
    // bytes (WMMA tiles need 32-byte aligned rows), which the host computes
    // (`list_major::tile::work_offset`): as a kernel argument it is an operand of the
    // address arithmetic where the offset computed here from qt was recomputed at each
    // use under the capped kernels' registers (about ten instructions each, in the row
    // copy, the multiply and every kept row's score). With lm_round_chunk's row copy
    // (lmtile.cu), measured on the H200 (session 19, `docs/gpu-runs/2026-12-02-s19/
    // 2-lean-phase-ab/`, `lean` against main, three rounds): lowdim-i8 (the capped
    // kernel, linked for its dimension) +2.9 / +4.3 / +5.3 % at batch 10,000 and +3.1 /
    // +4.7 / +3.4 % at 1,000; f32 +0.1 to +2.0 %; the register tiles of f16, the images
    // and wide-i8 −0.3 to −2.9 % (main's own rows move about 2 % between calls). An offset
    // from smem_raw (itself 128-byte aligned), not an integer cast of a pointer, so that
    // the compiler still knows it is shared memory (shared loads, 32-bit addresses).
    unsigned char* work = smem_raw + work_off;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float inf = __int_as_float(0x7f800000);
    for (int i = threadIdx.x; i < qt; i += blockDim.x) {
        const int p = i < count ? pairs[first + i] : -1;
        pair[i] = p;
        qidx[i] = p >= 0 ? p / n_probes : -1;
        // Empty slots keep nothing; the others start from the query's bound so far (the
        // keep bounds once the queries are staged).
        thr[i] = p >= 0 ? lm_bound_score(bound[p / n_probes]) : -inf;
        cand_count[i] = 0;
        busy_flag[i] = 0;
    }
    if (threadIdx.x < 6) busy_ctl[threadIdx.x] = 0;  // and both flush flags
    for (int i = warp; i < qt; i += LM_WARPS) topk_init<CAP>(top_d + i * CAP, top_pos + i * CAP, lane);
    // Whether some slot starts with no bound: then the first step sorts (lm_first_step).
    const bool some_open = __syncthreads_or(threadIdx.x < count && !(thr[threadIdx.x] < inf));
    const bool sort_first = SORT_FIRST && CAP <= 32 && some_open;
    const long long off = list_offset[list];
    const int size = list_size[list];
    const long long step_bytes = (long long)LM_STEP_ROWS * dim * elem_bytes;
    const unsigned char* rows = data + off * dim * elem_bytes;
    const unsigned* norms = row_norms + off;
    const int steps = (size + LM_STEP_ROWS - 1) / LM_STEP_ROWS;
    LmRegs regs;
    // The next step loads while this one is multiplied — into registers, or into the other
    // step buffer — except with one buffer that cp.async fills: then once the multiply is
    // done, beside the top-k pass. The first step's loads go out before the queries' so
    // that both are in flight together. Measured on the H100 with lmtile.cu's four query
    // slots a warp, the tile end below and ivf_row_counts in the checks (session 51,
    // docs/gpu-runs/2026-12-07-s51/3-ab-qsfe and 4-ab-qsfe, two calls of three rounds,
    // device QPS at batch 10,000 against the main before): images +0.6 to +3.4 %, wide-i8
    // +1.9 to +4.0 %, lowdim-i8 +1.0 to +4.6 %, lowdim-f16 +2.6 to +4.0 %, lowdim f32 −0.4
    // to +0.1 % (one call); at 1,000 the 8-bit and f16 sets +0.4 to +3.0 %, lowdim f32 −1.2
    // to −2.6 % (one call, its recall moving between rounds with each build's k-means).
    const bool fetch_early = !ivf_lm_async_rows() || step_buffers == 2;
    ivf_lm_fetch(rows, norms, min(2, (size + 31) / 32), dim, veclen, &regs, work, qt, 0);
    ivf_lm_stage_queries(queries, qidx, qt, dim, step_buffers, work);
    if (ivf_lm_bounded()) {
        __syncthreads();  // the staged queries' norms (the first step's barrier orders the bounds)
        for (int i = threadIdx.x; i < qt; i += blockDim.x) keep_bound[i] = ivf_lm_keep_bound(thr[i], work, dim, qt, i);
    }
    // The first step since the last offer, and how many offers so far (their parity picks
    // the busy counters).
    int window = 0, offers = 0;
    for (int st = 0; st < steps; ++st) {
        const int base = st * LM_STEP_ROWS;
        const int slot = st & (step_buffers - 1), next_slot = (st + 1) & (step_buffers - 1);
        const unsigned char* next_rows = rows + (st + 1) * step_bytes;
        const int next_groups = min(2, (size - base - LM_STEP_ROWS + 31) / 32);
        int* ctl = busy_ctl + 2 * (offers & 1);
        const LmCandidates cand = {thr, keep_bound, cand_score, cand_row, cand_count, (st - window) * LM_STEP_ROWS,
                                   flush + (st & 1), busy, ctl, busy_flag};
        ivf_lm_store(rows + st * step_bytes, min(2, (size - base + 31) / 32), dim, veclen, &regs, work, qt, slot);
        __syncthreads();
        // Every thread read the other parity's flush flag after the last step's barrier.
        if (threadIdx.x == 0) flush[(st + 1) & 1] = 0;
        // The queries' bounds load while the step is multiplied (a load per query in the
        // top-k pass would wait for each in turn).
        const unsigned int my_bound = threadIdx.x < count ? bound[qidx[threadIdx.x]] : 0u;
        if (fetch_early && st + 1 < steps)
            ivf_lm_fetch(next_rows, norms + base + LM_STEP_ROWS, next_groups, dim, veclen, &regs, work, qt, next_slot);
        if (st == 0 && sort_first) {
            ivf_lm_step_scores(dim, qt, count, work, slot, cand_score, cand_cap);
            __syncthreads();
            lm_first_step<CAP>(cand, top_d, top_pos, count, k, size, ids + off, qidx, query_base, filter, filter_words,
                               bound);
        } else {
            ivf_lm_multiply(dim, qt, count, work, slot, cand);
        }
        if (threadIdx.x < count) qbound[threadIdx.x] = lm_bound_score(my_bound);
        __syncthreads();
        if (!fetch_early && st + 1 < steps)
            ivf_lm_fetch(next_rows, norms + base + LM_STEP_ROWS, next_groups, dim, veclen, &regs, work, qt, next_slot);
        // Offer the kept rows when a slot passed cand_cap - 64 (the next step could overflow
        // it), at the list's end, or before the rows' 16-bit offsets from `window` would.
        const bool offer = flush[st & 1] || st + 1 == steps || st + 1 - window == 65536 / LM_STEP_ROWS;
        if (!offer) {
            // Every slot takes its query's bound, which other tiles may have lowered; the
            // idle ones also their own k-th (the busy ones' lists wait for the offer).
            if (threadIdx.x < count) {
                const float kth = busy_flag[threadIdx.x] ? thr[threadIdx.x] : top_d[threadIdx.x * CAP + k - 1];
                lm_set_threshold(thr, keep_bound, threadIdx.x, fminf(kth, qbound[threadIdx.x]), work, dim, qt);
            }
            continue;
        }
        // The slots that kept rows go to the warps one at a time, each to the next warp
        // that comes free (how many rows a slot keeps varies widely, and every warp waits
        // at the next barrier for the last); each slot that kept none only takes its
        // query's bound into its threshold (thread i, slot i). The other parity's
        // counters, last used by the previous offer, are zeroed for the next one (the
        // next store's barrier orders that before its use).
        if (threadIdx.x == 0) {
            int* next_ctl = busy_ctl + 2 * ((offers + 1) & 1);
            next_ctl[0] = 0;
            next_ctl[1] = 0;
        }
        if (threadIdx.x < count) {
            if (busy_flag[threadIdx.x]) busy_flag[threadIdx.x] = 0;
            else lm_set_threshold(thr, keep_bound, threadIdx.x, fminf(top_d[threadIdx.x * CAP + k - 1], qbound[threadIdx.x]), work, dim, qt);
        }
        const int window_base = window * LM_STEP_ROWS;
        window = st + 1;
        ++offers;
        const int n_busy = ctl[0];
        while (true) {
            int taken = 0;
            if (lane == 0) taken = atomicAdd(&ctl[1], 1);
            taken = __shfl_sync(IVF_FULL, taken, 0);
            if (taken >= n_busy) break;
            const int i = busy[taken];
            float* d = top_d + i * CAP;
            int* pos = top_pos + i * CAP;
            const float qb = qbound[i];
            const int n = cand_count[i];
            float kth;
            if (CAP <= 32) {
                // The list in registers while the kept rows are offered (lane j holds
                // entry j): an insertion is a few shuffles instead of a shared-memory
                // shift with two warp barriers.
                kth = d[k - 1];
                float rd = lane < k ? d[lane] : inf;
                int rp = lane < k ? pos[lane] : -1;
                for (int j0 = 0; j0 < n; j0 += 32) {
                    const LmOffer c = lm_candidate(cand_score, cand_row, i, j0 + lane, n, window_base, size,
                                                   ids + off, query_base + qidx[i], filter, filter_words);
                    kth = ws_offer_many(rd, rp, k, lane, kth, qb, c.s, c.row);
                }
                if (lane < k) { d[lane] = rd; pos[lane] = rp; }
            } else {
                float t = fminf(d[k - 1], qb);
                for (int j0 = 0; j0 < n; j0 += 32) {
                    const LmOffer c = lm_candidate(cand_score, cand_row, i, j0 + lane, n, window_base, size,
                                                   ids + off, query_base + qidx[i], filter, filter_words);
                    t = topk_offer<CAP>(d, pos, k, lane, t, c.s, c.row);
                }
                kth = d[k - 1];
            }
            if (lane == 0) {
                if (kth < qb) atomicMax(&bound[qidx[i]], lm_bound_key(kth));
                lm_set_threshold(thr, keep_bound, i, fminf(kth, qb), work, dim, qt);
                cand_count[i] = 0;
            }
        }
    }
    __syncthreads();
    // The count × k entries of the tile's lists spread over every thread (entry e: slot
    // e / k, place e % k), so that a thread's source-id loads are in flight together: a
    // warp a slot waited for one slot's loads before the next (qt / 8 in turn), and the
    // images' second phase spent 7 % of its samples here (ncu, session 49). Measured with
    // the first step's early fetch (its comment above, session 51).
    const int entries = count * k;
    for (int e0 = threadIdx.x; e0 < entries; e0 += LM_OUT_ROUNDS * LM_THREADS) {
        long long id[LM_OUT_ROUNDS];
        #pragma unroll
        for (int r = 0; r < LM_OUT_ROUNDS; ++r) {
            const int e = e0 + r * LM_THREADS;
            const int p = e < entries ? top_pos[(e / k) * CAP + e % k] : -1;
            id[r] = p >= 0 ? ids[off + p] : -1;
        }
        #pragma unroll
        for (int r = 0; r < LM_OUT_ROUNDS; ++r) {
            const int e = e0 + r * LM_THREADS;
            if (e >= entries) break;
            const int i = e / k, j = e % k;
            const long long out = (long long)pair[i] * k + j;
            out_d[out] = top_d[i * CAP + j];
            out_id[out] = id[r];
        }
    }
}

// Two blocks an SM (at most 128 registers a thread) where the top-k lists are small; the
// largest capacities would spill there, and their tiles are 16 queries anyway.
#define IVF_LMSCAN_KERNEL(CAP) \
    extern "C" __global__ void __launch_bounds__(LM_THREADS, (CAP <= 256 ? 2 : 1)) ivf_lmscan_c##CAP##_kernel(IVF_LMSCAN_PARAMS) { ivf_lmscan_body<CAP, true>(IVF_LMSCAN_ARGS); }
IVF_FOR_EACH_CAPACITY(IVF_LMSCAN_KERNEL)

// The same scan with registers capped for more resident blocks, for small top-k lists
// of 8-bit mma tiles: 80 registers for three blocks an SM, 64 for four. The host takes the
// most blocks whose largest block the SM's shared memory holds that many times
// (`list_major::tile::LmKernel::choose`); these link the tile fragment that copies rows
// with cp.async, holding no step in registers.
#define IVF_LMSCAN_CAPPED_KERNEL(BLOCKS, CAP) \
    extern "C" __global__ void __launch_bounds__(LM_THREADS, BLOCKS) ivf_lmscan_o##BLOCKS##_c##CAP##_kernel(IVF_LMSCAN_PARAMS) { ivf_lmscan_body<CAP, false>(IVF_LMSCAN_ARGS); }
#define IVF_LMSCAN_CAPPED_KERNELS(BLOCKS) \
    IVF_LMSCAN_CAPPED_KERNEL(BLOCKS, 1) IVF_LMSCAN_CAPPED_KERNEL(BLOCKS, 2) IVF_LMSCAN_CAPPED_KERNEL(BLOCKS, 4) \
    IVF_LMSCAN_CAPPED_KERNEL(BLOCKS, 8) IVF_LMSCAN_CAPPED_KERNEL(BLOCKS, 16) IVF_LMSCAN_CAPPED_KERNEL(BLOCKS, 32)
IVF_LMSCAN_CAPPED_KERNELS(3)
IVF_LMSCAN_CAPPED_KERNELS(4)
