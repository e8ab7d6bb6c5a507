#!/usr/bin/env bash
set -u
SECONDS=0
o=$OUT; w=/tmp/d; mkdir -p $w
SCANS=per-query,list-major,auto BATCH=1000 timeout 120 bash scripts/gpu-bench-vs-cuvs.sh $w/vs1k lowdim:1024:5,10,20,50 lowdim-i8:1024:10,20 lowdim-f16:1024:10,20 > $w/vs1k.log 2>&1
echo "vs1k at $SECONDS s" >> $w/times.txt
( timeout $((400 - SECONDS)) gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture --skip list_major_tiles ) > $w/tests.txt 2>&1
echo "tests at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/d.tgz . && cd - > /dev/null
cat $w/vs1k/summary.md | head -30
grep -E "^test |test result|panicked|checked|named|device-resident|switched|match" $w/tests.txt | cut -c1-250
cat $w/times.txt
