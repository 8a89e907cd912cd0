#!/bin/sh
# One skeld node alone against HAProxy (contrib/deploy/haproxy.cfg as shipped) in front of two
# nodes, on the same render load, in one run, alternating:
#   1. renders/s: 256x256 PNGs of 8 armatures (the project's samples under a shared --root),
#      every request a new frame, result caches off; the node alone has 2 workers, each of
#      the two behind HAProxy has 1 (the same 2 cores)
#   2. what HAProxy adds to one request: the median latency of GET /healthz, one connection,
#      one request at a time, direct and through HAProxy
# Each figure is the median of RUNS runs of SECONDS seconds (wrk, 8 connections).
#
#   contrib/bench/bench-cluster.sh [RUNS] [SECONDS]
#
# Run from the build directory after `make`; needs haproxy and wrk (contrib/install-deps).
set -eu
runs=${1:-5}
secs=${2:-3}
bin=./daemon/skeld
cfg=$(dirname "$0")/../deploy/haproxy.cfg
lua=$(dirname "$0")/rotate.lua
. "$(dirname "$0")/common.sh"
[ -x "$bin" ] || { echo "bench-cluster: run make first" >&2; exit 1; }
for t in haproxy wrk; do
    command -v $t >/dev/null 2>&1 || { echo "bench-cluster: $t is missing (contrib/install-deps)" >&2; exit 1; }
done

dir=$(mktemp -d)
pids=
trap 'for p in $pids; do kill -TERM $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM # the EXIT trap cleans up; without an exit the script would go on
mkdir "$dir/root"
for k in 0 1 2 3 4 5 6 7; do
    set -- samples/robot.skf samples/critter.skf samples/robot-0.7.skf samples/lamp-0.7.skf
    shift $((k % 4))
    cp "$1" "$dir/root/a$k.skf"
done

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# node NAME HTTP-PORT THREADS
node() {
    $bin serve --node-name "$1" --listen "http://127.0.0.1:$2" --root "$dir/root" --threads "$3" \
        --result-cache-mb 0 --log-level warn >"$dir/$1.out" 2>&1 &
    pids="$pids $!"
    wait_for "bench-cluster: $1 did not start" "$dir/$1.out" grep -qs '^ready' "$dir/$1.out"
}

alone=$(port) n1=$(port) n2=$(port) front=$(port) stats=$(port)
node alone "$alone" 2
node node1 "$n1" 1
node node2 "$n2" 1
# The shipped file names three nodes: the third is a port nothing listens on, so HAProxy
# holds it down and hashes over the two.
SKELD_HAPROXY_HTTP=127.0.0.1:$front SKELD_HAPROXY_BIN=127.0.0.1:$(port) \
SKELD_HAPROXY_STATS=127.0.0.1:$stats \
SKELD_NODE1_HTTP=127.0.0.1:$n1 SKELD_NODE1_BIN=127.0.0.1:$(port) SKELD_NODE1_HTTP_PORT=$n1 \
SKELD_NODE2_HTTP=127.0.0.1:$n2 SKELD_NODE2_BIN=127.0.0.1:$(port) SKELD_NODE2_HTTP_PORT=$n2 \
SKELD_NODE3_HTTP=127.0.0.1:$(port) SKELD_NODE3_BIN=127.0.0.1:$(port) SKELD_NODE3_HTTP_PORT=1 \
    haproxy -db -f "$cfg" >"$dir/haproxy.log" 2>&1 &
pids="$pids $!"
both_up() { [ "$(curl -s "http://127.0.0.1:$stats/stats;csv" | grep -c '^skeld_nodes,node[12],.*,UP,')" = 2 ]; }
wait_for "bench-cluster: HAProxy never saw both nodes up" "$dir/haproxy.log" both_up

# rps PORT: requests/s of one render run
rps() {
    wrk -t2 -c8 -d"${secs}s" -s "$lua" "http://127.0.0.1:$1/" -- "/v1/files/a" \
        ".skf/render.png?size=256x256&frame=" 8 | awk '/^Requests\/sec/ {print $2}'
}
# p50 PORT: the median latency of /healthz in microseconds, one request at a time
p50() {
    wrk -t1 -c1 -d"${secs}s" --latency "http://127.0.0.1:$1/healthz" |
        awk '$1 == "50%" { v = $2; u = 1; if (v ~ /ms$/) u = 1000; else if (v ~ /s$/ && v !~ /us$/) u = 1000000;
             sub(/[a-z]+$/, "", v); print v * u }'
}

n=0
: >"$dir/a" ; : >"$dir/c" ; : >"$dir/la" ; : >"$dir/lc"
while [ $n -lt "$runs" ]; do
    rps "$alone" >>"$dir/a"
    rps "$front" >>"$dir/c"
    p50 "$alone" >>"$dir/la"
    p50 "$front" >>"$dir/lc"
    n=$((n + 1))
done
a=$(median <"$dir/a") c=$(median <"$dir/c") la=$(median <"$dir/la") lc=$(median <"$dir/lc")
echo "renders/s (256x256, every frame new), medians of $runs runs of ${secs} s:"
echo "  one node, 2 workers:            $a"
echo "  HAProxy + 2 nodes x 1 worker:   $c"
awk -v a="$a" -v c="$c" 'BEGIN {printf "  cluster / alone: %.2fx (same 2 cores: HAProxy and two loops share them)\n", c / a}'
echo "GET /healthz, one at a time, median latency: direct ${la} us, through HAProxy ${lc} us"
awk -v a="$la" -v c="$lc" 'BEGIN {printf "  HAProxy adds %.0f us per request\n", c - a}'
for node in node1 node2; do
    eval p=\$$( [ $node = node1 ] && echo n1 || echo n2 )
    echo "  $node served $(curl -s "http://127.0.0.1:$p/metrics" | awk '/^skeld_http_requests_total\{route="render",status="200"\}/ {print $2}') renders"
done
