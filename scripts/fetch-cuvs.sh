#!/usr/bin/env bash
# Downloads cuVS 26.10 for CUDA 13 (Python 3.12 wheels, what the GPU machine runs) and the
# wheels it needs from PyPI, and cuts them into chunks each small enough to travel in one
# device call beside the repository. The limit is 64 MiB a call, and what travels counts
# the tracked files and, as session 30's refusal showed, `.git` (8.7 MB + 28.6 MB then:
# a 31-MB chunk with 3.5 MB of gpu-run/ was refused). So the chunk size is what is left of
# 64 MiB after both, less 2 MiB (CHUNK_MIB overrides it; 27 MiB in session 30, twelve
# chunks). Chunks cut before can be cut again without a download:
#   cat cuvs-chunks/p* > /tmp/cuvs.tar && rm cuvs-chunks/p* && split -b 27m -d -a 2 /tmp/cuvs.tar cuvs-chunks/p
# usage: scripts/fetch-cuvs.sh [OUT_DIR]      (default cuvs-chunks/, git-ignored)
# Then send the chunks one per call, back to back while the machine is warm (30 s):
#   device run, carry ["cuvs-chunks/pNN"]:  mkdir -p /root/cuvs && cp cuvs-chunks/pNN /root/cuvs/
# and run scripts/gpu-bench-vs-cuvs.sh in the next call (it unpacks and installs them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/cuvs-chunks}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" -d "$tmp" \
  cuvs-cu13==26.10.0 libcuvs-cu13==26.10.0 pylibraft-cu13==26.10.0 libraft-cu13==26.10.0 \
  librmm-cu13==26.10.0 rmm-cu13==26.10.0 libkvikio-cu13==26.10.0 rapids-logger==0.3.0 nvidia-nvjitlink==13.3.33
mkdir -p "$out"
rm -f "$out"/p*
if [[ -z ${CHUNK_MIB:-} ]]; then
  # Loose objects count in full: session 46's `.git` went from 42 to 34 MB packed, its
  # chunks from 13 to 20 MiB (24 calls to 15).
  git -C "$root" gc --quiet
  tree=$(git -C "$root" ls-files -z | (cd "$root" && xargs -0 du -cb) | tail -n 1 | cut -f1)
  git_dir=$(du -sb "$root/.git" | cut -f1)
  CHUNK_MIB=$(((64 * 1048576 - tree - git_dir) / 1048576 - 2))
fi
[[ $CHUNK_MIB -ge 4 ]] || { echo "only ${CHUNK_MIB} MiB a call left beside the repository" >&2; exit 1; }
echo "chunks of $CHUNK_MIB MiB" >&2
(cd "$tmp" && tar cf - ./*.whl) | split -b "${CHUNK_MIB}m" -d -a 2 - "$out/p"
ls -la "$out"
