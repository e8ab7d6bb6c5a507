#!/usr/bin/env bash
# Session 6, call A1: latency after the coarse/scan/merge changes (sort merge, finer
# coarse splits, unrolled loads), per-kernel times, and ncu source counters of the
# list-major kernels for i8, f16, f32 at 20 probes.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/a1; mkdir -p $w
export PATH=$PATH:/usr/local/cuda/bin
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 lowdim-f16 > $w/data.txt 2>&1
python3 -c "
import numpy as np
q = np.load('$d/lowdim/queries.npy'); np.save('/tmp/q200.npy', q[:200])"
echo "data ready at $SECONDS s" >> $w/times.txt
B="gpu-run/bin/ltokit ivf bench --lists 1024 --k 10 --cache-dir /tmp/ca"
timeout 90 $B --base $d/lowdim/base.npy --json --queries $d/lowdim/queries.npy --probes 5,20,50 --batch 1,10,100 --scan auto > $w/latency.json 2> $w/latency.err
echo "latency at $SECONDS s" >> $w/times.txt
for s in lowdim lowdim-i8 lowdim-f16; do
  timeout 90 $B --base $d/$s/base.npy --json --queries $d/$s/queries.npy --probes 5,20,50 --batch 10000,1000 --scan auto --reps 3 > $w/auto-$s.json 2> $w/auto-$s.err
done
echo "auto at $SECONDS s" >> $w/times.txt
timeout 100 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum -k regex:"ivf_(coarse|scan_c|merge|lmscan)" --csv $B --base $d/lowdim/base.npy --queries /tmp/q200.npy --probes 20 --batch 1,100 --reps 1 > $w/ncu-latency.csv 2> $w/ncu-latency.err
echo "ncu latency at $SECONDS s" >> $w/times.txt
for s in lowdim-i8 lowdim-f16 lowdim; do
  timeout 100 ncu --section SourceCounters --section WarpStateStats --section InstructionStats --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:ivf_lmscan --launch-count 1 -o $w/src-$s $B --base $d/$s/base.npy --queries $d/$s/queries.npy --probes 20 --batch 10000 --reps 1 --scan list-major > $w/ncu-src-$s.log 2>&1
  ncu -i $w/src-$s.ncu-rep --page source --csv --print-source sass > $w/sass-$s.csv 2>&1
  ncu -i $w/src-$s.ncu-rep --page details > $w/details-$s.txt 2>&1
  echo "ncu $s at $SECONDS s" >> $w/times.txt
done
rm -f $w/*.ncu-rep
cd $w && tar czf $o/a1.tgz . && cd - > /dev/null
for f in $w/latency.json $w/auto-*.json; do echo "== $f"; python3 -c "
import json
j=json.load(open('$f'))
for r in j['results']:
  st=r.get('stages',{})
  print(r['batch'],r['scan'],r.get('list_major_tile'),r['n_probes'],round(r['recall'],4),int(r['device_qps']),int(r['qps']),round(r.get('device_call_ms',0),3), {k:round(v*1e3,3) for k,v in st.items()})
" 2>&1 | tail -12; done
python3 - <<'PY'
import csv, collections
rows = list(csv.reader(l for l in open('/tmp/a1/ncu-latency.csv') if l.startswith('"')))
h = rows[0]; ki = h.index('Kernel Name'); vi = h.index('Metric Value'); gi = h.index('Grid Size')
seq = [(r[ki], r[gi], float(r[vi].replace(',', ''))) for r in rows[1:]]
agg = collections.OrderedDict()
for n, g, v in seq[-600:]:
    agg.setdefault((n, g), []).append(v)
for (n, g), v in agg.items():
    v.sort(); print(n, g, len(v), 'median ns', v[len(v)//2])
PY
grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Instructions  |Block Limit|Dynamic Shared" $w/details-*.txt | head -60
cat $w/times.txt
