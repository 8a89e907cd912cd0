#!/bin/sh
# bench-daemon-rev.sh REV [PAIRS] [FILE.skf...]: pipelined POSE/s (4 connections x 64 in
# flight, 2 workers, the result cache off) of this tree's daemon against the one of git
# revision REV, each run against a fresh daemon, in alternation (old, new, old, new, ...)
# PAIRS times (default 6) on each FILE (default the conformance skellington and
# samples/robot.skf), so that both see the same spells of a shared machine. The client is this
# tree's bench-load for both. Prints each pair and the median of the pairs' new/old ratios: the
# A/B of a change to the daemon's request path. Run from a configured and built tree; REV is
# built in a temporary worktree, removed at the end. THREADS (default 2) and MIX (bench-load's
# flags, default "--conns 4 --depth 64 --mix pose=1") change the daemons' workers and the load:
#   THREADS=1 MIX="--conns 4 --depth 4 --mix pose=0,mesh=0,render=1 --size 512" bench-daemon-rev.sh REV
set -eu
rev=${1:?usage: bench-daemon-rev.sh REV [PAIRS] [FILE.skf...]}
pairs=${2:-6}
if [ $# -ge 2 ]; then shift 2; else shift 1; fi
[ $# -gt 0 ] || set -- ../shared/conformance/skellington.skf samples/robot.skf
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/contrib/bench/common.sh"
new=$here/daemon/skeld
load=$here/contrib/bench/bench-load
[ -x "$new" ] && [ -x "$load" ] || { echo "bench-daemon-rev.sh: build the tree first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'stop; git -C "$here" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM # the EXIT trap cleans up; without an exit the script would go on
git -C "$here" worktree add -q --detach "$tmp/old" "$rev"
(cd "$tmp/old" && autoreconf -fi >/dev/null 2>&1 && ./configure -q >/dev/null &&
    make -j2 daemon/skeld >/dev/null) || { echo "bench-daemon-rev.sh: $rev does not build" >&2; exit 1; }
old=$tmp/old/daemon/skeld

threads=${THREADS:-2}
mix=${MIX:---conns 4 --depth 64 --mix pose=1}

# one_run BIN FILE: the ok/s of one 3-second run of the load against a fresh daemon
one_run() {
    rm -f "$tmp/s.sock"
    "$1" serve --listen "unix:$tmp/s.sock" --root "$here/samples" --preload "$here/samples" \
        --threads "$threads" --result-cache-mb 0 --log-level warn >"$tmp/out" 2>&1 &
    pid=$!
    wait_for "bench-daemon-rev.sh: skeld did not start" "$tmp/out" grep -qs '^listening' "$tmp/out"
    # shellcheck disable=SC2086
    r=$("$load" --uri "unix:$tmp/s.sock" --skf "$2" --seconds 3 --pid "$pid" $mix |
        sed -n 's/.* = \([0-9.]*\) ok\/s/\1/p')
    stop
    # a flag bench-load refuses (MIX) or a daemon that died: no figure, not a ratio of nan
    awk -v r="$r" 'BEGIN {exit !(r > 0)}' ||
        { echo "bench-daemon-rev.sh: no ok/s from $1 with bench-load $mix" >&2; exit 1; }
    echo "$r"
}

for file in "$@"; do
    [ -f "$file" ] || { echo "$file: not found, skipped"; continue; }
    : >"$tmp/runs"
    i=0
    while [ $i -lt "$pairs" ]; do
        o=$(one_run "$old" "$file")
        n=$(one_run "$new" "$file")
        echo "$o $n" >>"$tmp/runs"
        i=$((i + 1))
    done
    echo "$file ($pairs pairs, ok/s with $threads worker(s), bench-load $mix)"
    awk -v rev="$rev" '{printf "  %s %s, this tree %s: %.3f\n", rev, $1, $2, $2 / $1}' "$tmp/runs"
    ratio=$(awk '{print $2 / $1}' "$tmp/runs" | median | awk '{printf "%.3f", $1}')
    echo "  new/old: $ratio (median of the pairs)"
done
