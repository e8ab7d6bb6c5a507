#!/usr/bin/env bash
# Session 8, call 3: the list-major top-k pass sorts and merges a step's candidates at
# once when at least WS_MANY pass (ltokit: 10, ltokit-many4: 4) instead of inserting each;
# A/B against the previous build in the same call; then the list-major and split-list GPU
# tests on the WS_MANY = 10 build.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/w; mkdir -p $w
export CUDA_CACHE_PATH=/tmp/nvc
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 lowdim-f16 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
for set in lowdim:1024:10,20,50 lowdim-i8:1024:10,20 lowdim-f16:1024:10,20 images:256:5,10; do
  IFS=: read -r name lists probes <<< "$set"
  for bin in ltokit-prev ltokit ltokit-many4 ltokit-prev ltokit ltokit-many4; do
    timeout 60 gpu-run/bin/$bin ivf bench --k 10 --json --reps 5 --cache-dir /tmp/c-$bin --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000,1000 --scan list-major > $w/lm-$name-$bin.json 2> $w/lm-$name-$bin.err
    cp $w/lm-$name-$bin.json $w/lm-$name-$bin-$SECONDS.json
  done
done
echo "A/B at $SECONDS s" >> $w/times.txt
( timeout $((580 - SECONDS)) gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major_tiles small_batches_cut device_resident ) > $w/tests.txt 2>&1
echo "tests at $SECONDS s" >> $w/times.txt
rm -rf /tmp/bench-data
rm -f $w/lm-*-ltokit{,-prev,-many4}.json
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
python3 - <<'PY'
import json, glob, re, collections
rows = collections.defaultdict(list)
for f in sorted(glob.glob('/tmp/w/lm-*-[0-9]*.json')):
    m = re.match(r'/tmp/w/lm-(.*)-(ltokit(?:-prev|-many4)?)-\d+\.json', f)
    j = json.load(open(f))
    for r in j['results']:
        rows[(m.group(1), r['batch'], r['n_probes'])].append((m.group(2), int(r['device_qps']), round(r['recall'], 4)))
for key, v in rows.items():
    by = collections.defaultdict(list)
    for b, q, rc in v: by[b].append(q)
    print(key, {b: q for b, q in by.items()}, 'recall', sorted(set(rc for _, _, rc in v)))
PY
grep -E "^test |test result|panicked|checked" $w/tests.txt | cut -c1-250
cat $w/times.txt
