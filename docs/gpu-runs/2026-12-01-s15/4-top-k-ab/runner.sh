#!/usr/bin/env bash
# Session 15, call 4: A/B of main (dd: the keep tests' shared loops, a refactor) against
# three top-k pass variants on it — fo (a slot's first offer takes the sorted candidates
# as its list, no merge), wm6 (WS_MANY 6: a sort and merge from six passing candidates
# instead of ten), kh (kept rows reserve their places by one atomic a warp's query only
# where 24 or more lanes keep); five sets, three rounds; then dd's list-major GPU tests.
set -u
SECONDS=0
o=$OUT; w=/tmp/ab4; mkdir -p $w gpu-run/bin
tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
SETS="images lowdim-i8 lowdim-f16 wide-i8 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $w dd fo wm6 kh > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> $w/times.txt
for t in list_major_tiles list_major_bounds_seeded; do
  left=$((400 - SECONDS)); [ $left -lt 90 ] && { echo "not run: dd $t" >> $w/tests.txt; continue; }
  ( timeout $left gpu-run/bin/test-ivf-dd --ignored --test-threads=1 --nocapture $t ) >> $w/tests.txt 2>&1
  echo "dd $t exit $? at $SECONDS s" >> $w/times.txt
done
cp $w/tests.txt $o/ 2>/dev/null
cd $w && tar czf $o/ab4.tgz --exclude='*/nv' --exclude='*.ivf' . && cd - > /dev/null
sed -n '/means of the rounds/,$p' $w/summary.txt
grep -E "^test |test result|panicked|not run|checked" $w/tests.txt | cut -c1-250
cat $w/times.txt
