#!/usr/bin/env bash
# Session 17, call 10 (after the cuVS chunks p00–p07 were sent to /root/cuvs/ in calls
# 2–9): cuVS 26.10 and ltokit side by side (scripts/gpu-grid.sh, auto scan, batches
# 10,000 and 1,000) on the `fold` build of call 1 — the sources that landed as 5a764c1,
# its kernel bundle compiled in the variant's scratch worktree — then the IVF GPU tests the
# list-major tests of call 1 left out. The index builds' times here include linking their
# plans: the kernel cache was warmed from this checkout's bundle, whose fragments differ
# by a few bytes from the variant's (NVRTC's output depends on the include folders'
# names), so the build's plans missed; call 11 measures the builds on main's own build.
mkdir -p gpu-run/bin && tar xJf gpu-run/bins.tar.xz -C gpu-run/bin ltokit-fold test-ivf-fold &&
  cp gpu-run/bin/ltokit-fold gpu-run/bin/ltokit && cp gpu-run/bin/test-ivf-fold gpu-run/bin/test-ltokit-ivf-gpu-test &&
  TESTS="device_resident small_batches a_non_finite probing_every_list auto_takes a_plan_loaded_for_a_narrow" \
    DEADLINE=545 bash scripts/gpu-grid.sh $OUT
