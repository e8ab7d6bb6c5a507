#!/usr/bin/env bash
# Session 7, warp layout experiment: each warp multiplies 16 step rows (A) by its half of
# the tile's queries (B), so 3xTF32 splits a row block once per k step for all products
# (before: 8 rows by every query block, every query fragment split by every warp). A/B
# against the previous build in the same call; the list-major GPU test on the new one.
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/w; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 lowdim-f16 images > $w/data.txt 2>&1
for set in lowdim:1024:10,20,50 lowdim-i8:1024:10,20 lowdim-f16:1024:10,20 images:256:5,10; do
  IFS=: read -r name lists probes <<< "$set"
  for bin in ltokit-prev ltokit ltokit-prev ltokit; do
    timeout 60 gpu-run/bin/$bin ivf bench --k 10 --json --reps 5 --cache-dir /tmp/c-$bin --lists $lists --base $d/$name/base.npy --queries $d/$name/queries.npy --probes $probes --batch 10000,1000 --scan list-major > $w/lm-$name-$bin.json 2> $w/lm-$name-$bin.err
    cp $w/lm-$name-$bin.json $w/lm-$name-$bin-$SECONDS.json
  done
done
echo "A/B at $SECONDS s" >> $w/times.txt
( timeout $((560 - SECONDS)) gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major_tiles ) > $w/tests.txt 2>&1
echo "test at $SECONDS s" >> $w/times.txt
rm -rf /tmp/bench-data
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
for f in $w/lm-*-[0-9]*.json; do echo "$(basename $f)"; python3 -c "
import json
j=json.load(open('$f'))
for r in j['results']: print(' ',r['batch'],r['n_probes'],round(r['recall'],4),int(r['device_qps']), {k:round(v*1e3,3) for k,v in r['stages'].items() if k=='scan_s'})
"; done
grep -E "^test |test result|panicked|checked" $w/tests.txt | cut -c1-250
cat $w/times.txt
