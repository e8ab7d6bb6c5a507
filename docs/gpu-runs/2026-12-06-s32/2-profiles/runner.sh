#!/usr/bin/env bash
# Session 32, call 2 (about 250 s, `gpu-run` carried: main's tip built as `prev`): full
# ncu profiles of main's kernels where the misses of issues 10 and 11 are — the scan of
# images × 2 and of lowdim-i8 × 10, the coarse selection of both (256 and 1,024 centres)
# and the images' score matrix — each split at its barriers (scripts/sass-regions.py),
# with its stall reasons.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s32b
python3 scripts/make-bench-data.py /tmp/bench-data images lowdim-i8 > $W/data.txt 2>&1
echo "data at $SECONDS s" >> $W/times.txt
# profile NAME KERNEL_REGEX SKIP SET LISTS PROBES UNTIL
profile() {
  local left=$(($7 - SECONDS)) f="$W/full-$1"
  if [ "$left" -lt 30 ]; then echo "no profile: $1" >> "$W/times.txt"; return; fi
  # shellcheck disable=SC2046
  timeout "$left" ncu --set full --import-source no -k "regex:$2" --launch-skip "$3" --launch-count 1 \
    -o "$f" gpu-run/bin/ltokit-prev $(bench_args prev "$4" "$5" "$6") > "$f.log" 2>&1
  ncu -i "$f.ncu-rep" --page details > "$f-details.txt" 2>&1
  ncu -i "$f.ncu-rep" --page raw --csv > "$f-raw.csv" 2>&1
  ncu -i "$f.ncu-rep" --page source --csv --print-source sass > "$f-sass.csv" 2>&1
  python3 gpu-run/sass-regions.py "$f-sass.csv" > "$W/regions-$1.txt" 2>&1
  echo "full $1 at $SECONDS s" >> "$W/times.txt"
}
profile img2 ivf_lmscan 1 images 256 2 120
profile i8x10 ivf_lmscan 1 lowdim-i8 1024 10 200
profile sel1024 coarse_select_rows_c16 1 lowdim-i8 1024 10 260
profile sel256 coarse_select_c2 1 images 256 2 320
profile scores256 coarse_scores_imma 1 images 256 2 380
for f in $W/regions-*.txt; do echo "== $f"; cat $f; done
for f in $W/full-*-details.txt; do echo "== $f"; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Executed Ipc A|Issue Slots Busy|L2 Cache Throughput|DRAM Throughput|Memory Throughput|Compute \(SM\) Th|Waves Per SM|Shared Memory Configuration Size|Dynamic Shared" $f; done
runner_finish
