#!/usr/bin/env bash
# Session 41's runner: session 40's 1-gseed.sh (main, `cand`, against gseed:
# docs/wip/group-seed.patch) in one call with cuVS beside both when the cuVS wheel chunks
# are in /root/cuvs (8 calls of `mkdir -p /root/cuvs && cp cuvs-chunks/pNN cuvs-chunks/pMM
# /root/cuvs/`, each carrying its two chunks, on the same warm machine first: README.md),
# and ncu timelines of gsh and cand on lowdim-i8 × 10 (the seed's µs against the scan's). The builds: dev's gpu-run/bins.tar.xz,
# made as 1-gseed.sh's header says, and gsk and gsh:
#   bash scripts/gpu-build-variants.sh gsk=docs/wip/group-seed.patch+docs/wip/gseed-bytes-knob.patch
#   TESTS=1 bash scripts/gpu-build-variants.sh gsh=docs/wip/group-seed-head.patch
# gsh (group-seed-head.patch, branch gseedh): gseed with each list's 64 rows nearest its
# centre first and the compact groups after them in bit-reversed leaf order, so that
# batches that do not seed (f32, the images) lose little of the nearest-first lists' early
# bounds (the model: images × 2 unseeded keep 172.0 rows a query against main's 165.0 and
# gseed's 211.5).
# LIMIT (default 560) bounds the call; BUILDS (default "gseed gsh gs12k gs24k") the A/B's
# builds beside cand; TESTS_OF (default gsh) whose GPU tests run.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s41
L=${LIMIT:-560}
b=gpu-run/bin
# lowdim (f32) is never seeded, but its lists change order too (compact groups in place of
# the 64 rows nearest the centre first), and so does its running bound.
# gsk: gseed with the seed's bytes a knob (docs/wip/gseed-bytes-knob.patch; its default,
# 16 KiB, is gseed with the branch's faster compact_group_order): 3 groups of i8 × 128
# (12 KiB), 6 (24 KiB; 3 groups of f16 × 128).
env_build gs12k gsk LTOKIT_WIP_SEED_BYTES=12288
env_build gs24k gsk LTOKIT_WIP_SEED_BYTES=24576
# shellcheck disable=SC2086 # the builds are words
SETS="${SETS:-lowdim-i8 images lowdim-f16 lowdim wide-i8}" ROUNDS=${ROUNDS:-2} ab_against $((L * ${AB_PCT:-36} / 100)) cand ${BUILDS:-gseed gsh gs12k gs24k}
SINCE=$SECONDS MIN_LEFT=10 bash scripts/gpu-tests.sh $b/test-ivf-${TESTS_OF:-gsh} $W $((L * ${TEST_PCT:-68} / 100)) \
  list_major_bounds_seeded an_index_built_on_the_device device_resident list_major_tiles
if [ -f /root/cuvs/p14 ] && [ "${CUVS:-1}" = 1 ]; then cuvs_beside $((L - 30)) cand gsh gsk; fi
timeline gsh lowdim-i8 1024 10 $((L - 12))
timeline cand lowdim-i8 1024 10 "$L"
runner_finish
