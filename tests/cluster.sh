#!/bin/sh
# Scale-out: contrib/deploy/cluster-test, HAProxy with contrib/deploy/haproxy.cfg in front of
# three nodes of this build on loopback (affinity, failover, drain; see the script). Skips
# (77) only without haproxy or python3, which contrib/install-deps installs.
set -u
SRC=${SKELD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "cluster: SKIP: $PY is missing"; exit 77; }
exec "$PY" "$SRC/contrib/deploy/cluster-test" \
    --skeld "${SKELD_BIN:-$PWD/daemon/skeld}" --skelctl "${SKELD_CTL:-$PWD/client/skelctl}" \
    --samples "${SKELD_SAMPLES:-$PWD/samples}"
