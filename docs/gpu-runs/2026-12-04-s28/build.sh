#!/usr/bin/env bash
# Builds what session 28's two planned device calls carry (about 20 minutes on 2 cores):
# main's tip as `prev` with its IVF GPU test binary (call 2's BUILD=prev), and the
# variants of call 1, then packs them into gpu-run/bins.tar.xz. Run from the repository
# root; then `bash docs/gpu-runs/2026-12-04-s28/1-ab/runner.sh` and
# `bash docs/gpu-runs/2026-12-04-s28/2-tests/runner.sh`, each with gpu-run carried.
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf gpu-run/bin gpu-run/bins.tar.xz
TESTS=1 bash scripts/gpu-build-variants.sh prev=
bash scripts/gpu-build-variants.sh late=docs/wip/late-rest.patch ints=docs/wip/int-ids.patch \
  both=docs/wip/late-rest.patch+docs/wip/int-ids.patch knob=docs/wip/phase-qt-knob.patch short=docs/wip/select-short.patch
tar cJf gpu-run/bins.tar.xz -C gpu-run/bin .
rm -rf gpu-run/bin
ls -la gpu-run/bins.tar.xz
