#!/usr/bin/env python3
"""How a list-major scan's work spreads over its blocks, from an index file and queries.

usage: list-work.py INDEX.ivf QUERIES.npy N_PROBES QT [SLOTS]

Probes each query's N_PROBES nearest centres (squared L2, numpy), counts the (query,
probe) pairs of each list, and prints the lists' sizes and pair counts, then the scan's
blocks: a block takes QT pairs of one list and goes through the whole list in 64-row
steps. SLOTS (default 264: two blocks on each of the H200's 132 SMs) blocks run at once;
a greedy simulation of the block scheduler (each block to the first free slot, in launch
order) gives the scan's length in block-steps for the lists in number order and longest
first, against the ideal (all steps spread evenly). A block's fixed cost (staging its
queries, writing its candidates) is counted as one step.
"""
import heapq
import json
import struct
import sys

import numpy as np


def read_index(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"LTOKIVF\0":
        sys.exit(f"{path}: not an ltokit IVF index")
    header_len = struct.unpack_from("<Q", raw, 16)[0]
    at = 56
    header = json.loads(raw[at:at + header_len])
    at += header_len
    n, dim = header["n_lists"], header["dim"]
    centres = np.frombuffer(raw, np.float32, n * dim, at).reshape(n, dim)
    at += 4 * n * dim + 8 * n
    sizes = np.frombuffer(raw, np.int32, n, at)
    return centres, sizes


def probes_of(queries, centres, n_probes):
    q = queries.astype(np.float32)
    out = []
    cn = (centres * centres).sum(1)
    for s in range(0, len(q), 2048):
        d = cn[None, :] - 2 * q[s:s + 2048] @ centres.T
        out.append(np.argpartition(d, n_probes - 1, axis=1)[:, :n_probes])
    return np.concatenate(out)


def schedule(blocks, slots):
    free = [0] * slots
    heapq.heapify(free)
    end = 0
    for cost in blocks:
        start = heapq.heappop(free)
        end = max(end, start + cost)
        heapq.heappush(free, start + cost)
    return end


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    index, queries, n_probes, qt = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    slots = int(sys.argv[5]) if len(sys.argv) > 5 else 264
    centres, sizes = read_index(index)
    probes = probes_of(np.load(queries), centres, n_probes)
    pairs = np.bincount(probes.ravel(), minlength=len(sizes))
    steps = (sizes + 63) // 64
    tiles = (pairs + qt - 1) // qt
    pct = lambda a: " / ".join(f"{v:g}" for v in np.percentile(a, [0, 50, 90, 99, 100]))
    print(f"{index}: {len(sizes)} lists, {sizes.sum()} rows; {probes.size} pairs at {n_probes} probes, qt {qt}")
    print(f"  rows a list        min / median / p90 / p99 / max: {pct(sizes)}")
    print(f"  pairs a list       min / median / p90 / p99 / max: {pct(pairs)}")
    blocks = [(int(steps[l]) + 1, l) for l in range(len(sizes)) for _ in range(int(tiles[l]))]
    total = sum(c for c, _ in blocks)
    ideal = total / slots
    by_number = schedule([c for c, _ in blocks], slots)
    longest = schedule(sorted((c for c, _ in blocks), reverse=True), slots)
    share = tiles * (steps + 1)
    top = np.argsort(-share)[:5]
    print(f"  blocks {len(blocks)} ({len(blocks) / slots:.2f} waves of {slots}), block-steps {total}")
    print(f"  scan length in block-steps: ideal {ideal:.1f}, lists by number {by_number} "
          f"({by_number / ideal:.2f}x), longest first {longest} ({longest / ideal:.2f}x)")
    print("  heaviest lists (list: rows, pairs, share of block-steps): " + ", ".join(
        f"{l}: {sizes[l]}, {pairs[l]}, {share[l] / total:.1%}" for l in top))


if __name__ == "__main__":
    main()
