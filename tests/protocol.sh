#!/bin/sh
# PROTOCOL.md against the daemon: tests/protocol.py, written from the document alone, sends
# every message the document lists to a real skeld and decodes each reply to its last byte.
# (check_proto compares the document's opcode and status tables with proto/skp.h.)
set -u
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "protocol: SKIP: python3 is missing"; exit 77; }
BIN=${SKELD_BIN:-$PWD/daemon/skeld}
SAMPLES=${SKELD_SAMPLES:-$PWD/samples}
SRC=${SKELD_SRCDIR:-$PWD}
[ -f "$SAMPLES/robot.skf" ] || { echo "protocol: SKIP: no $SAMPLES/robot.skf (run make)"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/skeld-proto.XXXXXX") || exit 1
"$BIN" serve --listen "unix:$TMP/s.sock" --root "$SAMPLES" --log-level warn >"$TMP/out" 2>&1 &
pid=$!
trap 'kill -KILL $pid 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
until grep -q '^ready' "$TMP/out"; do # 2 minutes at most
    i=$((i + 1))
    if [ $i -gt 2400 ] || ! kill -0 $pid 2>/dev/null; then
        echo "protocol: skeld did not start"
        cat "$TMP/out"
        exit 1
    fi
    sleep 0.05
done
"$BIN" info "$SAMPLES/robot.skf" >"$TMP/info.json" || { echo "protocol: skeld info failed"; exit 1; }
"$PY" "$SRC/tests/protocol.py" "$SRC/proto/PROTOCOL.md" "$TMP/s.sock" "$SAMPLES" "$TMP/info.json"
rc=$?
kill -TERM $pid
wait $pid || { echo "protocol: skeld exited $?"; rc=1; }
exit $rc
