#!/bin/sh
# The daemon's figures in one run, each against a baseline measured by this same script:
#   1. POSE pipelined (4 connections x 64 in flight), 2 workers
#   2. POSE paced at half the rate measured in 1: latency p50/p99/p99.9
#   3. RENDER 512x512 PNG with 1 worker, then with 2: renders/s and the ratio
#   4. the daemon's RSS with FILE and the project's two samples cached (three armatures)
# Each throughput figure is the median of RUNS runs of SECONDS seconds.
#
#   contrib/bench/bench-daemon.sh FILE.skf [RUNS] [SECONDS]
#
# Run from the build directory after `make`. The daemon listens on a private unix socket in a
# temp directory and is stopped with SIGTERM at the end.
set -eu

skf=${1:?usage: bench-daemon.sh FILE.skf [RUNS] [SECONDS]}
runs=${2:-5}
secs=${3:-3}
bin=./daemon/skeld
load=./contrib/bench/bench-load
[ -x "$bin" ] && [ -x "$load" ] || { echo "bench-daemon: run make first" >&2; exit 1; }

dir=$(mktemp -d)
pid=
stop() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    pid=
}
trap 'stop; rm -rf "$dir"' EXIT INT TERM

# start THREADS: a daemon with the samples preloaded (FILE is uploaded by bench-load)
start() {
    $bin serve --listen "unix:$dir/s.sock" --root samples --preload samples \
        --threads "$1" --log-level warn >"$dir/out" 2>&1 &
    pid=$!
    i=0
    until grep -q '^listening' "$dir/out" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 100 ] || { echo "bench-daemon: skeld did not start" >&2; cat "$dir/out" >&2; exit 1; }
        sleep 0.05
    done
}

# median of the numbers on stdin
median() {
    sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# bench ARGS...: one bench-load run against the running daemon; prints its report
bench() {
    $load --uri "unix:$dir/s.sock" --skf "$skf" --seconds "$secs" --pid "$pid" "$@"
}

# okps ARGS...: the median ok/s of RUNS runs
okps() {
    n=0
    while [ $n -lt "$runs" ]; do
        bench "$@" | sed -n 's/.* = \([0-9.]*\) ok\/s/\1/p'
        n=$((n + 1))
    done | median
}

start 2
pose=$(okps --conns 4 --depth 64 --mix pose=1)
echo "POSE pipelined, 2 workers: $pose req/s (median of $runs)"
half=$(awk -v r="$pose" 'BEGIN {printf "%d", r / 2}')
echo "POSE paced at $half/s:"
bench --conns 4 --depth 64 --mix pose=1 --rate "$half" | sed 's/^/  /'
render2=$(okps --conns 4 --depth 4 --mix pose=0,mesh=0,render=1 --size 512)
echo "RENDER 512x512, 2 workers: $render2 PNG/s"
echo "RSS with three armatures cached, after the runs:"
bench --conns 1 --depth 1 --mix pose=1 | grep RSS | sed 's/^/  /'
stop

start 1
render1=$(okps --conns 4 --depth 4 --mix pose=0,mesh=0,render=1 --size 512)
echo "RENDER 512x512, 1 worker: $render1 PNG/s"
stop

awk -v a="$render2" -v b="$render1" 'BEGIN {printf "RENDER 2 workers / 1 worker: %.2fx\n", a / b}'
