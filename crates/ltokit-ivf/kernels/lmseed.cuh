// The bounds' seed's fold of row scores into a query's k-th (lmseed.cu, lmseedt.cu).
#pragma once
#include "ivf_abi.cuh"
#include "topk.cuh"
#include "warpsort.cuh"

// Folds a row's bound into the lane's best two. A lane's rows are distinct, so the k-th of
// the warp's 64 kept is at or above the k-th of all its rows: no sorting network a group,
// one sort of each half and a merge at the end (lmseed_best32).
__device__ __forceinline__ void lmseed_keep_two(float s, float& m1, float& m2) {
    m2 = fminf(m2, fmaxf(m1, s));
    m1 = fminf(m1, s);
}

// The warp's best 32 of its lanes' best two, sorted (lane j holds the j-th); `second`:
// whether any lane saw a second row.
__device__ __forceinline__ float lmseed_best32(float m1, float m2, bool second, int lane) {
    WsNoId none;  // scores only: the bound is the k-th score, whichever rows hold it
    ws_sort32(m1, none, lane);
    if (second) {
        ws_sort32(m2, none, lane);
        ws_merge32(m1, none, m2, none, lane);
    }
    return m1;
}

// The bound key just above the k-th best score (0: no bound, where there is no k-th).
__device__ __forceinline__ unsigned int lmseed_bound_key(float kth) {
    const float inf = __int_as_float(0x7f800000);
    return kth < inf ? lm_bound_key(nextafterf(kth, inf)) : 0u;
}

