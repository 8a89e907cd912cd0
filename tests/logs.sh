#!/bin/sh
# The log: every line is logfmt (ts=... level=... then msg="..." or event=access and its
# fields), one access line per request on both protocols (peer, opcode or method and path,
# armature, status, bytes, microseconds), --log-file, and SIGHUP reopening it after a
# rotation (the old file keeps what was written before, the new one what comes after), naming
# it when it cannot, and naming the options a reload applied.
# Waits poll for the event they wait on, bounded (2 minutes) so a hung daemon fails the test.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -u
if ! command -v curl >/dev/null 2>&1; then
    echo "logs: SKIP: curl is missing (contrib/install-deps installs it)"
    exit 77
fi
BIN=${SKELD_BIN:-$PWD/daemon/skeld}
CTL=${SKELD_CTL:-$PWD/client/skelctl}
SAMPLES=${SKELD_SAMPLES:-$PWD/samples}
[ -f "$SAMPLES/robot.skf" ] || { echo "logs: SKIP: no $SAMPLES/robot.skf (run make)"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/skeld-logs.XXXXXX") || exit 1
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$TMP"' EXIT
. "$(dirname "$0")/tap.sh"
# wait_for CMD...: polls CMD until it succeeds (2 minutes at most)
wait_for() {
    local i
    for i in $(seq 2400); do
        "$@" && return 0
        sleep 0.05
    done
    return 1
}

LOG=$TMP/skeld.log
"$BIN" serve --listen "unix:$TMP/s.sock" --listen http://127.0.0.1:0 --root "$SAMPLES" \
    --log-file "$LOG" --log-level info >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait_for grep -q '^ready' "$TMP/out"
web=$(sed -n 's|^listening \(http://.*\)$|\1|p' "$TMP/out")
check "the daemon starts with --log-file and prints its http address" test -n "$web"
check "nothing is logged to stderr with --log-file" test ! -s "$TMP/err"

"$CTL" --uri "unix:$TMP/s.sock" pose robot.skf --anim Walk --frame 3 >/dev/null
"$CTL" --uri "unix:$TMP/s.sock" pose robot.skf --anim Nope >/dev/null 2>&1
curl -s -o /dev/null "$web/v1/files/robot.skf/pose?anim=Walk&frame=3"
id=$("$CTL" --uri "unix:$TMP/s.sock" load robot.skf | sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p')
n_http() { grep -c ' event=access proto=http ' "$LOG"; }
wait_for test "$(n_http)" -ge 1

check "every line is logfmt: ts, level, then msg=\"...\" or event=access" \
    test "$(grep -cvE '^ts=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z level=(error|warn|info|debug) (msg="([^"\\]|\\.)*"|event=access( [a-z]+=([^ "=]+|"([^"\\]|\\.)*"))+)$' "$LOG")" -eq 0
check "binary POSE: peer, opcode, request id, the armature's id, status, bytes, microseconds" \
    grep -qE "event=access proto=skp peer=unix op=POSE req=[0-9]+ armature=$id status=OK bytes=[1-9][0-9]* us=[0-9]+$" "$LOG"
check "binary LOAD_PATH names the armature it loaded" \
    grep -qE "event=access proto=skp peer=unix op=LOAD_PATH req=[0-9]+ armature=$id status=OK " "$LOG"
check "an unknown animation: status NOT_FOUND" \
    grep -qE "event=access proto=skp peer=unix op=POSE req=[0-9]+ armature=[-0-9a-f]+ status=NOT_FOUND " "$LOG"
check "HTTP: peer address and port, method, path with its query (quoted: it has =), status" \
    grep -qE 'event=access proto=http peer=127\.0\.0\.1:[0-9]+ method=GET path="/v1/files/robot\.skf/pose\?anim=Walk&frame=3" status=200 bytes=[1-9][0-9]* us=[0-9]+$' "$LOG"

# A request refused in its headers (over 16 KiB: 431) is logged with its method and path.
curl -s -o /dev/null -H "X-Big: $(head -c 17000 /dev/zero | tr '\0' a)" "$web/v1/armatures?big=1"
wait_for grep -q ' status=431 ' "$LOG"
check "a 431 (headers over 16 KiB): the access line names its method and path" \
    grep -qE 'event=access proto=http peer=127\.0\.0\.1:[0-9]+ method=GET path="/v1/armatures\?big=1" status=431 ' "$LOG"

# Bytes a client chose reach the log as text only: bytes that are not UTF-8 and C1 controls
# (U+009B is a terminal's CSI) as '?', well-formed UTF-8 text as it is.
hostport=${web#http://}
exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}"
printf 'GET /v1/armatures?a=\377\376\370\200\200 HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: \302\2331m caf\303\251\r\nConnection: close\r\n\r\n' >&3
cat <&3 >/dev/null
exec 3<&-
wait_for grep -q 'path="/v1/armatures?a=?????"' "$LOG"
check "a path's bytes that are not UTF-8 are logged as '?' (a lead byte past F4 too)" \
    grep -q 'path="/v1/armatures?a=?????"' "$LOG"
check "a C1 control's two bytes are '?', UTF-8 text is kept" grep -q 'fwd="??1m café"' "$LOG"

# Rotation: the file is moved away, SIGHUP, and what follows goes to a new file at the path.
mv "$LOG" "$LOG.1"
kill -HUP "$pid"
wait_for grep -q 'configuration reloaded' "$LOG"
check "SIGHUP reopens --log-file at its path after a rotation" grep -q 'configuration reloaded' "$LOG"
curl -s -o /dev/null "$web/healthz"
curl -s -o /dev/null "$web/readyz"
curl -s -o /dev/null "$web/v1/armatures"
wait_for grep -q 'path=/v1/armatures' "$LOG"
check "requests after the reload are logged to the new file" grep -q 'path=/v1/armatures' "$LOG"
check "the rotated file keeps what came before, and nothing after" \
    eval 'grep -q "op=POSE" "$LOG.1" && ! grep -q "path=/v1/armatures" "$LOG.1"'
check "health probes answered 200 are not logged at info level (a balancer's would drown the log)" \
    eval '! grep -qE "path=/(healthz|readyz)" "$LOG" "$LOG.1"'

# A local file: skelctl computes its id and uploads it only when the daemon does not have it
# (the access log shows each LOAD_BYTES), so a daemon that lost it is given it again.
uploads() { grep -c 'op=LOAD_BYTES .* status=OK ' "$LOG"; }
n0=$(uploads)
"$CTL" --uri "unix:$TMP/s.sock" pose "$SAMPLES/critter.skf" --anim 0 --frame 2 >"$TMP/p1.json"
check "a local file the daemon lacks: uploaded once, then posed" \
    eval '[ $? -eq 0 ] && [ "$(uploads)" -eq $((n0 + 1)) ] && [ -s "$TMP/p1.json" ]'
"$CTL" --uri "unix:$TMP/s.sock" pose "$SAMPLES/critter.skf" --anim 0 --frame 2 >"$TMP/p2.json"
check "the same file again: not uploaded (its id is cached), the same pose" \
    eval '[ "$(uploads)" -eq $((n0 + 1)) ] && cmp -s "$TMP/p1.json" "$TMP/p2.json"'
cid=$(grep -o 'op=LOAD_BYTES req=[0-9]* armature=[0-9a-f]*' "$LOG" | tail -n 1 | sed 's/.*armature=//')
curl -s -o /dev/null -X DELETE "$web/v1/armatures/$cid"
"$CTL" --uri "unix:$TMP/s.sock" render "$SAMPLES/critter.skf" --anim 0 --frame 2 --size 32x32 \
    -o "$TMP/c.png"
check "after the daemon dropped it (DELETE): uploaded again, and the render works" \
    eval '[ "$(uploads)" -eq $((n0 + 2)) ] && [ -s "$TMP/c.png" ]'
"$CTL" --uri "unix:$TMP/s.sock" pose "$SAMPLES/critter.skf" --anim Nope 2>"$TMP/nope.err"
rc=$?
check "an unknown animation on a cached local file: exit 1, the valid names, no upload" \
    eval '[ $rc -eq 1 ] && grep -q "valid:" "$TMP/nope.err" && [ "$(uploads)" -eq $((n0 + 2)) ]'

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
check "exits 0 after SIGTERM" test "$rc" -eq 0
check "no level=error line" eval '! grep -q " level=error " "$LOG" "$LOG.1"'

# A reload's messages (an option that waits for a restart, a configuration that does not read)
# go to --log-file, where an operator looks, not to stderr.
CONF=$TMP/skeld.conf
LOG2=$TMP/rl/reload.log
mkdir "$TMP/rl"
echo "max-bone-steps = 100000000" >"$CONF"
"$BIN" serve --listen "unix:$TMP/r.sock" --config "$CONF" --log-file "$LOG2" --log-level info \
    >"$TMP/out3" 2>"$TMP/err3" &
pid=$!
wait_for grep -q '^ready' "$TMP/out3"
printf 'threads = 3\nmax-bone-steps = 10000\n' >"$CONF"
kill -HUP "$pid"
wait_for grep -q 'configuration reloaded' "$LOG2"
check "SIGHUP: an option that waits for a restart is named in the log file, at level warn" \
    grep -q 'level=warn msg="SIGHUP: threads changed: it takes effect at the next start"' "$LOG2"
check "SIGHUP: the options applied are counted and named (not the one waiting for a restart)" \
    grep -q 'level=info msg="SIGHUP: configuration reloaded, 1 option changed: max-bone-steps"' "$LOG2"
reloads() { grep -c 'configuration reloaded' "$LOG2"; }
printf 'threads = 3\nmax-bone-steps = 10000\nauth-token = tok-not-logged\nmax-bones = 99\n' >"$CONF"
kill -HUP "$pid"
wait_for test "$(reloads)" -ge 2
check "SIGHUP: several options applied are named, the auth token's name but not its value" \
    eval 'grep -q "level=info msg=\"SIGHUP: configuration reloaded, 2 options changed: auth-token, max-bones\"" "$LOG2" &&
    ! grep -q tok-not-logged "$LOG2"'
kill -HUP "$pid" # the same file again
wait_for test "$(reloads)" -ge 3
check "SIGHUP with nothing changed: 0 options, no list" \
    grep -q 'level=info msg="SIGHUP: configuration reloaded, 0 options changed"$' "$LOG2"
echo "max-bone-steps = many" >"$CONF"
kill -HUP "$pid"
wait_for grep -q 'does not read' "$LOG2"
check "SIGHUP: why the configuration does not read is in the log file, at level error" \
    grep -q 'level=error msg="SIGHUP: .*skeld.conf:1: max-bone-steps: \\"many\\" is not a number' "$LOG2"
# The log's directory moved away: the file cannot be opened again at its path, and the error
# (in the file still open, now under the new name) names the path.
mv "$TMP/rl" "$TMP/rl.old"
kill -HUP "$pid"
wait_for grep -q 'cannot reopen' "$TMP/rl.old/reload.log"
check "SIGHUP: a log file that cannot be reopened is named, with why, at level error" \
    grep -qF "level=error msg=\"SIGHUP: cannot reopen the log file $LOG2: No such file or directory\"" "$TMP/rl.old/reload.log"
kill -TERM "$pid"
wait "$pid"
pid=
check "nothing of the reloads went to stderr" test ! -s "$TMP/err3"

# An option that waits for a restart, taken out of the file, is a change too: the next start
# takes its default (threads: the cores). The reload took the running value for the default
# and said nothing. One more thread than the cores is never the default.
k=$(($(nproc) + 1))
[ "$k" -le 256 ] || k=255
echo "threads = $k" >"$CONF"
LOG3=$TMP/reload3.log
"$BIN" serve --listen "unix:$TMP/r3.sock" --config "$CONF" --log-file "$LOG3" >"$TMP/out4" 2>&1 &
pid=$!
wait_for grep -q '^ready' "$TMP/out4"
echo "# threads: the default again" >"$CONF"
kill -HUP "$pid"
wait_for grep -q 'configuration reloaded' "$LOG3"
check "SIGHUP: threads taken out of the file is named as waiting for a restart" \
    grep -q 'level=warn msg="SIGHUP: threads changed: it takes effect at the next start"' "$LOG3"
kill -TERM "$pid"
wait "$pid"
pid=

# At debug level a health probe answered 200 is logged, and its line says so: level=debug
# (it said info, though no info log holds it).
LOGD=$TMP/debug.log
"$BIN" serve --listen http://127.0.0.1:0 --log-file "$LOGD" --log-level debug >"$TMP/outd" 2>&1 &
pid=$!
wait_for grep -q '^ready' "$TMP/outd"
webd=$(sed -n 's|^listening \(http://.*\)$|\1|p' "$TMP/outd")
curl -s -o /dev/null "$webd/healthz"
curl -s -o /dev/null "$webd/v1/armatures"
wait_for grep -q 'path=/v1/armatures' "$LOGD"
check "at debug level a health probe answered 200 is logged as debug, other requests as info" \
    eval 'grep -qE "^ts=[^ ]+ level=debug event=access proto=http .* path=/healthz status=200 " "$LOGD" &&
          grep -qE "^ts=[^ ]+ level=info event=access proto=http .* path=/v1/armatures status=200 " "$LOGD"'
kill -TERM "$pid"
wait "$pid"
pid=

# A log file that cannot be opened: exit 1 and a message naming it.
"$BIN" serve --listen "unix:$TMP/t.sock" --log-file "$TMP/no/such/dir/x.log" >/dev/null 2>"$TMP/err2"
rc=$?
check "an unwritable --log-file: exit 1, the path named on stderr" \
    eval '[ $rc -eq 1 ] && grep -q "no/such/dir/x.log" "$TMP/err2"'

echo "logs: $passed passed, $failed failed"
[ $failed -eq 0 ]
