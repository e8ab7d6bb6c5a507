#!/usr/bin/env bash
# Session 9, call 8: the tensor-core score matrix loading centres as 16-byte vectors when
# the dimension is divisible by 4; A/B against a41e281 (prev), two rounds; the score-matrix
# GPU test (both loads, both arithmetics).
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 images > $w/data.txt 2>&1 &
( timeout 120 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture large_batches ) > $w/tests.txt 2>&1
echo "tests exit $? at $SECONDS s" >> $w/times.txt
wait
for round in 1 2; do
for bin in prev ltokit; do
  exe=gpu-run/bin/ltokit-$bin; [ $bin = ltokit ] && exe=gpu-run/bin/ltokit
  B="$exe ivf bench --k 10 --json --cache-dir /tmp/cb-$bin"
  timeout 60 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2,10 --batch 10000,1000 --reps 3 > $w/images-$bin-$round.json 2> $w/images-$bin-$round.err
  timeout 60 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10 --batch 10000,1000 --reps 3 > $w/i8-$bin-$round.json 2> $w/i8-$bin-$round.err
  timeout 60 $B --lists 1024 --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 10 --batch 10000,1000 --reps 3 > $w/f32-$bin-$round.json 2> $w/f32-$bin-$round.err
  echo "bench $bin $round at $SECONDS s" >> $w/times.txt
done; done
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
grep -E "^test |test result|panicked" $w/tests.txt | cut -c1-250
python3 - <<'PY'
import json, glob, collections
rows = collections.defaultdict(dict)
for f in sorted(glob.glob('/tmp/w/*-*-[12].json')):
    name = f.split('/')[-1][:-5]; s, b, r = name.rsplit('-', 2)
    try: j = json.load(open(f))
    except Exception as e: print(f, e); continue
    for x in j['results']:
        rows[(s, x['batch'], x['n_probes'])][(b, r)] = (int(x['device_qps']), round(x['recall'], 4), round(x['stages']['coarse_s']*1e3, 3))
for key, v in rows.items():
    print(key, '  '.join(f"{b}{r}:{val[0]/1e6:.2f}M/c{val[2]}" for (b, r), val in sorted(v.items())), ' recall', sorted(set(val[1] for val in v.values())))
PY
cat $w/times.txt
