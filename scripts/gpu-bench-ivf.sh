#!/usr/bin/env bash
# IVF-Flat benchmarks on the GPU machine (gpu-run/ from gpu-build.sh). Writes into $1.
#   f32 1M x 128, 1024 lists, k = 10, batch 10,000, n_probes 10..100 (the cuVS table)
#   f16, i8, u8 at 20 probes (the data-type ratios)
#   latency: 1 query and 100 queries per call at 20 probes
#   first search in a fresh process: empty kernel cache (3 processes), warm (3 processes)
set -uo pipefail
out=${1:?usage: gpu-bench-ivf.sh OUT_DIR}
mkdir -p "$out"
L=gpu-run/bin/ltokit
C=/tmp/ivf-bench-cache
common="--lists 1024 --k 10 --cache-dir $C --json"
$L ivf bench --base synthetic:1000000:128:f32 --queries synthetic:10000 --probes 10,20,30,50,100 --batch 10000 $common > "$out/f32.json"
for t in f16 i8 u8; do
  $L ivf bench --base synthetic:1000000:128:$t --queries synthetic:10000 --probes 20 --batch 10000 --reps 5 $common > "$out/$t.json"
done
$L ivf bench --base synthetic:1000000:128:f32 --queries synthetic:1000 --probes 20 --batch 100 --reps 3 $common > "$out/latency-b100.json"
$L ivf bench --base synthetic:1000000:128:f32 --queries synthetic:300 --probes 20 --batch 1 --reps 3 $common > "$out/latency-b1.json"
$L ivf build --base synthetic:1000000:128:f32 --lists 1024 -o /tmp/bench.ltkivf --cache-dir $C > "$out/first-search.txt"
for i in 1 2 3; do
  rm -rf /tmp/ivf-cold-$i
  echo "cold $i: $($L ivf search --index /tmp/bench.ltkivf --queries synthetic:10000:128 --k 10 --probes 20 --cache-dir /tmp/ivf-cold-$i)" >> "$out/first-search.txt"
done
for i in 1 2 3; do
  echo "warm $i: $($L ivf search --index /tmp/bench.ltkivf --queries synthetic:10000:128 --k 10 --probes 20 --cache-dir $C)" >> "$out/first-search.txt"
done
python3 - "$out" > "$out/summary.txt" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for f in sorted(out.glob("*.json")):
    d = json.loads(f.read_text())
    print(f"{f.name}: {d['rows']}x{d['dim']} {d['dtype']} q={d['queries']} batch={d['batch']} build {d['build_s']:.2f}s truth {d['ground_truth_s']:.2f}s first search {d['first_search_ms']:.1f}ms links {d['cache']['links']} l2hits {d['cache']['l2_hits']}")
    for r in d["results"]:
        print(f"   probes {r['n_probes']:>3}: recall {r['recall']:.4f}  {r['median_ms']:8.2f} ms  {r['qps']:10.0f} QPS  {r['scanned_gb_per_s']:7.0f} GB/s scanned")
print((out / "first-search.txt").read_text())
PY
cat "$out/summary.txt"
