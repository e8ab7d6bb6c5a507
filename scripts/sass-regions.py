#!/usr/bin/env python3
"""Splits an ncu SASS source page (`ncu -i REP --page source --csv --print-source sass`)
at its block barriers (BAR.*) and prints each region's share of the warp samples and of
the executed instructions, the most executions of one of its instructions (loops show
there), and its commonest opcodes — which phase of a kernel between two barriers costs
what.

usage: scripts/sass-regions.py SASS.csv[.xz]   (logs over 50 KB are kept xz-compressed)
"""
import collections
import csv
import lzma
import sys

path = sys.argv[1]
rows = list(csv.reader((lzma.open if path.endswith(".xz") else open)(path, "rt")))
header = rows[1]
ix = {n: i for i, n in enumerate(header)}
seq = [
    (r[ix["Source"]].strip(), int(r[ix["# Samples"]] or 0), int(r[ix["Instructions Executed"]] or 0))
    for r in rows[2:]
    if len(r) >= len(header)
]
samples = sum(s for _, s, _ in seq)
insts = sum(n for _, _, n in seq)
print("samples", samples, "warp insts", insts)
regions, cur = [], []
for i, (src, s, n) in enumerate(seq):
    cur.append((i, src, s, n))
    if "BAR." in src:
        regions.append(cur)
        cur = []
regions.append(cur)
for reg in regions:
    rs = sum(x[2] for x in reg)
    rn = sum(x[3] for x in reg)
    if rs < samples * 0.005 and rn < insts * 0.005:
        continue
    ops = collections.Counter()
    for _, src, _, n in reg:
        op = src.split()[0] if src else "?"
        if op.startswith("@"):
            op = src.split()[1]
        ops[op.split(".")[0]] += n
    print(
        f"{reg[0][0]:5d}-{reg[-1][0]:5d} samples {rs / samples * 100:5.1f}%  insts {rn / insts * 100:5.1f}%  "
        f"maxexec {max(x[3] for x in reg):9d}  ops {[o for o, _ in ops.most_common(8)]}"
    )
