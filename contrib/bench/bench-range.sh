#!/bin/sh
# A long frame range through the daemon against the same range drawn by one process:
# `skelctl render --frames` (a 2-worker daemon, its result cache off) and `skeld render
# --frames`, in alternation RUNS times, each writing its files into a fresh directory (file
# creation slows as a directory fills). With REV, the skelctl of git revision REV runs too,
# against the same daemon: the A/B of a change to how skelctl sends a range. Prints the median
# seconds and frames/s of each, and their ratios to skeld render.
#
#   contrib/bench/bench-range.sh [FRAMES] [SIZE] [RUNS] [REV]
#
# FRAMES defaults to 0-15999 (the robot's Walk, looped), SIZE to 64x64 (where the steps, not
# the drawing, decide), RUNS to 3. Run from the build directory after `make`.
set -eu
. "$(dirname "$0")/common.sh"

frames=${1:-0-15999}
size=${2:-64x64}
runs=${3:-3}
rev=${4:-}
here=$(pwd)
bin=$here/daemon/skeld
ctl=$here/client/skelctl
[ -x "$bin" ] && [ -x "$ctl" ] || { echo "bench-range: run make first" >&2; exit 1; }

dir=$(mktemp -d)
trap 'stop; [ -z "$rev" ] || git -C "$here" worktree remove --force "$dir/rev" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM # the EXIT trap cleans up; without an exit the script would go on
if [ -n "$rev" ]; then
    git -C "$here" worktree add -q --detach "$dir/rev" "$rev"
    (cd "$dir/rev" && autoreconf -fi >/dev/null 2>&1 && ./configure -q >/dev/null &&
        make -j2 client/skelctl >/dev/null) || { echo "bench-range: $rev does not build" >&2; exit 1; }
fi

$bin serve --listen "unix:$dir/s.sock" --root samples --threads 2 --result-cache-mb 0 \
    --log-level warn >"$dir/log" 2>&1 &
pid=$!
wait_for "bench-range: the daemon did not start" "$dir/log" "$ctl" --uri "unix:$dir/s.sock" ping >/dev/null 2>&1

flags="--anim Walk --loop --frames $frames --size $size"
# timed NAME CMD...: CMD's wall seconds, appended to $dir/NAME; its files go to a fresh $dir/out
timed() {
    name=$1
    shift
    rm -rf "$dir/out"
    mkdir "$dir/out"
    t0=$(date +%s.%N)
    "$@" -o "$dir/out/f_%05d.png" >/dev/null
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}' >>"$dir/$name"
}
for i in $(seq "$runs"); do
    timed skeld "$bin" render samples/robot.skf $flags
    timed skelctl "$ctl" --uri "unix:$dir/s.sock" render robot.skf $flags
    [ -z "$rev" ] || timed old "$dir/rev/client/skelctl" --uri "unix:$dir/s.sock" render robot.skf $flags
done
n=$(($(echo "$frames" | cut -d- -f2) - $(echo "$frames" | cut -d- -f1) + 1))
base=$(median <"$dir/skeld")
echo "robot Walk, frames $frames ($n) at $size, medians of $runs runs:"
for name in skeld skelctl old; do
    [ -s "$dir/$name" ] || continue
    m=$(median <"$dir/$name")
    case $name in
    skeld) what="skeld render (one process)" ;;
    skelctl) what="skelctl render (daemon, 2 workers)" ;;
    old) what="skelctl render of $rev" ;;
    esac
    awk -v w="$what" -v m="$m" -v n="$n" -v b="$base" \
        'BEGIN {printf "  %-40s %8.2f s  %8.0f frames/s  %5.2fx the time of skeld render\n", w, m, n / m, m / b}'
done
