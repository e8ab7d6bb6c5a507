#!/usr/bin/env bash
# Session 11, call 1: deferred top-k offers (LM_CAND_CAP 80 = new, 96 = c96) against main (prev),
# two rounds; then the list-major GPU tests on the new build.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/d; mkdir -p $w
python3 gpu-run/make-bench-data.py $d lowdim lowdim-f16 lowdim-i8 images > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
for round in 1 2; do
for bin in prev new c96; do
  exe=gpu-run/bin/ltokit; [ $bin != new ] && exe=gpu-run/bin/ltokit-$bin
  B="$exe ivf bench --k 10 --json --scan list-major --cache-dir /tmp/cb-$bin --reps 3"
  timeout 90 $B --lists 1024 --base $d/lowdim-i8/base.npy --queries $d/lowdim-i8/queries.npy --probes 10,20,50 --batch 10000,1000 > $w/i8-$bin-$round.json 2> $w/i8-$bin-$round.err
  timeout 90 $B --lists 256 --base $d/images/base.npy --queries $d/images/queries.npy --probes 2,5,10,20 --batch 10000,1000 > $w/images-$bin-$round.json 2> $w/images-$bin-$round.err
  timeout 90 $B --lists 1024 --base $d/lowdim-f16/base.npy --queries $d/lowdim-f16/queries.npy --probes 10,20,50 --batch 10000,1000 > $w/f16-$bin-$round.json 2> $w/f16-$bin-$round.err
  timeout 90 $B --lists 1024 --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --probes 5,20,50 --batch 10000,1000 > $w/f32-$bin-$round.json 2> $w/f32-$bin-$round.err
  echo "bench $bin $round at $SECONDS s" >> $w/times.txt
done; done
( timeout 300 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major auto_takes ) > $w/tests.txt 2>&1
echo "tests exit $? at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/w.tgz . && cd - > /dev/null
grep -E "^test |test result|panicked|checked" $w/tests.txt | cut -c1-250
python3 gpu-run/ab-summary.py $w
cat $w/times.txt
