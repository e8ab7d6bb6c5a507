#!/usr/bin/env bash
# IVF-Flat benchmarks on the GPU machine (gpu-run/ from gpu-build.sh). Writes JSON into $1.
#   f32 1M x 128, 1024 lists, k = 10, batch 10,000, n_probes 10..100 (the cuVS table)
#   f16, i8, u8 at 20 probes (the data-type ratios)
#   latency: 1 query and 100 queries per call at 20 probes
#   first search in a fresh process: empty kernel cache, then warm
set -uo pipefail
out=${1:?usage: gpu-bench-ivf.sh OUT_DIR}
mkdir -p "$out"
L=gpu-run/bin/ltokit
rm -rf /tmp/ivf-cold
$L ivf bench --base synthetic:1000000:128:f32 --queries synthetic:10000 --lists 1024 --probes 10,20,30,50,100 --k 10 --batch 10000 --json --cache-dir /tmp/ivf-cold > "$out/f32.json"
$L ivf bench --base synthetic:1000000:128:f32 --queries synthetic:10000 --lists 1024 --probes 20 --k 10 --batch 10000 --reps 3 --json --cache-dir /tmp/ivf-cold > "$out/f32-warm-cache.json"
for t in f16 i8 u8; do
  $L ivf bench --base synthetic:1000000:128:$t --queries synthetic:10000 --lists 1024 --probes 20 --k 10 --batch 10000 --reps 3 --json --cache-dir /tmp/ivf-cold > "$out/$t.json"
done
$L ivf bench --base synthetic:1000000:128:f32 --queries synthetic:1000 --lists 1024 --probes 20 --k 10 --batch 100 --reps 3 --json --cache-dir /tmp/ivf-cold > "$out/latency-b100.json"
$L ivf bench --base synthetic:1000000:128:f32 --queries synthetic:200 --lists 1024 --probes 20 --k 10 --batch 1 --reps 3 --json --cache-dir /tmp/ivf-cold > "$out/latency-b1.json"
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for f in sorted(out.glob("*.json")):
    try:
        d = json.loads(f.read_text())
    except Exception as e:
        print(f.name, "unreadable", e); continue
    print(f"{f.name}: {d['rows']}x{d['dim']} {d['dtype']} q={d['queries']} batch={d['batch']} build {d['build_s']:.2f}s truth {d['ground_truth_s']:.2f}s first search {d['first_search_ms']:.1f}ms links {d['cache']['links']} l2hits {d['cache']['l2_hits']}")
    for r in d["results"]:
        print(f"   probes {r['n_probes']:>3}: recall {r['recall']:.4f}  {r['median_ms']:8.2f} ms  {r['qps']:10.0f} QPS  {r['scanned_gb_per_s']:7.0f} GB/s scanned")
PY
