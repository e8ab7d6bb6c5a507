#!/usr/bin/env bash
# The f32 list-major tile both ways (3xTF32 tensor cores and CUDA-core FMA) in one run on
# the GPU machine, then auto, then the list-major and per-query GPU tests. Run from the
# repository root there with gpu-run/ carried (scripts/gpu-build.sh; copy
# scripts/make-bench-data.py into gpu-run/). Writes OUT_DIR/{lm-*.json,auto.json,tests.txt}.
#
# usage: bash scripts/gpu-f32-tile.sh OUT_DIR
set -u
out=${1:?usage: gpu-f32-tile.sh OUT_DIR}
mkdir -p "$out"
d=/tmp/bench-data
[[ -f $d/lowdim/base.npy ]] || python3 gpu-run/make-bench-data.py $d lowdim > "$out/data.txt" 2>&1
B="gpu-run/bin/ltokit ivf bench --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --lists 1024 --k 10 --json --reps 3 --cache-dir /tmp/ltokit-f32-tile-cache"
for t in tensor-cores cuda-cores; do
  timeout 120 $B --probes 2,5,10,20,50,100 --batch 10000,1000 --scan list-major --f32-tile $t > "$out/lm-$t.json" 2> "$out/lm-$t.err"
done
timeout 120 $B --probes 2,5,20,100 --batch 10000,1000 --scan auto > "$out/auto.json" 2> "$out/auto.err"
timeout 400 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture \
  list_major every_variant device_resident small_batches_cut auto_takes > "$out/tests.txt" 2>&1
grep -E "^test |test result|checked|device-resident|switched" "$out/tests.txt"
