#!/bin/sh
# The installed unit run by a real systemd: a throwaway one booted as PID 1 of fresh mount,
# PID, network, UTS, IPC and cgroup namespaces, on an overlay of / whose writes go to a tmpfs
# (nothing outside the namespaces is touched; the mounts vanish with them). Into it: this
# build tree's `make install`, the user from the installed sysusers.d file, a sample in the
# armature directory. Then `systemctl start skeld` must return only once the daemon said
# READY=1 and serve it through the sandbox: HTTP answers, the unix socket is srwxrwx---
# skeld:skeld and refuses a user outside the group, the armature directory is read-only in
# the daemon's mounts; `systemctl reload` shows the daemon's STATUS=, `systemctl stop`
# exits 0, and a bad config fails the start with status 2 and no restart.
# Needs root, unshare/nsenter/setpriv (util-linux), systemd, curl and python3; exit 77 (skip)
# when one is missing or the kernel refuses the namespaces or the overlay, saying which.
set -u
B=${SKELD_BUILDDIR:-$PWD}
MAKE=${MAKE:-make}
skip() {
    echo "systemd: SKIP: $*"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (to boot systemd in namespaces)"
# Debian's python3 by its path: users other than root may not reach another one (pyenv's).
for tool in unshare nsenter setpriv curl /usr/bin/python3 /lib/systemd/systemd systemd-sysusers; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool is missing (contrib/install-deps)"
done
T=$(mktemp -d "${TMPDIR:-/tmp}/skeld-systemd.XXXXXX") || exit 1
NSPID= UNSHARE=
cleanup() {
    # PID 1 of the namespace gone, every process in it is gone too, and its mounts with it.
    [ -n "$NSPID" ] && kill -KILL "$NSPID" 2>/dev/null
    [ -n "$UNSHARE" ] && wait "$UNSHARE" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
. "$(dirname "$0")/tap.sh"

mk() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $MAKE -s -C "$B" "$@"
}
configured() {
    printf 'print-dir:\n\t@echo $(%s)\n' "$1" | mk -f Makefile -f - print-dir | tail -n 1
}
prefix=$(configured prefix) unitdir=$(configured systemdsystemunitdir)
sysusersdir=$(configured sysusersdir) sysconfdir=$(configured sysconfdir)
case "$prefix" in /?*) ;; *) echo "systemd: unusable prefix \"$prefix\""; exit 1 ;; esac
mk install DESTDIR="$T/stage" >"$T/install.log" 2>&1 || { cat "$T/install.log"; exit 1; }
# The prefix moves to /opt/skeld-test in the booted system: a build under /tmp, /root or
# /home (hidden by the unit's sandbox) works the same. The unit is the installed one with
# that path alone changed, in /etc/systemd/system (a test prefix is not in systemd's path).
NEW=/opt/skeld-test
relocate() {
    sed "s|$prefix/|$NEW/|g"
}
relocate <"$T/stage$unitdir/skeld.service" >"$T/skeld.service"
# A sanitizer build: LeakSanitizer cannot inspect the process inside the unit's sandbox (it
# stops with a fatal error and exit status 1), so the leak check is left to the other tests
# and this one checks the unit. The drop-in sits next to the unit, as an operator's would.
dropin=
if nm "$B/daemon/skeld" 2>/dev/null | grep -q '__asan_init\|__lsan'; then
    dropin="[Service]
Environment=ASAN_OPTIONS=detect_leaks=0"
fi
cp "$T/stage$sysusersdir/skeld.conf" "$T/sysusers.conf"
conf=$(echo "$sysconfdir/skeld/skeld.conf" | relocate)
mkdir -p "$T/moved$NEW"
mv "$T/stage$prefix"/* "$T/moved$NEW/"

# ---- boot ---------------------------------------------------------------------------------
cat >"$T/boot.sh" <<EOF
set -e
mount -t tmpfs tmpfs "$T/ovl"
mkdir "$T/ovl/upper" "$T/ovl/work"
mount -t overlay overlay -o lowerdir=/,upperdir="$T/ovl/upper",workdir="$T/ovl/work" "$T/root"
cp -a "$T/stage/." "$T/moved/." "$T/root/"
mkdir -p "$T/root/etc/systemd/system" "$T/root/var/lib/skeld/armatures"
cp "$T/skeld.service" "$T/root/etc/systemd/system/skeld.service"
if [ -n "$dropin" ]; then
    mkdir -p "$T/root/etc/systemd/system/skeld.service.d"
    printf '%s\n' "$dropin" >"$T/root/etc/systemd/system/skeld.service.d/sanitizer.conf"
fi
cp "$B/samples/robot.skf" "$T/root/var/lib/skeld/armatures/"
systemd-sysusers --root="$T/root" "$T/sysusers.conf" >/dev/null
mount -t proc proc "$T/root/proc"
mount -t sysfs sysfs "$T/root/sys"
mount -t cgroup2 cgroup2 "$T/root/sys/fs/cgroup"
mount --rbind /dev "$T/root/dev"
mount -t tmpfs -o mode=755 tmpfs "$T/root/run"
mount -t tmpfs -o mode=1777 tmpfs "$T/root/tmp"
cd "$T/root"
mkdir -p .oldroot
pivot_root . .oldroot
umount -l /.oldroot
exec env -i container=skeld-test /lib/systemd/systemd --system --unit=basic.target
EOF
mkdir "$T/ovl" "$T/root"
unshare --mount --pid --fork --uts --ipc --net --cgroup --propagation private \
    sh "$T/boot.sh" >"$T/boot.log" 2>&1 &
UNSHARE=$!
# PID 1 of the namespace is unshare's child: found by its parent, waited for with a bound.
i=0
while [ -z "$NSPID" ] && [ $i -lt 1200 ] && kill -0 "$UNSHARE" 2>/dev/null; do
    NSPID=$(ps -o pid= --ppid "$UNSHARE" | tr -d ' ')
    [ -n "$NSPID" ] && [ "$(cat /proc/"$NSPID"/comm 2>/dev/null)" = systemd ] || NSPID=
    [ -n "$NSPID" ] || { sleep 0.1; i=$((i + 1)); }
done
if [ -z "$NSPID" ]; then
    cat "$T/boot.log"
    skip "systemd could not be booted in namespaces here (see above: the kernel or the container refused the namespaces or the overlay)"
fi
E() {
    timeout 120 nsenter -t "$NSPID" -m -p -n -u -i "$@"
}
# systemctl talks to it once its private socket exists.
i=0
while ! E test -S /run/systemd/private && [ $i -lt 1200 ] && kill -0 "$NSPID" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
state=$(E systemctl is-system-running --wait 2>&1)
check "a systemd booted in the namespaces ($state)" \
    sh -c 'case "$1" in running|degraded) exit 0;; *) exit 1;; esac' _ "$state"
show() {
    E systemctl show skeld -P "$1"
}

# ---- start: Type=notify returns once READY=1 came ---------------------------------------
E systemctl start skeld >"$T/start.log" 2>&1
check "systemctl start skeld succeeds" test $? = 0
check "the unit is active (running)" test "$(show ActiveState)/$(show SubState)" = active/running
check "with the daemon's STATUS= ($(show StatusText))" \
    sh -c 'case "$1" in "serving on 2 listeners"*) exit 0;; *) exit 1;; esac' _ "$(show StatusText)"
main=$(show MainPID)
check "its main process is the daemon (pid $main in the namespace)" \
    sh -c '[ "${1:-0}" -gt 0 ] && [ "$2" = skeld ]' _ "$main" "$(E cat "/proc/$main/comm" 2>/dev/null)"
preloaded() {
    E journalctl -u skeld --no-pager | grep -q "preloaded 1 armatures"
}
check "the sample was preloaded before READY=1" preloaded
code=$(E curl -s -o /dev/null -w '%{http_code}' \
    'http://127.0.0.1:8080/v1/files/robot.skf/render.png?anim=Walk&frame=10')
check "HTTP serves a render of the armature directory's file (status $code)" test "$code" = 200
check "the socket is srwxrwx--- skeld:skeld in /run/skeld" \
    test "$(E stat -c '%A %U:%G' /run/skeld/skeld.sock)" = "srwxrwx--- skeld:skeld"
gid=$(E stat -c %g /run/skeld/skeld.sock)
# connect_as SETPRIV-GROUP-FLAG: what nobody gets connecting with those groups.
connect_as() {
    E setpriv --reuid=65534 --regid=65534 "$1" /usr/bin/python3 -c '
import socket
try:
    socket.socket(socket.AF_UNIX).connect("/run/skeld/skeld.sock")
    print("connected")
except OSError as e:
    print(type(e).__name__)' 2>&1
}
got=$(connect_as --groups="$gid")
check "a user in the skeld group connects to it ($got)" test "$got" = connected
got=$(connect_as --clear-groups)
check "a user outside it is refused ($got)" test "$got" = PermissionError
check "the armature directory is read-only for the daemon" \
    E grep -q " /var/lib/skeld/armatures ro," "/proc/$main/mountinfo"
unprivileged() {
    E grep -q "^CapEff:[[:space:]]*0000000000000000" "/proc/$main/status" &&
        test "$(E stat -c %U "/proc/$main")" = skeld
}
check "the daemon runs as skeld with no capabilities" unprivileged

# ---- reload and stop ---------------------------------------------------------------------
E sed -i 's/^log-level = .*/log-level = debug/' "$conf"
E systemctl reload skeld
check "systemctl reload skeld succeeds" test $? = 0
check "the daemon reloaded: $(show StatusText)" \
    test "$(show StatusText)" = "serving; configuration reloaded, 1 option changed"
check "the same process serves on" test "$(show MainPID)" = "${main:-none}"
E systemctl stop skeld
check "systemctl stop skeld succeeds" test $? = 0
# Result stays success only if the main process exited 0 (else exit-code or signal).
check "the daemon exited 0 ($(show ActiveState)/$(show Result))" \
    test "$(show ActiveState)/$(show Result)" = inactive/success
drained() {
    E journalctl -u skeld --no-pager | grep -q "skeld\[$main\]: ts=[^ ]* level=info msg=\"stopped\""
}
check "after its drain (its log ends with stopped)" drained
gone() {
    ! E test -e /run/skeld
}
check "its runtime directory is gone" gone

# ---- a config that does not read: status 2, no restart -----------------------------------
E sh -c "echo 'no-such-option = 1' >>'$conf'"
E systemctl start skeld >/dev/null 2>&1
check "a bad config fails the start" test $? != 0
check "with exit status 2 and no restart" \
    test "$(show ExecMainStatus)/$(show NRestarts)/$(show ActiveState)" = 2/0/failed

E journalctl -u skeld --no-pager >"$T/journal" 2>&1
E systemctl poweroff >/dev/null 2>&1
i=0
while kill -0 "$UNSHARE" 2>/dev/null && [ $i -lt 1200 ]; do
    sleep 0.1
    i=$((i + 1))
done
check "systemd powers off" sh -c '! kill -0 "$1" 2>/dev/null' _ "$UNSHARE"
kill -0 "$UNSHARE" 2>/dev/null || NSPID=
echo "systemd: $passed passed, $failed failed"
[ "$failed" = 0 ] || sed 's/^/    /' "$T/journal"
[ "$failed" = 0 ]
