#!/usr/bin/env bash
# Where ltokit's IVF-Flat search time goes, on the GPU machine (gpu-run/ carried): per
# set, `ltokit ivf bench` at batch 10,000 with its per-stage clock (coarse / scan /
# merge), the rows each query scans and the bytes per second; and the latency of one
# device-resident call at batch 1 and 100 (20 probes, lowdim). No cuVS here: its figures
# are in BENCHMARKS.md from the side-by-side runs.
#
# usage: bash scripts/gpu-bench-breakdown.sh OUT_DIR
set -uo pipefail
out=${1:?usage: gpu-bench-breakdown.sh OUT_DIR}
mkdir -p "$out"
data=/tmp/bench-data
python3 scripts/make-bench-data.py "$data" lowdim lowdim-f16 lowdim-i8 images clustered > "$out/data.txt" 2>&1 || exit 1
L=gpu-run/bin/ltokit
run() { # NAME LISTS PROBES BATCH TAG
  $L ivf bench --base "$data/$1/base.npy" --queries "$data/$1/queries.npy" --lists "$2" \
    --probes "$3" --k 10 --batch "$4" --json --cache-dir /tmp/ltokit-bench-cache \
    > "$out/$5.json" 2> "$out/$5.err"
}
run lowdim 1024 10,20,50 10000 lowdim
run lowdim-f16 1024 10,20,50 10000 lowdim-f16
run lowdim-i8 1024 10,20,50 10000 lowdim-i8
run images 256 5,20 10000 images
run clustered 2048 10,20,50 10000 clustered
run lowdim 1024 20 1 lowdim-batch1
run lowdim 1024 20 100 lowdim-batch100
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print("| run | n_probes | recall | device QPS | call ms (one batch) | scanned GB/s | rows/query | coarse ms | scan ms | merge ms |")
print("|---|---|---|---|---|---|---|---|---|---|")
for tag in ["lowdim", "lowdim-f16", "lowdim-i8", "images", "clustered", "lowdim-batch1", "lowdim-batch100"]:
    try:
        d = json.loads((out / f"{tag}.json").read_text())
    except Exception as e:
        print(f"| {tag} | failed: {e} {(out / f'{tag}.err').read_text()[-300:]!r} |")
        continue
    for r in d["results"]:
        s = r["stages"]
        print(f"| {tag} | {r['n_probes']} | {r['recall']:.4f} | {r['device_qps']:.0f} | {r['device_call_ms']:.3f} | {r['scanned_gb_per_s']:.0f} | {r['rows_per_query']:.0f} | {s['coarse_s']*1e3:.2f} | {s['scan_s']*1e3:.2f} | {s['merge_s']*1e3:.2f} |")
PY
