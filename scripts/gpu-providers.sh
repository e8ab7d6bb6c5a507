#!/usr/bin/env bash
# Providers on the GPU machine (gpu-run/ from gpu-build.sh). Writes logs into $1.
#   1. build an sm_90 provider of the whole IVF bundle, verify and audit it
#   2. no-JIT smoke test: IVF build + search with LTOKIT_JIT=off, no disk cache, only the
#      provider: the cache counters must show zero links
#   3. the audit rejects a CUDA library that carries PTX / other targets
#   4. serving one entry from the cold provider in fresh processes (`ltokit provider read`)
#   5. size report: the bundle vs the same plans ahead of time for libcuvs's 7 architectures
set -uo pipefail
out=${1:?usage: gpu-providers.sh OUT_DIR}
mkdir -p "$out"
L=gpu-run/bin/ltokit
$L provider build --bundle gpu-run/ivf.ltkb --target native -o /tmp/ivf-sm90.ltkp > "$out/provider-build.txt" 2>&1
$L provider verify /tmp/ivf-sm90.ltkp >> "$out/provider-build.txt" 2>&1
$L provider inspect /tmp/ivf-sm90.ltkp >> "$out/provider-build.txt" 2>&1
$L check --targets sm_90 --kinds cubin /tmp/ivf-sm90.ltkp >> "$out/provider-build.txt" 2>&1; echo "check provider: exit $?" >> "$out/provider-build.txt"
$L check --targets sm_90 --kinds cubin /usr/local/cuda/lib64/libcurand.so.10 > "$out/audit-libcurand.txt" 2>&1; echo "check libcurand: exit $?" >> "$out/audit-libcurand.txt"
LTOKIT_JIT=off LTOKIT_CACHE=off LTOKIT_PROVIDER_PATH=/tmp/ivf-sm90.ltkp \
  $L ivf bench --base synthetic:200000:128:f32 --queries synthetic:2000 --lists 256 --probes 8,32 --k 10 --batch 2000 --json > "$out/nojit-smoke.json" 2> "$out/nojit-smoke.err"
echo "smoke exit $?" >> "$out/nojit-smoke.err"
for i in 1 2 3 4 5; do $L provider read /tmp/ivf-sm90.ltkp; done > "$out/provider-read.jsonl" 2>&1
for i in 1 2 3 4 5; do $L provider read /tmp/ivf-sm90.ltkp --plan scan_c16_f32_vmax_l2_none; done >> "$out/provider-read.jsonl" 2>&1
$L size-report --bundle gpu-run/ivf.ltkb --json > "$out/size-report.json" 2> "$out/size-report.err"
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print((out / "provider-build.txt").read_text())
print((out / "audit-libcurand.txt").read_text()[-600:])
print((out / "provider-read.jsonl").read_text())
try:
    d = json.loads((out / "nojit-smoke.json").read_text())
    print("no-JIT smoke:", d["cache"], [(r["n_probes"], r["recall"], round(r["qps"])) for r in d["results"]])
except Exception as e:
    print("smoke failed:", e, (out / "nojit-smoke.err").read_text()[-2000:])
try:
    s = json.loads((out / "size-report.json").read_text())
    print(json.dumps(s, indent=1))
except Exception as e:
    print("size report failed:", e, (out / "size-report.err").read_text()[-2000:])
PY
