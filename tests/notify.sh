#!/bin/sh
# The daemon's sd_notify messages, received for real: python3 binds a unix datagram socket,
# starts `skeld serve` with NOTIFY_SOCKET pointing at it, as systemd does for Type=notify, and
# checks what arrives and when: the preload's progress (STATUS=preloading N of M with
# EXTEND_TIMEOUT_USEC), then READY=1 from the daemon's own pid once it serves and has
# preloaded every sample (STATS counts them, a PING is answered); after SIGHUP, RELOADING=1
# with MONOTONIC_USEC then READY=1 saying what changed, also when the new config does not
# read; after SIGTERM, STOPPING=1 and exit 0. With --drain-grace, a SIGHUP in the grace sends
# neither RELOADING=1 nor READY=1 after its STOPPING=1. Then a NOTIFY_SOCKET nobody listens on: the
# daemon serves all the same and says once in its log why it could not notify.
# Every wait is bounded (2 minutes, for sanitizer builds on a loaded machine), none is a sleep.
# Needs python3 (contrib/install-deps); exit 77 only without it or without the samples.
set -u
BIN=${SKELD_BIN:-$PWD/daemon/skeld}
CTL=${SKELD_CTL:-$PWD/client/skelctl}
SAMPLES=${SKELD_SAMPLES:-$PWD/samples}
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
    echo "notify: SKIP: $PY is missing (contrib/install-deps installs python3)"
    exit 77
fi
if ! ls "$SAMPLES"/*.skf >/dev/null 2>&1; then
    echo "notify: SKIP: no samples in $SAMPLES (make builds them)"
    exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/skeld-notify.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

"$PY" - "$BIN" "$CTL" "$SAMPLES" "$TMP" <<'EOF'
import os, re, select, signal, socket, struct, subprocess, sys, time

BIN, CTL, SAMPLES, TMP = sys.argv[1:5]
WAIT = 120  # seconds: an upper bound on every wait, never a delay
failed = passed = 0


def check(desc, cond, detail=""):
    global failed, passed
    if cond:
        passed += 1
        print("ok - " + desc)
    else:
        failed += 1
        print("not ok - " + desc + (": " + detail if detail else ""))
    sys.stdout.flush()


def receive(sock):
    """One notification: (assignments as a dict, sender pid), or (None, None) on timeout."""
    ready, _, _ = select.select([sock], [], [], WAIT)
    if not ready:
        return None, None
    data, anc, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(12))
    pid = None
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", payload[:12])[0]
    fields = dict(l.split("=", 1) for l in data.decode().split("\n") if "=" in l)
    return fields, pid


def write_config(path, log_level, extra=""):
    with open(path, "w") as f:
        f.write("# notify.sh\nlisten = unix:%s/s.sock\nroot = %s\npreload = %s\n"
                "threads = 2\nlog-level = %s\n%s" % (TMP, SAMPLES, SAMPLES, log_level, extra))


def ctl(*args):
    return subprocess.run([CTL, "--uri", "unix:%s/s.sock" % TMP] + list(args),
                          capture_output=True, text=True, timeout=WAIT)


def start(notify_socket, conf, log):
    env = dict(os.environ, NOTIFY_SOCKET=notify_socket)
    return subprocess.Popen([BIN, "serve", "--config", conf], env=env,
                            stdout=subprocess.PIPE, stderr=log)


def read_until_ready(proc):
    """The daemon's stdout up to its ready: line, its end, or WAIT seconds."""
    out, fd, deadline = b"", proc.stdout.fileno(), time.monotonic() + WAIT
    while b"\nready:" not in b"\n" + out:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        out += chunk
    return out.decode(errors="replace")


# ---- a notify socket as systemd makes one ------------------------------------------------
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(TMP + "/notify")
sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
conf = TMP + "/skeld.conf"
write_config(conf, "info")
log = open(TMP + "/daemon.log", "w")
proc = start(TMP + "/notify", conf, log)
try:
    # While preloading: the progress, each extending systemd's start timeout; then READY=1.
    want = len([f for f in os.listdir(SAMPLES) if f.endswith(".skf")])
    progress = []
    msg, pid = receive(sock)
    while msg is not None and "READY" not in msg:
        progress.append(msg)
        msg, pid = receive(sock)
    check("first STATUS=preloading N of %d, N from 0 to %d" % (want, want),
          [m.get("STATUS") for m in progress] ==
          ["preloading %d of %d" % (i, want) for i in range(want + 1)], repr(progress))
    check("each with EXTEND_TIMEOUT_USEC (the start's timeout extended)",
          all(m.get("EXTEND_TIMEOUT_USEC", "").isdigit() for m in progress), repr(progress))
    check("READY=1 arrives after start", msg is not None and msg.get("READY") == "1", repr(msg))
    check("it comes from the daemon's own pid (NotifyAccess=main)", pid == proc.pid,
          "%r != %r" % (pid, proc.pid))
    check("with a STATUS= line", bool(msg and msg.get("STATUS", "").startswith("serving")),
          repr(msg))
    # READY=1 is sent once listening and preloaded: both must already hold.
    stats = ctl("stats")
    entries = re.search(r"^cache\.entries (\d+)$", stats.stdout, re.M)
    check("every sample was preloaded by then (STATS cache.entries = %d)" % want,
          stats.returncode == 0 and entries is not None and int(entries.group(1)) == want,
          stats.stdout + stats.stderr)
    check("the daemon answers a PING", ctl("ping").stdout.strip() == "pong")
    out = read_until_ready(proc)
    check("its ready: line was printed too", "ready:" in out, out)

    # SIGHUP with one live option changed: RELOADING=1 then READY=1.
    write_config(conf, "debug")
    before = time.monotonic_ns() // 1000
    proc.send_signal(signal.SIGHUP)
    msg, _ = receive(sock)
    check("SIGHUP: RELOADING=1 first", msg is not None and msg.get("RELOADING") == "1", repr(msg))
    usec = msg.get("MONOTONIC_USEC", "") if msg else ""
    check("with MONOTONIC_USEC, the reload's start on CLOCK_MONOTONIC",
          usec.isdigit() and before <= int(usec) <= time.monotonic_ns() // 1000, repr(msg))
    msg, _ = receive(sock)
    check("then READY=1", msg is not None and msg.get("READY") == "1", repr(msg))
    check("saying one option changed", bool(msg and "1 option changed" in msg.get("STATUS", "")),
          repr(msg))

    # SIGHUP with a config that does not read: the reload still ends with READY=1.
    write_config(conf, "debug", "no-such-option = 1\n")
    proc.send_signal(signal.SIGHUP)
    msg, _ = receive(sock)
    check("a failed reload: RELOADING=1", msg is not None and msg.get("RELOADING") == "1",
          repr(msg))
    msg, _ = receive(sock)
    check("then READY=1 saying the reload failed",
          msg is not None and msg.get("READY") == "1" and "failed" in msg.get("STATUS", ""),
          repr(msg))
    check("and the daemon still serves", ctl("ping").stdout.strip() == "pong")

    proc.send_signal(signal.SIGTERM)
    msg, _ = receive(sock)
    check("SIGTERM: STOPPING=1", msg is not None and msg.get("STOPPING") == "1", repr(msg))
    rc = proc.wait(timeout=WAIT)
    check("the daemon exits 0", rc == 0, "exit %r" % rc)
    sock.setblocking(False)
    try:
        extra = sock.recv(4096)
    except BlockingIOError:
        extra = None
    check("and sends nothing after STOPPING=1", extra is None, repr(extra))
finally:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
sock.close()

# ---- SIGHUP during --drain-grace: the node is on its way out, not ready again ----------------
# The grace's STOPPING=1 told systemd the service is stopping: a reload then must not send
# RELOADING=1 and READY=1 ("serving; configuration reloaded"), or `systemctl status` shows a
# node that serves while its balancer has taken it out.
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(TMP + "/notify-grace")
write_config(conf, "info", "drain-grace = 3600\n")
log.close()
log = open(TMP + "/daemon-grace.log", "w")
proc = start(TMP + "/notify-grace", conf, log)
try:
    msg, _ = receive(sock)
    while msg is not None and "READY" not in msg:
        msg, _ = receive(sock)
    check("drain-grace: READY=1 once preloaded", msg is not None and msg.get("READY") == "1",
          repr(msg))
    proc.send_signal(signal.SIGTERM)
    msg, _ = receive(sock)
    check("drain-grace: SIGTERM sends STOPPING=1 as the grace starts",
          msg is not None and msg.get("STOPPING") == "1", repr(msg))
    proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + WAIT
    while ("SIGHUP: configuration reloaded" not in open(TMP + "/daemon-grace.log").read() and
           time.monotonic() < deadline and proc.poll() is None):
        time.sleep(0.01)  # a poll for the log line, bounded by WAIT
    proc.send_signal(signal.SIGINT)  # drains at once: STOPPING=1 again
    msg, _ = receive(sock)
    check("drain-grace: a SIGHUP meanwhile sends neither RELOADING=1 nor READY=1",
          msg is not None and msg.get("STOPPING") == "1", repr(msg))
    rc = proc.wait(timeout=WAIT)
    check("drain-grace: the daemon exits 0", rc == 0, "exit %r" % rc)
finally:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
sock.close()

# ---- NOTIFY_SOCKET set, nobody listening: serve anyway, say so once ------------------------
write_config(conf, "info")
log.close()
log = open(TMP + "/daemon2.log", "w")
proc = start(TMP + "/nobody", conf, log)
try:
    out = read_until_ready(proc)
    check("without a listener on NOTIFY_SOCKET the daemon still starts", "ready:" in out, out)
    check("and serves", ctl("ping").stdout.strip() == "pong")
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=WAIT)
    check("and exits 0 on SIGTERM", rc == 0, "exit %r" % rc)
finally:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
log.close()
text = open(TMP + "/daemon2.log").read()
warnings = [l for l in text.splitlines() if "sd_notify" in l]
check("its log says once why it could not notify", len(warnings) == 1 and
      TMP + "/nobody" in warnings[0], "\n".join(warnings) or text[-2000:])

print("notify: %d passed, %d failed" % (passed, failed))
if failed:
    print("---- daemon log ----")
    print(open(TMP + "/daemon.log").read()[-4000:])
sys.exit(1 if failed else 0)
EOF
