#!/usr/bin/env bash
# Session 30, call 3: the IVF GPU tests of main's tip with the fix of `coarse_select_c1024`
# (four queries a block; call 2's warm-up found it did not link on the H100) and
# docs/wip/int-ids.patch (call 1's images +0.8 to +3.6 %), built as `ints` by
# `TESTS=1 bash scripts/gpu-build-variants.sh ints=docs/wip/int-ids.patch`: session 28's
# call 2 on that build — the test cache warmed with every plan of capacity 1, 16, 128 or
# 1,024 and every non-scan plan (all 1,441 must link now), then all 17 tests; the coarse
# ones probe 590 lists too (capacity 1,024).
BUILD=ints exec bash docs/gpu-runs/2026-12-04-s28/2-tests/runner.sh
