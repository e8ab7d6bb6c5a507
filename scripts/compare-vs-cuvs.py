#!/usr/bin/env python3
"""The side-by-side table of scripts/gpu-bench-vs-cuvs.sh: for each set and n_probes,
ltokit's recall and QPS (device-resident and from the host) beside cuVS's, and the
ratio; then build and first-search times. usage: compare-vs-cuvs.py OUT_DIR"""
import glob
import json
import os
import sys

out = sys.argv[1]
print("| set | batch | n_probes | ltokit scan | ltokit recall | cuVS recall | ltokit QPS (device) | ltokit QPS (host) | cuVS QPS | device / cuVS | host / cuVS |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
builds = []
for path in sorted(glob.glob(os.path.join(out, "ltokit-*.json"))):
    name = os.path.basename(path)[len("ltokit-"):-len(".json")]
    try:
        lt = json.load(open(path))
    except Exception as e:  # a failed run leaves its error beside it
        print(f"| {name} | ltokit failed: {e} | | | | | | | | | |")
        continue
    cu = {}
    cu_res = {}
    cpath = os.path.join(out, f"cuvs-{name}.txt")
    if os.path.exists(cpath):
        for line in open(cpath):
            if line.startswith("RESULT "):
                cu_res = json.loads(line[len("RESULT "):])
        for r in cu_res.get("rows", []):
            cu[r["n_probes"]] = r
    for r in lt["results"]:
        c = cu.get(r["n_probes"], {})
        cq = c.get("qps")
        ratio = lambda x: f"{x / cq:.2f}" if cq else "-"
        print(f"| {name} {lt['dtype']} {lt['rows']}x{lt['dim']} | {r.get('batch', lt['batch'])} | {r['n_probes']} | "
              f"{r.get('scan', 'per-query')} | {r['recall']:.4f} | "
              f"{c.get('recall', float('nan')):.4f} | {r['device_qps']:.0f} | {r['qps']:.0f} | "
              f"{cq or float('nan'):.0f} | {ratio(r['device_qps'])} | {ratio(r['qps'])} |")
    builds.append((name, lt.get("build_s"), lt.get("build_on_device_s"), cu_res.get("build_s"), lt.get("first_search_ms"), cu_res.get("first_search_ms")))
print()
# ltokit's build from the host (upload included), and without the upload (the base
# already on the GPU, as cuVS's build is timed); cuVS's.
print("| set | ltokit build s | ltokit build s, base on the GPU | cuVS build s (base on the GPU) | ltokit first search ms | cuVS first search ms |")
print("|---|---|---|---|---|---|")
for name, lb, ld, cb, lf, cf in builds:
    f = lambda v: f"{v:.2f}" if isinstance(v, (int, float)) else "-"
    print(f"| {name} | {f(lb)} | {f(ld)} | {f(cb)} | {f(lf)} | {f(cf)} |")
