#!/usr/bin/env bash
# Session 7, last call: auto on 784-wide u8 at batch 1,000 after the rule change (against
# both scans), then every IVF GPU test on the final build.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/v; mkdir -p $w
python3 gpu-run/make-bench-data.py $d images lowdim > $w/data.txt 2>&1
B="gpu-run/bin/ltokit ivf bench --k 10 --json --reps 5 --cache-dir /tmp/cv"
timeout 90 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2,5,10 --batch 1000,10000 --scan per-query,list-major,auto > $w/images-auto.json 2> $w/images-auto.err
timeout 60 $B --lists 1024 --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 20 --batch 1,10,100,1000 --scan auto > $w/latency.json 2> $w/latency.err
echo "bench at $SECONDS s" >> $w/times.txt
timeout $((560 - SECONDS)) bash scripts/gpu-validate.sh $w/validate > $w/validate.log 2>&1
echo "validate at $SECONDS s" >> $w/times.txt
rm -rf /tmp/bench-data
cd $w && tar czf $o/v.tgz . && cd - > /dev/null
for f in $w/images-auto.json $w/latency.json; do echo "$(basename $f)"; python3 -c "
import json
j=json.load(open('$f'))
for r in j['results']: print(' ',r['batch'],r['scan'],r.get('list_major_tile'),r['n_probes'],round(r['recall'],4),int(r['device_qps']),int(r['qps']),round(r.get('device_call_ms',0),3))
"; done
cat $w/validate.log | cut -c1-250
cat $w/times.txt
