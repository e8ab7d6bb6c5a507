#!/usr/bin/env bash
# Session 14: why 8-bit and f16 index builds spend 0.2-0.3 s in the assignment (the
# grid's build_breakdown_s): the links and loads during a cold-cache build, logged.
set -u
mkdir -p gpu-run/bin; tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
d=/tmp/bench-data; python3 scripts/make-bench-data.py $d images lowdim > /dev/null 2>&1
source scripts/cold-cache.sh
for name in images images lowdim; do
  cold_cache /tmp/cc-$name
  SECONDS=0
  LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug gpu-run/bin/ltokit ivf bench --base $d/$name/base.npy --queries $d/$name/queries.npy \
    --lists 256 --probes 2 --k 10 --batch 10000 --scan auto --json --reps 1 --cache-dir /tmp/cc-$name > $OUT/$name.json 2> $OUT/$name.err
  unset CUDA_CACHE_PATH
  python3 -c "import json,sys; d=json.load(open('$OUT/$name.json')); print('$name', d['build_s'], d['build_breakdown_s'])"
  grep -iE "linked|load|link" $OUT/$name.err | cut -c1-220 | head -40
done
