#!/usr/bin/env bash
# Session 6, last call: cuVS 26.10 and ltokit side by side (same files, same call), the
# list-major GPU test (every type, mma.sync and portable tiles, against the CPU), latency.
set -u
SECONDS=0
o=$OUT; w=/tmp/c; mkdir -p $w
SCANS=auto BATCH=10000 timeout 300 bash scripts/gpu-bench-vs-cuvs.sh $w/vs10k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 > $w/vs10k.log 2>&1
echo "vs cuVS at $SECONDS s" >> $w/times.txt
( timeout $((545 - SECONDS)) gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major_tiles ) > $w/tests-lm.txt 2>&1
echo "tests at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
if (( SECONDS < 530 )); then
  timeout $((570 - SECONDS)) gpu-run/bin/ltokit ivf bench --k 10 --json --reps 3 --cache-dir /tmp/ltokit-bench-cache --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --lists 1024 --probes 20 --batch 1,10,100,300 --scan auto > $w/latency.json 2> $w/latency.err
fi
echo "latency at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/c.tgz . && cd - > /dev/null
cat $w/vs10k/summary.md 2>/dev/null | head -40
grep -E "^test |test result|panicked|checked" $w/tests-lm.txt | cut -c1-300
python3 -c "
import json
j=json.load(open('$w/latency.json'))
for r in j['results']: print(r['batch'],r['scan'],r.get('list_major_tile'),r['n_probes'],round(r['recall'],4),int(r['device_qps']),round(r.get('device_call_ms',0),3))
" 2>&1 | tail -5
cat $w/times.txt
