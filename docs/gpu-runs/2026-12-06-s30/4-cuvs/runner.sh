#!/usr/bin/env bash
# Planned in session 30 (not run: too little device time after two refused starts): the
# cuVS call, after the cuVS wheel chunks (scripts/fetch-cuvs.sh sizes them) went to
# /root/cuvs/ one a call. cuVS 26.10 beside main's tip (`prev`, built by
# `TESTS=1 bash scripts/gpu-build-variants.sh prev=`) at batches 10,000 and 1,000, on the
# same files, in the same call — the first side-by-side on the H100 (sessions 25 and 26
# measured on the H200). BUILDS (default prev) names the builds beside cuVS, e.g.
# BUILDS="prev imma" (6-imma/runner.sh); each set's builds then share its one cuVS run, and
# the 10,000 pass takes most of the call (the 1,000 pass runs on what is left).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s30c

BUILDS="${BUILDS:-prev}" SCANS=auto BATCH=10000 timeout $((380 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b10k.log 2>&1
echo "10k at $SECONDS s" >> $W/times.txt
BUILDS="${BUILDS:-prev}" SCANS=auto BATCH=1000 timeout $((545 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b1k \
  lowdim:1024:5,20,50 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > $OUT/b1k.log 2>&1
echo "1k at $SECONDS s" >> $W/times.txt
for b in ${BUILDS:-prev}; do
  cp $W/b10k/$b/summary.md $OUT/b10k-$b.md 2>/dev/null
  cp $W/b1k/$b/summary.md $OUT/b1k-$b.md 2>/dev/null
done
cp $W/times.txt $OUT/
cat $W/times.txt; cat $OUT/b10k-prev.md 2>/dev/null | head -60
