// A warp's sorted list of (score, id) pairs in registers, lane j holding the j-th best:
// bitonic networks across lanes through shuffles (sorting 32 candidates, merging two
// lists), and insertion of single candidates into a list of the k ≤ 32 best — no shared
// memory and no barriers. Pairs order by score, ties by id as unsigned, so that empty
// entries (+inf, id -1) come last.
#pragma once

#define WS_FULL 0xffffffffu

// The ids a list carries beside its scores: 64-bit (source ids), 32-bit (row positions
// within a list: an exchange moves two registers instead of three), or none (WsNoId)
// where only the scores matter — a seed's bound is the k-th score, whatever rows hold
// it, and an exchange then moves one.
struct WsNoId {};
__device__ __forceinline__ long long ws_shfl_xor(long long v, int stride) { return __shfl_xor_sync(WS_FULL, v, stride); }
__device__ __forceinline__ int ws_shfl_xor(int v, int stride) { return __shfl_xor_sync(WS_FULL, v, stride); }
__device__ __forceinline__ WsNoId ws_shfl_xor(WsNoId v, int) { return v; }
__device__ __forceinline__ long long ws_shfl(long long v, int src) { return __shfl_sync(WS_FULL, v, src); }
__device__ __forceinline__ int ws_shfl(int v, int src) { return __shfl_sync(WS_FULL, v, src); }
__device__ __forceinline__ WsNoId ws_shfl(WsNoId v, int) { return v; }
// Whether (da, ia) sorts before (db, ib): ties by id as unsigned, so that empty entries
// (+inf, id -1) come last; without ids, equal scores are equal.
__device__ __forceinline__ bool ws_before(float da, long long ia, float db, long long ib) {
    return da < db || (da == db && (unsigned long long)ia < (unsigned long long)ib);
}
__device__ __forceinline__ bool ws_before(float da, int ia, float db, int ib) {
    return da < db || (da == db && (unsigned)ia < (unsigned)ib);
}
__device__ __forceinline__ bool ws_before(float da, WsNoId, float db, WsNoId) { return da < db; }

// One compare-exchange with lane ^ stride: the lane keeps the earlier of the two pairs
// where keep_first, else the later.
template <typename Id>
__device__ __forceinline__ void ws_exchange(float& d, Id& id, int stride, bool keep_first) {
    const float od = __shfl_xor_sync(WS_FULL, d, stride);
    const Id oi = ws_shfl_xor(id, stride);
    if (ws_before(od, oi, d, id) == keep_first) { d = od; id = oi; }
}

// Sorts the warp's 32 pairs (one a lane), best first.
template <typename Id>
__device__ __forceinline__ void ws_sort32(float& d, Id& id, int lane) {
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
template <typename Id>
__device__ __forceinline__ void ws_merge32(float& d, Id& id, float bd, Id bi, int lane) {
    const float rd = __shfl_sync(WS_FULL, bd, 31 - lane);
    const Id ri = ws_shfl(bi, 31 - lane);
    if (ws_before(rd, ri, d, id)) { d = rd; id = ri; }
    #pragma unroll
    for (int stride = 16; stride > 0; stride >>= 1) ws_exchange(d, id, stride, (lane & stride) == 0);
}

// Inserts (s, sid) into a warp's sorted list of its k ≤ 32 best, held one a lane (lane j:
// entry j), after the entries that score at most s; s must beat entry k − 1. Returns the
// new k-th score. Lanes at and past k hold whatever shifts into them.
template <typename Id>
__device__ __forceinline__ float ws_insert(float& d, Id& id, int k, int lane, float s, Id sid) {
    const unsigned lanes_k = k >= 32 ? WS_FULL : (1u << k) - 1u;
    const int at = __popc(__ballot_sync(WS_FULL, d <= s) & lanes_k);
    const float ud = __shfl_up_sync(WS_FULL, d, 1);
    const Id uid = __shfl_up_sync(WS_FULL, id, 1);
    if (lane > at) { d = ud; id = uid; }
    else if (lane == at) { d = s; id = sid; }
    return __shfl_sync(WS_FULL, d, k - 1);
}

// Offers one candidate a lane to that list (k-th score `kth`): those under the smaller of
// the k-th and `bound` go in, one insertion each. Returns the new k-th score.
template <typename Id>
__device__ __forceinline__ float ws_offer(float& d, Id& id, int k, int lane, float kth, float bound, float s, Id sid) {
    float t = fminf(kth, bound);
    unsigned m = __ballot_sync(WS_FULL, s < t);
    while (m) {
        const int src = __ffs(m) - 1;
        m &= m - 1;
        const float cs = __shfl_sync(WS_FULL, s, src);
        const Id cid = __shfl_sync(WS_FULL, sid, src);
        if (cs < t) {
            kth = ws_insert(d, id, k, lane, cs, cid);
            t = fminf(kth, bound);
        }
    }
    return kth;
}

// At least this many candidates of one offer under the threshold are sorted and merged
// into the list at once instead of inserted one by one (an insertion costs a ballot and
// three shuffles; a sort of 32 and a merge, about twenty such exchanges).
#define WS_MANY 10

// ws_offer for a list of k ≤ 32 entries with int ids: when many candidates pass at once
// (a pair's first rows, before its list holds k), they are sorted across the warp and
// merged with the list. Returns the new k-th score.
__device__ __forceinline__ float ws_offer_many(float& d, int& id, int k, int lane, float kth, float bound, float s, int sid) {
    const float t = fminf(kth, bound);
    const bool in = s < t;
    if (__popc(__ballot_sync(WS_FULL, in)) < WS_MANY) return ws_offer(d, id, k, lane, kth, bound, s, sid);
    const float inf = __int_as_float(0x7f800000);
    float cs = in ? s : inf;
    int cid = in ? sid : -1;
    ws_sort32(cs, cid, lane);
    // An empty list (a list-major slot's first offer) is the sorted candidates' first k.
    if (__shfl_sync(WS_FULL, d, 0) == inf) {
        d = cs;
        id = cid;
        return __shfl_sync(WS_FULL, d, k - 1);
    }
    // Entries past k are not part of the list: they merge as empty.
    float ld = lane < k ? d : inf;
    int lid = lane < k ? id : -1;
    ws_merge32(ld, lid, cs, cid, lane);
    d = ld;
    id = lid;
    return __shfl_sync(WS_FULL, d, k - 1);
}
