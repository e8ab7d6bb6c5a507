#!/usr/bin/env bash
# Session 7, grid call: cuVS 26.10 and ltokit side by side on the same files in one call,
# batches 1,000 / 10,000 / 100,000, per-query, list-major and auto (scripts/gpu-bench-vs-cuvs.sh).
set -u
SECONDS=0
o=$OUT; w=/tmp/g; mkdir -p $w
mkdir -p /root/cuvs && cp gpu-run/cuvs-p5 /root/cuvs/p5
ls /root/cuvs > $w/chunks.txt
ls -la ~/.nv 2>&1 > $w/nv-before.txt
SCANS=per-query,list-major,auto BATCH=10000 timeout 260 bash scripts/gpu-bench-vs-cuvs.sh $w/b10k \
  lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 > $w/b10k.log 2>&1
echo "10k at $SECONDS s" >> $w/times.txt
SCANS=per-query,list-major,auto BATCH=1000 timeout $((440 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $w/b1k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20 lowdim-i8:1024:10,20 images:256:2,5,10 > $w/b1k.log 2>&1
echo "1k at $SECONDS s" >> $w/times.txt
SCANS=per-query,list-major,auto BATCH=100000 timeout $((585 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $w/b100k \
  lowdim-q100000:1024:10,20,50 lowdim-i8-q100000:1024:10,20 > $w/b100k.log 2>&1
echo "100k at $SECONDS s" >> $w/times.txt
rm -rf /tmp/bench-data
cd $w && tar czf $o/g.tgz --exclude='*/nv' . && cd - > /dev/null
for b in b10k b1k b100k; do echo "== $b"; cat $w/$b/summary.md 2>/dev/null | cut -c1-200; tail -3 $w/$b.log; done
cat $w/times.txt
