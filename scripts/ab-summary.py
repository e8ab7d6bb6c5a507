#!/usr/bin/env python3
"""Summarises an A/B run of `ltokit ivf bench --json` (scripts/gpu-ab.sh makes one):
files named SET-BUILD-ROUND.json (ROUND a digit; SET may contain dashes, BUILD may not)
in one folder, one line per (set, batch, n_probes) with each build's and round's device
QPS and list-major scan time (per 10,000 queries), and the recalls seen — so that builds
measured in the same device call read side by side.

usage: scripts/ab-summary.py FOLDER
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
        )
for key, seen in rows.items():
    cells = "  ".join(
        f"{build}{run}:{qps / 1e6:.2f}M/{scan:.3f}ms" for (build, run), (qps, _, scan) in sorted(seen.items())
    )
    print(key, cells, " recall", sorted({v[1] for v in seen.values()}))
