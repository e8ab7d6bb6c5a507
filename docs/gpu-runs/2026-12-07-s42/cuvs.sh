#!/usr/bin/env bash
# Session 42's cuVS call: after the runner call (docs/gpu-runs/2026-12-07-s41/runner.sh with
# CUVS=0) and the chunk calls (`mkdir -p /root/cuvs && cp cuvs-chunks/pNN cuvs-chunks/pMM
# /root/cuvs/`, two chunks a call, p14 alone), on the same warm machine: cuVS beside cand,
# gsh and gsk (gsk at its default 16 KiB seed is gseed) on every bench set, batch 10,000,
# same call, same files. LIMIT (default 560) bounds it. Carry gpu-run.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s42c
L=${LIMIT:-560}
[ -f /root/cuvs/p14 ] || { echo "no cuVS chunks in /root/cuvs"; ls /root/cuvs; exit 1; }
# shellcheck disable=SC2086 # the builds are words
cuvs_beside "$L" ${BUILDS:-cand gsh gsk}
runner_finish
for f in "$OUT"/b10k-*.md; do echo "== $f"; cat "$f"; done
