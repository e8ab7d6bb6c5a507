#!/usr/bin/env bash
# Builds what session 31's planned calls carry (about 15 minutes on 2 cores): main's tip as
# `prev` and docs/wip/coarse-imma.patch as `imma`, each with its IVF GPU test binary,
# packed into gpu-run/bins.tar.xz, the cuVS bench script beside them, and the cuVS wheels
# cut into chunks that fit a call (scripts/fetch-cuvs.sh). Then, each with gpu-run
# carried: `bash docs/gpu-runs/2026-12-06-s30/6-imma/runner.sh`; the chunks one a call
# (`mkdir -p /root/cuvs && cp cuvs-chunks/pNN /root/cuvs/`, carry `cuvs-chunks/pNN`); and
# `BUILDS="prev imma" bash docs/gpu-runs/2026-12-06-s30/4-cuvs/runner.sh` (or BUILDS=prev
# if imma lost).
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf gpu-run/bin gpu-run/bins.tar.xz
TESTS=1 bash scripts/gpu-build-variants.sh prev= imma=docs/wip/coarse-imma.patch
tar cJf gpu-run/bins.tar.xz -C gpu-run/bin .
rm -rf gpu-run/bin
if [[ -f ../shared/peer/cuvs_bench.py ]]; then cp ../shared/peer/cuvs_bench.py gpu-run/; fi
[[ -d cuvs-chunks ]] && ls cuvs-chunks/p* > /dev/null 2>&1 || bash scripts/fetch-cuvs.sh
ls -la gpu-run cuvs-chunks
