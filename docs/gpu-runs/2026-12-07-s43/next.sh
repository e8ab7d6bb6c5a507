#!/usr/bin/env bash
# For the next session's first call (written in session 43, whose every start was refused):
# the A/B of main (cand) against gsho (docs/wip/group-order.patch, branch gsho), ts48
# (docs/wip/ts48.patch, branch ts48), cis (docs/wip/count-in-select.patch, branch cis), krn
# and rbs (session 39's 3-kr.sh builds) and ph2 (cand with --phases always) on five sets, two
# rounds, then ncu timelines of ts48 and cand on lowdim-i8 × 10 and of cis and cand on
# images × 2 (about 240 s in all: session 42's A/B took 12–14 s a build a round). Carry
# gpu-run (dev's bins.tar.xz holds every build named and test-ivf-gsho / -ts48 / -cis).
# BUILDS narrows the A/B (e.g. BUILDS="cand gsho ts48" when device time is short).
# Then, on the same warm machine, the winners' GPU tests, one build a call (list_major_tiles
# takes 100–450 s with its linking; ts48 changes the tiles it checks):
#   BUILD=ts48 LIMIT=450 bash docs/gpu-runs/2026-12-07-s43/tests.sh
#   BUILD=cis LIMIT=450 TEST_NAMES="repeated_device_searches large_batches list_major_tiles" bash docs/gpu-runs/2026-12-07-s43/tests.sh
#     (repeated_device_searches: 2,000 queries × 8 probes over 64 lists, f32 and u8 list-major,
#     the pairs counted in the selection, recorded and replayed, against the CPU's scan of
#     probes found apart)
#   BUILD=gsho LIMIT=450 TEST_NAMES="an_index_built_on_the_device device_resident list_major_bounds_seeded" bash docs/gpu-runs/2026-12-07-s43/tests.sh
set -u
exec bash docs/gpu-runs/2026-12-07-s43/runner.sh
