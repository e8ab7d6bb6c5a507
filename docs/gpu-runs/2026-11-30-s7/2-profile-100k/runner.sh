#!/usr/bin/env bash
# Session 7, call 2: first search (timed before anything else links), per-kernel times
# and source counters of the 10,000-query search, f16 list-major, a 100,000-query batch.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/r2; mkdir -p $w
export PATH=$PATH:/usr/local/cuda/bin
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 lowdim-f16 images lowdim-q100000 > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
gpu-run/bin/ltokit bundle inspect gpu-run/ivf.ltkb | grep -o 'plan [^ ]*' | cut -d' ' -f2 \
  | grep -E '^(kmeans_[a-z]+|coarse_scores_[a-z0-9]+|coarse_c1_[a-z0-9]+|coarse_select_c1)$' > $w/build-plans.txt
for set in lowdim:1024:5 lowdim-i8:1024:10 images:256:2; do
  IFS=: read -r name lists probes <<< "$set"
  c=/tmp/cold-$name; rm -rf $c
  gpu-run/bin/ltokit warmup --bundle gpu-run/ivf.ltkb --arch native --plans $w/build-plans.txt --cache-dir $c > $w/warm-$name.json 2>&1
  LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug timeout 60 gpu-run/bin/ltokit ivf bench --k 10 --json --reps 3 --cache-dir $c --lists $lists \
    --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000 --scan auto > $w/first-$name.json 2> $w/first-$name.err
done
echo "first search at $SECONDS s" >> $w/times.txt
B="gpu-run/bin/ltokit ivf bench --lists 1024 --k 10 --cache-dir /tmp/cb"
for s in lowdim lowdim-i8; do
  timeout 80 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum -k regex:"ivf_(coarse|lmscan|group|merge)" --csv $B --base $d/$s/base.npy --queries $d/$s/queries.npy --probes 10,20 --batch 10000 --reps 1 --scan list-major > $w/ncu-time-$s.csv 2> $w/ncu-time-$s.err
done
echo "ncu times at $SECONDS s" >> $w/times.txt
for s in lowdim-i8 lowdim; do
  timeout 100 ncu --section SourceCounters --section WarpStateStats --section InstructionStats --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:ivf_lmscan --launch-skip 2 --launch-count 1 -o $w/src-$s $B --base $d/$s/base.npy --queries $d/$s/queries.npy --probes 20 --batch 10000 --reps 1 --scan list-major > $w/ncu-src-$s.log 2>&1
  ncu -i $w/src-$s.ncu-rep --page source --csv --print-source sass > $w/sass-$s.csv 2>&1
  ncu -i $w/src-$s.ncu-rep --page details > $w/details-$s.txt 2>&1
  echo "ncu $s at $SECONDS s" >> $w/times.txt
done
rm -f $w/*.ncu-rep
timeout 60 $B --base $d/lowdim-f16/base.npy --json --queries $d/lowdim-f16/queries.npy --probes 10,20 --batch 10000 --reps 3 --scan list-major > $w/lm-f16.json 2> $w/lm-f16.err
timeout 120 $B --base $d/lowdim-q100000/base.npy --json --queries $d/lowdim-q100000/queries.npy --probes 10,20 --batch 100000,10000 --reps 3 --scan auto > $w/b100k.json 2> $w/b100k.err
echo "f16 + 100k at $SECONDS s" >> $w/times.txt
( timeout 60 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture small_batches_split ) > $w/tests.txt 2>&1
cd $w && tar czf $o/r2.tgz . && cd - > /dev/null
for f in $w/first-*.json $w/lm-f16.json $w/b100k.json; do echo "$(basename $f)"; python3 -c "
import json
j=json.load(open('$f'))
print(' build', round(j['build_s'],3), {k:round(v,3) for k,v in j['build_breakdown_s'].items()}, 'first', round(j['first_search_ms'],1))
for r in j['results']: print(' ',r['batch'],r['scan'],r.get('list_major_tile'),r['n_probes'],round(r['recall'],4),int(r['device_qps']),int(r['qps']),round(r.get('device_call_ms',0),3), {k:round(v*1e3,3) for k,v in r['stages'].items()})
" 2>&1 | tail -5; done
sed 's/\x1b\[[0-9;]*m//g' $w/first-*.err | grep -E "linked|k-means|opening" | sed -E 's/ key=Some\([^)]*\)\)//' | cut -c12-200
python3 - <<'PY'
import csv, collections
for s in ['lowdim','lowdim-i8']:
    try: rows = list(csv.reader(l for l in open('/tmp/r2/ncu-time-%s.csv' % s) if l.startswith('"')))
    except Exception as e: print(s, e); continue
    h = rows[0]; ki = h.index('Kernel Name'); vi = h.index('Metric Value'); gi = h.index('Grid Size')
    agg = collections.OrderedDict()
    for r in rows[1:]:
        agg.setdefault((r[ki].split('(')[0], r[gi]), []).append(float(r[vi].replace(',', '')))
    print('==', s)
    for (n, g), v in agg.items():
        v.sort(); print(' ', n, g, len(v), 'median us', round(v[len(v)//2]/1e3, 1))
PY
for s in lowdim-i8 lowdim; do echo "== $s"; python3 scripts/sass-summary.py $w/sass-$s.csv 25 2>&1 | head -60; done
grep -E "Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Instructions  " $w/details-*.txt | head -20
grep -E "^test |test result|panicked|checked" $w/tests.txt
cat $w/times.txt
