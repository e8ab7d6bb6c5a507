#!/usr/bin/env python3
"""CPU model of warp-rest.patch's row copy (kernels/lmtile.cu, register 8-bit mma tiles
with rows over 512 bytes): ivf_lm_fetch's register rounds, ivf_lm_store's placement and
lm_copy_warp_rest's per-warp copies must together put chunk (row r, column c) of a step's
interleaved global layout (group g = r / 32: chunk (g * cols + c) * 32 + r % 32) at row r,
column c of the row-major shared step, zeros for rows of a missing second group, each
(row, column) written, and each warp's copies must cover exactly the columns past the
registers' of the rows its products read (rows 16 (w % 4) .. + 15).

usage: python3 docs/wip/warp-rest-sim.py      (prints the shapes checked; exits 1 on a mismatch)
"""
import sys

THREADS, WARPS, PREFETCH, REG_COLUMNS = 256, 8, 8, 32


def check(cols, groups):
    shared = {}  # (row, col) -> global chunk index or "zero"
    # fetch + store: thread t, round j
    for t in range(THREADS):
        warp, lane = t // 32, t % 32
        for j in range(PREFETCH):
            second = j >= PREFETCH // 2
            col = (j % (PREFETCH // 2)) * WARPS + warp
            src = ((cols if second else 0) + col) * 32 + lane if (not second or groups == 2) else "zero"
            key = ((32 if second else 0) + lane, col)
            assert key not in shared, ("stored twice", key)
            shared[key] = src
    # the warps' copies (every warp: the partner of an idle warp copies the same rows)
    copied = {}
    for warp in range(WARPS):
        rest = cols - REG_COLUMNS
        r0 = (warp % 4) * 16
        second = r0 >= 32
        have = not second or groups == 2
        for lane in range(32):
            for e in range(lane, 16 * rest, 32):
                row, col = r0 + e % 16, REG_COLUMNS + e // 16
                src = ((cols if second else 0) + col) * 32 + row % 32 if have else "zero"
                if (row, col) in copied:
                    assert copied[(row, col)] == src, ("partner warps copy different bytes", row, col)
                copied[(row, col)] = src
                reads = set((r0 + i, c) for i in range(16) for c in range(REG_COLUMNS, cols))
                assert (row, col) in reads, ("a warp copies a chunk it does not read", warp, row, col)
    for key, src in copied.items():
        assert key not in shared, ("a copy overwrites a register column", key)
        shared[key] = src
    for r in range(64):
        g = r // 32
        for c in range(cols):
            want = (g * cols + c) * 32 + r % 32 if g < groups else "zero"
            assert shared.get((r, c)) == want, ("wrong chunk", cols, groups, r, c, shared.get((r, c)), want)
    assert len(shared) == 64 * cols


def main():
    n = 0
    for cols in range(REG_COLUMNS + 1, 65):  # 8-bit rows of 528 .. 1024 bytes
        for groups in (1, 2):
            check(cols, groups)
            n += 1
    print(f"{n} shapes: every chunk of the step in its place (784-byte rows: 49 columns)")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("mismatch:", e)
        sys.exit(1)
