#!/usr/bin/env bash
# Session 10, call 8: the first search with its kernels linked while the context is
# created (LinkAhead, the CLI's bench and search) against the build before it (prev), two
# rounds, empty caches (scripts/cold-cache.sh: only the build's plans); the link-ahead
# GPU test.
set -u
SECONDS=0
o=$OUT; w=/tmp/f; d=/tmp/bench-data; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-f16 lowdim-i8 images > $w/data.txt 2>&1 &
( timeout 100 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture kernels_linked_ahead ) > $w/tests.txt 2>&1
wait
echo "data+test at $SECONDS s" >> $w/times.txt
source gpu-run/cold-cache.sh
for round in 1 2; do
for bin in prev new; do
  exe=gpu-run/bin/ltokit; [ $bin = prev ] && exe=gpu-run/bin/ltokit-prev
  for s in lowdim:1024:10 lowdim-f16:1024:10 lowdim-i8:1024:10 images:256:2; do
    IFS=: read -r name lists probes <<< "$s"
    cache=/tmp/ltokit-first-$name
    cold_cache "$cache" || continue
    LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug timeout 60 $exe ivf bench --k 10 --json --reps 1 --cache-dir "$cache" \
      --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 --scan auto \
      > $w/first-$name-$bin-$round.json 2> $w/first-$name-$bin-$round.err
    unset CUDA_CACHE_PATH
  done
  echo "$bin $round at $SECONDS s" >> $w/times.txt
done; done
cd $w && tar czf $o/f.tgz --exclude='*/nv' . && cd - > /dev/null
grep -E "^test |test result|panicked|linked ahead" $w/tests.txt | cut -c1-200
python3 - <<'PY'
import json, glob
for f in sorted(glob.glob('/tmp/f/first-*.json')):
    try: j = json.load(open(f))
    except Exception as e: print(f, e); continue
    print(f.split('/')[-1][6:-5], 'context', round(j['context_s'],3), 'build', round(j['build_s'], 3), 'first', round(j['first_search_ms'], 1), 'ms')
PY
cat $w/times.txt
