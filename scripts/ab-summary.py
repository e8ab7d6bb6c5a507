#!/usr/bin/env python3
"""Summarises an A/B run of `ltokit ivf bench --json` (scripts/gpu-ab.sh makes one):
files named SET-BUILD-ROUND.json (ROUND a digit; SET may contain dashes, BUILD may not)
in one folder, one line per (set, batch, n_probes) with each build's and round's device
QPS, list-major scan time and coarse-search time (per 10,000 queries), and the recalls
seen — so that builds measured in the same device call read side by side; then each build's device and host QPS
as the mean of its rounds, in per cent of build BASE's where one is named.

usage: scripts/ab-summary.py FOLDER [BASE]
"""
import collections
import glob
import json
import sys

rows = collections.defaultdict(dict)
for path in sorted(glob.glob(sys.argv[1] + "/*-*-[0-9].json")):
    name = path.split("/")[-1][:-5]
    dataset, build, run = name.rsplit("-", 2)
    try:
        report = json.load(open(path))
    except (OSError, ValueError) as e:
        print(path, e)
        continue
    for r in report["results"]:
        rows[(dataset, r["batch"], r["n_probes"])][(build, run)] = (
            r["device_qps"],
            round(r["recall"], 4),
            r["stages"]["scan_s"] * 1e3,
            r["qps"],
            r["stages"]["coarse_s"] * 1e3,
        )
for key, seen in rows.items():
    cells = "  ".join(
        f"{build}{run}:{qps / 1e6:.2f}M/{scan:.3f}/{coarse:.3f}ms"
        for (build, run), (qps, _, scan, _, coarse) in sorted(seen.items())
    )
    print(key, cells, " recall", sorted({v[1] for v in seen.values()}))

base = sys.argv[2] if len(sys.argv) > 2 else None
print("\nmeans of the rounds: device QPS / host QPS" + (f", % against {base}" if base else ""))
for key, seen in rows.items():
    means = {}
    for (build, _), (dev, _, _, host, _) in seen.items():
        means.setdefault(build, []).append((dev, host))
    means = {b: (sum(d for d, _ in v) / len(v), sum(h for _, h in v) / len(v)) for b, v in means.items()}
    ref = means.get(base)
    cells = []
    for build, (dev, host) in sorted(means.items()):
        cell = f"{build}:{dev / 1e6:.2f}/{host / 1e6:.2f}M"
        if ref and build != base:
            cell += f"({(dev / ref[0] - 1) * 100:+.1f}/{(host / ref[1] - 1) * 100:+.1f}%)"
        cells.append(cell)
    print(key, "  ".join(cells))
