#!/usr/bin/env bash
# The remote level's cost beside a disk hit and a link, in fresh processes:
# bench-remote.sh [RUNS] (default 20). Starts a private redis-server on a free loopback
# port; each measurement is `ltokit bench cache --json` (request → cubin ready; on a
# GPU machine, → module loaded). Prints medians.
set -euo pipefail
runs=${1:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
L=target/release/ltokit
B=tests/fixtures/ltk-demo.ltkb
P=demo_abs_x2_O3
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
head -c 32 /dev/urandom > "$work/fleet.key"; chmod 600 "$work/fleet.key"
export LTOKIT_REMOTE_KEY_FILE="$work/fleet.key"
arch=${ARCH:-sm_90}
remote="redis://127.0.0.1:$port/0"
# One node links the plan and publishes it.
LTOKIT_REMOTE=$remote $L bench cache --bundle $B --plan $P --arch "$arch" --iters 1 --json --cache-dir "$work/seed" >/dev/null
for i in $(seq "$runs"); do
  LTOKIT_REMOTE=$remote $L bench cache --bundle $B --plan $P --arch "$arch" --iters 1 --json --cache-dir "$work/fresh-$i"
done > "$work/remote.jsonl"
for i in $(seq "$runs"); do
  $L bench cache --bundle $B --plan $P --arch "$arch" --iters 1 --json --cache-dir "$work/seed"
done > "$work/disk.jsonl"
for i in $(seq "$runs"); do
  $L bench cache --bundle $B --plan $P --arch "$arch" --iters 1 --json --cache-dir "$work/link-$i"
done > "$work/link.jsonl"
python3 - "$work" <<'PY'
import json, statistics, sys, pathlib
w = pathlib.Path(sys.argv[1])
for name in ["remote", "disk", "link"]:
    rows = [json.loads(l) for l in (w / f"{name}.jsonl").read_text().splitlines() if l.strip()]
    levels = sorted({r["level"] for r in rows})
    t = sorted(r["request_to_ready_ms"] for r in rows)
    print(f"{name:6} level {','.join(levels):6} median {statistics.median(t):.3f} ms  p90 {t[int(0.9*(len(t)-1))]:.3f} ms  ({len(t)} fresh processes)")
PY
