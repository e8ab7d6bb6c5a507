#!/usr/bin/env bash
# Session 6, call E (last device minutes): the store/ldmatrix/register-top-k changes —
# list-major and latency figures, then the GPU tests that cover them, in priority order.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/e; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 > $w/data.txt 2>&1
B="gpu-run/bin/ltokit ivf bench --k 10 --json --reps 3 --cache-dir /tmp/ce --lists 1024"
timeout 40 $B --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 10,20 --batch 10000 --scan list-major > $w/lm-lowdim.json 2> $w/lm-lowdim.err
timeout 30 $B --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,20 --batch 10000 --scan list-major > $w/lm-lowdim-i8.json 2> $w/lm-lowdim-i8.err
timeout 30 $B --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 20 --batch 1,100 --scan auto > $w/latency.json 2> $w/latency.err
echo "bench at $SECONDS s" >> $w/times.txt
T="gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture"
( timeout $((200 - SECONDS)) $T list_major_tiles ) > $w/tests-1.txt 2>&1
echo "list-major test at $SECONDS s" >> $w/times.txt
( timeout $((210 - SECONDS)) $T large_batches small_batches ) > $w/tests-2.txt 2>&1
echo "coarse/split tests at $SECONDS s" >> $w/times.txt
( timeout $((222 - SECONDS)) $T every_variant ) > $w/tests-3.txt 2>&1
echo "every_variant at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/e.tgz . && cd - > /dev/null
for f in $w/lm-*.json $w/latency.json; do python3 -c "
import json
j=json.load(open('$f'))
for r in j['results']: print(r['batch'],r['scan'],r.get('list_major_tile'),r['n_probes'],round(r['recall'],4),int(r['device_qps']),round(r.get('device_call_ms',0),3))
" 2>&1 | tail -4; done
grep -hE "^test |test result|panicked|checked|match" $w/tests-*.txt | cut -c1-250
cat $w/times.txt
