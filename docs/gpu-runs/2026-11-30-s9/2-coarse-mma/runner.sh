#!/usr/bin/env bash
# Session 9, call 2: the coarse score matrix on the tensor cores (3xTF32) and the bounded
# selection — GPU tests of the coarse search, k-means and device-resident search; A/B of
# prev (main) vs new vs new + 3 list-major blocks an SM (lb3), two rounds; ncu kernel times.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
export PATH=$PATH:/usr/local/cuda/bin
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 images > $w/data.txt 2>&1 &
( timeout 240 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture large_batches small_batches_split an_index_built device_resident probing_every_list a_non_finite ) > $w/tests.txt 2>&1
echo "tests exit $? at $SECONDS s" >> $w/times.txt
wait
echo "data at $SECONDS s" >> $w/times.txt
for round in 1 2; do
for bin in prev ltokit lb3; do
  exe=gpu-run/bin/ltokit-$bin; [ $bin = ltokit ] && exe=gpu-run/bin/ltokit
  B="$exe ivf bench --k 10 --json --cache-dir /tmp/cb-$bin"
  timeout 90 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2,10 --batch 10000,1000 --reps 3 > $w/images-$bin-$round.json 2> $w/images-$bin-$round.err
  timeout 90 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,50 --batch 10000,1000 --reps 3 > $w/i8-$bin-$round.json 2> $w/i8-$bin-$round.err
  timeout 90 $B --lists 1024 --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 10,50 --batch 10000,1000 --reps 3 > $w/f32-$bin-$round.json 2> $w/f32-$bin-$round.err
  echo "bench $bin $round at $SECONDS s" >> $w/times.txt
done; done
B="gpu-run/bin/ltokit ivf bench --k 10 --json --cache-dir /tmp/cb-ltokit"
for s in images:256:2 lowdim-i8:1024:10; do
  IFS=: read -r name lists probes <<< "$s"
  timeout 80 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum -k regex:"ivf_(coarse|lmscan|group|merge)" --csv $B --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000,1000 --reps 1 > $w/ncu-time-$name.csv 2> $w/ncu-time-$name.err
done
echo "ncu at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
grep -E "^test |test result|panicked|match|built|named" $w/tests.txt | cut -c1-250
python3 - <<'PY'
import json, glob, collections
rows = collections.defaultdict(dict)
for f in sorted(glob.glob('/tmp/w/*-*-[12].json')):
    name = f.split('/')[-1][:-5]; s, b, r = name.rsplit('-', 2)
    try: j = json.load(open(f))
    except Exception as e: print(f, e); continue
    print(s, b, r, 'build', round(j.get('build_s', 0), 3))
    for x in j['results']:
        rows[(s, x['batch'], x['n_probes'])][(b, r)] = (int(x['device_qps']), round(x['recall'], 4), {k: round(v*1e3, 3) for k, v in x['stages'].items() if k != 'batches'})
for key, v in rows.items():
    print(key)
    for (b, r), val in sorted(v.items()): print('   ', b, r, val)
PY
python3 - <<'PY'
import csv, collections
for s in ['images','lowdim-i8']:
    try: rows = list(csv.reader(l for l in open('/tmp/w/ncu-time-%s.csv' % s) if l.startswith('"')))
    except Exception as e: print(s, e); continue
    h = rows[0]; ki = h.index('Kernel Name'); vi = h.index('Metric Value'); gi = h.index('Grid Size')
    agg = collections.OrderedDict()
    for r in rows[1:]:
        agg.setdefault((r[ki].split('(')[0], r[gi]), []).append(float(r[vi].replace(',', '')))
    print('==', s)
    for (n, g), v in agg.items():
        if len(v) < 5: continue
        v.sort(); print(' ', n, g, len(v), 'median us', round(v[len(v)//2]/1e3, 1))
PY
cat $w/times.txt
