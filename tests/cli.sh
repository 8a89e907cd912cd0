#!/bin/sh
# The two command lines as scripts meet them: every command of skeld and skelctl answers
# --help (exit 0, listing exactly the flags of proto/skp_cli.c's table it takes) and
# --version (configure's version); an unknown flag or one the command does not take is a usage
# error (exit 2) naming it; an unknown animation or style, a missing file, a daemon that
# refuses are exit 1 with a message (the valid names listed); the sheet's JSON is OUT.json
# beside OUT.png; skeld info and skelctl info print the same JSON, byte for byte; pose --matrix prints the POSE reply's matrices and tints in both programs;
# skelctl stats --prometheus uses GET /metrics' names; a daemon without --root refuses LOAD by
# path (binary and HTTP); config file errors name the file, line and key.
# Daemons are waited for on their "ready:" line (read from a FIFO), never with a sleep.
# One "ok - ..." or "not ok - ..." line per check; exit 1 on any failure, 77 (skip) without
# the samples or python3.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -u

BIN=${SKELD_BIN:-$PWD/daemon/skeld}
CTL=${SKELD_CTL:-$PWD/client/skelctl}
S=${SKELD_SAMPLES:-$PWD/samples}
SRC=${SKELD_SRCDIR:-$PWD}
BUILD=${SKELD_BUILDDIR:-$PWD}
PY=${PYTHON:-python3}
if [ ! -f "$S/robot.skf" ] || [ ! -f "$S/critter.skf" ]; then
    echo "cli: SKIP: no samples in $S (make builds them)"
    exit 77
fi
if ! command -v "$PY" >/dev/null 2>&1; then
    echo "cli: SKIP: python3 is missing (contrib/install-deps installs it)"
    exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/skeld-cli.XXXXXX") || exit 1
. "$(dirname "$0")/tap.sh"
declare -A PID=() FD=()

cleanup() {
    local name
    for name in "${!PID[@]}"; do
        kill -KILL "${PID[$name]}" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

is() { [ "$1" = "$2" ]; }
same() { cmp -s "$1" "$2"; }
in_dir() { (cd "$1" && shift && exec "$@"); }
# edit_skf IN OUT CODE: IN with its armature.json changed by CODE (tests/helpers/edit-skf.py)
edit_skf() { "$PY" "$SRC/tests/helpers/edit-skf.py" "$@"; }
# small_files CMD...: CMD with files limited to 4 KiB, a write past that failing (EFBIG, its
# signal ignored) as a full disk would, part way through.
small_files() { (ulimit -f 4 && trap '' XFSZ && exec "$@"); }
# run NAME CMD...: CMD's output in $TMP/NAME.out and .err, its exit status in RC.
run() {
    local n=$1
    shift
    "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
    RC=$?
}
# said NAME TEXT: NAME's stderr holds TEXT (a fixed string).
said() { grep -qF -- "$2" "$TMP/$1.err"; }
# status NAME WANT DESC: RC is WANT; else show what was said.
status() {
    check "$3 (exit $RC)" is "$RC" "$2"
    [ "$RC" = "$2" ] || head -n 5 "$TMP/$1.err"
}

# ---- the shared flag table, read from its source --------------------------------------------
# FLAGS: every name; VALUED: those taking a value.
FLAGS=$(sed -n 's/^ *\[SKP_CLI_[A-Z_]*\] = {"\([a-z-]*\)", \(true\|false\),.*/\1/p' "$SRC/proto/skp_cli.c")
VALUED=$(sed -n 's/^ *\[SKP_CLI_[A-Z_]*\] = {"\([a-z-]*\)", true,.*/\1/p' "$SRC/proto/skp_cli.c")
check "the flag table read from proto/skp_cli.c ($(echo $FLAGS | wc -w) flags)" \
    test "$(echo $FLAGS | wc -w)" -ge 24
valued() { [[ " $(echo $VALUED) " == *" $1 "* ]]; }
PACKAGE=$(sed -n 's/^#define PACKAGE_NAME "\(.*\)"$/\1/p' "$BUILD/autoconfig.h")
VERSION=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$BUILD/autoconfig.h")
check "configure's package and version read from autoconfig.h ($PACKAGE $VERSION)" \
    eval '[ -n "$PACKAGE" ] && [ -n "$VERSION" ]'
# version_line PROGRAM: what its --version prints: "skeld 0.1.0", "skelctl (skeld) 0.1.0".
version_line() {
    if [ "$1" = "$PACKAGE" ]; then echo "$PACKAGE $VERSION"; else echo "$1 ($PACKAGE) $VERSION"; fi
}

# ---- --help, --version, and each flag of the table against each command ------------------------
# commands PROGRAM: the commands of the shared table's parser (serve has its own options).
SKELD_CMDS="info eval render conform"
SKELCTL_CMDS="ping stats load info pose mesh render"

help_checks() { # PROGRAM CMD
    local prog=$1 cmd=$2 n=${1##*/}-$2 f arg applies=0
    run "$n" "$prog" "$cmd" --help
    check "$n --help: exit 0, usage and exit statuses on stdout" \
        eval '[ $RC = 0 ] && grep -q "^usage: " "$TMP/$n.out" && grep -q "^exit status: 0 success, 1 runtime, load or server error, 2 usage error$" "$TMP/$n.out" && [ ! -s "$TMP/$n.err" ]'
    cp "$TMP/$n.out" "$TMP/$n.help"
    for f in $FLAGS; do
        arg=()
        valued "$f" && arg=(1)
        run "$n-$f" "$prog" "$cmd" "--$f" "${arg[@]}" --help
        if grep -qE -- "^  (-o, )?--$f( |$)" "$TMP/$n.help"; then
            applies=$((applies + 1))
            [ "$RC" = 0 ] || notok "$n: --$f is listed but refused (exit $RC): $(head -n 1 "$TMP/$n-$f.err")"
        elif [ "$RC" != 2 ] || ! said "$n-$f" "--$f does not apply to this command"; then
            notok "$n: --$f is not listed, yet exit $RC: $(head -n 1 "$TMP/$n-$f.err")"
        fi
    done
    ok "$n: the $applies flags --help lists are taken, the others refused (exit 2, named)"
    run "$n-v" "$prog" "$cmd" --version
    check "$n --version prints \"$(version_line "${prog##*/}")\"" \
        eval '[ $RC = 0 ] && is "$(cat "$TMP/$n-v.out")" "$(version_line "${prog##*/}")"'
    run "$n-bad" "$prog" "$cmd" --no-such-flag
    check "$n --no-such-flag: exit 2 naming it" eval '[ $RC = 2 ] && said "$n-bad" "unknown flag --no-such-flag"'
}
for c in $SKELD_CMDS; do help_checks "$BIN" "$c"; done
for c in $SKELCTL_CMDS; do help_checks "$CTL" "$c"; done

# What each command must take (so that a flag dropped from a mask is seen here too).
has_flags() { # NAME FLAG...
    local n=$1 f
    shift
    for f in "$@"; do grep -qE -- "^  (-o, )?--$f( |$)" "$TMP/$n.help" || return 1; done
}
check "skeld eval and skelctl pose list the evaluation flags, the engine options and --matrix" \
    eval '(for n in skeld-eval skelctl-pose; do has_flags $n anim frame smooth from warmup loop reverse position scale velocity y-down matrix help version || exit 1; done)'
check "skeld render and skelctl render list every render flag, --sheet and -o included" \
    eval '(for n in skeld-render skelctl-render; do has_flags $n frames size fit style background samples png-level sheet output || exit 1; done)'
check "skelctl stats lists --prometheus" has_flags skelctl-stats prometheus
# table_lines NAME: NAME's help lines of the shared table's flags (not skelctl's --uri, --token).
table_lines() { grep -E -- "^  (-o, )?--" "$TMP/$1.help" | grep -vE -- "^  --(uri|token) "; }
check "the two programs say the same of the same flags" \
    eval '[ "$(table_lines skeld-eval)" = "$(table_lines skelctl-pose)" ] && [ "$(table_lines skeld-render)" = "$(table_lines skelctl-render)" ]'

# The programs themselves and skeld serve.
for prog in "$BIN" "$CTL"; do
    p=${prog##*/}
    run "$p-help" "$prog" --help
    check "$p --help: exit 0, every command and the exit statuses" \
        eval '[ $RC = 0 ] && grep -q "^exit status: 0 success, 1 runtime, load or server error, 2 usage error$" "$TMP/$p-help.out"'
    for c in $([ "$p" = skeld ] && echo "serve $SKELD_CMDS" || echo "$SKELCTL_CMDS"); do
        grep -qE "^  $c( |$)" "$TMP/$p-help.out" || notok "$p --help does not list $c"
    done
    run "$p-version" "$prog" --version
    check "$p --version prints \"$(version_line "$p")\"" \
        eval '[ $RC = 0 ] && is "$(cat "$TMP/$p-version.out")" "$(version_line "$p")"'
    run "$p-cmd" "$prog" no-such-command
    status "$p-cmd" 2 "$p no-such-command is a usage error"
done
check "skelctl --help lists --sheet, --matrix, --prometheus, --uri and --token" \
    eval '(for f in sheet matrix prometheus uri token; do grep -qE -- "--$f( |$)" "$TMP/skelctl-help.out" || exit 1; done)'
run ctl-none "$CTL"
status ctl-none 2 "skelctl without a command is a usage error"
run ctl-uri "$CTL" --uri foo://x ping
check "skelctl --uri foo://x: a usage error (exit 2) naming the URI forms" \
    eval '[ $RC = 2 ] && said ctl-uri "use unix:/path or tcp://host:port"'
run ctl-after "$CTL" ping --uri tcp://127.0.0.1:1
check "skelctl ping --uri ...: exit 2, saying --uri goes before the command" \
    eval '[ $RC = 2 ] && said ctl-after "--uri goes before the command: skelctl --uri ... ping ..."'
run serve-help "$BIN" serve --help
check "skeld serve --help: exit 0, every option of daemon/config.c, --config, --version" \
    eval '[ $RC = 0 ] && for o in $(sed -n "s/^    {\"\([a-z-]*\)\", OPT_.*/\1/p" "$SRC/daemon/config.c") config help version; do grep -q -- "^  --$o " "$TMP/serve-help.out" || { echo "# --$o"; exit 1; }; done'
run serve-version "$BIN" serve --version
check "skeld serve --version prints \"$(version_line skeld)\"" \
    eval '[ $RC = 0 ] && is "$(cat "$TMP/serve-version.out")" "$(version_line skeld)"'
run serve-bad timeout 120 "$BIN" serve --listn x
status serve-bad 2 "skeld serve --listn is a usage error"

# ---- config file errors name the file, the line and the key -----------------------------------
# refused NAME DESC MESSAGE ARGS...: skeld serve ARGS stops the start, exit 2, saying MESSAGE.
# Under `timeout 120`: a regression that serves instead fails (exit 124) rather than hangs.
refused() {
    local n=$1 desc=$2 msg=$3
    shift 3
    run "$n" timeout 120 "$BIN" serve "$@"
    check "$desc" eval '[ $RC = 2 ] && said "$n" "$msg"'
}
printf '# a comment\nlisten = unix:%s/never.sock\n\nlistn = x\n' "$TMP" >"$TMP/c1.conf"
run conf1 timeout 120 "$BIN" serve --config "$TMP/c1.conf"
status conf1 2 "an unknown key in --config is a usage error"
check "it says $TMP/c1.conf:4: unknown key \"listn\"" said conf1 "$TMP/c1.conf:4: unknown key \"listn\""
printf 'threads = 2\nmax-connections = abc\n' >"$TMP/c2.conf"
refused conf2 "a value that is not a number: exit 2, c2.conf:2: max-connections: \"abc\" is not a number" \
    "$TMP/c2.conf:2: max-connections: \"abc\" is not a number" --config "$TMP/c2.conf"
printf 'max-connections = 0\n' >"$TMP/c3.conf"
refused conf3 "a number out of range: exit 2, c3.conf:1: max-connections: 0 is out of range" \
    "$TMP/c3.conf:1: max-connections: 0 is out of range" --config "$TMP/c3.conf"
printf 'threads = 2\n# listen may repeat\nlisten = unix:%s/never.sock\nlisten = unix:%s/never2.sock\nthreads = 3\n' "$TMP" "$TMP" >"$TMP/c7.conf"
refused conf7 "a key given twice in the file: exit 2, both lines named (never read as the last)" \
    "$TMP/c7.conf:5: \"threads\" given twice (first on line 1)" --config "$TMP/c7.conf"
printf 'threads 2\n' >"$TMP/c4.conf"
refused conf4 "a line without '=': exit 2, c4.conf:1 named" "$TMP/c4.conf:1: expected \"key = value\"" \
    --config "$TMP/c4.conf"
refused conf5 "on the command line: --max-connections: \"abc\" is not a number" \
    "--max-connections: \"abc\" is not a number" --max-connections abc
refused node-bad "--node-name with a space or quote (it goes into a header and a label): exit 2, named" \
    "--node-name \"a b\"c\": expected 1 to 64 of A-Z a-z 0-9 . _ -" --node-name 'a b"c' \
    --listen "unix:$TMP/never.sock"
# A listener's host is an address and its port a decimal number in range (atoi read "abc" as
# port 0, any free one, and 99999 as something else), refused before anything is opened.
for u in http://localhost:8080 tcp://127.0.0.1:abc tcp://127.0.0.1:99999 "tcp://::1:7878" http://127.0.0.1:; do
    run listen-bad timeout 120 "$BIN" serve --listen "$u" --listen "unix:$TMP/never.sock"
    check "--listen $u: exit 2, named, nothing listened on" \
        eval '[ $RC = 2 ] && said listen-bad "--listen $u: HOST must be an IP address" && [ ! -e "$TMP/never.sock" ]'
done

# A config path that is no file (a directory, a FIFO, a device) is refused at once, never read:
# a FIFO would hold the start (and on SIGHUP the loop thread), /dev/zero never end.
mkfifo "$TMP/fifo.conf"
for c in "$TMP:a directory, not a configuration file" \
    "$TMP/fifo.conf:not a regular file" "/dev/zero:not a regular file"; do
    refused conf-kind "--config ${c%%:*}: exit 2, \"${c#*:}\"" "skeld: ${c%%:*}: ${c#*:}" \
        --config "${c%%:*}" --listen "unix:$TMP/never.sock"
done
# Lines are read whole however long (a 4 KiB buffer split a comment, its tail read as an
# option), a NUL byte is refused, a byte order mark skipped; errors name the right line.
{ printf '# %05000d listn = 1\n' 0; printf 'threads = abc\n'; } >"$TMP/c6.conf"
refused conf6 "a 5000-byte comment is one line: the error is c6.conf:2's" \
    "$TMP/c6.conf:2: threads: \"abc\" is not a number" --config "$TMP/c6.conf"
printf 'threads = 2\0 7\n' >"$TMP/c7.conf"
refused conf7 "a NUL byte: exit 2, c7.conf:1 named" "$TMP/c7.conf:1: holds a NUL byte" \
    --config "$TMP/c7.conf"
printf '\357\273\277threads = abc\n' >"$TMP/c8.conf"
refused conf8 "a byte order mark is skipped: the key is read as threads" \
    "$TMP/c8.conf:1: threads: \"abc\" is not a number" --config "$TMP/c8.conf"
# Checks made after reading name the file and line too; empty strings that would mean "none"
# are refused (an empty auth-token would open a daemon meant to be closed).
for c in "listen = foo:listen foo: expected unix:/path" 'log-level = loud:log-level "loud": expected' \
    "auth-token =:auth-token: empty" "root = :root: empty" "log-file =:log-file: empty" \
    "node-name = a b:node-name \"a b\": expected"; do
    printf '\n%s\n' "${c%%:*}" >"$TMP/c9.conf"
    refused conf9 "\"${c%%:*}\" in a config file: exit 2, c9.conf:2: ${c#*:}" \
        "$TMP/c9.conf:2: ${c#*:}" --config "$TMP/c9.conf"
done
# The example's options left commented out are there to be uncommented as they stand: each
# line is "name = value" with a one-word value, what explains it on lines of its own (the
# log-file line, uncommented, logged to a file named "skeld.log   (default: stderr, ...").
sed -n 's/^# *\([a-z-]* = .*\)$/\1/p' "$SRC/contrib/skeld.conf.example" >"$TMP/example-opts.conf"
run example-opts "$BIN" serve --config "$TMP/example-opts.conf" --help
check "contrib/skeld.conf.example: its commented-out options read, each value one word" \
    eval '[ $RC = 0 ] && [ -s "$TMP/example-opts.conf" ] && ! grep -v "^[a-z-]* = [^ ]*\$" "$TMP/example-opts.conf"'
# Whole numbers as every command takes them (skp_cli_whole): no blank, no '+'; a flag once.
for v in " 4" "+4" "4 "; do
    refused n-blank "--threads \"$v\": exit 2, not a number" "--threads: \"$v\" is not a number" \
        --threads "$v" --listen "unix:$TMP/never.sock"
done
refused twice "--threads given twice: exit 2, said" "--threads given twice" --threads 2 --threads 3 \
    --listen "unix:$TMP/never.sock"
LONG=$TMP/$(printf 'L%.0s' $(seq 110))
for u in "unix:" "unix:$LONG/s.sock"; do
    refused unix-len "--listen ${u:0:20}...: exit 2, a unix socket's path is 1 to 107 bytes" \
        "a unix socket's path is 1 to 107 bytes" --listen "$u"
done
# One address twice (one path, or one IP and port whatever the protocol) failed the start at
# bind, after the first had printed that it listens: now refused before anything listens.
refused listen-twice "--listen tcp:// and http:// on one port: exit 2, both named" \
    "--listen tcp://[0::1]:7999: the same address as --listen http://[::1]:7999" \
    --listen "unix:$TMP/never.sock" --listen "http://[::1]:7999" --listen "tcp://[0::1]:7999"
refused listen-twice "--listen one unix path twice: exit 2, both named" \
    "--listen unix:$TMP/never.sock: the same address as --listen unix:$TMP/never.sock" \
    --listen "unix:$TMP/never.sock" --listen "unix:$TMP/never.sock"
printf 'listen = tcp://127.0.0.1:7999\nlisten = http://127.0.0.1:7999\n' >"$TMP/twice.conf"
refused listen-twice "listen twice in a config file: exit 2, both lines named" \
    "$TMP/twice.conf:2: listen http://127.0.0.1:7999: the same address as $TMP/twice.conf:1: listen tcp://127.0.0.1:7999" \
    --config "$TMP/twice.conf"
check "nothing was listened on" eval '[ ! -e "$TMP/never.sock" ]'
for v in 1e3 +5 5.0; do # --warmup is a whole number too (it was read as a decimal)
    run w-whole "$BIN" eval "$S/robot.skf" --warmup "$v"
    check "skeld eval --warmup $v: exit 2, not a whole number" \
        eval '[ $RC = 2 ] && said w-whole "--warmup: expected a whole number"'
done

# ---- offline: exit statuses and messages --------------------------------------------------------
ANIMS=$("$BIN" info "$S/robot.skf" | "$PY" -c 'import json,sys; print(", ".join(a["name"] for a in json.load(sys.stdin)["animations"]))')
STYLES=$("$BIN" info "$S/robot.skf" | "$PY" -c 'import json,sys; print(", ".join(s["name"] for s in json.load(sys.stdin)["styles"]))')
check "robot.skf has animations ($ANIMS) and styles ($STYLES)" eval '[ -n "$ANIMS" ] && [ -n "$STYLES" ]'
run e-anim "$BIN" eval "$S/robot.skf" --anim Foo
status e-anim 1 "skeld eval --anim Foo fails"
check "it lists the valid animations" said e-anim "unknown animation \"Foo\" (valid: $ANIMS)"
run r-style "$BIN" render "$S/robot.skf" --style Foo -o "$TMP/x.png"
status r-style 1 "skeld render --style Foo fails"
check "it lists the valid styles" said r-style "unknown style \"Foo\" (valid: $STYLES)"
run e-size "$BIN" eval "$S/robot.skf" --size 64x64
status e-size 2 "skeld eval --size is a usage error"
check "it names --size" said e-size "--size does not apply to this command"
# Valid but extreme numbers (every bone's scale 1e300) overflow: an error naming the bone, never
# a NaN printed or drawn as if it were an answer.
edit_skf "$S/robot.skf" "$TMP/huge.skf" '
for b in j["bones"]:
    b["scale"] = b["init_scale"] = {"x": 1e300, "y": 1e300}'
run o-eval "$BIN" eval "$TMP/huge.skf"
status o-eval 1 "skeld eval of numbers that overflow fails"
check "it names the bone and says they overflow, printing no pose" \
    eval 'said o-eval "its scale is not a finite number at this frame" && [ ! -s "$TMP/o-eval.out" ]'
run o-render "$BIN" render "$TMP/huge.skf" -o "$TMP/o.png"
status o-render 1 "skeld render of numbers that overflow fails"
check "it says why, and writes no picture" \
    eval 'said o-render "frame 0: bone 1" && [ ! -e "$TMP/o.png" ]'
for c in info eval; do
    run "m-$c" "$BIN" "$c" "$TMP/nosuch.skf"
    status "m-$c" 1 "skeld $c of a missing file fails"
done
run m-render "$BIN" render "$TMP/nosuch.skf" -o "$TMP/x.png"
status m-render 1 "skeld render of a missing file fails"
run m-conform "$BIN" conform "$S/robot.skf" "$TMP/nosuch.json"
status m-conform 1 "skeld conform with a missing vectors file fails"
check "the messages name the missing file" said m-info "$TMP/nosuch.skf"
run i-help "$BIN" info --help
check "skeld info --help loads nothing" eval '[ $RC = 0 ] && ! said i-help "No such file"'
run e-args "$BIN" eval
status e-args 2 "skeld eval without a file is a usage error"
run w-dir "$BIN" render "$S/robot.skf" -o "$TMP/nosuch/x.png"
status w-dir 1 "skeld render into a missing directory fails"
check "it names the file and why" said w-dir "$TMP/nosuch/x.png: No such file or directory"
if [ -w /dev/full ]; then
    run w-full "$BIN" render "$S/robot.skf" -o /dev/full
    status w-full 1 "skeld render onto a full device fails"
    check "it says the write failed, and why" said w-full "/dev/full: write failed: No space left"
fi
# A write that fails part way (the file size limit: EFBIG) leaves no truncated picture behind.
run w-big small_files "$BIN" render "$S/robot.skf" -o "$TMP/big.png"
status w-big 1 "skeld render past the file size limit fails"
check "it says the write failed, and why" said w-big "big.png: write failed: File too large"
check "and removes the part it wrote" eval '[ ! -e "$TMP/big.png" ]'
# The same failure over a picture already there leaves that picture as it was, and its
# permissions; and no hidden part behind.
printf 'the old picture' >"$TMP/kept.png"
chmod 640 "$TMP/kept.png"
run w-kept small_files "$BIN" render "$S/robot.skf" -o "$TMP/kept.png"
status w-kept 1 "skeld render over a file, past the file size limit, fails"
check "the old file is as it was" is "$(cat "$TMP/kept.png")" "the old picture"
check "no part of the new one is left beside it" eval '[ -z "$(ls -A "$TMP" | grep "^\.kept\.png")" ]'
run w-mode "$BIN" render "$S/robot.skf" -o "$TMP/kept.png"
status w-mode 0 "skeld render over that file"
check "the new picture keeps the old file's permissions" is "$(stat -c %a "$TMP/kept.png")" 640
run w-new sh -c 'umask 027 && exec "$@"' sh "$BIN" render "$S/robot.skf" -o "$TMP/new.png"
status w-new 0 "skeld render into a new file"
check "a new file's permissions are those the umask leaves" is "$(stat -c %a "$TMP/new.png")" 640
run e-val "$BIN" render "$S/robot.skf" --samples 3 -o "$TMP/x.png"
status e-val 2 "skeld render --samples 3 (a value no armature takes) is a usage error"
# --background takes RRGGBB (opaque) as well as RRGGBBAA, as --help says; the pages and the
# refusal named only RRGGBBAA
run bg-6 "$BIN" render "$S/robot.skf" --size 1x1 --background 102030 -o "$TMP/bg6.png"
run bg-8 "$BIN" render "$S/robot.skf" --size 1x1 --background 102030ff -o "$TMP/bg8.png"
check "skeld render --background RRGGBB is RRGGBBff" eval '[ $RC = 0 ] && same "$TMP/bg6.png" "$TMP/bg8.png"'
run bg-bad "$BIN" render "$S/robot.skf" --background 1020304 -o "$TMP/x.png"
check "a bad --background names both forms (exit 2)" \
    eval '[ $RC = 2 ] && said bg-bad "--background: expected RRGGBB or RRGGBBAA in hex"'
for page in daemon/skeld.8.scd client/skelctl.1.scd; do
    check "$page gives --background as RRGGBB[AA]" grep -qF -- '*--background* _RRGGBB_[_AA_]' "$SRC/$page"
done
check "README gives --background as RRGGBB[AA]" grep -qF -- '[--background RRGGBB[AA]]' "$SRC/README.md"
# An output file already there is replaced by a new one, not truncated under a reader; a
# symbolic link stays and its target gets the picture.
printf 'the old picture' >"$TMP/again.png"
exec 7<"$TMP/again.png"
run o-again "$BIN" render "$S/robot.skf" -o "$TMP/again.png"
status o-again 0 "skeld render over an existing file"
check "the file is the new picture" eval '[ "$(head -c 4 "$TMP/again.png" | od -An -tx1 | tr -d " ")" = 89504e47 ]'
check "a reader of the old file still reads it whole" is "$(cat <&7)" "the old picture"
exec 7<&-
printf 'old' >"$TMP/target.png"
ln -s target.png "$TMP/link.png"
run o-link "$BIN" render "$S/robot.skf" -o "$TMP/link.png"
status o-link 0 "skeld render through a symbolic link"
check "the link stays a link, and its target is the picture" \
    eval '[ -L "$TMP/link.png" ] && cmp -s "$TMP/link.png" "$TMP/again.png"'

# ---- daemons ----------------------------------------------------------------------------------
# start NAME OPTIONS...: skeld serve in the background, its stdout through a FIFO read up to
# its "ready:" line (listeners in LISTEN_NAME); 1 if it never got there.
start() {
    local name=$1 line fd
    shift
    mkfifo "$TMP/$name.fifo"
    "$BIN" serve --log-level warn "$@" >"$TMP/$name.fifo" 2>"$TMP/$name.log" &
    PID[$name]=$!
    exec {fd}<"$TMP/$name.fifo"
    FD[$name]=$fd
    : >"$TMP/$name.listen"
    while IFS= read -r -t 120 line <&"$fd"; do
        case $line in
        "listening "*) echo "${line#listening }" >>"$TMP/$name.listen" ;;
        ready:*)
            echo "$line" >"$TMP/$name.ready"
            return 0
            ;;
        esac
    done
    notok "$name: skeld serve printed its ready: line"
    cat "$TMP/$name.log"
    return 1
}
stop() {
    local name=$1 rc
    kill -TERM "${PID[$name]}"
    wait "${PID[$name]}"
    rc=$?
    unset "PID[$name]"
    local fd=${FD[$name]}
    exec {fd}<&-
    check "$name: exits 0 after SIGTERM" is "$rc" 0
}

start R --listen "unix:$TMP/r.sock" --root "$S" || exit 1
R=(--uri "unix:$TMP/r.sock")
# SIGUSR1 and SIGUSR2 are ignored (their default ended the daemon with no drain)
kill -USR1 "${PID[R]}"
kill -USR2 "${PID[R]}"
run usr "$CTL" "${R[@]}" ping
check "after SIGUSR1 and SIGUSR2 the daemon still answers" is "$RC" 0

"$BIN" eval "$S/robot.skf" --anim Walk --frame 3 >"$TMP/walk.json"
run c-idx "$CTL" "${R[@]}" pose robot.skf --anim '#1' --frame 3
check "skelctl pose --anim '#1' (an index) is Walk's pose" \
    eval '[ $RC = 0 ] && same "$TMP/c-idx.out" "$TMP/walk.json"'
run e-idx "$BIN" eval "$S/robot.skf" --anim '#4'
status e-idx 1 "skeld eval --anim '#4' (past the last animation) fails"
check "it says so, with the valid indices" said e-idx "animation #4 is out of range (valid: #0 to #3)"
run c-anim "$CTL" "${R[@]}" pose robot.skf --anim Foo
status c-anim 1 "skelctl pose --anim Foo fails"
check "it prints the daemon's message, the valid animations listed" said c-anim "unknown animation \"Foo\" (valid: $ANIMS)"
run c-style "$CTL" "${R[@]}" render robot.skf --style Foo -o "$TMP/x.png"
status c-style 1 "skelctl render --style Foo fails"
check "it lists the valid styles" said c-style "unknown style \"Foo\" (valid: $STYLES)"
run c-size "$CTL" "${R[@]}" pose robot.skf --size 64x64
status c-size 2 "skelctl pose --size is a usage error"
check "it names --size" said c-size "--size does not apply to this command"
UPPER=$(printf 'AB%.0s' $(seq 32))
run c-upper "$CTL" "${R[@]}" pose "$UPPER"
status c-upper 2 "skelctl pose with an id in upper case is a usage error"
check "it says ids are lowercase (not that the daemon has no such file)" \
    said c-upper "an armature id is 64 lowercase hex digits"
run c-help "$CTL" "${R[@]}" pose --help
check "skelctl pose --help prints help, sends nothing" eval '[ $RC = 0 ] && grep -q "^usage: skelctl" "$TMP/c-help.out"'
run c-missing "$CTL" "${R[@]}" info nosuch.skf
status c-missing 1 "skelctl info of a file the daemon does not have fails"
run c-val "$CTL" "${R[@]}" render robot.skf --samples 3 -o "$TMP/x.png"
status c-val 2 "skelctl render --samples 3 (the daemon calls it malformed) is a usage error"
# skelctl writes its pictures as skeld render does: an existing file is replaced, a link
# written through, and a failed write said.
printf 'the old picture' >"$TMP/c-again.png"
exec 7<"$TMP/c-again.png"
run c-again "$CTL" "${R[@]}" render robot.skf -o "$TMP/c-again.png"
status c-again 0 "skelctl render over an existing file"
check "skelctl: the file is the new picture" eval '[ "$(head -c 4 "$TMP/c-again.png" | od -An -tx1 | tr -d " ")" = 89504e47 ]'
check "skelctl: a reader of the old file still reads it whole" is "$(cat <&7)" "the old picture"
exec 7<&-
printf 'old' >"$TMP/c-target.png"
ln -s c-target.png "$TMP/c-link.png"
run c-link "$CTL" "${R[@]}" render robot.skf -o "$TMP/c-link.png"
status c-link 0 "skelctl render through a symbolic link"
check "skelctl: the link stays a link, and its target is the picture" \
    eval '[ -L "$TMP/c-link.png" ] && cmp -s "$TMP/c-link.png" "$TMP/c-again.png"'
if [ -w /dev/full ]; then
    run c-full "$CTL" "${R[@]}" render robot.skf -o /dev/full
    status c-full 1 "skelctl render onto a full device fails"
    check "skelctl: it says the write failed, and why" said c-full "/dev/full: write failed: No space left"
fi
run c-big small_files "$CTL" "${R[@]}" render robot.skf -o "$TMP/c-big.png"
status c-big 1 "skelctl render past the file size limit fails"
check "skelctl: it says the write failed, and why" said c-big "c-big.png: write failed: File too large"
check "skelctl: and removes the part it wrote" eval '[ ! -e "$TMP/c-big.png" ]'
printf 'the old picture' >"$TMP/c-kept.png"
run c-kept small_files "$CTL" "${R[@]}" render robot.skf -o "$TMP/c-kept.png"
status c-kept 1 "skelctl render over a file, past the file size limit, fails"
check "skelctl: the old file is as it was" is "$(cat "$TMP/c-kept.png")" "the old picture"
check "skelctl: no part of the new one is left beside it" \
    eval '[ -z "$(ls -A "$TMP" | grep "^\.c-kept\.png")" ]'
# A file the user may write in a directory it may not: it cannot be replaced, so both programs
# write through it (root may unlink anything: the user is nobody, where the build tree lets
# nobody run the programs and read the samples).
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
    "${nobody[@]}" "$BIN" --version >/dev/null 2>&1 &&
    "${nobody[@]}" "$CTL" --version >/dev/null 2>&1 &&
    "${nobody[@]}" test -r "$S/robot.skf"; then
    mkdir "$TMP/ro"
    printf 'old' >"$TMP/ro/c.png"
    printf 'old' >"$TMP/ro/d.png"
    chmod 666 "$TMP/ro/c.png" "$TMP/ro/d.png" "$TMP/r.sock"
    chmod 555 "$TMP/ro"
    chmod 711 "$TMP"
    run c-ro "${nobody[@]}" "$CTL" "${R[@]}" render robot.skf -o "$TMP/ro/c.png"
    status c-ro 0 "skelctl render into a file whose directory it cannot write"
    run d-ro "${nobody[@]}" "$BIN" render "$S/robot.skf" -o "$TMP/ro/d.png"
    status d-ro 0 "skeld render into a file whose directory it cannot write"
    check "both files are the picture" \
        eval 'cmp -s "$TMP/ro/c.png" "$TMP/c-again.png" && cmp -s "$TMP/ro/d.png" "$TMP/c-again.png"'
    chmod 755 "$TMP/ro"
    chmod 700 "$TMP"
fi
run c-conn "$CTL" --uri "unix:$TMP/nobody.sock" ping
status c-conn 1 "skelctl against no daemon fails"
run c-ping "$CTL" "${R[@]}" ping
check "skelctl ping: pong" eval '[ $RC = 0 ] && is "$(cat "$TMP/c-ping.out")" pong'
# -- output that cannot be written (a full disk) is a failure, not a truncated file and 0
if [ -w /dev/full ]; then
    full() {
        local d=$1
        shift
        "$@" >/dev/full 2>"$TMP/full.err"
        RC=$?
        check "$d > /dev/full: exit 1, saying so" \
            eval '[ $RC = 1 ] && said full "writing the output: No space left on device"'
    }
    full "skeld info" "$BIN" info "$S/robot.skf"
    full "skeld eval" "$BIN" eval "$S/robot.skf" --anim Walk
    full "skelctl pose" "$CTL" "${R[@]}" pose robot.skf --anim Walk
    full "skelctl info" "$CTL" "${R[@]}" info robot.skf
    # past stdio's buffer the write fails part way, and the reason must survive to exit
    full "skeld eval --matrix" "$BIN" eval "$S/robot.skf" --anim Walk --matrix
    full "skelctl pose --matrix" "$CTL" "${R[@]}" pose robot.skf --anim Walk --matrix
else
    echo "ok - output to a full disk # SKIP no /dev/full"
fi
# An engine option's one number stands for both (skeld(8)): --scale 2 is --scale 2,2
"$BIN" eval "$S/robot.skf" --anim Walk --frame 3 --scale 2 --position 5 >"$TMP/one-num.json"
"$BIN" eval "$S/robot.skf" --anim Walk --frame 3 --scale 2,2 --position 5,5 >"$TMP/two-num.json"
"$BIN" eval "$S/robot.skf" --anim Walk --frame 3 >"$TMP/no-num.json"
check "skeld eval --scale 2 --position 5 is --scale 2,2 --position 5,5 (and not the plain pose)" \
    eval 'same "$TMP/one-num.json" "$TMP/two-num.json" && ! same "$TMP/one-num.json" "$TMP/no-num.json"'
run e-empty "$BIN" eval "$S/robot.skf" --anim Walk,,Wave
status e-empty 2 "skeld eval --anim Walk,,Wave: an empty name is a usage error"
run c-twice "$CTL" --uri "unix:$TMP/nobody.sock" "${R[@]}" ping
status c-twice 2 "skelctl --uri given twice is a usage error"
# -- the flags are judged before connecting: with no daemon, still a usage error
run c-nod "$CTL" --uri "unix:$TMP/nobody.sock" pose robot.skf --frame abc
status c-nod 2 "skelctl pose --frame abc with no daemon: a usage error"
run c-nod2 "$CTL" --uri "unix:$TMP/nobody.sock" render robot.skf --size 5 -o "$TMP/x.png"
status c-nod2 2 "skelctl render --size 5 with no daemon: a usage error"
run c-nod3 "$CTL" --uri "unix:$TMP/nobody.sock" pose "$UPPER"
status c-nod3 2 "skelctl pose with an id in upper case and no daemon: a usage error"
# -- a --from inside a range is refused by both programs, and nothing written
mkdir "$TMP/from-c" "$TMP/from-d"
run c-from "$CTL" "${R[@]}" render robot.skf --anim Walk --frames 0-3 --from 2 --size 16x16 \
    -o "$TMP/from-c/f_%d.png"
status c-from 2 "skelctl render --frames 0-3 --from 2: refused"
run d-from "$BIN" render "$S/robot.skf" --anim Walk --frames 0-3 --from 2 --size 16x16 \
    -o "$TMP/from-d/f_%d.png"
status d-from 2 "skeld render --frames 0-3 --from 2: refused"
check "neither wrote a picture, and both say the range starts before --from" \
    eval '[ -z "$(ls -A "$TMP/from-c")" ] && [ -z "$(ls -A "$TMP/from-d")" ] && said c-from "after the range" && said d-from "after the range"'
# -- a --from that is no whole number of frames before a long range: both name its first frame
run c-half "$CTL" "${R[@]}" render robot.skf --anim Walk --frames 3-399 --from 1.5 --size 16x16 \
    -o "$TMP/from-c/f_%d.png"
run d-half "$BIN" render "$S/robot.skf" --anim Walk --frames 3-399 --from 1.5 --size 16x16 \
    -o "$TMP/from-d/f_%d.png"
check "--from 1.5 before --frames 3-399: both refuse it (2) naming the range's first frame" \
    eval '[ "$RC" = 2 ] && said c-half "from 1.5 must be a whole number of frames before the range'"'"'s first frame 3" && said d-half "from 1.5 must be a whole number of frames before the range'"'"'s first frame 3" && [ -z "$(ls -A "$TMP/from-c")" ]'
# -- a range draws what skeld render draws, whether it goes out as stateless chunks (a short
# one) or on instances (lanes, past 8 chunks of 16 frames): the robot's physics, smoothing, a
# warm-up and a --from before the range carry state from each frame to the next
instances() { "$CTL" "${R[@]}" stats | sed -n 's/^requests\.INSTANCE_NEW //p'; }
# same_range NAME FLAGS...: both programs' files for FLAGS are the same, byte for byte
same_range() {
    local n=$1
    shift
    mkdir "$TMP/$n-c" "$TMP/$n-d"
    run "$n-c" "$CTL" "${R[@]}" render robot.skf "$@" --size 16x16 -o "$TMP/$n-c/f_%d.png"
    run "$n-d" "$BIN" render "$S/robot.skf" "$@" --size 16x16 -o "$TMP/$n-d/f_%d.png"
    [ "$RC" = 0 ] && [ -n "$(ls -A "$TMP/$n-c")" ] && diff -r "$TMP/$n-c" "$TMP/$n-d" >/dev/null
}
lanes_before=$(instances)
check "a short range (0-40): skelctl's files are skeld render's" \
    same_range short --anim Walk,Wave --frames 0-40 --from 0 --smooth 3,0 --loop
check "it opened no instance" is "$(instances)" "$lanes_before"
check "a long range (3-200, 13 chunks, from 1, warm-up 5, smoothing 40): the same files" \
    same_range long --anim Walk,Wave --frames 3-200 --from 1 --warmup 5 --smooth 40,0 --loop
check "it played on 4 instances" is "$(instances)" "$((lanes_before + 4))"
check "a long range whose last chunk is short (0-149, no --from): the same files" \
    same_range ragged --anim Walk --frames 0-149 --loop
# The robot with 4,000 more bones: each instance of it takes more than the 1 MiB allowed.
edit_skf "$S/robot.skf" "$TMP/padded.skf" '
for i in range(4000):
    j["bones"].append(dict(j["bones"][0], id=len(j["bones"]), name="Pad %d" % i, parent_id=0))'
start I --listen "unix:$TMP/i.sock" --max-instance-mb 1 || exit 1
mkdir "$TMP/few-c" "$TMP/few-d"
run few-c "$CTL" --uri "unix:$TMP/i.sock" render "$TMP/padded.skf" --anim Walk --frames 0-149 \
    --loop --size 16x16 -o "$TMP/few-c/f_%d.png"
run few-d "$BIN" render "$TMP/padded.skf" --anim Walk --frames 0-149 --loop --size 16x16 \
    -o "$TMP/few-d/f_%d.png"
run few-s "$CTL" --uri "unix:$TMP/i.sock" stats
check "a daemon with no room for its instances gets stateless chunks: the same files" \
    eval '[ $RC = 0 ] && [ -n "$(ls -A "$TMP/few-c")" ] && diff -r "$TMP/few-c" "$TMP/few-d" >/dev/null'
check "after INSTANCE_NEW was refused (LIMIT)" \
    eval 'grep -qx "requests.INSTANCE_NEW 1" "$TMP/few-s.out" && grep -qx "refusals.LIMIT 1" "$TMP/few-s.out"'
# A pose that overflows at frame 41 (every bone's ScaleX 1e300 from frame 40, smoothed): both
# programs write the frames before it and fail naming it, whether the failing chunk went out
# stateless (3-60) or on a lane (3-299, 19 chunks); skelctl finds the frames its error reply
# did not carry by asking again.
edit_skf "$S/robot.skf" "$TMP/late.skf" '
walk = [a for a in j["animations"] if a["name"] == "Walk"][0]
for k in walk["keyframes"]:
    k.pop("next_kf", None)
snap = {"x": 0, "y": 999}
for b in j["bones"]:
    for f, v in ((39, 1.0), (40, 1e300)):
        walk["keyframes"].append({"frame": f, "bone_id": b["id"], "element": "ScaleX",
                                  "value": v, "start_handle": snap, "end_handle": snap})
walk["keyframes"].sort(key=lambda k: k["frame"])'
# late_range NAME FRAMES: both programs fail at frame 41, having written the same files 3-40
late_range() {
    mkdir "$TMP/$1-c" "$TMP/$1-d"
    local flags=(--anim Walk --frames "$2" --from 2 --warmup 3 --smooth 40 --size 16x16)
    run "$1-c" "$CTL" --uri "unix:$TMP/i.sock" render "$TMP/late.skf" "${flags[@]}" \
        -o "$TMP/$1-c/f_%d.png"
    [ "$RC" = 1 ] && said "$1-c" 'frame 41: bone 1 "Hips"' || return 1
    run "$1-d" "$BIN" render "$TMP/late.skf" "${flags[@]}" -o "$TMP/$1-d/f_%d.png"
    [ "$RC" = 1 ] && [ "$(ls "$TMP/$1-c" | wc -l)" = 38 ] && [ -e "$TMP/$1-c/f_40.png" ] &&
        diff -r "$TMP/$1-c" "$TMP/$1-d" >/dev/null
}
check "a range that overflows part way (3-60, stateless): frames 3-40 written by both, the same" \
    late_range late-short 3-60
check "the same on lanes (3-299)" late_range late-long 3-299
run late-s "$CTL" --uri "unix:$TMP/i.sock" stats
check "which played on 4 instances" grep -qx "requests.INSTANCE_NEW 5" "$TMP/late-s.out"
stop I
# -- standard output closed: a picture for it is not sent down the socket in its place
run c-closed eval '"$CTL" "${R[@]}" render robot.skf --size 16x16 -o - >&-'
status c-closed 1 "skelctl render -o - with standard output closed fails"
check "it says standard output is closed" said c-closed "standard output is closed"
run c-closed2 eval '"$CTL" "${R[@]}" info robot.skf >&-'
status c-closed2 1 "skelctl info with standard output closed fails"
run d-closed eval '"$BIN" info "$S/robot.skf" >&-'
check "skeld info with standard output closed: exit 1, said" \
    eval '[ $RC = 1 ] && said d-closed "skeld info: standard output is closed"'
# render -o - puts its picture there (went to /dev/null, exit 0); a file needs no stdout
run d-closed-r eval '"$BIN" render "$S/robot.skf" --size 16x16 -o - >&-'
check "skeld render -o - with standard output closed: exit 1, said" \
    eval '[ $RC = 1 ] && said d-closed-r "skeld render: standard output is closed"'
run d-closed-r2 eval '"$BIN" render "$S/robot.skf" --size 16x16 -o "$TMP/closed.png" >&-'
check "skeld render -o FILE with standard output closed writes the file" \
    eval '[ $RC = 0 ] && [ -s "$TMP/closed.png" ]'
# A daemon started with all three closed: its log and lines go to /dev/null, not into the
# first descriptors it opens (libuv's signal pipe took fd 2, and SIGTERM then aborted it).
"$BIN" serve --listen "unix:$TMP/closed.sock" <&- >&- 2>&- &
closed_pid=$!
for i in $(seq 2400); do
    "$CTL" --uri "unix:$TMP/closed.sock" ping >/dev/null 2>&1 && break
    sleep 0.05
done
run closed-ping "$CTL" --uri "unix:$TMP/closed.sock" ping
status closed-ping 0 "a daemon started with stdin, stdout and stderr closed answers"
kill -TERM "$closed_pid"
wait "$closed_pid"
check "and exits 0 after SIGTERM" is "$?" 0
# -- frame numbers past INT_MAX, up to the last 32-bit one, name their files
mkdir "$TMP/big-f" "$TMP/top-f"
run d-bigf "$BIN" render "$S/robot.skf" --anim Walk --frames 2147483647-2147483648 --size 8x8 \
    -o "$TMP/big-f/f_%d.png"
status d-bigf 0 "skeld render --frames 2147483647-2147483648"
check "its files are f_2147483647.png and f_2147483648.png" \
    is "$(ls "$TMP/big-f" | tr '\n' ' ')" "f_2147483647.png f_2147483648.png "
run c-top "$CTL" "${R[@]}" render robot.skf --anim Walk --frames 4294967294-4294967295 \
    --size 8x8 -o "$TMP/top-f/f_%d.png"
status c-top 0 "skelctl render of the last two 32-bit frames"
check "both written, named by their numbers" \
    is "$(ls "$TMP/top-f" | tr '\n' ' ')" "f_4294967294.png f_4294967295.png "
# A range of more steps than one play may take (100,000,000) is refused by both before any
# file is written: skelctl's requests would each pass, and write billions of files.
mkdir "$TMP/all-c" "$TMP/all-d"
for p in c d; do
    if [ $p = c ]; then
        run all-c "$CTL" "${R[@]}" render robot.skf --anim Walk --frames 0-4294967295 --size 8x8 \
            -o "$TMP/all-c/f_%d.png"
    else
        run all-d "$BIN" render "$S/robot.skf" --anim Walk --frames 0-4294967295 --size 8x8 \
            -o "$TMP/all-d/f_%d.png"
    fi
    check "--frames 0-4294967295 ($p): refused (2), the limit named, no file" \
        eval '[ $RC = 2 ] && said all-'$p' "fewer than 100000000 steps" && [ -z "$(ls -A "$TMP/all-'$p'")" ]'
done
# A range on an empty canvas: the daemon's message (skelctl divided by zero sizing its requests)
run c-zero "$CTL" "${R[@]}" render robot.skf --anim Walk --frames 0-3 --size 0x8 -o "$TMP/z_%d.png"
check "skelctl render --frames 0-3 --size 0x8: refused (2), naming the size" \
    eval '[ $RC = 2 ] && said c-zero "size 0x8 is out of range"'
# A range backwards: both programs say the same
run back-c "$CTL" "${R[@]}" render robot.skf --anim Walk --frames 5-1 -o "$TMP/b_%d.png"
run back-d "$BIN" render "$S/robot.skf" --anim Walk --frames 5-1 -o "$TMP/b_%d.png"
check "--frames 5-1: both refuse it (2) saying the same" \
    eval '[ $RC = 2 ] && said back-c "frames 5-1: the first frame is after the last" && said back-d "frames 5-1: the first frame is after the last"'
# Words after "--" are arguments, counted as any: one too many is a usage error, not dropped.
run dd-eval "$BIN" eval "$S/robot.skf" -- --anim Walk
check "skeld eval FILE -- --anim Walk: an unexpected argument (2), not the rest pose" \
    eval '[ $RC = 2 ] && said dd-eval "unexpected argument \"--anim\"" && [ ! -s "$TMP/dd-eval.out" ]'
run dd-ping "$CTL" "${R[@]}" ping -- junk
check "skelctl ping -- junk: an unexpected argument (2)" \
    eval '[ $RC = 2 ] && said dd-ping "unexpected argument \"junk\""'
run dd-info "$BIN" info -- "$S/robot.skf"
check "skeld info -- FILE: FILE is the argument" eval '[ $RC = 0 ] && [ -s "$TMP/dd-info.out" ]'
# -- a local file past what an upload may be: said, not read
truncate -s 300M "$TMP/huge.skf"
run c-huge "$CTL" "${R[@]}" info "$TMP/huge.skf"
status c-huge 1 "skelctl info of a 300 MiB file fails"
check "it says the file is larger than an armature file may be" said c-huge "larger than 268435456 bytes"
rm -f "$TMP/huge.skf"
# -- --help and --version whose output cannot be written
if [ -w /dev/full ]; then
    run c-helpfull eval '"$CTL" --help >/dev/full'
    status c-helpfull 1 "skelctl --help > /dev/full fails"
    run c-verfull eval '"$CTL" pose --version >/dev/full'
    status c-verfull 1 "skelctl pose --version > /dev/full fails"
    for c in --help --version "serve --help" "serve --version"; do
        run d-helpfull eval "\"\$BIN\" $c >/dev/full"
        status d-helpfull 1 "skeld $c > /dev/full fails"
    done
fi
# -- an empty style name is a usage error, as an empty animation name is
run d-estyle "$BIN" render "$S/robot.skf" --style Default, -o "$TMP/x.png"
status d-estyle 2 "skeld render --style Default,: an empty style name is a usage error"
# -- a sheet whose OUT.json cannot be written leaves the old OUT.png as it was
printf 'old' >"$TMP/pair.png"
mkdir "$TMP/pair.json"
run c-pair "$CTL" "${R[@]}" render robot.skf --anim Walk --frames 0-3 --sheet 2x2 --size 16x16 \
    -o "$TMP/pair.png"
status c-pair 1 "skelctl render --sheet with OUT.json a directory fails"
check "the old OUT.png is as it was: both files, or neither" is "$(cat "$TMP/pair.png")" old
run d-pair "$BIN" render "$S/robot.skf" --anim Walk --frames 0-3 --sheet 2x2 --size 16x16 \
    -o "$TMP/pair.png"
status d-pair 1 "skeld render --sheet with OUT.json a directory fails"
check "skeld render leaves the old OUT.png as it was too" is "$(cat "$TMP/pair.png")" old
# -- a picture larger than the daemon is set to draw is its limit (1), not a malformed flag (2)
start L --listen "unix:$TMP/l.sock" --max-image-pixels 1000 --max-bone-steps 2000 || exit 1
run c-limit "$CTL" --uri "unix:$TMP/l.sock" render "$S/robot.skf" --size 100x100 -o "$TMP/x.png"
status c-limit 1 "skelctl render --size 100x100 against --max-image-pixels 1000 fails"
check "it names the daemon's limit, and the option that sets it" \
    said c-limit "over the limit of 1000 pixels a picture (--max-image-pixels)"
run c-steps "$CTL" --uri "unix:$TMP/l.sock" pose "$S/robot.skf" --anim Walk --frame 500 --from 0
check "a pose past --max-bone-steps 2000: exit 1, the option named" \
    eval '[ $RC = 1 ] && said c-steps "exceed the limit of 2000 bone-steps a request (--max-bone-steps)"'
stop L
start M --listen "unix:$TMP/m.sock" --max-bones 5 || exit 1
run c-bones "$CTL" --uri "unix:$TMP/m.sock" info "$S/robot.skf"
check "a file past --max-bones 5: exit 1, the option named" \
    eval '[ $RC = 1 ] && said c-bones "25 bones exceed the limit of 5 (--max-bones)"'
stop M

# -- a RENDER reply that does not hold exactly the frames asked for (a fake daemon sends it:
#    tests/helpers/fake-skeld.py): skelctl writes none of its pictures and fails
# start_fake NAME MODE: the fake on $TMP/NAME.sock in the background, its stdout read through a
# FIFO up to its "ready" line; 1 if it never got there.
start_fake() {
    local name=$1 line fd
    mkfifo "$TMP/$name.fifo"
    "$PY" "$SRC/tests/helpers/fake-skeld.py" "$TMP/$name.sock" "$2" >"$TMP/$name.fifo" \
        2>"$TMP/$name.log" &
    PID[$name]=$!
    exec {fd}<"$TMP/$name.fifo"
    FD[$name]=$fd
    IFS= read -r -t 120 line <&"$fd" && [ "$line" = ready ] && return 0
    notok "$name: fake-skeld.py printed its ready line"
    cat "$TMP/$name.log"
    return 1
}
stop_fake() {
    local fd=${FD[$1]}
    kill -TERM "${PID[$1]}"
    wait "${PID[$1]}"
    unset "PID[$1]"
    exec {fd}<&-
}
# fake_render MODE SHAPE N: skelctl render against the fake in MODE, of one frame (SHAPE one,
# -o one.png) or of --frames 0-3 (range, one chunk, -o f_%d.png), fails (1) saying it was sent
# N pictures, and writes nothing into its own directory.
FAKE_ID=$(printf 'ab%.0s' $(seq 32)) # an id is sent as it is: nothing to load
fake_render() {
    local m=$1 out=$TMP/fake-$1-$2 flags
    flags=(-o "$out/one.png")
    [ "$2" = range ] && flags=(--anim Walk --frames 0-3 -o "$out/f_%d.png")
    mkdir "$out"
    run "fake-$m-$2" "$CTL" --uri "unix:$TMP/fake-$m.sock" render "$FAKE_ID" --size 16x16 \
        "${flags[@]}"
    [ "$RC" = 1 ] && said "fake-$m-$2" "the daemon sent $3 pictures, not the frames asked for" &&
        [ -z "$(ls -A "$out")" ]
}
# MODE:N1:N4: the pictures the fake sends for one frame and for frames 0-3. One picture of
# another frame, for one frame, is not refused: it goes to OUT.png, its frame naming no file.
for c in zero:0:0 wrong-frame:-:1 extra:2:5 fewer:0:3 two-for-one:2:8; do
    IFS=: read -r m n1 n4 <<<"$c"
    start_fake "fake-$m" "$m" || continue
    [ "$n1" = - ] ||
        check "a RENDER reply of $m, one frame: exit 1, \"the daemon sent $n1 pictures\", no file" \
            fake_render "$m" one "$n1"
    check "a RENDER reply of $m, frames 0-3: exit 1, \"the daemon sent $n4 pictures\", no file" \
        fake_render "$m" range "$n4"
    stop_fake "fake-$m"
done
# What a daemon says reaches a terminal without its control characters: an error message's
# escapes, a counter name's newline (a forged "forged 1" line) shown as '?'.
if start_fake fake-text hostile-text; then
    run fake-err "$CTL" --uri "unix:$TMP/fake-text.sock" render "$FAKE_ID" -o "$TMP/x.png"
    check "a daemon's error message with terminal escapes: shown with '?' for them" \
        eval '[ $RC = 1 ] && said fake-err "unknown animation ?]0;pwned??[2J" && ! grep -q "$(printf "\033")" "$TMP/fake-err.err"'
    # past ASCII, in the terminal's encoding: in UTF-8 a C1 CSI, a raw 0x9b and a right-to-left
    # override are one '?' each and 歩く passes; in the C locale every such byte is a '?'
    run fake-utf8 env LC_ALL=C.UTF-8 "$CTL" --uri "unix:$TMP/fake-text.sock" render "$FAKE_ID" -o "$TMP/x.png"
    check "in a UTF-8 locale: C1 controls (UTF-8 and raw) and a bidi override as '?', 歩く kept" \
        said fake-utf8 "[2J?2J??歩く"
    run fake-c env LC_ALL=C "$CTL" --uri "unix:$TMP/fake-text.sock" render "$FAKE_ID" -o "$TMP/x.png"
    check "in the C locale: every byte past ASCII as '?'" \
        eval 'said fake-c "[2J??2J??????????" && ! LC_ALL=C grep -q "[$(printf "\200-\377")]" "$TMP/fake-c.err"'
    run fake-stats "$CTL" --uri "unix:$TMP/fake-text.sock" stats
    check "a counter named with a newline and an escape: one line, '?' for each" \
        eval '[ $RC = 0 ] && [ "$(cat "$TMP/fake-stats.out")" = "evil?forged?1?]0;pwned??[2J 5" ]'
    stop_fake fake-text
fi

# A sheet and INFO_JSON must be what a daemon sends: one picture of C x R cells from the first
# frame with a JSON object, and INFO_JSON a JSON object. Anything else writes no file and prints
# nothing on standard output; a well-formed fake sheet passes (the checks can pass).
# fake_sheet MODE: skelctl render of a 3x2 sheet of frames 0-5 against the fake in MODE.
fake_sheet() {
    local out=$TMP/fake-sheet-$1
    mkdir "$out"
    run "fake-sheet-$1" "$CTL" --uri "unix:$TMP/fake-$1.sock" render "$FAKE_ID" --size 16x16 \
        --anim Walk --frames 0-5 --sheet 3x2 -o "$out/s.png"
}
# MODE:WHAT: what skelctl says of the sheet ("-" for nothing) and of INFO_JSON.
for c in "sheet:-:-" "sheet-size:a sheet of 16x16 pixels from frame 0, not the 3x2 cells of 16x16:-" \
    "not-json:sheet JSON is not JSON (line 1, column 8):INFO_JSON is not JSON (line 1, column 11)" \
    "info-nul:-:INFO_JSON is not JSON" "info-array:-:INFO_JSON is JSON but not an object"; do
    IFS=: read -r m sheet_says info_says <<<"$c"
    start_fake "fake-$m" "$m" || continue
    fake_sheet "$m"
    if [ "$sheet_says" = - ]; then
        check "a sheet reply of $m: written, exit 0" \
            eval '[ $RC = 0 ] && [ "$(cd "$TMP/fake-sheet-$m" && ls | tr "\n" " ")" = "s.json s.png " ]'
    else
        check "a sheet reply of $m: exit 1, saying so, no file" \
            eval '[ $RC = 1 ] && said "fake-sheet-$m" "$sheet_says" && [ -z "$(ls -A "$TMP/fake-sheet-$m")" ]'
    fi
    run "fake-info-$m" "$CTL" --uri "unix:$TMP/fake-$m.sock" info "$FAKE_ID"
    if [ "$info_says" = - ]; then
        check "INFO_JSON of $m: printed, exit 0" \
            eval '[ $RC = 0 ] && [ "$(cat "$TMP/fake-info-$m.out")" = "{\"id\":\"ab\"}" ]'
    else
        check "INFO_JSON of $m: exit 1, saying so, nothing printed" \
            eval '[ $RC = 1 ] && said "fake-info-$m" "$info_says" && [ ! -s "$TMP/fake-info-$m.out" ]'
    fi
    stop_fake "fake-$m"
done

# -- on a terminal a range shows a bar of the frames written; a frame that fails says so on a
#    line of its own, the bar counting only the frames written before it (script(1) gives the
#    terminal; without it, a skip)
if command -v script >/dev/null; then
    mkdir -p "$TMP/bar" "$TMP/bar/a3.png" # frame 3's file cannot be written: a directory
    (cd "$TMP/bar" && script -qec "'$BIN' render '$S/critter.skf' --anim Hop --frames 0-5 --size 16x16 -o 'a%d.png'" /dev/null) \
        >"$TMP/bar.out" 2>&1
    check "a range failing at frame 3 on a terminal: the bar ends at 3/6, the error on its own line" \
        eval 'tr "\r" "\n" <"$TMP/bar.out" | grep -q "^\[#*  *\] 3/6\$" &&
              tr "\r" "\n" <"$TMP/bar.out" | grep -q "^skeld render: a3.png: Is a directory" &&
              ! tr "\r" "\n" <"$TMP/bar.out" | grep -q "4/6"'
    mkdir -p "$TMP/cbar" "$TMP/cbar/a3.png"
    (cd "$TMP/cbar" && script -qec "'$CTL' ${R[*]} render critter.skf --anim Hop --frames 0-5 --size 16x16 -o 'a%d.png'" /dev/null) \
        >"$TMP/cbar.out" 2>&1
    check "skelctl: a range failing at frame 3 on a terminal: the error on its own line, no 6/6" \
        eval 'tr "\r" "\n" <"$TMP/cbar.out" | grep -q "^skelctl: a3.png: Is a directory" &&
              ! tr "\r" "\n" <"$TMP/cbar.out" | grep -q "6/6"'
else
    echo "ok - a range's progress bar on a terminal # SKIP no script(1)"
fi

# -- the sheet's JSON file is OUT.json beside OUT.png, in both programs
mkdir -p "$TMP/sheet-d" "$TMP/sheet-c"
sheet=(--anim Hop --frames 0-11 --sheet 4x3 --size 48x48)
(cd "$TMP/sheet-d" && "$BIN" render "$S/critter.skf" "${sheet[@]}" -o hop.png)
(cd "$TMP/sheet-c" && "$CTL" "${R[@]}" render critter.skf "${sheet[@]}" -o hop.png)
for d in sheet-d sheet-c; do
    check "$d: --sheet -o hop.png writes hop.png and hop.json, nothing else" \
        is "$(cd "$TMP/$d" && ls | tr '\n' ' ')" "hop.json hop.png "
done
check "the two sheets and their JSON are the same bytes" \
    eval 'same "$TMP/sheet-d/hop.png" "$TMP/sheet-c/hop.png" && same "$TMP/sheet-d/hop.json" "$TMP/sheet-c/hop.json"'
mkdir -p "$TMP/one-d" "$TMP/one-c"
one=(--anim Walk --frame 5.7 --sheet 2x1 --size 32x32)
(cd "$TMP/one-d" && "$BIN" render "$S/robot.skf" "${one[@]}" -o one.png)
(cd "$TMP/one-c" && "$CTL" "${R[@]}" render robot.skf "${one[@]}" -o one.png)
check "a sheet of one frame (5.7): both programs' JSON the same, naming frame 5" \
    eval 'same "$TMP/one-d/one.json" "$TMP/one-c/one.json" && grep -q "\"frames\":\[{\"frame\":5," "$TMP/one-d/one.json"'
check "hop.json names its picture: \"image\":\"hop.png\"" \
    "$PY" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["image"] != "hop.png")' "$TMP/sheet-d/hop.json"
mkdir -p "$TMP/sheet-o/sub"
"$BIN" render "$S/critter.skf" "${sheet[@]}" -o "$TMP/sheet-o/sub/hop.png"
check "-o DIR/hop.png: DIR/hop.json beside it names hop.png alone, so the two move together" \
    "$PY" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["image"] != "hop.png")' "$TMP/sheet-o/sub/hop.json"

# -- a sheet is its picture and its JSON, or nothing: a name JSON cannot hold (not UTF-8) is
#    refused before drawing, and a JSON that cannot be written takes its picture with it
mkdir -p "$TMP/sheet-u-d" "$TMP/sheet-u-c" "$TMP/sheet-j-d" "$TMP/sheet-j-c"
mkdir "$TMP/sheet-j-d/hop.json" "$TMP/sheet-j-c/hop.json" # so the JSON cannot be written
BADNAME=$(printf 'hop\377.png')
declare -A SHEET_RC
for case in u j; do
    name=hop.png
    [ $case = u ] && name=$BADNAME
    run sheet-$case-d in_dir "$TMP/sheet-$case-d" "$BIN" render "$S/critter.skf" "${sheet[@]}" -o "$name"
    SHEET_RC[$case-d]=$RC
    run sheet-$case-c in_dir "$TMP/sheet-$case-c" "$CTL" "${R[@]}" render critter.skf "${sheet[@]}" -o "$name"
    SHEET_RC[$case-c]=$RC
done
check "--sheet -o with a name that is not UTF-8: exit 2 in both programs, saying why, nothing written" \
    eval '(for p in d c; do [ "${SHEET_RC[u-$p]}" = 2 ] && said sheet-u-$p "JSON is UTF-8" && [ -z "$(ls "$TMP/sheet-u-$p")" ] || exit 1; done)'
check "--sheet when OUT.json cannot be written: exit 1 in both programs, and no OUT.png left" \
    eval '(for p in d c; do [ "${SHEET_RC[j-$p]}" = 1 ] && [ ! -e "$TMP/sheet-j-$p/hop.png" ] || exit 1; done)'
mkdir -p "$TMP/sheet-l" "$TMP/sheet-l/hop.json"
echo old >"$TMP/sheet-l/target.png"
ln -s target.png "$TMP/sheet-l/hop.png"
run sheet-l in_dir "$TMP/sheet-l" "$BIN" render "$S/critter.skf" "${sheet[@]}" -o hop.png
check "... but an OUT.png this run did not make (a symbolic link) is left where it was (exit 1)" \
    eval '[ $RC = 1 ] && [ -L "$TMP/sheet-l/hop.png" ]'

# -- info: one JSON
cat >"$TMP/j.py" <<'EOF'
import json, re, sys
cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "info":
    # info SKELD SKELCTL ID: the same bytes, beginning with "id": ID.
    full, wire, want_id = open(args[0]).read(), open(args[1]).read(), args[2]
    j = json.loads(full)
    if list(j)[0] != "id" or j["id"] != want_id:
        sys.exit("id: %r" % j.get("id"))
    if full != wire:
        sys.exit("skelctl info differs:\n%s\n%s" % (full[:300], wire[:300]))
elif cmd == "matrix":
    # matrix WITH WITHOUT: WITH is WITHOUT plus "matrix" and "tint" per bone; each matrix is the
    # bone's rotation and scale (a = cos(rot) sx, b = sin(rot) sx, c = -sin(rot) sy,
    # d = cos(rot) sy) with its position as translation; tints are 0-255.
    import math
    w, wo = json.load(open(args[0])), json.load(open(args[1]))
    if len(w) != len(wo) or not w:
        sys.exit("bone counts differ")
    for a, b in zip(w, wo):
        m, t = a.pop("matrix"), a.pop("tint")
        if a != b:
            sys.exit("bone %d differs beyond matrix and tint" % b["id"])
        c, s = math.cos(a["rot"]), math.sin(a["rot"])
        sx, sy = a["scale"]
        want = [c * sx, s * sx, -s * sy, c * sy, a["pos"][0], a["pos"][1]]
        if len(m) != 6 or any(abs(x - y) > 1e-6 * max(1, abs(y)) for x, y in zip(m, want)):
            sys.exit("bone %d: matrix %r, expected %r" % (a["id"], m, want))
        if len(t) != 4 or not all(0 <= x <= 255 for x in t):
            sys.exit("bone %d: tint %r" % (a["id"], t))
elif cmd == "prom":
    # prom SKELCTL METRICS: every family skelctl stats --prometheus declares is declared by GET
    # /metrics with the same type, and /metrics has no other but the HTTP-only
    # skeld_http_requests_total; both have the same skeld_node_info sample.
    def types(path):
        t = {}
        for line in open(path):
            m = re.match(r"# TYPE (\S+) (\S+)$", line)
            if m:
                t[m.group(1)] = m.group(2)
            elif not line.startswith("#") and not re.match(r'^[a-z_]+(\{[^}]*\})? [0-9.]+$', line):
                sys.exit("%s: not a sample: %r" % (path, line))
        return t
    a, b = types(args[0]), types(args[1])
    extra = set(b) - set(a) - {"skeld_http_requests_total"}
    if len(a) < 20 or any(b.get(k) != v for k, v in a.items()) or extra:
        sys.exit("families: skelctl %r, /metrics %r" % (sorted(a.items()), sorted(b.items())))
    node = [[l for l in open(p) if l.startswith("skeld_node_info{")] for p in args]
    if len(node[0]) != 1 or node[0] != node[1]:
        sys.exit("skeld_node_info: skelctl %r, /metrics %r" % tuple(node))
EOF
ROBOT=$(sha256sum "$S/robot.skf" | cut -c1-64)
for f in robot critter lamp-0.7; do
    "$BIN" info "$S/$f.skf" >"$TMP/info-d.json"
    "$CTL" "${R[@]}" info "$f.skf" >"$TMP/info-c.json"
    check "$f: skelctl info is skeld info, byte for byte" \
        "$PY" "$TMP/j.py" info "$TMP/info-d.json" "$TMP/info-c.json" "$(sha256sum "$S/$f.skf" | cut -c1-64)"
done
"$CTL" "${R[@]}" load "$S/robot.skf" >"$TMP/load.json"
"$CTL" "${R[@]}" info "$ROBOT" >"$TMP/info-id.json"
check "skelctl load prints what skelctl info prints" same "$TMP/load.json" "$TMP/info-id.json"

# -- pose --matrix in both programs
for set in "--anim Walk --frame 10" "--anim Wave,Walk --frame 20,3 --from 0 --warmup 30 --scale -1,2 --y-down"; do
    # shellcheck disable=SC2086
    "$BIN" eval "$S/robot.skf" $set --matrix >"$TMP/m-d.json"
    # shellcheck disable=SC2086
    "$CTL" "${R[@]}" pose robot.skf $set --matrix >"$TMP/m-c.json"
    # shellcheck disable=SC2086
    "$BIN" eval "$S/robot.skf" $set >"$TMP/plain.json"
    check "pose --matrix ($set): skelctl prints skeld eval's bytes" same "$TMP/m-d.json" "$TMP/m-c.json"
    check "pose --matrix ($set): each bone's matrix and tint, the rest as without" \
        "$PY" "$TMP/j.py" matrix "$TMP/m-d.json" "$TMP/plain.json"
done

# -- unload: by a local file (its id computed, the file not sent), then it is gone
uploads() { "$CTL" "${R[@]}" stats | awk '$1 == "requests.LOAD_BYTES" { print $2 }'; }
n0=$(uploads)
run unload1 "$CTL" "${R[@]}" unload "$S/robot.skf"
check "skelctl unload FILE: exit 0, prints nothing, sends no bytes" \
    eval '[ $RC = 0 ] && [ ! -s "$TMP/unload1.out" ] && [ "$(uploads)" = "$n0" ]'
run unload2 "$CTL" "${R[@]}" unload "$ROBOT"
check "skelctl unload of what is not loaded: exit 1, not found" \
    eval '[ $RC = 1 ] && said unload2 "no armature with that id is loaded"'
stop R

# -- the ready line suggests a file the root holds: robot.skf (with its Walk) if there, else
#    the first .skf by name that needs no quoting ("a b.skf" does); none, a PING
mkdir -p "$TMP/root-e" "$TMP/root-l"
cp "$S/critter.skf" "$TMP/root-l/zeta.skf"
cp "$S/lamp-0.7.skf" "$TMP/root-l/lamp.skf"
cp "$S/robot.skf" "$TMP/root-l/a b.skf"
start RL --listen "unix:$TMP/rl.sock" --listen http://127.0.0.1:0 --root "$TMP/root-l" || exit 1
LHTTP=$(grep '^http://' "$TMP/RL.listen")
check "a root without robot.skf: the ready line renders its first plain .skf, lamp.skf, as it is" \
    eval 'grep -qF "render lamp.skf -o out.png | curl -o out.png '"'"'$LHTTP/v1/files/lamp.skf/render.png'"'"' |" "$TMP/RL.ready"'
run l-try "$CTL" --uri "unix:$TMP/rl.sock" render lamp.skf -o "$TMP/l-try.png"
check "... and that render works" eval '[ $RC = 0 ] && [ -s "$TMP/l-try.png" ]'
stop RL
start RE --listen "unix:$TMP/re.sock" --root "$TMP/root-e" || exit 1
check "an empty root: the ready line suggests a ping" grep -q "skelctl --uri unix:$TMP/re.sock ping\$" "$TMP/RE.ready"
stop RE

# -- no --root: LOAD by path refused, uploads and --preload still work; stats --prometheus
start N --listen "unix:$TMP/n.sock" --listen http://127.0.0.1:0 --preload "$S" \
    --node-name cli-node.1 || exit 1
N=(--uri "unix:$TMP/n.sock")
NSKF=$(ls "$S"/*.skf | wc -l) # distinct files: each its own armature
run n-path in_dir "$TMP" "$CTL" "${N[@]}" info robot.skf
status n-path 1 "without --root, skelctl info robot.skf (LOAD by path) fails"
check "it says LOAD by path is disabled: start skeld with --root DIR" \
    said n-path "LOAD by path is disabled: start skeld with --root DIR"
run n-up "$CTL" "${N[@]}" info "$S/robot.skf"
check "an upload still works" eval '[ $RC = 0 ] && grep -q "\"id\":\"$ROBOT\"" "$TMP/n-up.out"'
run n-pre "$CTL" "${N[@]}" info "$(sha256sum "$S/critter.skf" | cut -c1-64)"
check "--preload DIR still loads (critter is cached by id)" is "$RC" 0
HTTP=$(grep '^http://' "$TMP/N.listen")
if command -v curl >/dev/null 2>&1; then
    code=$(curl -s -o "$TMP/n-http.json" -w '%{http_code}' --max-time 30 "$HTTP/v1/files/robot.skf")
    check "without --root, GET /v1/files/robot.skf: 403 saying why" \
        eval '[ "$code" = 403 ] && grep -qF "LOAD by path is disabled: start skeld with --root DIR" "$TMP/n-http.json"'
    run n-prom "$CTL" "${N[@]}" stats --prometheus
    curl -s --max-time 30 -o "$TMP/metrics.txt" "$HTTP/metrics"
    check "skelctl stats --prometheus: exit 0, GET /metrics' metric names and types, its node" \
        eval '[ $RC = 0 ] && "$PY" "$TMP/j.py" prom "$TMP/n-prom.out" "$TMP/metrics.txt"'
    check "skelctl names the node it asked, from the HELLO reply" \
        grep -q '^skeld_node_info{node="cli-node.1",version="[0-9]' "$TMP/n-prom.out"
    check "both count the cached armatures alike (skeld_cache_entries $NSKF)" eval \
        'grep -qx "skeld_cache_entries $NSKF" "$TMP/n-prom.out" && grep -qx "skeld_cache_entries $NSKF" "$TMP/metrics.txt"'
else
    echo "# curl is missing: the HTTP checks are skipped"
fi
run n-stats "$CTL" "${N[@]}" stats
check "skelctl stats: name value lines (cache.entries $NSKF)" eval '[ $RC = 0 ] && grep -qx "cache.entries $NSKF" "$TMP/n-stats.out"'
if [ -s "$TMP/metrics.txt" ]; then
    # Nothing connected between GET /metrics and STATS but STATS' own connection.
    m=$(sed -n 's/^skeld_connections_accepted_total \([0-9]*\)$/\1/p' "$TMP/metrics.txt")
    st=$(sed -n 's/^connections\.total \([0-9]*\)$/\1/p' "$TMP/n-stats.out")
    check "STATS counts both fronts' connections, as GET /metrics does ($st = $m + 1)" \
        eval '[ -n "$m" ] && [ -n "$st" ] && [ "$st" -eq $((m + 1)) ]'
fi
stop N

# 0.0.0.0 and [::] on one port: the IPv6 listener takes IPv6 connections only (the system
# would give it IPv4's too, and the second bind failed), so both listen, each on its family.
if "$PY" -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
    port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])')
    if start V6 --listen "tcp://0.0.0.0:$port" --listen "http://[::]:$port"; then
        run v6-ping "$CTL" --uri "tcp://127.0.0.1:$port" ping
        check "0.0.0.0 and [::] on one port: both listen, IPv4 reaches the tcp:// one" \
            eval '[ $RC = 0 ] && grep -qx pong "$TMP/v6-ping.out"'
        if command -v curl >/dev/null 2>&1; then
            code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 "http://[::1]:$port/healthz")
            check "... and IPv6 the http:// one (GET /healthz: $code)" is "$code" 200
        fi
        check "the ready line names loopback addresses, not the wildcards bound" \
            eval 'grep -qF -- "--uri tcp://127.0.0.1:$port " "$TMP/V6.ready" &&
                grep -qF "open http://[::1]:$port/" "$TMP/V6.ready"'
        stop V6
    fi
else
    echo "# no IPv6 on this machine: the [::] listener check is skipped"
fi

# Under --enable-sanitizers a report may come with the very exit status a check expects (1).
check "no sanitizer report on any program's stderr" \
    eval '! grep -lE "runtime error:|ERROR: [A-Za-z]*Sanitizer" "$TMP"/*.err "$TMP"/*.log'

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
