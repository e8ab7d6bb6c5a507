// A warp's sorted list of 32 (score, id) pairs in registers, lane j holding the j-th best:
// bitonic networks across lanes through shuffles, no shared memory and no barriers.
// Pairs order by score, ties by id as unsigned, so that empty entries (+inf, id -1) come
// last.
#pragma once

#define WS_FULL 0xffffffffu

// Whether (da, ia) sorts before (db, ib).
__device__ __forceinline__ bool ws_before(float da, long long ia, float db, long long ib) {
    return da < db || (da == db && (unsigned long long)ia < (unsigned long long)ib);
}

// One compare-exchange with lane ^ stride: the lane keeps the earlier of the two pairs
// where keep_first, else the later.
__device__ __forceinline__ void ws_exchange(float& d, long long& id, int stride, bool keep_first) {
    const float od = __shfl_xor_sync(WS_FULL, d, stride);
    const long long oi = __shfl_xor_sync(WS_FULL, id, stride);
    if (ws_before(od, oi, d, id) == keep_first) { d = od; id = oi; }
}

// Sorts the warp's 32 pairs (one a lane), best first.
__device__ __forceinline__ void ws_sort32(float& d, long long& id, int lane) {
    #pragma unroll
    for (int size = 2; size <= 32; size <<= 1) {
        const bool ascending = (lane & size) == 0;  // always at size 32: lane < 32
        #pragma unroll
        for (int stride = size / 2; stride > 0; stride >>= 1)
            ws_exchange(d, id, stride, ((lane & stride) == 0) == ascending);
    }
}

// Merges the sorted list (bd, bi) into the sorted list (d, id): the best 32 of both,
// sorted. (The first list against the second reversed holds the best 32 as a bitonic
// sequence; five exchanges sort it.)
__device__ __forceinline__ void ws_merge32(float& d, long long& id, float bd, long long bi, int lane) {
    const float rd = __shfl_sync(WS_FULL, bd, 31 - lane);
    const long long ri = __shfl_sync(WS_FULL, bi, 31 - lane);
    if (ws_before(rd, ri, d, id)) { d = rd; id = ri; }
    #pragma unroll
    for (int stride = 16; stride > 0; stride >>= 1) ws_exchange(d, id, stride, (lane & stride) == 0);
}
