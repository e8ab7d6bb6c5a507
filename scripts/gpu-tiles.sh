#!/usr/bin/env bash
# The list-major tiles both ways (mma.sync and the portable FMA/WMMA tiles) on the lowdim
# sets in every type, in one run on the GPU machine, then auto, then the list-major and
# per-query GPU tests. Run from the repository root there with gpu-run/ carried
# (scripts/gpu-build.sh; copy scripts/make-bench-data.py into gpu-run/). Writes
# OUT_DIR/{lm-SET-TILE.json,auto-SET.json,tests.txt}.
#
# usage: bash scripts/gpu-tiles.sh OUT_DIR [SET ...]   (default: lowdim lowdim-f16 lowdim-i8)
set -u
out=${1:?usage: gpu-tiles.sh OUT_DIR [SET ...]}
shift
sets=("$@")
[[ ${#sets[@]} -gt 0 ]] || sets=(lowdim lowdim-f16 lowdim-i8)
mkdir -p "$out"
d=/tmp/bench-data
python3 gpu-run/make-bench-data.py $d "${sets[@]}" > "$out/data.txt" 2>&1
for s in "${sets[@]}"; do
  B="gpu-run/bin/ltokit ivf bench --base $d/$s/base.npy --queries $d/$s/queries.npy --lists 1024 --k 10 --json --reps 3 --cache-dir /tmp/ltokit-tiles-cache"
  for t in mma portable; do
    timeout 120 $B --probes 2,5,10,20,50 --batch 10000,1000 --scan list-major --tile $t > "$out/lm-$s-$t.json" 2> "$out/lm-$s-$t.err"
  done
  timeout 120 $B --probes 2,5,20,50 --batch 10000,1000 --scan auto > "$out/auto-$s.json" 2> "$out/auto-$s.err"
done
timeout 400 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture \
  list_major every_variant device_resident small_batches auto_takes > "$out/tests.txt" 2>&1
grep -E "^test |test result|checked|device-resident|switched" "$out/tests.txt"
