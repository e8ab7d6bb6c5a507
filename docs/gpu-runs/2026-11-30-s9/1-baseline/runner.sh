#!/usr/bin/env bash
# Session 9, call 1: the GPU tests on main (af69b0c: session 8's host-only commits had not
# run on the GPU), the baseline per-stage figures of images / i8 at 1k and 10k, and ncu
# source counters of the list-major scan (i8, 10 probes) and the coarse kernels' times.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
export PATH=$PATH:/usr/local/cuda/bin
python3 gpu-run/make-bench-data.py $d lowdim-i8 images > $w/data.txt 2>&1 &
bash gpu-run/gpu-validate.sh $w/validate > $w/validate.log 2>&1
wait
echo "validate+data at $SECONDS s" >> $w/times.txt
B="gpu-run/bin/ltokit ivf bench --k 10 --json --cache-dir /tmp/cb"
timeout 90 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2,10 --batch 10000,1000 --reps 3 > $w/images.json 2> $w/images.err
timeout 90 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,50 --batch 10000,1000 --reps 3 > $w/i8.json 2> $w/i8.err
echo "bench at $SECONDS s" >> $w/times.txt
for s in images:256:2 lowdim-i8:1024:10; do
  IFS=: read -r name lists probes <<< "$s"
  timeout 80 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum -k regex:"ivf_(coarse|lmscan|group|merge)" --csv $B --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000,1000 --reps 1 > $w/ncu-time-$name.csv 2> $w/ncu-time-$name.err
done
echo "ncu times at $SECONDS s" >> $w/times.txt
timeout 100 ncu --section SourceCounters --section WarpStateStats --section InstructionStats --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:ivf_lmscan --launch-skip 2 --launch-count 1 -o $w/src-i8 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10 --batch 10000 --reps 1 --scan list-major > $w/ncu-src-i8.log 2>&1
ncu -i $w/src-i8.ncu-rep --page source --csv --print-source sass > $w/sass-i8.csv 2>&1
ncu -i $w/src-i8.ncu-rep --page details > $w/details-i8.txt 2>&1
rm -f $w/*.ncu-rep
echo "ncu src at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
grep -E "test result|panicked" $w/validate/tests.txt
for f in images i8; do python3 -c "
import json
j=json.load(open('$w/$f.json'))
for r in j['results']: print('$f',r['batch'],r['scan'],r['n_probes'],round(r['recall'],4),int(r['device_qps']),int(r['qps']),{k:round(v*1e3,3) for k,v in r['stages'].items()})
"; done
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
        v.sort(); print(' ', n, g, len(v), 'median us', round(v[len(v)//2]/1e3, 1))
PY
grep -E "Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Instructions  |Block Limit" $w/details-i8.txt | head -20
cat $w/times.txt
