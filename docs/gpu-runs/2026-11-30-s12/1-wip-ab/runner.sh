#!/usr/bin/env bash
# Prepared at the end of session 11 (main 0fdbf7b): one device call comparing main (prev)
# with the docs/wip variants built by
#   bash scripts/gpu-build-variants.sh prev= cap=docs/wip/cand-cap.patch lane=docs/wip/exact-keep-lane.patch \
#     groups=docs/wip/keep-groups.patch coarse=docs/wip/coarse-exact-queries.patch \
#     all=docs/wip/cand-cap.patch+docs/wip/keep-groups.patch+docs/wip/coarse-exact-queries.patch
# Rebuild them first if main has moved. Run with carry ["gpu-run"].
set -u
SECONDS=0
o=$OUT
bash scripts/gpu-ab.sh /tmp/ab prev cap lane groups coarse all > $o/ab.log 2>&1
echo "ab at $SECONDS s" >> /tmp/ab/times.txt
cd /tmp/ab && tar czf $o/ab.tgz . && cd - > /dev/null
cat /tmp/ab/summary.txt; cat /tmp/ab/times.txt
