#!/usr/bin/env bash
# Installs Debian's redis-server when it is missing (the remote-cache tests start their
# own servers with it, on free loopback ports; nothing is started here).
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
sudo=""
if [[ $(id -u) != 0 ]]; then sudo="sudo"; fi
echo "setup-redis: installing redis-server (apt-get)" >&2
$sudo apt-get install -y -q redis-server >/dev/null 2>&1 || {
  $sudo apt-get update -q >/dev/null
  $sudo apt-get install -y -q redis-server >/dev/null
}
# Debian's package may start a system service; the tests do not use it.
command -v redis-server >/dev/null
