#!/usr/bin/env bash
# Session 9, call 7: the first search's link timeline (debug logs) on f16 and i8, whose
# first search rose from 4–42 ms to 94–200 ms in the final grid.
set -u
SECONDS=0
o=$OUT; w=/tmp/f; mkdir -p $w
python3 gpu-run/make-bench-data.py /tmp/bench-data lowdim-f16 lowdim-i8 > $w/data.txt 2>&1
echo "data at $SECONDS s" >> $w/times.txt
bash scripts/gpu-first-search.sh $w lowdim-f16:1024:10 lowdim-i8:1024:10 > $w/first.txt 2>&1
echo "first at $SECONDS s" >> $w/times.txt
cd $w && tar czf $o/f.tgz . && cd - > /dev/null
cat $w/first.txt | cut -c1-200 | head -80
cat $w/times.txt
