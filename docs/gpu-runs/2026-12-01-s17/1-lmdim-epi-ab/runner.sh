#!/usr/bin/env bash
# Session 17, call 1: A/B of main (`prev`) against five builds, each on the one before:
# `lmdim` (the register-capped 8-bit scans linked with the dimension as a constant:
# fragments lmdim_<N>), `cst` (alone: the coarse score matrix stores a lane's two adjacent
# centres in one 8-byte store), `both` (lmdim + cst), `any` (both + the mma tiles' keep
# test asks first whether any accumulator is kept, its compares chained into one
# predicate) and `fold` (any + the exact 8-bit tiles' integer bound holds ceil(thr) − qn,
# so the tile compares without loading the query norms). Six sets, three rounds, builds
# interleaved; then each kernel's duration (ncu) of prev, both and fold on lowdim-i8 × 10
# and images × 2, and fold's list-major GPU tests.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab1; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $w prev lmdim cst both any fold > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
d=/tmp/bench-data
tl() {  # build set lists probes
  left=$((400 - SECONDS)); [ $left -lt 25 ] && { echo "no timeline: $1 $2" >> $w/times.txt; return; }
  timeout $left ncu --metrics gpu__time_duration.sum --csv -k regex:'ivf_(lmscan|lmseed|coarse_select|coarse_scores|group|merge)' \
    gpu-run/bin/ltokit-$1 ivf bench --k 10 --json --cache-dir /tmp/ab-cache-$1 --reps 1 --scan list-major \
    --lists $3 --base $d/$2/base.npy --queries $d/$2/queries.npy --probes $4 --batch 10000 \
    > $w/timeline-$2-$1.csv 2> $w/timeline-$2-$1.err
  echo "timeline $1 $2 at $SECONDS s" >> $w/times.txt
}
for b in prev both fold; do tl $b lowdim-i8 1024 10; tl $b images 256 2; done
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-fold $w 585 list_major_tiles list_major_bounds_seeded
cp $w/tests.txt $w/times.txt $o/ 2>/dev/null
cd $w && tar czf $o/ab1.tgz --exclude='*/nv' --exclude='*.ivf' --exclude='*.npy' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|checked|match" $w/tests.txt | cut -c1-250
for f in $w/timeline-*.csv; do echo "== $f"; grep -E '"gpu__time_duration.sum"' $f | awk -F'","' '{print $5, $9, $(NF)}' | grep -v "(62500\|(15625" | tail -9; done
cat $w/times.txt
