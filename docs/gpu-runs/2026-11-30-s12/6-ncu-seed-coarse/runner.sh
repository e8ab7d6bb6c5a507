#!/usr/bin/env bash
# Session 12, call 6: what bounds the seed and the coarse search (ncu details, i8 x 10,
# batch 10,000, main's build): throughput, warp stalls, instruction mix.
set -u
SECONDS=0
o=$OUT; w=/tmp/w; d=/tmp/bench-data; mkdir -p $w
python3 scripts/make-bench-data.py $d lowdim-i8 > $w/data.txt 2>&1
L="gpu-run/bin/ltokit ivf"
timeout 60 $L build --base $d/lowdim-i8/base.npy --lists 1024 -o /tmp/i8.ivf --cache-dir /tmp/c > $w/build.log 2>&1
timeout 150 ncu --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
  -k 'regex:ivf_(lmseed|coarse)' $L search --index /tmp/i8.ivf --queries $d/lowdim-i8/queries.npy --k 10 --probes 10 --scan list-major \
  --cache-dir /tmp/c -o /dev/null > $w/ncu-details.txt 2>&1
echo "ncu exit $? at $SECONDS s" >> $w/times.txt
cp $w/*.txt $o/
grep -E "^  ivf_|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Issued Instructions  |Stall|stall" $w/ncu-details.txt | head -80
cat $w/times.txt
