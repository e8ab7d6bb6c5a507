#!/usr/bin/env bash
# Downloads cuVS 26.10 for CUDA 13 (Python 3.12 wheels, what the GPU machine runs) and the
# wheels it needs from PyPI, and cuts them into chunks that travel two a call beside the
# repository (or one beside gpu-run/). The limit is 64 MiB a call of the working tree that
# travels: the tracked files and the carried paths. `.git` does not count: session 47's
# first call carried gpu-run/ (5 MiB) and a 21-MiB chunk beside a 19.7-MiB tree and a
# 33.8-MiB `.git`, and was taken. The limit counts 10^6 bytes a MB, not 2^20: session 48's
# two 21-MiB chunks beside a 20.9-MB tree (64.9 MB, 61.9 MiB) were refused, two of 19 MiB
# (60.7 MB) taken. So a chunk is half of what is left of 64,000,000 bytes after the
# tracked files, less 1 MiB (CHUNK_MIB overrides it). Chunks cut before can be cut again
# without a download:
#   cat cuvs-chunks/p* > /tmp/cuvs.tar && rm cuvs-chunks/p* && split -b 19m -d -a 2 /tmp/cuvs.tar cuvs-chunks/p
# usage: scripts/fetch-cuvs.sh [OUT_DIR]      (default cuvs-chunks/, git-ignored)
# Then send the chunks two per call, back to back while the machine is warm (30 s):
#   device run, carry ["cuvs-chunks/pNN", "cuvs-chunks/pMM"]:  mkdir -p /root/cuvs && cp cuvs-chunks/p* /root/cuvs/
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
  # One du over every tracked file (xargs would split the list and report the last part's
  # total alone: sessions 45–46 counted 9.6 of the tree's 20.7 MB).
  tree=$(cd "$root" && git ls-files -z | du -cb --files0-from=- | tail -n 1 | cut -f1)
  CHUNK_MIB=$(((64000000 - tree) / 2 / 1048576 - 1))
fi
[[ $CHUNK_MIB -ge 4 ]] || { echo "only ${CHUNK_MIB} MiB a call left beside the repository" >&2; exit 1; }
echo "chunks of $CHUNK_MIB MiB" >&2
(cd "$tmp" && tar cf - ./*.whl) | split -b "${CHUNK_MIB}m" -d -a 2 - "$out/p"
ls -la "$out"
