#!/usr/bin/env bash
# Lists the ELF and PTX members of every file in a folder with cuobjdump (GPU machine),
# in the format tests/fixtures/cuobjdump_listings.txt uses: "== FILE" then cuobjdump's lines.
set -uo pipefail
dir=${1:?usage: list-cuobjdump.sh DIR}
cuobjdump=${CUOBJDUMP:-/usr/local/cuda/bin/cuobjdump}
for f in "$dir"/*; do
  case "$f" in *.txt) continue;; esac
  echo "== $(basename "$f")"
  "$cuobjdump" -lelf -lptx "$f" 2>&1 | grep -E "^(ELF|PTX) file" || true
done
