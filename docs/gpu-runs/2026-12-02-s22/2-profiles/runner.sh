#!/usr/bin/env bash
# Session 22, call 2: main's (prev, efa6587) list_major_tiles test, and full ncu profiles
# of its seed (ivf_lmseed, lowdim-i8 × 10 and lowdim-f16 × 10) and of the f16 scan
# (ivf_lmscan, lowdim-f16 × 10), for the breakdown of what the seed and the f16 scan spend.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s22b
python3 scripts/make-bench-data.py /tmp/bench-data lowdim-i8 lowdim-f16 > $W/data.txt 2>&1
prof() { # NAME KERNEL_REGEX SET PROBES
  local f=$W/full-$1
  # shellcheck disable=SC2046
  timeout 90 ncu --set full --import-source no -k regex:$2 --launch-skip 2 --launch-count 1 -o $f \
    gpu-run/bin/ltokit-prev $(bench_args prev $3 1024 $4) > $f.log 2>&1
  ncu -i $f.ncu-rep --page details > $f-details.txt 2>&1
  ncu -i $f.ncu-rep --page source --csv --print-source sass > $f-sass.csv 2>&1
  echo "full $1 at $SECONDS s" >> $W/times.txt
}
prof seed-i8 ivf_lmseed lowdim-i8 10
prof seed-f16 ivf_lmseed lowdim-f16 10
prof scan-f16 ivf_lmscan lowdim-f16 10
for f in $W/full-*-details.txt; do cp $f $OUT/; done
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-prev $W 420 list_major_tiles
runner_finish
for f in $W/full-*-details.txt; do echo "== $f"; grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Memory Throughput|L1/TEX Hit|L2 Hit|Executed Instructions  |Block Size|Grid Size|Waves" $f | head -20; done
