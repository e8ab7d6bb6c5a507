#!/usr/bin/env bash
# Runs the toolkit matrix test and writes the table it found into README.md (between the
# toolkit-matrix markers), so that the README states what the matrix measured.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-cuda.sh
scripts/setup-toolkit-matrix.sh
out="$root/target/toolkit-matrix.md"
rm -f "$out"
LTOKIT_TOOLKIT_MATRIX="$root/.cuda/matrix" LTOKIT_MATRIX_TABLE_OUT="$out" \
  cargo test --quiet -p ltokit-cli --test toolkit_matrix || true
[[ -s "$out" ]] || { echo "update-toolkit-matrix: the matrix test wrote no table" >&2; exit 1; }
python3 - "$out" <<'PY'
import sys
table = open(sys.argv[1]).read().strip()
readme = open("README.md").read()
begin, end = "<!-- toolkit-matrix:begin -->", "<!-- toolkit-matrix:end -->"
a, b = readme.index(begin) + len(begin), readme.index(end)
open("README.md", "w").write(readme[:a] + "\n" + table + "\n" + readme[b:])
PY
echo "README.md: toolkit table updated" >&2
