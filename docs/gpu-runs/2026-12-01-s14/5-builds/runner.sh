#!/usr/bin/env bash
# Session 14: index builds and first searches re-timed with the embedded bundle equal to
# the checked-in one (ltokit-build provides the prebuilt bundle where it is fresh), from a
# cold cache holding only the build's plans (scripts/cold-cache.sh), as the grid does.
set -u
mkdir -p gpu-run/bin; tar xJf gpu-run/bins-b.tar.xz -C gpu-run/bin
d=/tmp/bench-data; python3 scripts/make-bench-data.py $d lowdim lowdim-f16 lowdim-i8 images wide-f16 wide-i8 > /dev/null 2>&1
source scripts/cold-cache.sh
for s in lowdim:1024:20 lowdim-f16:1024:20 lowdim-i8:1024:20 images:256:5 wide-f16:512:20 wide-i8:512:20; do
  IFS=: read -r name lists probes <<< "$s"
  for batch in 10000 1000; do
    cold_cache /tmp/cc-$name
    LTOKIT_LOG=ltokit=debug gpu-run/bin/ltokit ivf bench --base $d/$name/base.npy --queries $d/$name/queries.npy \
      --lists $lists --probes $probes --k 10 --batch $batch --scan auto --json --reps 3 --cache-dir /tmp/cc-$name > $OUT/$name-$batch.json 2> /tmp/$name-$batch.err
    unset CUDA_CACHE_PATH
    python3 -c "
import json; d=json.load(open('$OUT/$name-$batch.json')); r=d['results'][0] if d.get('results') else {}
print('$name', $batch, 'build_s %.3f' % d['build_s'], 'on_device_s %.3f' % d['build_on_device_s'], 'first_search_ms %.2f' % d['first_search_ms'], {k: round(v,3) for k,v in d['build_breakdown_s'].items()})"
    grep -c "linked plan=coarse_scores" /tmp/$name-$batch.err | sed "s/^/  score-matrix links: /"
  done
done
