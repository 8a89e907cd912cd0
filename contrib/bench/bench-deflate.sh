#!/bin/sh
# bench-deflate.sh REV [PAIRS] [FILE.skf...]: the default deflate of git revision REV (A)
# against the tree's (B), in one process (bench-deflate.c): each file's frame deflated by A
# and B in alternation PAIRS times (default 300), the median of the pairs' B/A time ratios and
# whether the bytes are the same. Files default to the robot, the critter and the conformance
# skellington. Run from a configured and built tree (it links the tree's engine for drawing).
# `bench-deflate.sh HEAD` is an A/A run: what B's running second in each pair is worth.
set -eu
rev=${1:?usage: bench-deflate.sh REV [PAIRS] [FILE.skf...]}
pairs=${2:-300}
if [ $# -ge 2 ]; then shift 2; else shift 1; fi
[ $# -gt 0 ] || set -- samples/robot.skf samples/critter.skf ../shared/conformance/skellington.skf
here=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$here/daemon/engine/.libs/libengine.a" ] || { echo "bench-deflate.sh: build the tree first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM # the EXIT trap cleans up (a signal's default end would skip it)
mkdir "$tmp/a"
for f in deflate_dyn.c deflate_dyn.h deflate_bits.h; do
    git -C "$here" show "$rev:daemon/engine/$f" > "$tmp/a/$f"
done
cflags="-std=c11 -O3 -g -fno-math-errno -D_POSIX_C_SOURCE=200809L"
# names NAME: the public functions of a build, renamed NAME_*
names() {
    echo "-Ddeflate_dyn_bound=$1_bound -Ddeflate_dyn_scratch_size=$1_scratch" \
        "-Ddeflate_dyn_begin=$1_begin -Ddeflate_dyn_block=$1_block -Ddeflate_dyn_end=$1_end"
}
# shellcheck disable=SC2046,SC2086
${CC:-cc} $cflags $(names A) -c "$tmp/a/deflate_dyn.c" -o "$tmp/a.o"
# shellcheck disable=SC2046,SC2086
${CC:-cc} $cflags $(names B) -c "$here/daemon/engine/deflate_dyn.c" -o "$tmp/b.o"
has_cell=
grep -q 'size_t stride, size_t cell' "$tmp/a/deflate_dyn.h" && has_cell=-DA_HAS_CELL
# shellcheck disable=SC2086,SC2046
${CC:-cc} $cflags $has_cell -I"$here/daemon" -I"$here/contrib/bench" \
    "$here/contrib/bench/bench-deflate.c" "$tmp/a.o" "$tmp/b.o" \
    "$here/daemon/engine/.libs/libengine.a" \
    $(pkg-config --libs libzip jansson libpng zlib libdeflate) -lm -o "$tmp/bench-deflate"
"$tmp/bench-deflate" --pairs "$pairs" "$@"
