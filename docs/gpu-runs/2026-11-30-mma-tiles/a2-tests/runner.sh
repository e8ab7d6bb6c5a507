#!/usr/bin/env bash
# Session 6, call A2: the IVF GPU tests (CPU reference) after the merge/coarse/scan changes.
set -u
w=/tmp/a2; mkdir -p $w
( timeout 560 gpu-run/bin/test-ltokit-ivf-gpu-test --ignored --test-threads=1 --nocapture ) > $w/tests.txt 2>&1
cp $w/tests.txt $OUT/
grep -E "^test |test result|panicked|checked|device-resident|named|switched" $w/tests.txt
