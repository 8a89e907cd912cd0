# The shell tests' checks, sourced by each: one "ok - DESC" or "not ok - DESC" line a check,
# counted in passed and failed for the script's closing line. For sh (dash) and bash.
passed=0 failed=0
ok() {
    passed=$((passed + 1))
    echo "ok - $*"
}
notok() {
    failed=$((failed + 1))
    echo "not ok - $*"
}
# check DESC CMD...: one check, passed when CMD succeeds.
check() {
    local d=$1
    shift
    if "$@"; then ok "$d"; else notok "$d"; fi
}
