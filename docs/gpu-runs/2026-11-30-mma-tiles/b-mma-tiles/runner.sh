#!/usr/bin/env bash
# Session 6, call B: mma.sync tiles vs portable (lowdim f32/f16/i8, images u8), register
# top-k pass, warps merge; latency; GPU tests; ncu source counters of the new kernels.
# (Reconstructed copy of the call's gpu-run/b.sh; the printing tail is left out.)
set -u
SECONDS=0
o=$OUT; d=/tmp/bench-data; w=/tmp/b; mkdir -p $w
export PATH=$PATH:/usr/local/cuda/bin
python3 gpu-run/make-bench-data.py $d lowdim lowdim-i8 lowdim-f16 images > $w/data.txt 2>&1
python3 -c "
import numpy as np
q = np.load('$d/lowdim/queries.npy'); np.save('/tmp/q200.npy', q[:200])"
( timeout 330 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture list_major every_variant small_batches device_resident ) > $w/tests.txt 2>&1
B="gpu-run/bin/ltokit ivf bench --k 10 --json --reps 3 --cache-dir /tmp/cb"
for s in lowdim lowdim-f16 lowdim-i8; do
  for t in mma portable; do
    timeout 60 $B --base $d/$s/base.npy --queries $d/$s/queries.npy --lists 1024 --probes 5,10,20,50 --batch 10000,1000 --scan list-major --tile $t > $w/lm-$s-$t.json 2> $w/lm-$s-$t.err
  done
done
for t in mma portable; do
  timeout 60 $B --base $d/images/base.npy --queries $d/images/queries.npy --lists 256 --probes 2,5,10,20 --batch 10000 --scan list-major --tile $t > $w/lm-images-$t.json 2> $w/lm-images-$t.err
done
timeout 60 $B --base $d/lowdim/base.npy --queries $d/lowdim/queries.npy --lists 1024 --probes 20 --batch 1,10,100,300 --scan per-query,list-major,auto > $w/latency.json 2> $w/latency.err
timeout 60 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum -k regex:"ivf_(coarse|scan_c|merge|lmscan)" --csv gpu-run/bin/ltokit ivf bench --k 10 --cache-dir /tmp/cb --base $d/lowdim/base.npy --lists 1024 --queries /tmp/q200.npy --probes 20 --batch 1,100 --reps 1 > $w/ncu-latency.csv 2> $w/ncu-latency.err
for s in lowdim-i8 lowdim; do
  timeout 40 ncu --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy --section SpeedOfLight -k regex:ivf_lmscan --launch-count 1 -o $w/src-$s gpu-run/bin/ltokit ivf bench --k 10 --cache-dir /tmp/cb --base $d/$s/base.npy --lists 1024 --queries $d/$s/queries.npy --probes 20 --batch 10000 --reps 1 --scan list-major > $w/ncu-src-$s.log 2>&1
  ncu -i $w/src-$s.ncu-rep --page source --csv --print-source sass > $w/sass-$s.csv 2>&1
  ncu -i $w/src-$s.ncu-rep --page details > $w/details-$s.txt 2>&1
done
rm -f $w/*.ncu-rep
cd $w && tar czf $o/b.tgz . && cd - > /dev/null
