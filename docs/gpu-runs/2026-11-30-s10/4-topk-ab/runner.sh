#!/usr/bin/env bash
# Session 10, call 4: the top-k pass offers the second half only when a slot kept more than 32 rows; A/B against prev and call 3 (c3).
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-f16 lowdim-i8 images > $w/data.txt 2>&1 &
echo skipped > $w/tests.txt
echo "tests exit $? at $SECONDS s" >> $w/times.txt
wait
echo "data at $SECONDS s" >> $w/times.txt
for round in 1 2; do
for bin in prev mid c3 new; do
  exe=gpu-run/bin/ltokit; [ $bin != new ] && exe=gpu-run/bin/ltokit-$bin
  B="$exe ivf bench --k 10 --json --scan list-major --cache-dir /tmp/cb-$bin --reps 3"
  timeout 90 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,20,50 --batch 10000,1000 > $w/i8-$bin-$round.json 2> $w/i8-$bin-$round.err
  timeout 90 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2,5,10,20 --batch 10000,1000 > $w/images-$bin-$round.json 2> $w/images-$bin-$round.err
  timeout 90 $B --lists 1024 --base $d/lowdim-f16/base.npy --queries $d/lowdim-f16/queries.npy --probes 10,20,50 --batch 10000,1000 > $w/f16-$bin-$round.json 2> $w/f16-$bin-$round.err
  timeout 90 $B --lists 1024 --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 5,20,50 --batch 10000,1000 > $w/f32-$bin-$round.json 2> $w/f32-$bin-$round.err
  echo "bench $bin $round at $SECONDS s" >> $w/times.txt
done; done
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
grep -E "^test |test result|panicked|checked" $w/tests.txt | cut -c1-250
python3 - <<'PY'
import json, glob, collections
rows = collections.defaultdict(dict)
for f in sorted(glob.glob('/tmp/w/*-*-[12].json')):
    name = f.split('/')[-1][:-5]; s, b, r = name.rsplit('-', 2)
    try: j = json.load(open(f))
    except Exception as e: print(f, e); continue
    for x in j['results']:
        rows[(s, x['batch'], x['n_probes'])][(b, r)] = (int(x['device_qps']), round(x['recall'], 4), x['stages']['scan_s']*1e3)
for key, v in rows.items():
    print(key, '  '.join(f"{b}{r}:{val[0]/1e6:.2f}M/{val[2]:.3f}ms" for (b, r), val in sorted(v.items())), ' recall', sorted(set(val[1] for val in v.values())))
PY
cat $w/times.txt
