#!/usr/bin/env bash
# Session 20, call 8 (after the cuVS chunks p00–p06 went to /root/cuvs/ in calls 1–7):
# A/B of main (prev) against `ft` (each list's first-probe pairs in its first tile, the
# first tiles of every list scanned first, a 16-byte record a tile), `ftnp` (ft, one
# phase always), `la` (the register tiles' old row store and in-kernel work offset) and
# `ftla` (ft + la); six sets, three rounds; then cuVS 26.10 beside prev, ft and ftla at
# batch 10,000 on the same files (one cuVS run a set); ncu durations of ft and prev.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s20a
mkdir -p /root/cuvs && cp gpu-run/cuvs-p07 /root/cuvs/p07
SETS="lowdim-i8 images lowdim-f16 wide-i8 wide-f16 lowdim" ROUNDS=3 bash scripts/gpu-ab.sh $W prev ft ftnp la ftla > $OUT/ab.log 2>&1
echo "ab at $SECONDS s" >> $W/times.txt
BUILDS="prev ft ftla" SCANS=auto BATCH=10000 timeout 300 bash scripts/gpu-bench-vs-cuvs.sh $W/b10k \
  lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b10k.log 2>&1
echo "10k at $SECONDS s" >> $W/times.txt
timeline ft lowdim-i8 1024 10 560; timeline prev lowdim-i8 1024 10 560
timeline ft images 256 10 560; timeline prev images 256 10 560
for b in prev ft ftla; do cp $W/b10k/$b/summary.md $OUT/b10k-$b.md 2>/dev/null; done
runner_finish
