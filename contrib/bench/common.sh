# Shell helpers the bench scripts share (sourced, not run).

# wait_for WHAT LOG CMD...: runs CMD every 50 ms until it succeeds, for up to 2 minutes (a
# loaded machine starts a daemon slowly); then says WHAT, shows LOG and exits 1.
wait_for() {
    what=$1 log=$2
    shift 2
    i=0
    until "$@"; do
        i=$((i + 1))
        [ $i -lt 2400 ] || { echo "$what" >&2; cat "$log" >&2; exit 1; }
        sleep 0.05
    done
}

# stop: SIGTERM to the daemon a script started (its pid in $pid), waited for; pid is then
# empty, so it may be called again (the scripts' EXIT traps do).
pid=
stop() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    pid=
}

# median: the median of the numbers on stdin, one per line
median() {
    sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
