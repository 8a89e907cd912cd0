#!/bin/sh
# bench-rev.sh REV [PAIRS] [FILE.skf...]: this tree's bench-render against the one of git
# revision REV, run in alternation (old, new, old, new, ...) PAIRS times (default 10) on each
# FILE (default samples/robot.skf and ../shared/conformance/skellington.skf), so that both
# see the same spells of a shared machine. Prints, for each file, the median raster and
# encode times of each build, and the median of the pairs' new/old encode ratios: the A/B of
# a change to the renderer or the encoder. Run from a configured and built tree; REV is built
# in a temporary worktree, removed at the end.
set -eu
rev=${1:?usage: bench-rev.sh REV [PAIRS] [FILE.skf...]}
pairs=${2:-10}
if [ $# -ge 2 ]; then shift 2; else shift 1; fi
[ $# -gt 0 ] || set -- samples/robot.skf ../shared/conformance/skellington.skf
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/contrib/bench/common.sh"
new=$here/contrib/bench/bench-render
[ -x "$new" ] || { echo "bench-rev.sh: build the tree first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'git -C "$here" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM # the EXIT trap cleans up (a signal's default end would skip it)
git -C "$here" worktree add -q --detach "$tmp/old" "$rev"
(cd "$tmp/old" && autoreconf -fi >/dev/null 2>&1 && ./configure -q >/dev/null &&
    make -j2 contrib/bench/bench-render >/dev/null) || { echo "bench-rev.sh: $rev does not build" >&2; exit 1; }
old=$tmp/old/contrib/bench/bench-render

# one_run BIN FILE: "RASTER_MS PNG_MS" from bench-render's first figures line
one_run() {
    "$1" --renders 500 --no-baselines "$2" |
        sed -n 's/.*raster \([0-9.]*\) ms, png \([0-9.]*\) ms.*/\1 \2/p' | head -n 1
}

for file in "$@"; do
    [ -f "$file" ] || { echo "$file: not found, skipped"; continue; }
    : > "$tmp/runs"
    i=0
    while [ $i -lt "$pairs" ]; do
        echo "$(one_run "$old" "$file") $(one_run "$new" "$file")" >> "$tmp/runs"
        i=$((i + 1))
    done
    col() { awk "{print \$$1}" "$tmp/runs" | median; }
    ratio=$(awk '{print $4 / $2}' "$tmp/runs" | median | awk '{printf "%.3f", $1}')
    printf '%s (%s pairs)\n  %s: raster %s ms, encode %s ms\n  this tree: raster %s ms, encode %s ms\n  encode new/old: %s (median of the pairs)\n' \
        "$file" "$pairs" "$rev" "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$ratio"
done
