#!/usr/bin/env bash
# Session 10, last call: the GPU tests not yet run this session, on the final build —
# every per-query variant against the CPU reference, small batches cut over blocks, auto's
# switch to the list-major scan.
set -u
SECONDS=0
o=$OUT
( timeout 420 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture every_variant small_batches_cut auto_takes ) > $o/tests.txt 2>&1
echo "exit $? at $SECONDS s" >> $o/tests.txt
grep -E "^test |test result|panicked|exit" $o/tests.txt | cut -c1-220
