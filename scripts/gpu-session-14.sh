#!/usr/bin/env bash
# One device call for issue 14: every GPU test (the IVF kernels now hold one kernel per
# top-k capacity), then the provider checks and the size report. Logs under $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/ltokit-out}
mkdir -p "$OUT"
OUT=$OUT bash scripts/gpu-run.sh > "$OUT/gpu-run.txt" 2>&1
tail -30 "$OUT/gpu-run.txt"
bash scripts/gpu-providers.sh "$OUT/providers" > "$OUT/providers.txt" 2>&1
cat "$OUT/providers.txt" | head -150
tar czf "$OUT/providers.tgz" -C "$OUT" providers && rm -rf "$OUT/providers"
