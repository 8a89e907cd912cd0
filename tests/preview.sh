#!/bin/sh
# The preview page (GET /) in a real browser: skeld serves it on an http:// listener, headless
# Chromium opens /?file=robot.skf&anim=Walk&size=96x96, and the page plays frames skeld renders.
# The DOM Chromium dumps must count at least 5 frames shown (<body data-frames-played="N">, set
# by contrib/www/app.js). Then SIGTERM: skeld must exit 0.
# Skips (77) without Chromium (contrib/install-deps installs it) or when this skeld has no
# http:// listener. Only loopback; every wait is bounded.
# shellcheck disable=SC2317 # the functions below run through trap and poll
set -u
bin=${SKELD_BIN:-daemon/skeld}
samples=${SKELD_SAMPLES:-samples}
browser=${CHROMIUM:-chromium}
min_frames=5

if ! command -v "$browser" >/dev/null 2>&1; then
    echo "preview: $browser not installed (sh contrib/install-deps): skipped"
    exit 77
fi

tmp=$(mktemp -d) || exit 99
pid=
watcher=
cleanup() {
    [ -n "$pid" ] && [ ! -f "$tmp/rc" ] && kill -KILL "$pid" 2>/dev/null
    [ -n "$watcher" ] && wait "$watcher"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

# Polls (up to 30 s) until the command succeeds.
poll() {
    i=0
    while [ $i -lt 300 ]; do
        "$@" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
# The daemon's stdout has its http listener's line.
listening() { grep -q '^listening http://' "$tmp/out"; }
# The daemon has exited (its status is in $tmp/rc).
exited() { [ -f "$tmp/rc" ]; }
ready_or_gone() { listening || exited; }
pid_known() { [ -s "$tmp/pid" ]; }

# The daemon runs in a subshell that records its pid and, once it exits, its status, so the
# test can tell "still starting" from "gone" without sleeping on a guess.
# Each file appears whole (written aside, then renamed).
(
    "$bin" serve --listen http://127.0.0.1:0 --listen "unix:$tmp/s.sock" \
        --root "$samples" --preload "$samples" >"$tmp/out" 2>"$tmp/err" &
    echo $! >"$tmp/pid.t" && mv "$tmp/pid.t" "$tmp/pid"
    wait $!
    echo $? >"$tmp/rc.t" && mv "$tmp/rc.t" "$tmp/rc"
) &
watcher=$!
poll pid_known || { echo "preview: the daemon was not started"; exit 99; }
pid=$(cat "$tmp/pid")

if ! poll ready_or_gone; then
    echo "preview: no 'listening http://' line from the daemon within 30 s"
    cat "$tmp/err"
    exit 1
fi
if ! listening; then
    if grep -q 'http://' "$tmp/err"; then
        echo "preview: the daemon has no http listener (it refused --listen http://): skipped"
        sed 's/^/  /' "$tmp/err"
        exit 77
    fi
    echo "preview: the daemon exited with status $(cat "$tmp/rc") before listening"
    cat "$tmp/err"
    exit 1
fi
port=$(sed -n 's|^listening http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$tmp/out" | head -n 1)
if [ -z "$port" ]; then
    echo "preview: cannot read the port from:"
    cat "$tmp/out"
    exit 1
fi

# Virtual time: the page's timers run 10 s of simulated time (paused while requests are out),
# so the count does not depend on the machine's speed. HOME and the profile stay in $tmp;
# `timeout` bounds a browser that hangs.
guard=
command -v timeout >/dev/null 2>&1 && guard="timeout 120"
mkdir -p "$tmp/home"
fail=0
# plays NAME QUERY: the page opened with ?QUERY must play at least $min_frames frames; its DOM
# is left in $tmp/NAME.dom, the browser's status in brc.
plays() {
    url="http://127.0.0.1:$port/?$2"
    echo "preview: $browser --headless --dump-dom $url"
    rm -rf "$tmp/profile"
    # shellcheck disable=SC2086
    HOME=$tmp/home $guard "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --no-first-run --user-data-dir="$tmp/profile" --virtual-time-budget=10000 \
        --dump-dom "$url" >"$tmp/$1.dom" 2>"$tmp/browser.err"
    brc=$?
    played=$(sed -n 's/.*<body[^>]*data-frames-played="\([0-9][0-9]*\)".*/\1/p' "$tmp/$1.dom" | head -n 1)
    if [ $brc -ne 0 ]; then
        echo "preview: $browser exited with status $brc"
        tail -n 20 "$tmp/browser.err"
        fail=1
    elif [ -z "$played" ]; then
        echo "preview: the dumped DOM has no <body data-frames-played=..> (was the page served?)"
        head -c 2000 "$tmp/$1.dom"
        fail=1
    elif [ "$played" -lt $min_frames ]; then
        echo "preview: the page played $played frames, fewer than $min_frames; its status said:"
        grep 'id="status"' "$tmp/$1.dom"
        fail=1
    else
        echo "preview: the page played $played frames"
    fi
}

plays robot "file=robot.skf&anim=Walk&size=96x96"
# The list names a preloaded armature by its file (isolated, U+2068: right-to-left names cannot
# reorder the label), with the start of its id.
if [ $brc -eq 0 ] && ! grep -q '<option value="id:[0-9a-f]*">[^<r]*robot\.skf ([0-9a-f]\{8\}' "$tmp/robot.dom"; then
    echo "preview: the armature list does not name robot.skf; its options:"
    grep -o '<option[^<]*' "$tmp/robot.dom" | head -n 10
    fail=1
fi

# An animation and a style only "#N" reaches (a comma in the name), the styles' ids in the
# file (10, 11, 12) not their places: the page asks for "#1" of each, which must draw.
if command -v python3 >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
    python3 "${SKELD_SRCDIR:-.}/tests/helpers/edit-skf.py" "$samples/robot.skf" "$tmp/styled.skf" '
j["animations"][1]["name"] = "Walk,2"
for k, st in enumerate(j["styles"]):
    st["id"] = 10 + k
j["styles"][1]["name"] = "Red,Dark"'
    id=$(curl -s --max-time 30 --data-binary @"$tmp/styled.skf" "http://127.0.0.1:$port/v1/armatures" |
        sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p')
    if [ -z "$id" ]; then
        echo "preview: the upload of styled.skf failed"
        fail=1
    else
        plays styled "id=$id&anim=%231&style=%231&size=64x64"
    fi
else
    echo "preview: python3 or curl missing: the \"#N\" names not checked"
fi

# A file that does not open says why, its name isolated (U+2068 .. U+2069) as every name from
# a file or a URL, and offers no spritesheet: the link has no href (an href="#" with
# `download` saved the page itself as the "spritesheet").
lri=$(printf '\342\201\250') pdi=$(printf '\342\201\251')
rm -rf "$tmp/profile"
# shellcheck disable=SC2086
HOME=$tmp/home $guard "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$tmp/profile" --virtual-time-budget=10000 \
    --dump-dom "http://127.0.0.1:$port/?file=missing.skf" >"$tmp/missing.dom" 2>"$tmp/browser.err"
if ! grep -q "id=\"status\"[^>]*>Cannot open ${lri}missing\\.skf${pdi}: " "$tmp/missing.dom"; then
    echo "preview: a missing file does not say it cannot be opened; the status said:"
    grep 'id="status"' "$tmp/missing.dom"
    fail=1
fi
if grep -q '<a id="sheet"[^>]*href=' "$tmp/missing.dom"; then
    echo "preview: with no armature open, the spritesheet link still leads somewhere:"
    grep -o '<a id="sheet"[^>]*>' "$tmp/missing.dom"
    fail=1
fi

# SIGTERM drains and stops the daemon: it must exit 0, within 30 s.
kill -TERM "$pid"
if ! poll exited; then
    echo "preview: the daemon did not exit within 30 s of SIGTERM"
    exit 1
fi
rc=$(cat "$tmp/rc")
if [ "$rc" -ne 0 ]; then
    echo "preview: the daemon exited with status $rc after SIGTERM"
    tail -n 20 "$tmp/err"
    fail=1
fi
exit $fail
