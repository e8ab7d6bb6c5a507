#!/usr/bin/env bash
# Builds what the planned device calls carry (sessions 28 and 29 had no device time; about
# 15 minutes on 2 cores, about 25 MB packed, under the 64 MiB carry): main's tip as `prev`
# with its IVF GPU test binary (call 2's BUILD=prev) and the variants of call 1, packed
# into gpu-run/bins.tar.xz. Run from the repository root; then, each with gpu-run carried,
# `bash docs/gpu-runs/2026-12-06-s29/1-ab/runner.sh` (call 1) and
# `bash docs/gpu-runs/2026-12-04-s28/2-tests/runner.sh` (call 2).
# It ran in session 30 (docs/gpu-runs/2026-12-06-s30/). docs/wip/int-ids.patch has since
# landed (162b1c5) and left docs/wip/: to build these variants again, run this script in
# a checkout of 5bdbbd8 (`git worktree add /tmp/s29 5bdbbd8`).
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf gpu-run/bin gpu-run/bins.tar.xz
TESTS=1 bash scripts/gpu-build-variants.sh prev=
bash scripts/gpu-build-variants.sh late=docs/wip/late-rest.patch ints=docs/wip/int-ids.patch \
  both=docs/wip/late-rest.patch+docs/wip/int-ids.patch short=docs/wip/select-short.patch \
  pairs=docs/wip/ldsm-pairs.patch knob=docs/wip/phase-qt-knob.patch
tar cJf gpu-run/bins.tar.xz -C gpu-run/bin .
rm -rf gpu-run/bin
ls -la gpu-run/bins.tar.xz
