#!/bin/sh
# The preview page (GET /) clicked and typed into: tests/preview-cdp.py drives headless
# Chromium through the DevTools protocol on a pipe (tests/helpers/cdp.py, python3's standard
# library only) against a skeld it stops and starts again on its port. It checks what a DOM
# dump (preview.sh) cannot: playing again after a bad size, after skeld was unreachable (and
# on, when frames asked for before Play give up after it) and after skeld lost a file the
# page uploaded (saying that it sent it again, or why it could not); an error kept on the
# status line past frames that arrive after it stopped playing; and the words shown (1 frame,
# 1 bone, isolated names, an upload's name where it cannot be opened).
# Skips (77) without Chromium or python3 (contrib/install-deps installs both) or when this
# skeld has no http:// listener. Only loopback; every wait is bounded.
set -u
bin=${SKELD_BIN:-daemon/skeld}
samples=${SKELD_SAMPLES:-samples}
srcdir=${SKELD_SRCDIR:-.}
browser=${CHROMIUM:-chromium}

if ! command -v "$browser" >/dev/null 2>&1; then
    echo "preview-cdp: $browser not installed (sh contrib/install-deps): skipped"
    exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "preview-cdp: python3 not installed (sh contrib/install-deps): skipped"
    exit 77
fi

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 99' HUP INT TERM

# The root: robot.skf, and one.skf, whose Glitch keeps only its frame 0 keys (one frame long).
# The upload: robot.skf with a style renamed, bytes no other check loads. onebone.skf: robot.skf
# of its root bone alone (no sample has one bone), uploaded to see "1 bone".
mkdir "$tmp/root" && cp "$samples/robot.skf" "$tmp/root/" || exit 99
python3 "$srcdir/tests/helpers/edit-skf.py" "$samples/robot.skf" "$tmp/root/one.skf" '
a = j["animations"][3]
a["keyframes"] = [k for k in a["keyframes"] if k["frame"] == 0]
for k in a["keyframes"]:
    k.pop("next_kf", None)' || exit 99
python3 "$srcdir/tests/helpers/edit-skf.py" "$samples/robot.skf" "$tmp/upload.skf" '
j["styles"][1]["name"] = "Crimson"' || exit 99
python3 "$srcdir/tests/helpers/edit-skf.py" "$samples/robot.skf" "$tmp/onebone.skf" '
j["bones"] = j["bones"][:1]
j["ik_root_ids"] = []
for a in j["animations"]:
    a["keyframes"] = []' || exit 99

# `timeout` bounds a browser or a daemon that hangs past every wait's own bound.
guard=
command -v timeout >/dev/null 2>&1 && guard="timeout 900"
# shellcheck disable=SC2086
CHROMIUM=$browser $guard python3 "$srcdir/tests/preview-cdp.py" "$bin" "$tmp/root" \
    "$tmp/upload.skf" "$tmp"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    echo "preview-cdp: the daemon's messages:"
    tail -n 20 "$tmp/skeld.err" 2>/dev/null
    echo "preview-cdp: the browser's:"
    tail -n 20 "$tmp/browser.err" 2>/dev/null
fi
exit $rc
