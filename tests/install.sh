#!/bin/sh
# `make install DESTDIR=...` from the build tree, then what a service install must deliver:
# every file in its place; the man pages rendering without a groff warning, naming every
# option and call the programs and skc.h have, and libskc(3)'s example compiling against the
# installed header; the unit verified by systemd-analyze (ExecStart pointed at the DESTDIR
# binary, the man page of Documentation= found in DESTDIR); the sysusers.d file creating the
# user in a scratch root; the installed config starting the installed daemon (its /run and
# /var/lib paths moved into a scratch directory); a reinstall keeping an edited skeld.conf
# and an uninstall removing everything else.
# Exit 77 (skip) only when a tool is missing; contrib/install-deps installs them all.
set -u
B=${SKELD_BUILDDIR:-$PWD}
S=${SKELD_SRCDIR:-$PWD}
MAKE=${MAKE:-make}
CC=${CC:-cc}
for tool in groff man systemd-analyze systemd-sysusers python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "install: SKIP: $tool is missing (contrib/install-deps installs it)"
        exit 77
    fi
done
T=$(mktemp -d "${TMPDIR:-/tmp}/skeld-install.XXXXXX") || exit 1
D=$T/dest
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/tap.sh"


# make, alone: not a part of the make check that runs this test (no jobserver of its own).
mk() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $MAKE -s -C "$B" "$@"
}
# The configured directories, as make expands them.
configured() {
    printf 'print-dir:\n\t@echo $(%s)\n' "$1" | mk -f Makefile -f - print-dir | tail -n 1
}
bindir=$(configured bindir) libdir=$(configured libdir) includedir=$(configured includedir)
mandir=$(configured mandir) sysconfdir=$(configured sysconfdir) docdir=$(configured docdir)
unitdir=$(configured systemdsystemunitdir) sysusersdir=$(configured sysusersdir)
if [ -z "$bindir" ] || [ -z "$unitdir" ] || [ -z "$sysusersdir" ]; then
    echo "install: cannot read the configured directories from $B/Makefile"
    exit 1
fi

# ---- make install ------------------------------------------------------------------------
if ! mk install DESTDIR="$D" >"$T/install.log" 2>&1; then
    cat "$T/install.log"
    echo "not ok - make install DESTDIR=$D"
    exit 1
fi
ok "make install DESTDIR=..."

for f in "$bindir/skeld" "$bindir/skelctl" "$includedir/skc.h" "$libdir/pkgconfig/libskc.pc" \
    "$mandir/man8/skeld.8" "$mandir/man1/skelctl.1" "$mandir/man3/libskc.3" \
    "$unitdir/skeld.service" "$sysusersdir/skeld.conf" \
    "$sysconfdir/skeld/skeld.conf" "$sysconfdir/skeld/skeld.conf.example" \
    "$docdir/README.md" "$docdir/PROTOCOL.md" "$docdir/HTTP.md" "$docdir/LICENSE"; do
    check "installed: $f" test -s "$D$f"
done
check "installed: libskc.so" test -e "$D$libdir/libskc.so"
check "skeld.conf is the example" cmp -s "$S/contrib/skeld.conf.example" "$D$sysconfdir/skeld/skeld.conf"
check "the LICENSE is MIT, 2026 the skeld authors" grep -q "Copyright (c) 2026 the skeld authors" "$D$docdir/LICENSE"

# ---- man pages ---------------------------------------------------------------------------
# render PAGE: groff's text of the page, its warnings (every kind: -ww) into PAGE.warn.
render() {
    LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -P-cbou "$D$1" 2>"$T/warn" >"$T/text"
}
# mentions NEEDLE...: every NEEDLE in the rendered text, as a word (hyphens count as letters);
# no NEEDLE at all is a failure (the list it came from was not read).
mentions() {
    [ $# -gt 0 ] || { echo "    nothing to look for"; return 1; }
    missing=
    for n in "$@"; do
        grep -q -e "\(^\|[^[:alnum:]_-]\)$n\([^[:alnum:]_-]\|$\)" "$T/text" || missing="$missing $n"
    done
    [ -z "$missing" ] || echo "    missing:$missing"
    [ -z "$missing" ]
}
for page in "$mandir/man8/skeld.8" "$mandir/man1/skelctl.1" "$mandir/man3/libskc.3"; do
    render "$page"
    check "$(basename "$page") renders with no groff warning" test ! -s "$T/warn"
    [ -s "$T/warn" ] && sed 's/^/    /' "$T/warn"
    check "$(basename "$page") has NAME, SYNOPSIS and DESCRIPTION" \
        sh -c 'grep -q "^NAME" "$1" && grep -q "^SYNOPSIS" "$1" && grep -q "^DESCRIPTION" "$1"' \
        _ "$T/text"
    check "$(basename "$page") names the installed paths, no placeholder left" \
        sh -c '! grep -q "@[a-zA-Z_]*@" "$1"' _ "$T/text"
    check "man -l $(basename "$page") shows it" \
        sh -c 'MANWIDTH=80 man -l "$1" 2>/dev/null | grep -q "^NAME"' _ "$D$page"
done

render "$mandir/man8/skeld.8"
opts=$("$B/daemon/skeld" serve --help | sed -n 's/^  \(--[a-z-]*\).*/\1/p')
check "skeld(8) has every option of skeld serve --help ($(echo $opts | wc -w))" mentions $opts
flags=$( { "$B/daemon/skeld" eval --help; "$B/daemon/skeld" render --help; } |
    grep -o -- '--[a-z][a-z-]*' | sort -u)
check "skeld(8) has every flag of skeld eval and render --help" mentions $flags
cmds=$("$B/daemon/skeld" --help | sed -n 's/^  \([a-z]*\) .*/\1/p')
check "skeld(8) has every command of skeld --help" mentions $cmds
check "skeld(8) names the installed config" mentions "$sysconfdir/skeld/skeld.conf"
check "skeld(8) covers signals, reload, exit status, files, HTTP, systemd" \
    mentions SIGTERM SIGINT SIGHUP "EXIT STATUS" FILES HTTP READY=1 RELOADING=1 STOPPING=1 \
    /v1/armatures /metrics /healthz /readyz

render "$mandir/man1/skelctl.1"
usage=$("$B/client/skelctl" 2>&1 >/dev/null)
check "skelctl(1) has every flag of skelctl's usage" \
    mentions $(echo "$usage" | grep -o -- '--[a-z][a-z-]*' | sort -u)
check "skelctl(1) has every command of skelctl's usage" \
    mentions ping stats load info pose mesh render SKELD_URI

render "$mandir/man3/libskc.3"
calls=$(sed -n 's/^SKC_API [^(]*[ *]\(skc_[a-z_0-9]*\)(.*/\1/p' "$D$includedir/skc.h")
check "libskc(3) has every function of skc.h ($(echo $calls | wc -w))" mentions $calls
check "libskc(3) has every error code of skc.h" \
    mentions $(sed -n 's/^ *\(SKC_E[A-Z]*\) = .*/\1/p' "$D$includedir/skc.h")
# The page's example, compiled against the installed header.
python3 - "$S/client/libskc.3.scd" "$T/example.c" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
example = text.split("# EXAMPLE", 1)[1]
code = re.search(r"```\n(.*?)```", example, re.S).group(1)
with open(sys.argv[2], "w") as f:
    f.write("#include <stdio.h>\n#include <skc.h>\nint main(void)\n{\n%s    return 0;\n}\n" % code)
EOF
check "libskc(3)'s example compiles against the installed skc.h" \
    $CC -std=c99 -Wall -Wextra -Werror -fsyntax-only -I"$D$includedir" "$T/example.c"

# ---- the systemd unit --------------------------------------------------------------------
unit=$D$unitdir/skeld.service
check "the unit runs the installed skeld with the installed config" \
    grep -qx "ExecStart=$bindir/skeld serve --config $sysconfdir/skeld/skeld.conf" "$unit"
for line in Type=notify 'ExecReload=/bin/kill -HUP $MAINPID' User=skeld RuntimeDirectory=skeld \
    'StateDirectory=skeld skeld/armatures' ProtectSystem=strict ProtectHome=yes NoNewPrivileges=yes \
    CapabilityBoundingSet= 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' \
    SystemCallFilter=@system-service SystemCallArchitectures=native MemoryDenyWriteExecute=yes; do
    check "the unit says $line" grep -qxF "$line" "$unit"
done
# systemd-analyze verify checks that ExecStart's binary exists: a copy of the unit runs the
# DESTDIR one (the only change), and MANPATH lets it find man:skeld(8) of Documentation=.
mkdir -p "$T/unit"
sed "s|^ExecStart=$bindir/|ExecStart=$D$bindir/|" "$unit" >"$T/unit/skeld.service"
check "the copy differs from the unit only in ExecStart" \
    sh -c '[ "$(diff "$1" "$2" | grep -c "^[<>]")" = 2 ]' _ "$unit" "$T/unit/skeld.service"
MANPATH=$D$mandir systemd-analyze verify "$T/unit/skeld.service" >"$T/verify" 2>&1
rc=$?
check "systemd-analyze verify passes, with nothing to say" \
    sh -c '[ "$1" = 0 ] && [ ! -s "$2" ]' _ "$rc" "$T/verify"
sed 's/^/    /' "$T/verify"
systemd-analyze security --offline=yes --threshold=20 "$T/unit/skeld.service" >"$T/security" 2>&1
rc=$?
check "systemd-analyze security rates its exposure 2.0 or lower ($(grep -o '[0-9.]* [A-Z]* ' "$T/security" | tail -n 1))" \
    test "$rc" = 0
[ "$rc" = 0 ] || grep '✗' "$T/security"

# The user: systemd-sysusers on the installed file, in a scratch root.
mkdir -p "$T/root/etc"
check "systemd-sysusers creates the user from the installed file" \
    sh -c 'systemd-sysusers --root="$1" "$2" >"$3" 2>&1' _ "$T/root" "$D$sysusersdir/skeld.conf" \
    "$T/sysusers"
check "user skeld, home /var/lib/skeld, no login" \
    grep -q '^skeld:x:[0-9]*:[0-9]*:[^:]*:/var/lib/skeld:.*nologin$' "$T/root/etc/passwd"
check "group skeld" grep -q '^skeld:x:[0-9]*:' "$T/root/etc/group"

# ---- the installed config runs the installed daemon --------------------------------------
# The unit's directories exist only under systemd: here they move into $T, and the HTTP port
# becomes 0 (8080 may be taken); everything else is the installed file.
conf=$D$sysconfdir/skeld/skeld.conf
check "the config listens where the unit's RuntimeDirectory is" \
    grep -qx 'listen = unix:/run/skeld/skeld.sock' "$conf"
check "and on http://127.0.0.1:8080" grep -qx 'listen = http://127.0.0.1:8080' "$conf"
check "and serves the unit's StateDirectory" grep -qx 'root = /var/lib/skeld/armatures' "$conf"
mkdir -p "$T/run/skeld" "$T/var/lib/skeld/armatures"
cp "$B"/samples/robot.skf "$T/var/lib/skeld/armatures/"
sed -e "s|/run/skeld|$T/run/skeld|" -e "s|/var/lib/skeld|$T/var/lib/skeld|g" \
    -e 's|127.0.0.1:8080|127.0.0.1:0|' "$conf" >"$T/skeld.conf"
python3 - "$D$bindir/skeld" "$T/skeld.conf" "$T/run/skeld/skeld.sock" <<'EOF'
import select, signal, socket, subprocess, sys, time
binary, conf, sock_path = sys.argv[1:4]
proc = subprocess.Popen([binary, "serve", "--config", conf], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
out, deadline = b"", time.monotonic() + 120
while b"ready:" not in out and time.monotonic() < deadline:
    if select.select([proc.stdout], [], [], deadline - time.monotonic())[0]:
        chunk = proc.stdout.read1(4096)
        if not chunk:
            break
        out += chunk
ok = b"ready:" in out and b"listening unix:" + sock_path.encode() in out
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ok = ok and s.connect_ex(sock_path) == 0
s.close()
proc.send_signal(signal.SIGTERM)
try:
    rc = proc.wait(timeout=120)
except subprocess.TimeoutExpired:
    proc.kill()
    rc = None
err = proc.stderr.read().decode(errors="replace")
if not ok or rc != 0 or "preloaded 1 armatures" not in err:
    sys.stdout.write(out.decode(errors="replace") + err + "exit %r\n" % rc)
    sys.exit(1)
EOF
check "the installed skeld starts with it, preloads, listens, stops with exit 0" test $? = 0

# ---- reinstall and uninstall -------------------------------------------------------------
echo "log-level = debug # edited" >>"$conf"
mk install DESTDIR="$D" >"$T/install2.log" 2>&1
check "a reinstall keeps the edited skeld.conf" grep -q "# edited" "$conf"
mk uninstall DESTDIR="$D" >"$T/uninstall.log" 2>&1
left=$(cd "$D" && find . -type f -o -type l)
check "uninstall leaves only the edited skeld.conf" test "$left" = ".$sysconfdir/skeld/skeld.conf"
[ "$left" = ".$sysconfdir/skeld/skeld.conf" ] || echo "$left" | sed 's/^/    /'
mk install DESTDIR="$D" >"$T/install3.log" 2>&1
cp "$S/contrib/skeld.conf.example" "$conf"
mk uninstall DESTDIR="$D" >"$T/uninstall2.log" 2>&1
left=$(cd "$D" && find . -type f -o -type l)
check "and everything once skeld.conf is the example again" test -z "$left"
[ -z "$left" ] || echo "$left" | sed 's/^/    /'

echo "install: $passed passed, $failed failed"
[ "$failed" = 0 ]
