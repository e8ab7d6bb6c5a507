#!/usr/bin/env bash
# Session 31, call 5 (the device time left, about 200 s; `gpu-run` carried with main's tip
# built as `final` by `TESTS=1 bash scripts/gpu-build-variants.sh final=`): the coarse GPU
# tests after the last change to the centres' upload (8-bit queries that take the limbs no
# longer upload the f16 split).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s31g
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-final $W 150 large_batches small_batches_split \
  device_resident
runner_finish
