#!/usr/bin/env bash
# Session 33, call 1 (about 480 s, `gpu-run` carried: `TESTS=1 bash scripts/gpu-build-variants.sh
# split1=docs/wip/split1.patch`, then `bash scripts/gpu-build-variants.sh prev=
# onegroup=docs/wip/onegroup.patch`):
# - onegroup: one grouping of every pair serves both phases (three kernels fewer a
#   two-phase batch; the offsets kernel's block scans as one);
# - split1: onegroup, and the first phase's tiles cut along their lists where the lengths
#   are skewed (the images), each piece a block writing its own candidate set, the first
#   phase's tiles as large as the rest's.
# GPU tests of split1 first (the test cache warmed with their plans), then the A/B on the
# images (three rounds) and lowdim-i8 / wide-i8 (two), then ncu timelines.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s33c1
b=gpu-run/bin
warm_test_cache split1 100
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-split1 $W 230 list_major_tiles large_batches \
  device_resident list_major_lists_longer list_major_bounds_seeded
SETS="images" ROUNDS=3 timeout $((420 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev onegroup split1 > "$OUT/ab.log" 2>&1
echo "ab images at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
timeline split1 images 256 10 450; timeline prev images 256 10 465; timeline split1 images 256 20 480
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
