#!/usr/bin/env bash
# Session 18, call 4: main's own build (d7f0791: the scan stages two queries a warp at a
# time) — the list-major GPU tests that cover the staging, against the CPU reference.
set -u
SECONDS=0
o=$OUT; w=/tmp/t4; mkdir -p $w gpu-run/final
tar xJf gpu-run/final.tar.xz -C gpu-run/final
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/final/test-ivf-main $w 140 device_resident probing_every_list list_major_tiles small_batches_cut
cp $w/tests.txt $w/times.txt $o/
grep -E "^test |test result|panicked|not run|checked|match|recall" $w/tests.txt | cut -c1-250
cat $w/times.txt
