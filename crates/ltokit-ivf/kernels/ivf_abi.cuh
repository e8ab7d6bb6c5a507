// The symbols that cross fragment boundaries in the IVF-Flat kernels. Every variant of a
// device-function fragment defines the same symbol; choosing the fragment chooses the
// behaviour, and nvJitLink inlines it into the entry kernel.
#pragma once

// Copies one query (`dim` values of the list's type, as stored) into shared memory in the
// form ivf_dist reads (f32 for float types, the stored bytes for 8-bit types); thread
// `tid` of `nthreads` does its share and returns its part of the query's squared norm
// (fragment dist_<dtype>_v<veclen>_<metric>).
extern "C" __device__ float ivf_stage_query(const unsigned char* src, unsigned char* staged, int dim, int tid, int nthreads);

// Distance accumulator of one row of a 32-row interleaved group against the staged query
// (same fragment). For dot-product metrics it also returns the row's squared norm (cosine
// needs it). 8-bit types accumulate exactly in 32-bit integers (__dp4a).
extern "C" __device__ float ivf_dist(const unsigned char* group, int lane, const unsigned char* staged, int dim, float* xnorm2);
// The same score by another order of 8-bit operations where i8 L2 has two (kernels/dist.cu
// says which and why); for every other type and metric, ivf_dist itself.
extern "C" __device__ float ivf_dist_by_difference(const unsigned char* group, int lane, const unsigned char* staged, int dim,
                                                   float* xnorm2);

// Whether source id `id` is kept for query `query` (fragment filter_<kind>).
extern "C" __device__ bool ivf_keep(long long id, int query, const unsigned int* filter, long long words);

// Whether row `row` of a list of `size` rows, whose source ids start at `list_ids`, is one
// query `query` may be given: a row of the list (steps and groups run past its end) that
// the filter keeps. The list-major scan's offers and first step and both seeds ask it.
__device__ __forceinline__ bool ivf_row_counts(const long long* list_ids, int size, int row, int query,
                                               const unsigned int* filter, long long words) {
    return row < size && ivf_keep(list_ids[row], query, filter, words);
}

// Accumulator → score where smaller is better, and score → reported distance
// (fragment metric_<metric>).
extern "C" __device__ float ivf_score(float acc, float qnorm2, float xnorm2);
extern "C" __device__ float ivf_report(float score);
// Whether the metric's accumulator is a squared L2 distance (else a dot product).
extern "C" __device__ bool ivf_metric_l2();
// Whether the score is the accumulator itself or its negation (L2, l2sqrt's squared
// score, inner product), so that an exact integer accumulator can be compared with an
// integer bound; cosine divides by the norms.
extern "C" __device__ bool ivf_score_linear();

// The list-major scan's tile arithmetic (fragment lmtile_<dtype>), called by all
// LM_THREADS threads of a block. A step is 64 rows: two consecutive 32-row interleaved
// groups (`groups` = 1 when the list has only one left). `work` is the fragment's shared
// memory, `list_major::work_bytes` of it (the layouts are in lmtile.cu).
#define LM_THREADS 256
#define LM_STEP_ROWS 64
// Row stride of the accumulator tile (a multiple of 4, as WMMA stores need).
#define LM_ACC_STRIDE 68
// 16-byte chunks of one step a thread holds in registers while the previous step is
// multiplied: 32 KiB of each step (f32 up to 128 dimensions, f16 256, 8-bit 512); the
// rest of a larger step, and layouts without 16-byte chunks, load when stored. (16 would
// cover 64 KiB but spills registers at the 128 that two blocks an SM allow.)
#define LM_PREFETCH 8
// `norm`: the squared norm of step row threadIdx.x (threads below LM_STEP_ROWS), loaded
// with the step.
struct LmRegs { uint4 v[LM_PREFETCH]; unsigned norm; };

// Room for kept candidates a query slot has (a constant of the tile fragment, which the
// link folds into the scan): the block offers them to the top-k lists before the next
// step once some slot holds more than ivf_lm_cand_cap() - LM_STEP_ROWS (the next step may
// keep 64 more), so the lists are offered only every few steps, not after each. The host
// sizes shared memory with the same value (list_major::tile::cand_cap).
extern "C" __device__ int ivf_lm_cand_cap();

// The dimension the plan was linked for (fragment lmdim_<N>), or 0 (lmdim_any): the
// scan then takes the kernel's `dim` argument.
extern "C" __device__ int ivf_lm_dim();

// Whether the tile tests its accumulators against LmCandidates::keep_bound — each slot's
// threshold in the tile's own form (ivf_lm_keep_bound) — instead of scoring each one and
// comparing the score with thr: the 8-bit mma tiles where the score is linear in the
// exact integer accumulator (ivf_score_linear), the f16 and f32 mma tiles for L2. Then
// the scan keeps those bounds beside the thresholds; other tiles leave them unset.
extern "C" __device__ bool ivf_lm_bounded();

// Slot i's keep bound for threshold t (the bits of an int or a float, as the tile reads
// them), where ivf_lm_bounded(): every row whose score beats t passes it, and at most a
// few others (within rounding of t), which the top-k lists then reject. L2's query norm
// is taken out ahead (the tile tests xn − 2 dot against the bound alone, not a load and
// an addition a query a step). `work` is the staged work area (after
// ivf_lm_stage_queries and a barrier).
extern "C" __device__ int ivf_lm_keep_bound(float t, unsigned char* work, int dim, int qt, int i);

// The candidates kept since the slots' lists were last offered: for query slot i, the
// rows whose score (ivf_score's convention, smaller is better) beat thr[i] — count[i] of
// them, at score[i * cap + j] and row[i * cap + j] (cap = ivf_lm_cand_cap(); the row
// counted from the first step since that offer). Scoring and this filter happen where the products
// are (in registers for f32), so the few rows that can still enter a query's top k are
// all that reaches the top-k lists.
struct LmCandidates {
    const float* thr;     // [qt]: -inf for an empty slot
    // [qt]: ivf_lm_keep_bound(thr[i]), kept only where ivf_lm_bounded(): those tiles
    // test their accumulators against it, no score formed (nor, for 8-bit, a conversion)
    // for the rows that are not kept.
    const int* keep_bound;
    float* score;         // [qt][cap]
    unsigned short* row;  // [qt][cap]
    int* count;           // [qt], zero after each offer
    int row_base;         // this step's first row, counted as in `row`
    int* flush;           // set when a count passes cap - LM_STEP_ROWS
    // The slots that kept a row since the last offer, in the order their first row was kept:
    // busy[0 .. *busy_n) (the slot whose count goes from 0 to 1 appends itself and sets
    // its flag), so that the top-k pass hands out only those, one a warp as each warp
    // comes free.
    int* busy;            // [qt]
    int* busy_n;          // zero after each offer
    unsigned char* flag;  // [qt], zero after each offer
};

// Slot i kept its first row since its list was last offered: it joins the busy slots (the
// tile's keep, and the scan's sorted first step: lmscan.cu).
__device__ __forceinline__ void lm_mark_busy(const LmCandidates& cand, int i) {
    cand.busy[atomicAdd(cand.busy_n, 1)] = i;
    cand.flag[i] = 1;
}

// Stages the tile's `qt` queries (slot i ← query qidx[i] of `queries`, zeros where
// qidx[i] < 0) with their squared norms, in a work area of `step_buffers` step buffers.
extern "C" __device__ void ivf_lm_stage_queries(const unsigned char* queries, const int* qidx, int qt, int dim, int step_buffers, unsigned char* work);

// Whether the fragment copies steps to shared memory asynchronously (cp.async, into step
// buffer `slot`): then ivf_lm_fetch may only start once nothing reads that buffer, and
// the host may give it two buffers (a step copied while the one before is multiplied).
// Otherwise there is one buffer, and fetch loads into registers.
extern "C" __device__ bool ivf_lm_async_rows();

// Starts loading the step at `rows` and its rows' squared norms at `norms` (the lists'
// row_norms from the step's first row: i32 for 8-bit types, f32 bits for float types —
// DeviceLists computes them once, so that no step sums squares): into this thread's
// registers, or (asynchronous fragments) into step buffer `slot` (when its layout allows).
extern "C" __device__ void ivf_lm_fetch(const unsigned char* rows, const unsigned* norms, int groups, int dim, int veclen, LmRegs* regs, unsigned char* work, int qt, int slot);

// Completes the step's load into step buffer `slot`: writes the step fetched into `regs`
// (or, when it could not be fetched, the step at `rows`) and its rows' norms to shared
// memory, or waits for this thread's asynchronous copies.
extern "C" __device__ void ivf_lm_store(const unsigned char* rows, int groups, int dim, int veclen, const LmRegs* regs, unsigned char* work, int qt, int slot);

// After a barrier that follows ivf_lm_store: the score (ivf_score's convention) of every
// (query slot i, row r) of the step in buffer `slot` into scores[i * ld + r] (shared
// memory, ld ≥ LM_STEP_ROWS), all of them, as ivf_lm_multiply forms those it keeps — the
// bounds' seed on the scan's own arithmetic (lmseedt.cu), and the scan's first step where
// some slot starts with no bound (lmscan.cu). Only the first `count` slots' scores
// are read: a fragment may leave the others unwritten. The caller puts a barrier between
// this and reading them.
extern "C" __device__ void ivf_lm_step_scores(int dim, int qt, int count, unsigned char* work, int slot, float* scores, int ld);

// After a barrier that follows ivf_lm_store: scores every (query slot, row) of the step
// in buffer `slot` with ivf_score and keeps the candidates that beat their slot's
// threshold in `cand`. Rows past the list's end are scored too (as zero rows); the caller
// drops them. Only the tile's first `count` slots hold queries (the others keep nothing):
// a fragment may leave the rest unscored. The caller puts a barrier between this and
// reading the candidates.
extern "C" __device__ void ivf_lm_multiply(int dim, int qt, int count, unsigned char* work, int slot, LmCandidates cand);
