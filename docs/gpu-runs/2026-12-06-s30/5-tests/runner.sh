#!/usr/bin/env bash
# Session 30, call 4: the IVF GPU tests after their set-up moved into helpers
# (`upload_with_empty_list`, `engine_and_seed`; main `feb9725`, built as `prev` by
# `TESTS=1 bash scripts/gpu-build-variants.sh prev=`): session 28's call 2 on that build.
BUILD=prev exec bash docs/gpu-runs/2026-12-04-s28/2-tests/runner.sh
