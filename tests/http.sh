#!/bin/sh
# The HTTP front (proto/HTTP.md) end to end: the real daemon on 127.0.0.1 port 0 driven with
# curl, and with python3's socket module where curl cannot say what is on the wire
# (pipelining, limits at their exact boundaries, a slowloris, SIGTERM mid-request). Answers
# are compared byte for byte with what the command lines print for the same flags: `skeld
# info`, `skeld eval`, `skeld render` (PNG, sheet and its JSON) and `skelctl mesh` over the
# daemon's unix socket. Needs bash, curl and python3 (contrib/install-deps). One "ok - ..."
# or "not ok - ..." line per check; exit 1 on any failure, 77 (skip) only without curl.
# No fixed sleeps: every wait is a poll for an event, bounded generously (2 minutes) only so a
# hung daemon fails the test instead of hanging it.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -u

if ! command -v curl >/dev/null 2>&1; then
    echo "http: SKIP: curl is missing (contrib/install-deps installs it)"
    exit 77
fi
BIN=${SKELD_BIN:-$PWD/daemon/skeld}
CTL=${SKELD_CTL:-$PWD/client/skelctl}
SAMPLES=${SKELD_SAMPLES:-$PWD/samples}
PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/skeld-http.XXXXXX") || exit 1
START=$(date +%s)

. "$(dirname "$0")/tap.sh"
# READYZ, NOTREADY: the /readyz requests start() sent answered 200, and 503 (while preloading)
declare -A PID=() PORT=() READYZ=() NOTREADY=()

cleanup() {
    local name
    for name in "${!PID[@]}"; do
        kill -KILL "${PID[$name]}" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

not() { ! "$@"; }

# ---- the python side: raw sockets, JSON and the Prometheus text ----------------------------
cat >"$TMP/h.py" <<'EOF'
import json, os, re, signal, socket, sys, time

def connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=20)

def read_answer(s, buf, head=False):
    """One answer from s (buf: bytes already received): (status, raw head, headers, body),
    or None at the end of the stream."""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            return None
        buf += d
    i = buf.index(b"\r\n\r\n")
    raw = bytes(buf[:i + 4])
    del buf[:i + 4]
    lines = raw.decode("latin1").split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {}
    for l in lines[1:]:
        if l:
            k, v = l.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
    n = 0 if head or status in (100, 204, 304) else int(hdrs.get("content-length", "0"))
    while len(buf) < n:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    body = bytes(buf[:n])
    del buf[:n]
    return status, raw, hdrs, body

def at_end(s, buf, wait=5):
    """The peer ends the stream with nothing more to say (within wait seconds)."""
    if buf:
        return False
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return False

def request(method, path, extra=""):
    return ("%s %s HTTP/1.1\r\nHost: skeld\r\n%s\r\n" % (method, path, extra)).encode()

cmd, args = sys.argv[1], sys.argv[2:]

if cmd == "pipe":
    # pipe PORT DIR "METHOD PATH"...: every request in one write, the answers read in order
    # into DIR/N.head and DIR/N.body; then the connection must still take a request, and
    # end after the one that says Connection: close.
    port, out, reqs = int(args[0]), args[1], [r.split(" ", 1) for r in args[2:]]
    s = connect(port)
    s.sendall(b"".join(request(m, p) for m, p in reqs))
    buf = bytearray()
    for i, (m, p) in enumerate(reqs):
        a = read_answer(s, buf, head=(m == "HEAD"))
        if a is None:
            sys.exit("answer %d (%s %s) missing" % (i, m, p))
        open("%s/%d.head" % (out, i), "wb").write(a[1])
        open("%s/%d.body" % (out, i), "wb").write(a[3])
        if "close" in a[2].get("connection", "").lower():
            sys.exit("answer %d says Connection: close" % i)
    s.sendall(request("GET", "/healthz", "Connection: close\r\n"))
    a = read_answer(s, buf)
    if not a or a[0] != 200 or a[3] != b"ok\n":
        sys.exit("the connection did not take one more request after the pipeline")
    if a[2].get("connection", "").lower() != "close" or not at_end(s, buf):
        sys.exit("Connection: close did not end the connection")

elif cmd == "close":
    # close PORT: a request with Connection: close and one more behind it, in one write:
    # one answer (saying close), then the end of the stream.
    s = connect(int(args[0]))
    s.sendall(request("GET", "/healthz", "Connection: close\r\n") + request("GET", "/readyz"))
    buf = bytearray()
    a = read_answer(s, buf)
    if not a or a[0] != 200 or a[2].get("connection", "").lower() != "close":
        sys.exit("no answer with Connection: close: %r" % (a,))
    if not at_end(s, buf):
        sys.exit("the connection went on after Connection: close")

elif cmd == "closelast":
    # closelast PORT SLOWPATH: SLOWPATH, then a request with Connection: close, then one more,
    # in one write; prints each answer's Connection header and whether the stream ended.
    s = connect(int(args[0]))
    s.sendall(request("GET", args[1]) + request("GET", "/healthz", "Connection: close\r\n") +
              request("GET", "/readyz"))
    buf, out = bytearray(), []
    for i in range(2):
        a = read_answer(s, buf)
        out.append(a[2].get("connection", "keep-alive") if a else "none")
    print(" ".join(out), "end" if at_end(s, buf) else "open")

elif cmd == "limit":
    # limit PORT KIND N BODYFILE: one request at a limit's edge; prints the status.
    # KIND: fields (N header fields in all), url (an N-byte URL), hbytes (N bytes of header
    # names and values in all), hosts (an HTTP/1.1 request with N Host headers).
    port, kind, n, body = int(args[0]), args[1], int(args[2]), args[3]
    if kind == "hosts":
        req = ("GET /healthz HTTP/1.1\r\n" + "Host: skeld\r\n" * n + "\r\n").encode()
    elif kind == "fields":
        req = request("GET", "/healthz", "".join("X-F%d: v\r\n" % i for i in range(n - 1)))
    elif kind == "url":
        req = request("GET", "/healthz?" + "a" * (n - len("/healthz?")))
    else:  # "Host" + "skeld" + "X-Big" + value
        req = request("GET", "/healthz", "X-Big: %s\r\n" % ("a" * (n - 4 - 5 - 5)))
    s = connect(port)
    s.sendall(req)
    a = read_answer(s, bytearray())
    open(body, "wb").write(a[3] if a else b"")
    print(a[0] if a else "none")

elif cmd == "maxconn":
    # maxconn PORT SOCKET: with --max-connections 2, a binary connection (answered a PING, so
    # accepted) and a keep-alive HTTP one fill the limit; a third, HTTP, asking for an API
    # resource, is answered 503 with Retry-After and a message naming --max-connections, then
    # ended; health probes past the limit are answered. Prints what it saw.
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.settimeout(20)
    u.connect(args[1])
    u.sendall(b"SKLD" + bytes([1, 2]) + b"\0" * 6 + (7).to_bytes(4, "little") +
              (4).to_bytes(4, "little") + (0).to_bytes(4, "little"))
    got = b""
    while len(got) < 24:
        d = u.recv(64)
        if not d:
            sys.exit("the binary connection ended before its PING was answered")
        got += d
    h = connect(int(args[0]))
    h.sendall(request("GET", "/healthz"))
    a = read_answer(h, bytearray())
    print("held", a[0] if a else "none")
    s = connect(int(args[0]))
    s.sendall(request("GET", "/v1/armatures"))
    buf = bytearray()
    a = read_answer(s, buf)
    if a:
        names = b"--max-connections" in a[3]
        print("third", a[0], a[2].get("retry-after"), "names" if names else "unnamed",
              "end" if at_end(s, buf) else "open")
    else:
        print("third none")
    # past the limit, health probes are still answered (a liveness probe must not restart a
    # busy node), each on a connection of its own that ends after it
    for path in ("/healthz", "/readyz", "http://skeld/healthz"):
        p = connect(int(args[0]))
        p.sendall(request("GET", path))
        buf = bytearray()
        a = read_answer(p, buf)
        print("probe", path, a[0] if a else "none", "end" if a and at_end(p, buf) else "open")

elif cmd == "slowloris":
    # slowloris PORT BODYFILE: headers trickled, a field every 100 ms, never finished; prints
    # the status and the seconds until the answer (bounded at 8 s).
    port, body = int(args[0]), args[1]
    s = connect(port)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: skeld\r\n")
    s.settimeout(0.1)
    buf, t0 = bytearray(), time.time()
    while time.time() - t0 < 8 and b"\r\n\r\n" not in buf:
        try:
            s.sendall(b"X-Slow: a\r\n")
        except OSError:
            pass
        try:
            d = s.recv(65536)
            if not d:
                break
            buf += d
        except socket.timeout:
            pass
    s.settimeout(5)
    a = read_answer(s, buf)
    open(body, "wb").write(a[3] if a else b"")
    print(a[0] if a else "none", "%.1f" % (time.time() - t0))

elif cmd == "crlfs":
    # crlfs PORT: "\r\n" every 100 ms, which starts no request; prints "closed" once the
    # daemon ends the connection (bounded at 20 s: "open").
    s = connect(int(args[0]))
    s.settimeout(0.1)
    t0 = time.time()
    while time.time() - t0 < 20:
        try:
            s.sendall(b"\r\n")
            if not s.recv(65536):
                break
        except socket.timeout:
            continue
        except OSError:
            break
    print("closed" if time.time() - t0 < 20 else "open")

elif cmd == "rawhead":
    # rawhead PORT BYTES HEADER: as raw, then the value of the answer's HEADER ("-" if none)
    s = connect(int(args[0]))
    s.sendall(args[1].replace("\\r\\n", "\r\n").encode())
    a = read_answer(s, bytearray())
    print(a[0] if a else "none", a[2].get(args[2].lower(), "-") if a else "-")

elif cmd == "drain":
    # drain PORT PID DIR SLOWPATH SKF: SIGTERM with SLOWPATH running on c1 and a request queued
    # behind it (read only after SIGTERM), half a request read on c2, c3 idle, and on c4
    # SLOWPATH, a whole request and half an upload of SKF, read but waiting on --max-inflight
    # 1; prints one line per answer: what it got.
    port, pid, out, slow = int(args[0]), int(args[1]), args[2], args[3]
    skf = open(args[4], "rb").read()
    upload = request("POST", "/v1/armatures", "Content-Length: %d\r\n" % len(skf)) + skf
    c1, c3 = connect(port), connect(port)
    c1.sendall(request("GET", slow) + request("GET", "/healthz"))
    b1, b2, b3 = bytearray(), bytearray(), bytearray()
    t0 = time.time()
    while True:  # until the daemon has read c1's request: its job is queued or running
        c3.sendall(request("GET", "/metrics"))
        a = read_answer(c3, b3)
        if a and re.search(rb"^skeld_queue_depth [1-9]", a[3], re.M):
            break
        if time.time() - t0 > 10:
            sys.exit("the slow request never showed in skeld_queue_depth")
    c2, c4 = connect(port), connect(port)
    c2.sendall(b"GET /healthz HTTP/1.1\r\nHost: skeld\r\n")  # not finished
    c4_all = request("GET", slow) + request("GET", "/healthz") + upload
    half = len(c4_all) - len(upload) // 2
    c4.sendall(c4_all[:half])  # in one write: read at once
    c3.sendall(request("GET", "/healthz"))  # a round trip after c2's and c4's bytes went out
    read_answer(c3, b3)
    os.kill(pid, signal.SIGTERM)
    t0 = time.time()
    while time.time() - t0 < 10:  # the listener closes at SIGTERM
        try:
            connect(port).close()
        except (ConnectionRefusedError, ConnectionResetError):  # reset: queued as it closed
            break
        time.sleep(0.01)
    else:
        sys.exit("the listener still accepts 10 s after SIGTERM")
    # logrotate's SIGHUP and a repeated SIGTERM change nothing in a drain (their default
    # actions would end it, and the answers below with it)
    os.kill(pid, signal.SIGHUP)
    os.kill(pid, signal.SIGTERM)
    c2.sendall(b"\r\n")
    c4.sendall(c4_all[half:])
    b4 = bytearray()
    for name, c, buf in (("c2", c2, b2), ("c1", c1, b1), ("c1b", c1, b1), ("c4", c4, b4),
                         ("c4h", c4, b4), ("c4b", c4, b4)):
        a = read_answer(c, buf)
        if not a:
            print(name, "none")
            continue
        open("%s/%s.body" % (out, name), "wb").write(a[3])
        ends = a[2].get("connection") == "close" and at_end(c, buf)
        print(name, a[0], a[2].get("connection", "keep-alive"), "end" if ends else "open")
    print("c3", "end" if at_end(c3, b3) else "open")

elif cmd == "flood":
    # flood PORT SLOWPATH N: two SLOWPATH requests (frame=0 and 1) then N small ones (404s),
    # written while the answers are read; prints how many answers came.
    port, slow, n = int(args[0]), args[1], int(args[2])
    s = connect(port)
    data = b"".join(request("GET", "%s&frame=%d" % (slow, i)) for i in range(2))
    data += request("GET", "/x") * n
    import threading
    def send():
        try:
            s.sendall(data)
        except OSError:
            pass
    t = threading.Thread(target=send)
    t.start()
    got, buf = 0, bytearray()
    while got < n + 2:
        try:
            a = read_answer(s, buf)
        except OSError:
            a = None
        if not a:
            break
        got += 1
    s.close()
    t.join()
    print(got)

elif cmd == "budget":
    # budget PORT: with --max-input-mb 1, a body held half-sent takes the budget: another
    # upload is refused 503 meanwhile, and once the first is whole the budget is back.
    port = int(args[0])
    def held():
        m = connect(port)
        m.sendall(request("GET", "/metrics"))
        a = read_answer(m, bytearray())
        m.close()
        v = re.search(rb"^skeld_input_buffer_bytes (\d+)$", a[3], re.M)
        return int(v.group(1)) if v else -1
    def wait_held(pred):
        for _ in range(2400):
            if pred(held()):
                return True
            time.sleep(0.05)
        return False
    def upload(s, n):
        s.sendall(request("POST", "/v1/armatures", "Content-Length: %d\r\n" % n) + b"x" * n)
        return read_answer(s, bytearray())
    c1 = connect(port)
    c1.sendall(request("POST", "/v1/armatures", "Content-Length: 1000000\r\n") + b"x" * 700000)
    print("held" if wait_held(lambda v: v >= 1 << 20) else "not held %d" % held())
    a = upload(connect(port), 200000)
    print("c2", a[0], a[2].get("retry-after"), "names" if b"max-input-mb" in a[3] else a[3])
    c1.sendall(b"x" * 300000)
    print("c1", read_answer(c1, bytearray())[0])
    print("released" if wait_held(lambda v: v == 0) else "not released %d" % held())
    print("c3", upload(connect(port), 200000)[0])

elif cmd == "http10":
    # http10 PORT: HTTP/1.0 with Connection: keep-alive; prints the answer's Connection
    # header and whether the connection stayed open for a second request.
    s = connect(int(args[0]))
    buf = bytearray()
    s.sendall(b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    a = read_answer(s, buf)
    s.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
    b = read_answer(s, buf)
    print(a[2].get("connection", "-") if a else "none", "open" if b else "closed")

elif cmd == "growskf":
    # growskf OUT: a .skf of 1,000 translucent layers on one bone that grows at frame 5 of
    # "grow" from a thousandth of its size (check_roundtrip's load_layers), with a
    # white 64x64 atlas
    import struct, zipfile, zlib
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    rows = b"".join(b"\0" + b"\xff" * 256 for _ in range(64))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 6, 0, 0, 0)) +
           chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    bones = [{"id": 0, "name": "root"}] + [
        {"id": i, "parent_id": 0, "tex": "t", "scale": {"x": 8, "y": 8},
         "tint": {"r": 255, "g": 255, "b": 255, "a": 40}} for i in range(1, 1001)]
    keys = [{"frame": f, "bone_id": 0, "element": e, "value": v}
            for f, v in ((0, 0.001), (4, 0.001), (5, 1)) for e in ("ScaleX", "ScaleY")]
    arm = {"atlases": [{"filename": "atlas0.png", "size": {"x": 64, "y": 64}}],
           "styles": [{"id": 0, "name": "Default", "textures": [
               {"name": "t", "offset": {"x": 0, "y": 0}, "size": {"x": 64, "y": 64},
                "atlas_idx": 0}]}],
           "bones": bones, "animations": [{"name": "grow", "fps": 10, "keyframes": keys}]}
    with zipfile.ZipFile(args[0], "w") as z:
        z.writestr("armature.json", json.dumps(arm))
        z.writestr("atlas0.png", png)

elif cmd == "headlong":
    # headlong PORT: a HEAD whose URL is over the limit; prints its status and whether the
    # answer carried a body (bytes after the head before the end of the connection)
    s = connect(int(args[0]))
    s.sendall(b"HEAD /healthz?" + b"a" * 9000 + b" HTTP/1.1\r\nHost: a\r\n\r\n")
    buf = bytearray()
    a = read_answer(s, buf, head=True)
    print(a[0] if a else "none", "nobody" if at_end(s, buf) else "body")

elif cmd == "expectpipe":
    # expectpipe PORT FILE: on one connection, a pose and then an upload of FILE that waits
    # for 100 Continue, both sent before either is answered; prints the statuses in order
    s = connect(int(args[0]))
    body = open(args[1], "rb").read()
    s.sendall(b"GET /v1/files/robot.skf/pose?anim=Walk&warmup=77 HTTP/1.1\r\nHost: a\r\n\r\n" +
              ("POST /v1/armatures HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n"
               "Content-Length: %d\r\n\r\n" % len(body)).encode())
    buf, seen = bytearray(), []
    for _ in range(3):
        a = read_answer(s, buf)
        if a is None:
            break
        seen.append(str(a[0]))
        if a[0] == 100:
            s.sendall(body)
        if a[0] not in (100, 200):
            break
    print(" ".join(seen))

elif cmd == "raw":
    # raw PORT BYTES: BYTES (with \r\n written as \\r\\n) sent at once; prints the first
    # answer's status
    s = connect(int(args[0]))
    s.sendall(args[1].replace("\\r\\n", "\r\n").encode())
    a = read_answer(s, bytearray())
    print(a[0] if a else "none")

elif cmd == "err":
    # err FILE REASON SUBSTR...: {"error":REASON,"message":M} and nothing else, M naming
    # every SUBSTR.
    try:
        j = json.load(open(args[0]))
    except ValueError as e:
        sys.exit("not JSON: %s" % e)
    if not isinstance(j, dict) or set(j) != {"error", "message"}:
        sys.exit("not {error, message}: %r" % j)
    if j["error"] != args[1]:
        sys.exit("error is %r, not %r" % (j["error"], args[1]))
    for sub in args[2:]:
        if sub not in j["message"]:
            sys.exit("message %r does not name %r" % (j["message"], sub))

elif cmd == "sheet":
    # sheet GOT FILE: GOT is FILE (skeld render's OUT.json beside OUT.png) without its "image"
    # key and the newline after it; the key is checked to name the picture, OUT.png.
    got, want = open(args[0], "rb").read(), open(args[1], "rb").read().decode()
    m = re.match(r'\{"image":("(?:[^"\\]|\\.)*"),', want)
    png = os.path.basename(args[1])[:-len(".json")] + ".png"
    if not m or not json.loads(m.group(1)).endswith(png) \
            or not want.endswith("\n"):
        sys.exit("unexpected skeld render JSON: %s" % want[:80])
    expect = ("{" + want[m.end():-1]).encode()
    if got != expect:
        sys.exit("sheet.json differs: %r vs %r" % (got[:100], expect[:100]))
    json.loads(got)

elif cmd == "list":
    # list FILE ID NAME ANIM...: the listing names armature ID with these animations, and
    # NAME as the file it was loaded from by path ("-": none, an upload)
    j = json.load(open(args[0]))
    for a in j["armatures"]:
        if a["id"] == args[1]:
            name = None if args[2] == "-" else args[2]
            if a["animations"] != args[3:] or not isinstance(a["bones"], int) or a["file"] != name:
                sys.exit("listed as %r" % a)
            break
    else:
        sys.exit("%s not listed" % args[1])

elif cmd == "summary":
    # summary FILE ID INFOFILE: the upload answer is skeld info's JSON, byte for byte, and its
    # "id" (the first key) is ID
    got, want = open(args[0], "rb").read(), open(args[2], "rb").read()
    j = json.loads(got)
    if got != want or list(j)[0] != "id" or j["id"] != args[1]:
        sys.exit("upload summary %r..." % got[:100])

elif cmd == "prom":
    # prom FILE: the Prometheus text format, each sample's family declared by # TYPE first; a
    # histogram has a _sum and a _count, the count its +Inf bucket's
    types, samples = {}, {}
    for n, line in enumerate(open(args[0]), 1):
        line = line.rstrip("\n")
        m = re.match(r"# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$", line)
        if m:
            if m.group(1) == "TYPE":
                if m.group(3) not in ("counter", "gauge", "histogram", "summary", "untyped"):
                    sys.exit("line %d: bad type" % n)
                types[m.group(2)] = m.group(3)
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"'
                     r'(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")*)?\})? (\S+)$', line)
        if not m:
            sys.exit("line %d: not a sample: %r" % (n, line))
        float(m.group(5).replace("+Inf", "inf"))
        name = m.group(1)
        family = re.sub(r"_(bucket|count|sum)$", "", name) if name not in types else name
        if family not in types:
            sys.exit("line %d: %s has no # TYPE" % (n, name))
        samples[name + (m.group(2) or "")] = m.group(5)
    for h in (f for f, t in types.items() if t == "histogram"):
        for part in ("_sum", "_count", '_bucket{le="+Inf"}'):
            if h + part not in samples:
                sys.exit("histogram %s has no %s" % (h, part))
        if samples[h + "_count"] != samples[h + '_bucket{le="+Inf"}']:
            sys.exit("histogram %s: _count is not the +Inf bucket" % h)
else:
    sys.exit("h.py: unknown command " + cmd)
EOF
py() { "$PY" "$TMP/h.py" "$@"; }
# edit_skf IN OUT CODE: IN with its armature.json changed by CODE (tests/helpers/edit-skf.py)
edit_skf() { "$PY" "${SKELD_SRCDIR:-.}/tests/helpers/edit-skf.py" "$@"; }

# ---- daemons --------------------------------------------------------------------------------
# start NAME OPTIONS...: skeld serve with an http listener on port 0, in the background; its
# port (from the "listening http://" line) in PORT[NAME], once /readyz says ready.
start() {
    local name=$1 i port= st
    shift
    "$BIN" serve --listen http://127.0.0.1:0 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    PID[$name]=$!
    for i in $(seq 2400); do # 2 minutes
        port=$(sed -n 's|^listening http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$TMP/$name.out")
        [ -n "$port" ] && break
        kill -0 "${PID[$name]}" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$port" ]; then
        notok "$name: the daemon prints its http port"
        cat "$TMP/$name.err"
        return 1
    fi
    PORT[$name]=$port
    READYZ[$name]=0
    NOTREADY[$name]=0
    for i in $(seq 2400); do
        st=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")
        case $st in
        200) READYZ[$name]=1 && break ;;
        503) NOTREADY[$name]=$((NOTREADY[$name] + 1)) ;;
        esac
        sleep 0.05
    done
    check "$name: up on port $port and ready" test "$(curl -s --max-time 5 "http://127.0.0.1:$port/readyz")" = ready
    READYZ[$name]=$((READYZ[$name] + 1))
}

# stop NAME [nosignal]: SIGTERM (unless sent already), a bounded wait for the exit, then
# status 0 and no error on stderr.
stop() {
    local name=$1 pid=${PID[$1]} i rc
    [ $# -gt 1 ] || kill -TERM "$pid"
    for i in $(seq 2400); do # 2 minutes
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        notok "$name: exits within 2 minutes of SIGTERM"
    fi
    wait "$pid"
    rc=$?
    unset "PID[$name]"
    check "$name: exits 0 after SIGTERM (got $rc)" test "$rc" -eq 0
    check "$name: no \"level=error\" line on stderr" not grep -q ' level=error ' "$TMP/$name.err"
    if [ "$rc" -ne 0 ] || grep -q ' level=error ' "$TMP/$name.err"; then
        grep -v ' event=access ' "$TMP/$name.err" | tail -n 20
    fi
}

# ---- requests -------------------------------------------------------------------------------
# get NAME CURL-ARGS...: one exchange; its status in ST, headers in $TMP/NAME.hdr (every
# header block, 100 Continue included), body in $TMP/NAME.body.
get() {
    local n=$1
    shift
    rm -f "$TMP/$n.body" "$TMP/$n.hdr" # curl writes no file for an empty body
    ST=$(curl -s --max-time 30 -o "$TMP/$n.body" -D "$TMP/$n.hdr" -w '%{http_code}' "$@")
}
# hdr NAME FIELD: the value of FIELD in NAME's last header block (empty if absent).
hdr() {
    tr -d '\r' <"$TMP/$1.hdr" | awk -v k="$2" '
        /^HTTP\// { v = "" }
        { i = index($0, ":"); if (i && tolower(substr($0, 1, i - 1)) == tolower(k)) v = substr($0, i + 2) }
        END { print v }'
}
has_hdr() { tr -d '\r' <"$TMP/$1.hdr" | grep -qi "^$2:"; }
is() { [ "$1" = "$2" ]; }
same() { cmp -s "$1" "$2"; }
empty() { [ ! -s "$1" ]; }
# errjson NAME STATUS SUBSTR...: the status, and a JSON error body whose "error" is the
# status line's reason and whose message names every SUBSTR.
errjson() {
    local n=$1 want=$2 reason
    shift 2
    [ "$ST" = "$want" ] || { echo "# status $ST, not $want" >&2; return 1; }
    reason=$(tr -d '\r' <"$TMP/$n.hdr" | sed -n 's|^HTTP/1\.1 [0-9]* ||p' | tail -n 1)
    is "$(hdr "$n" Content-Type)" application/json && py err "$TMP/$n.body" "$reason" "$@"
}
# q FLAGS...: the query of skeld's flags (--anim Walk --loop: anim=Walk&loop)
q() {
    local out= a
    while [ $# -gt 0 ]; do
        a=${1#--}
        shift
        if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
            a="$a=$1"
            shift
        fi
        out="$out${out:+&}$a"
    done
    printf '%s' "$out"
}

S=$SAMPLES
ROBOT=$(sha256sum "$S/robot.skf" | cut -c1-64)
CRITTER=$(sha256sum "$S/critter.skf" | cut -c1-64)
LAMP=$(sha256sum "$S/lamp-0.7.skf" | cut -c1-64)

# =============================================================================================
# Daemon A: every route, caching, pipelining, the limits, CORS.
start A --listen "unix:$TMP/s.sock" --root "$S" --preload "$S" --max-skf-mb 1 \
    --frame-timeout 1 --cors-origin https://x.example --node-name node-a.1 || exit 1
A=http://127.0.0.1:${PORT[A]}
"$BIN" --version >"$TMP/version"

# ---- list, info, upload, delete -------------------------------------------------------------
get list "$A/v1/armatures"
check "GET /v1/armatures: 200 JSON" is "$ST $(hdr list Content-Type)" "200 application/json"
check "GET /v1/armatures lists the preloaded robot with its animations" \
    py list "$TMP/list.body" "$ROBOT" robot.skf Idle Walk Wave Glitch
check "GET /v1/armatures lists the preloaded lamp" py list "$TMP/list.body" "$LAMP" lamp-0.7.skf Look Stretch Flicker

for f in robot critter lamp-0.7; do
    "$BIN" info "$S/$f.skf" >"$TMP/info-$f.json"
done
get info "$A/v1/files/robot.skf"
check "GET /v1/files/robot.skf is skeld info's JSON byte for byte" same "$TMP/info.body" "$TMP/info-robot.json"
get info "$A/v1/armatures/$ROBOT"
check "GET /v1/armatures/{robot} is skeld info's JSON byte for byte" same "$TMP/info.body" "$TMP/info-robot.json"
get info "$A/v1/files/critter.skf"
check "GET /v1/files/critter.skf is skeld info's JSON byte for byte" same "$TMP/info.body" "$TMP/info-critter.json"

get del "$A/v1/armatures/$LAMP" -X DELETE
check "DELETE /v1/armatures/{lamp}: 204, no body" is "$ST $(wc -c <"$TMP/del.body")" "204 0"
get del "$A/v1/armatures/$LAMP" -X DELETE
check "DELETE again: 404 JSON error" errjson del 404 "no armature"
get gone "$A/v1/armatures/$LAMP/pose"
check "GET a deleted armature's pose: 404 JSON error" errjson gone 404
get list "$A/v1/armatures"
check "the deleted armature is no longer listed" not grep -q "$LAMP" "$TMP/list.body"

get up "$A/v1/armatures" -X POST --data-binary "@$S/lamp-0.7.skf"
check "POST /v1/armatures: 201" is "$ST" 201
check "POST: Location /v1/armatures/{sha256}" is "$(hdr up Location)" "/v1/armatures/$LAMP"
check "POST: skeld info's JSON, its \"id\" the SHA-256" py summary "$TMP/up.body" "$LAMP" "$TMP/info-lamp-0.7.json"
get info "$A$(hdr up Location)"
check "GET the Location: skeld info's JSON" same "$TMP/info.body" "$TMP/info-lamp-0.7.json"
get list "$A/v1/armatures"
check "an upload is listed with no file name (\"file\": null)" \
    py list "$TMP/list.body" "$LAMP" - Look Stretch Flicker
get put "$A/v1/armatures/$LAMP" -X PUT --data-binary "@$S/lamp-0.7.skf"
check "PUT with the right id: 201 with Location" \
    is "$ST $(hdr put Location)" "201 /v1/armatures/$LAMP"
check "PUT: skeld info's JSON, its \"id\" the SHA-256" py summary "$TMP/put.body" "$LAMP" "$TMP/info-lamp-0.7.json"
get put "$A/v1/armatures/$CRITTER" -X PUT --data-binary "@$S/lamp-0.7.skf"
check "PUT with a wrong id: 400 naming the body's SHA-256" errjson put 400 "$LAMP"
# ... and loads nothing: with the lamp unloaded, its bytes PUT to another id leave it so
get del "$A/v1/armatures/$LAMP" -X DELETE
get put "$A/v1/armatures/$CRITTER" -X PUT --data-binary "@$S/lamp-0.7.skf"
check "a PUT refused for its id: 400" errjson put 400 "$LAMP"
get info "$A/v1/armatures/$LAMP"
check "a refused PUT loads nothing: the armature of its bytes is not cached (404)" is "$ST" 404
get put "$A/v1/armatures/$LAMP" -X PUT --data-binary "@$S/lamp-0.7.skf"
check "the same bytes PUT to their own id then load: 201" is "$ST" 201
get up "$A/v1/armatures" -X POST -H 'Transfer-Encoding: chunked' --data-binary "@$S/robot.skf"
check "chunked POST: 201 with the id" is "$ST $(hdr up Location)" "201 /v1/armatures/$ROBOT"
get up "$A/v1/armatures" -X POST -H 'Expect: 100-continue' --expect100-timeout 20 \
    --data-binary "@$S/critter.skf"
check "Expect: 100-continue POST: 100 Continue, then 201 with the id" \
    is "$(tr -d '\r' <"$TMP/up.hdr" | grep -c '^HTTP/1.1 100 Continue$') $ST $(hdr up Location)" \
    "1 201 /v1/armatures/$CRITTER"
get up "$A/v1/armatures" -X POST -H 'Expect: 100-continue' -H 'Transfer-Encoding: chunked' \
    --expect100-timeout 20 --data-binary "@$S/robot.skf"
check "chunked Expect: 100-continue POST: 201" is "$ST $(hdr up Location)" "201 /v1/armatures/$ROBOT"
head -c 5000 /dev/zero >"$TMP/junk.skf"
get up "$A/v1/armatures" -X POST --data-binary "@$TMP/junk.skf"
check "POST bytes that are no .skf: 400 JSON error" errjson up 400 ".skf"
uploads_201=6 uploads_400=3

# ---- pose: skeld eval's JSON for the same flags ---------------------------------------------
pose_sets=(
    ""
    "--anim Walk --frame 10"
    "--anim Walk,Wave --frame 3,40 --smooth 2,4"
    "--anim 1 --from 0 --frame 25 --warmup 30"
    "--anim Idle --from 40 --frame 60 --loop --reverse --smooth 3"
    "--anim Wave,Glitch --frame 12 --y-down --position 10,-20 --scale 2,-1 --velocity 3,4 --warmup 5"
)
for set in "${pose_sets[@]}"; do
    # shellcheck disable=SC2086
    "$BIN" eval "$S/robot.skf" $set >"$TMP/want.json"
    # shellcheck disable=SC2086
    query=$(q $set)
    for base in "armatures/$ROBOT" files/robot.skf; do
        get pose "$A/v1/$base/pose?$query"
        check "pose ${query:-(rest)} under /v1/${base%%/*}/ is skeld eval's JSON" \
            eval 'is "$ST" 200 && same "$TMP/pose.body" "$TMP/want.json"'
    done
done
"$BIN" eval "$S/robot.skf" --anim Walk --frame 10 --matrix >"$TMP/want.json"
get pose "$A/v1/armatures/$ROBOT/pose?anim=Walk&frame=10&matrix"
check "pose with matrix is skeld eval --matrix's JSON (matrices and tints)" \
    eval 'is "$ST" 200 && same "$TMP/pose.body" "$TMP/want.json" && grep -q "\"matrix\":\[" "$TMP/pose.body"'
get pose2 "$A/v1/armatures/$ROBOT/pose?anim=Walk&frame=10&matrix=true"
check "matrix=true is the same query as matrix (same ETag and body)" \
    eval 'is "$(hdr pose2 ETag)" "$(hdr pose ETag)" && same "$TMP/pose2.body" "$TMP/pose.body"'
get pose2 "$A/v1/armatures/$ROBOT/pose?anim=Walk&frame=10"
check "matrix changes the ETag, and the body has none then" \
    eval 'not is "$(hdr pose2 ETag)" "$(hdr pose ETag)" && ! grep -q "\"matrix\"" "$TMP/pose2.body"'
get e "$A/v1/armatures/$ROBOT/mesh?matrix"
check "400: matrix on mesh, named" errjson e 400 matrix
get e "$A/v1/armatures/$ROBOT/pose?matrix=2"
check "400: matrix=2 (a switch), named" errjson e 400 matrix
"$BIN" eval "$S/lamp-0.7.skf" --anim Stretch --frame 7 --from 0 >"$TMP/want.json"
get pose "$A/v1/files/lamp-0.7.skf/pose?anim=Stretch&frame=7&from=0"
check "pose of the 0.7 lamp is skeld eval's JSON" same "$TMP/pose.body" "$TMP/want.json"
"$BIN" eval "$S/robot.skf" --anim Walk --frame 3 >"$TMP/want.json"
get pose "$A/v1/files/robot.skf/pose?anim=%231&frame=3"
check "anim=%231 (\"#1\", an index) is Walk" \
    eval 'is "$ST" 200 && same "$TMP/pose.body" "$TMP/want.json"'
"$BIN" render "$S/robot.skf" --anim Walk --frame 3 --style Red --size 48x48 -o "$TMP/want.png"
get render "$A/v1/files/robot.skf/render.png?anim=%231&frame=3&style=%231&size=48x48"
check "style=%231 is Red: skeld render's picture" \
    eval 'is "$ST" 200 && same "$TMP/render.body" "$TMP/want.png"'
get e "$A/v1/files/robot.skf/pose?anim=%239"
check "404: anim=%239, out of range, says which are valid" \
    errjson e 404 "animation #9 is out of range (valid: #0 to #3)"

# ---- mesh: skelctl mesh's JSON over the unix socket -----------------------------------------
mesh_sets=(
    ""
    "--anim Walk --frame 10 --warmup 30 --from 0"
    "--anim Wave --frame 33 --scale 0.5,0.5 --position 3,4 --y-down"
)
for set in "${mesh_sets[@]}"; do
    # shellcheck disable=SC2086
    "$CTL" --uri "unix:$TMP/s.sock" mesh "$ROBOT" $set >"$TMP/want.json"
    # shellcheck disable=SC2086
    query=$(q $set)
    for base in "armatures/$ROBOT" files/robot.skf; do
        get mesh "$A/v1/$base/mesh?$query"
        check "mesh ${query:-(rest)} under /v1/${base%%/*}/ is skelctl mesh's JSON" \
            eval 'is "$ST" 200 && test -s "$TMP/want.json" && same "$TMP/mesh.body" "$TMP/want.json"'
    done
done

# ---- render.png: skeld render's PNG -----------------------------------------------------------
render_sets=(
    "--anim Glitch --frame 3"
    "--anim Walk --frame 10 --size 128x96"
    "--anim Wave --frame 20 --size 100x100 --fit 0.5"
    "--anim Walk --frame 5 --size 128x128 --scale 0.2 --position 60,-120"
    "--anim Idle --frame 7 --style Red,Default --size 96x96"
    "--background 336699ff --samples 1 --size 96x80"
    "--anim Wave --frame 9 --warmup 30 --from 0 --png-level 6 --size 96x96"
)
for set in "${render_sets[@]}"; do
    # shellcheck disable=SC2086
    "$BIN" render "$S/robot.skf" $set -o "$TMP/want.png"
    # shellcheck disable=SC2086
    query=$(q $set)
    for base in "armatures/$ROBOT" files/robot.skf; do
        get render "$A/v1/$base/render.png?$query"
        check "render.png $query under /v1/${base%%/*}/ is skeld render's PNG" \
            eval 'is "$ST $(hdr render Content-Type)" "200 image/png" && same "$TMP/render.body" "$TMP/want.png"'
    done
done

# ---- sheets: the picture and its JSON ----------------------------------------------------------
sheet_sets=(
    "critter --anim Hop --frames 0-11 --sheet 4x3 --size 64x64"
    "robot --anim Walk --frames 2-7 --sheet 3x2 --size 48x40 --background ffffffff --samples 1"
    "robot --anim Walk --frame 5.7 --sheet 2x1 --size 32x32"
)
for set in "${sheet_sets[@]}"; do
    f=${set%% *}
    flags=${set#* }
    # shellcheck disable=SC2086
    "$BIN" render "$S/$f.skf" $flags -o "$TMP/sheet.png"
    # shellcheck disable=SC2086
    query=$(q $flags)
    id=$(sha256sum "$S/$f.skf" | cut -c1-64)
    for base in "armatures/$id" "files/$f.skf"; do
        get sheet "$A/v1/$base/render.png?$query"
        check "$f sheet $query under /v1/${base%%/*}/ is skeld render --sheet's PNG" \
            eval 'is "$ST" 200 && same "$TMP/sheet.body" "$TMP/sheet.png"'
        get sheetj "$A/v1/$base/sheet.json?$query"
        check "$f sheet.json under /v1/${base%%/*}/ is skeld render's OUT.json without \"image\"" \
            eval 'is "$ST $(hdr sheetj Content-Type)" "200 application/json" && py sheet "$TMP/sheetj.body" "$TMP/sheet.json"'
    done
done

# ---- caching -----------------------------------------------------------------------------------
R="$A/v1/armatures/$ROBOT/render.png?anim=Walk&frame=4&size=64x64"
get c1 "$R"
get c2 "$R"
etag=$(hdr c1 ETag)
check "ETag is \"v6-<hex>\"" eval '[[ $etag =~ ^\"v6-[0-9a-f]+\"$ ]]'
check "ETag is stable across requests" is "$(hdr c2 ETag)" "$etag"
get c3 "$A/v1/armatures/$ROBOT/render.png?size=64x64&frame=4&anim=Walk"
check "the same query in another order has the same ETag" is "$(hdr c3 ETag)" "$etag"
for level in fast default; do
    get c3 "$R&png-level=$level"
    check "png-level=$level is the default encoder: the same ETag and bytes" \
        eval 'is "$(hdr c3 ETag)" "$etag" && same "$TMP/c3.body" "$TMP/c1.body"'
done
get c3 "$R&png-level=6"
check "png-level=6 (zlib) has another ETag" not is "$(hdr c3 ETag)" "$etag"
get c3 "$A/v1/armatures/$ROBOT/render.png?anim=Walk&frame=5&size=64x64"
check "another frame has another ETag" not is "$(hdr c3 ETag)" "$etag"
get c3 "$A/v1/armatures/$ROBOT/pose?anim=Walk&frame=4"
check "another resource has another ETag" not is "$(hdr c3 ETag)" "$etag"
get c3 "$A/v1/armatures/$ROBOT/pose?anim=Walk&frame=4&loop=true"
get c4 "$A/v1/armatures/$ROBOT/pose?anim=Walk&frame=4&loop"
check "switches: loop=true and loop are one query (same ETag and body)" \
    eval 'is "$(hdr c3 ETag)" "$(hdr c4 ETag)" && same "$TMP/c3.body" "$TMP/c4.body"'
get c5 "$A/v1/armatures/$ROBOT/pose?anim=Walk&frame=4"
check "loop changes the ETag" not is "$(hdr c5 ETag)" "$(hdr c4 ETag)"
check "Cache-Control under /v1/armatures/{id}/: public, max-age=31536000, immutable" \
    is "$(hdr c1 Cache-Control)" "public, max-age=31536000, immutable"
get c6 "$A/v1/files/robot.skf/render.png?anim=Walk&frame=4&size=64x64"
check "Cache-Control under /v1/files/: public, max-age=60" is "$(hdr c6 Cache-Control)" "public, max-age=60"
check "under /v1/files/ the same answer has an ETag" eval '[[ $(hdr c6 ETag) =~ ^\"v6-[0-9a-f]+\"$ ]]'
get nm "$R" -H "If-None-Match: $etag"
check "If-None-Match with the ETag: 304, empty body, the same ETag" \
    eval 'is "$ST $(hdr nm ETag)" "304 $etag" && empty "$TMP/nm.body"'
check "the 304 keeps Cache-Control" is "$(hdr nm Cache-Control)" "public, max-age=31536000, immutable"
get nm "$R" -H "If-None-Match: \"v1-0000\", $etag"
check "If-None-Match with a list holding the ETag: 304" is "$ST" 304
get nm "$R" -H 'If-None-Match: "v1-0000"' -H "If-None-Match: $etag"
check "If-None-Match on two lines, the ETag on the second: one list, 304" is "$ST" 304
get nm "$R" -H "If-None-Match: $etag" -H 'If-None-Match: "v1-0000"'
check "... and on the first: 304" is "$ST" 304
get nm "$R" -H 'If-None-Match: "v1-0000"'
check "If-None-Match with another tag: 200 and the PNG" \
    eval 'is "$ST" 200 && same "$TMP/nm.body" "$TMP/c1.body"'
get nm "$A/v1/files/robot.skf/pose?anim=Walk&frame=4" -H "If-None-Match: $(hdr c5 ETag)"
check "If-None-Match under /v1/files/: 304, empty body" \
    eval 'is "$ST $(hdr nm Cache-Control)" "304 public, max-age=60" && empty "$TMP/nm.body"'
get info "$A/v1/armatures/$ROBOT"
get nm "$A/v1/armatures/$ROBOT" -H "If-None-Match: $(hdr info ETag)"
check "info has an ETag and answers If-None-Match with 304" \
    eval '[ -n "$(hdr info ETag)" ] && is "$ST" 304 && empty "$TMP/nm.body"'
check "a 304 has no Content-Length (it would have to be the 200's)" \
    not has_hdr nm Content-Length
for u in "$R" "$A/v1/files/robot.skf/pose?anim=Wave&frame=2" "$A/v1/armatures/$ROBOT/mesh?frame=3" \
    "$A/v1/armatures/$ROBOT" "$A/v1/files/lamp-0.7.skf" "$A/v1/armatures" "$A/healthz" "$A/readyz" \
    "$A/v1/files/critter.skf/sheet.json?anim=Hop&frames=0-3&sheet=2x2&size=32x32"; do
    get g "$u"
    get h "$u" -I # (that HEAD sends no body is checked on the wire by the pipelining below)
    check "HEAD ${u#"$A"}: the same headers as GET, Content-Length included" \
        eval 'is "$ST" 200 && same "$TMP/g.hdr" "$TMP/h.hdr" && test "$(hdr h Content-Length)" -gt 0'
done
get g "$A/v1/files/nope.skf"
get h "$A/v1/files/nope.skf" -I
check "HEAD of an error: GET's Content-Length" \
    is "$(hdr h Content-Length)" "$(hdr g Content-Length)"
get nm "$R" -I -H "If-None-Match: $etag"
check "HEAD with If-None-Match: 304" is "$ST" 304

# ---- pipelining ------------------------------------------------------------------------------
mkdir -p "$TMP/pipe"
P1="/v1/armatures/$ROBOT/render.png?anim=Wave&frame=30&size=400x400&warmup=30&from=0"
P2="/v1/files/critter.skf/pose?anim=Hop&frame=3"
P3="/v1/armatures/$ROBOT/mesh?anim=Walk&frame=7"
P4="/v1/files/robot.skf/render.png?anim=Idle&frame=2&size=64x64"
i=0
for p in "$P1" "$P2" "$P3" "$P4"; do
    i=$((i + 1))
    curl -s --max-time 30 -o "$TMP/pipe/want$i" "$A$p"
done
check "pipelining: 6 requests in one write, all answered, keep-alive; Connection: close ends it" \
    py pipe "${PORT[A]}" "$TMP/pipe" "GET $P1" "GET $P2" "HEAD $P1" "GET /healthz" "GET $P3" "GET $P4"
check "pipelining: the answers come in request order (a slow render first)" eval '
    same "$TMP/pipe/0.body" "$TMP/pipe/want1" && same "$TMP/pipe/1.body" "$TMP/pipe/want2" &&
    empty "$TMP/pipe/2.body" && is "$(cat "$TMP/pipe/3.body")" ok &&
    same "$TMP/pipe/4.body" "$TMP/pipe/want3" && same "$TMP/pipe/5.body" "$TMP/pipe/want4"'
check "pipelining: HEAD's head is GET's, and it carries no body (the next answer parses)" \
    same "$TMP/pipe/0.head" "$TMP/pipe/2.head"
check "Connection: close: one answer, then the end, the request behind it unanswered" py close "${PORT[A]}"
out=$(py closelast "${PORT[A]}" "/v1/armatures/$ROBOT/pose?warmup=20000")
check "Connection: close behind a slow request: both answered in order, then the end" \
    eval '[[ $out == *" close end" ]]'
check "only the last answer says Connection: close (not the slow one before it: got $out)" is "$out" "keep-alive close end"

# ---- errors ----------------------------------------------------------------------------------
get e "$A/v1/files/robot.skf/pose?bogus=1"
check "400: an unknown parameter, named" errjson e 400 bogus
get e "$A/v1/files/robot.skf/pose?anim=Walk&frame=abc"
check "400: a bad value, naming its parameter" errjson e 400 frame
get e "$A/v1/files/robot.skf/pose?anim=Walk,"
check "400: an empty animation name (a trailing comma), not one animation fewer" \
    errjson e 400 "empty animation name"
get e "$A/v1/armatures/$ROBOT/pose?size=64x64"
check "400: a render parameter on pose, named" errjson e 400 size
get e "$A/v1/armatures/$ROBOT/render.png?samples=3"
check "400: samples=3 on render.png, named" errjson e 400 samples
get e "$A/v1/armatures/$ROBOT/pose?loop=0"
check "400: a switch with another value than 1/true, named" errjson e 400 loop
get e "$A/v1/armatures/$ROBOT/pose?anim=Walk&anim=Wave"
check "400: a parameter given twice (never the last one silently), named, with the list form" \
    errjson e 400 '"anim" is given twice' 'anim=A[,B..]'
get e "$A/v1/files/robot.skf/sheet.json?anim=Walk"
check "400: sheet.json without frames and sheet" errjson e 400 sheet
get e "$A/v1/armatures/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/pose"
check "404: an unknown armature id" errjson e 404 armature
get e "$A/v1/armatures/not-an-id"
check "404: not an armature id" errjson e 404
get e "$A/v1/files/nope.skf/pose"
check "404: an unknown file, named" errjson e 404 nope.skf
get e "$A/v1/files/robot.skf/pose?anim=Nope"
check "404: an unknown animation; the message lists the valid names" \
    errjson e 404 Nope Idle Walk Wave Glitch
get e "$A/v1/armatures/$ROBOT/render.png?style=Nope"
check "404: an unknown style; the message lists the valid names" errjson e 404 Nope Default Red Night
# a name longer than a request can carry (1024 bytes) is a bad parameter, named; it was a 500
# "out of memory" from the answer's tag
LONGNAME=$(printf 'M%.0s' $(seq 1025))
get e "$A/v1/files/robot.skf/pose?anim=$LONGNAME"
check "400: an animation name over 1024 bytes, named" errjson e 400 "anim: a name is at most 1024 bytes"
get e "$A/v1/armatures/$ROBOT/render.png?style=$LONGNAME"
check "400: a style name over 1024 bytes, named" errjson e 400 "style: a name is at most 1024 bytes"
get e "$A/v1/nope"
check "404: an unknown path under /v1/" errjson e 404
get e "$A/nope"
check "404: an unknown path" errjson e 404
get e "$A/v1/armatures/$ROBOT/skeleton.svg"
check "404: an unknown armature resource" errjson e 404
# "{id}/" is not {id}: behind HAProxy, which hashes the path as sent, it would reach another
# node than {id}'s, and a PUT there would land where no GET for {id} looks
get e "$A/v1/armatures/$ROBOT/"
check "404: an armature id with a trailing slash" errjson e 404 "no such resource"
get e "$A/v1/armatures/$ROBOT/" -X PUT --data-binary @"$S/robot.skf"
check "404: a PUT to an armature id with a trailing slash" errjson e 404 "no such resource"
get e "$A/v1/files/../robot.skf" --path-as-is
check "a path out of --root is refused (4xx) with a JSON error naming .." eval '[[ $ST == 4?? ]] && errjson e "$ST" ..'
check "a path out of --root: 403 Forbidden" is "$(head -n 1 "$TMP/e.hdr" | tr -d '\r')" "HTTP/1.1 403 Forbidden"
get e "$A/v1/files/robot.skf" -X DELETE
check "405 DELETE /v1/files/...: Allow: GET, HEAD" eval 'errjson e 405 DELETE && is "$(hdr e Allow)" "GET, HEAD"'
get e "$A/v1/armatures" -X PATCH
check "405 PATCH /v1/armatures: Allow: GET, HEAD, POST" eval 'errjson e 405 && is "$(hdr e Allow)" "GET, HEAD, POST"'
get e "$A/v1/armatures/$ROBOT/pose" -X POST --data-binary x
check "405 POST .../pose: Allow: GET, HEAD" eval 'errjson e 405 && is "$(hdr e Allow)" "GET, HEAD"'
get e "$A/v1/armatures/$ROBOT" -X POST --data-binary x
check "405 POST /v1/armatures/{id}: Allow: GET, HEAD, PUT, DELETE" \
    eval 'errjson e 405 && is "$(hdr e Allow)" "GET, HEAD, PUT, DELETE"'
get e "$A/metrics" -X DELETE
check "405 DELETE /metrics: Allow: GET, HEAD" eval 'errjson e 405 && is "$(hdr e Allow)" "GET, HEAD"'
get e "$A/v1/armatures" -X FROB
check "501 for a method HTTP does not know (FROB), naming the ones skeld takes" \
    errjson e 501 "unknown method" "GET, HEAD, POST, PUT, DELETE and OPTIONS"

# Resources that take no query parameters refuse one, naming it: a forgotten /pose does not
# answer the info as if it were the pose, and a DELETE with one deletes nothing.
for q in "GET v1/files/robot.skf?anim=Walk&frame=10 anim" "GET v1/armatures/$ROBOT?frame=3 frame" \
    "GET v1/armatures?bogus=1 bogus" "DELETE v1/armatures/$ROBOT?x=1 x" \
    "POST v1/armatures?anim=Walk anim" "PUT v1/armatures/$ROBOT?anim=Walk anim"; do
    set -- $q
    if [ "$1" = POST ] || [ "$1" = PUT ]; then # both count as uploads in /metrics
        get e "$A/$2" -X "$1" --data-binary "@$S/robot.skf"
        uploads_400=$((uploads_400 + 1))
    else
        get e "$A/$2" -X "$1"
    fi
    check "400 $1 /${2%%\?*}?...: no query parameters, \"$3\" named" errjson e 400 "$3:" "no query"
done
get e "$A/v1/armatures/$ROBOT"
check "the armature a DELETE with a query named is still loaded" is "$ST" 200
get e "$A/v1/armatures?&"
check "a query of only '&' has no parameter: the list" is "$ST" 200
get e "$A/v1/armatures?=x"
check "a parameter without a name is refused, saying so" errjson e 400 "a parameter without a name:"

get e "$A/v1/armatures" -X POST
check "an empty upload: 400 saying so, and how to send the file" errjson e 400 "empty" "--data-binary"
uploads_400=$((uploads_400 + 1))
get e "$A/v1/armatures" -F "file=@$S/robot.skf"
check "an upload as a form (curl -F): 400 saying so, and how to send the file" \
    errjson e 400 "a form (multipart)" "--data-binary"
uploads_400=$((uploads_400 + 1))

head -c 1048577 /dev/zero >"$TMP/big.skf"
get e "$A/v1/armatures" -X POST --data-binary "@$TMP/big.skf"
check "413: a body of 1 MiB + 1 byte over --max-skf-mb 1 (Content-Length)" errjson e 413 max-skf-mb
# The binary protocol's LOAD_BYTES holds to the same limit (skelctl load sends the file's bytes)
"$CTL" --uri "unix:$TMP/s.sock" load "$TMP/big.skf" >/dev/null 2>"$TMP/ctl.err"
check "LOAD_BYTES of the same file over the binary protocol: LIMIT naming --max-skf-mb" \
    eval 'grep -q "larger than 1048576 (--max-skf-mb) (limit exceeded)" "$TMP/ctl.err"'
get e "$A/v1/armatures" -X POST -H 'Transfer-Encoding: chunked' --data-binary "@$TMP/big.skf"
check "413: the same body chunked" errjson e 413
get e "$A/v1/armatures" -X POST -H 'Expect: 100-continue' --expect100-timeout 20 --data-binary "@$TMP/big.skf"
check "413 with Expect: 100-continue: refused before the body (no 100 Continue)" \
    eval 'errjson e 413 && not grep -q "^HTTP/1.1 100" "$TMP/e.hdr"'
head -c 1048576 /dev/zero >"$TMP/edge.skf"
get e "$A/v1/armatures" -X POST --data-binary "@$TMP/edge.skf"
check "a body of exactly 1 MiB is read (400: not a .skf, not 413)" errjson e 400 .skf
uploads_400=$((uploads_400 + 1))
ST=$(py limit "${PORT[A]}" url 8192 "$TMP/e.body")
check "a URL of 8192 bytes is served" is "$ST" 200
ST=$(py limit "${PORT[A]}" url 8193 "$TMP/e.body")
check "414: a URL of 8193 bytes, JSON error" eval 'is "$ST" 414 && py err "$TMP/e.body" "URI Too Long" 8'
ST=$(py limit "${PORT[A]}" fields 100 "$TMP/e.body")
check "100 header fields are served" is "$ST" 200
ST=$(py limit "${PORT[A]}" fields 101 "$TMP/e.body")
check "431: 101 header fields, JSON error" \
    eval 'is "$ST" 431 && py err "$TMP/e.body" "Request Header Fields Too Large" 100'
ST=$(py limit "${PORT[A]}" hbytes 16384 "$TMP/e.body")
check "16384 bytes of header names and values are served" is "$ST" 200
ST=$(py limit "${PORT[A]}" hbytes 16385 "$TMP/e.body")
check "431: 16385 bytes of headers, JSON error" \
    eval 'is "$ST" 431 && py err "$TMP/e.body" "Request Header Fields Too Large" 16'
ST=$(py limit "${PORT[A]}" hosts 0 "$TMP/e.body")
check "400: an HTTP/1.1 request without Host (RFC 9112 3.2), named" \
    eval 'is "$ST" 400 && py err "$TMP/e.body" "Bad Request" "needs a Host header"'
ST=$(py limit "${PORT[A]}" hosts 2 "$TMP/e.body")
check "400: two Host headers, named" \
    eval 'is "$ST" 400 && py err "$TMP/e.body" "Bad Request" "more than one Host"'
H=()
for i in $(seq 120); do H+=(-H "X-Many-$i: v"); done
get e "$A/healthz" "${H[@]}"
check "431 through curl: 120 header fields" errjson e 431
get e "$A/healthz" -H "X-Big: $(head -c 17000 /dev/zero | tr '\0' a)"
check "431 through curl: a 17000-byte header" errjson e 431
read -r ST secs <<<"$(py slowloris "${PORT[A]}" "$TMP/e.body")"
check "408: headers trickled past --frame-timeout 1, answered after 1-5 s (took ${secs}s)" \
    eval 'is "$ST" 408 && py err "$TMP/e.body" "Request Timeout" frame-timeout && awk "BEGIN { exit !($secs >= 0.9 && $secs <= 5) }"'

# ---- CORS, operations, metrics, the access log ------------------------------------------------
get cors "$A/v1/files/robot.skf/pose" -H 'Origin: https://x.example'
check "--cors-origin: Access-Control-Allow-Origin on answers" \
    is "$ST $(hdr cors Access-Control-Allow-Origin)" "200 https://x.example"
get cors "$A/v1/files/nope.skf" -H 'Origin: https://x.example'
check "--cors-origin: Access-Control-Allow-Origin on errors too" \
    is "$ST $(hdr cors Access-Control-Allow-Origin)" "404 https://x.example"
check "an error is not to be cached (Cache-Control: no-store: a CDN would keep a 404)" \
    is "$(hdr cors Cache-Control)" no-store
check "--cors-origin: a page may read ETag, Location, Retry-After and X-Skeld-Node" \
    is "$(hdr cors Access-Control-Expose-Headers)" "ETag, Location, Retry-After, X-Skeld-Node"
get cors "$A/v1/armatures/$ROBOT/render.png" -X OPTIONS -H 'Origin: https://x.example' \
    -H 'Access-Control-Request-Method: GET' -H 'Access-Control-Request-Headers: If-None-Match'
check "OPTIONS preflight: 204 with Allow-Origin, Allow-Methods (GET) and Allow-Headers" eval '
    is "$ST $(hdr cors Access-Control-Allow-Origin)" "204 https://x.example" && empty "$TMP/cors.body" &&
    [[ $(hdr cors Access-Control-Allow-Methods) == *GET* ]] && [[ $(hdr cors Access-Control-Allow-Headers) == *If-None-Match* ]]'
check "a 204 has no Content-Length" not has_hdr cors Content-Length
get ops "$A/healthz"
check "GET /healthz: 200 ok" is "$ST $(cat "$TMP/ops.body")" "200 ok"
get ops "$A/readyz"
check "GET /readyz: 200 ready" is "$ST $(cat "$TMP/ops.body")" "200 ready"
get ops "$A/"
check "GET /: the preview page" is "$ST" 200
get ops "$A/" --request-target "$A/healthz"
check "a request target in absolute form (http://host/healthz) is served" is "$ST" 200
check "HTTP/1.0 with Connection: keep-alive: the answer says keep-alive and the connection stays" is "$(py http10 "${PORT[A]}")" "keep-alive open"
# ---- HTTP details: conditional, long keys, codings, HEAD, interim answers ------------------
get inm "$A/v1/armatures/$ROBOT/render.png?anim=Nope" -H 'If-None-Match: *'
check "If-None-Match: * on a request that fails: its error (404), not a 304" errjson inm 404 Nope
get inm "$A/v1/armatures/$ROBOT/pose?anim=Walk&frame=3" -H 'If-None-Match: *'
check "If-None-Match: * on a request that succeeds: 304, no body" \
    eval 'is "$ST" 304 && empty "$TMP/inm.body"'
# Names long enough that the canonical request is over 8 KiB: every byte counts in the key
long=$(printf 'W%.0s' $(seq 490))
edit_skf "$S/robot.skf" "$TMP/long.skf" "j['animations'][1]['name'] = '$long'"
get up "$A/v1/armatures" -X POST --data-binary "@$TMP/long.skf"
LONG=$(sed -n 's|^/v1/armatures/||p' <<<"$(hdr up Location)")
uploads_201=$((uploads_201 + 1))
anims=$long
for i in $(seq 15); do anims="$anims,$long"; done
get l1 "$A/v1/armatures/$LONG/render.png?anim=$anims&size=64x64"
get l2 "$A/v1/armatures/$LONG/render.png?anim=$anims&size=96x64"
check "requests over 8 KiB that differ past it: two ETags and two pictures" \
    eval 'is "$ST" 200 && ! is "$(hdr l1 ETag)" "$(hdr l2 ETag)" && ! same "$TMP/l1.body" "$TMP/l2.body"'
check "... the second one 96x64, as asked (its IHDR)" \
    is "$(od -An -tu1 -j16 -N8 "$TMP/l2.body" | tr -s ' ')" " 0 0 0 96 0 0 0 64"
get del "$A/v1/armatures/$LONG" -X DELETE
check "a Transfer-Encoding other than chunked: 501" \
    is "$(py raw "${PORT[A]}" 'POST /v1/armatures HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n')" 501
check "a HEAD refused for its URL's length: 414 with no body" is "$(py headlong "${PORT[A]}")" "414 nobody"
check "Transfer-Encoding gzip and chunked on two lines are one list: 501" \
    is "$(py raw "${PORT[A]}" 'POST /v1/armatures HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')" 501
check "whitespace between a field name and its colon: 400 (RFC 9112 5.1), said by the connection layer with nosniff" \
    is "$(py rawhead "${PORT[A]}" 'GET /healthz HTTP/1.1\r\nHost : a\r\nHost: b\r\n\r\n' X-Content-Type-Options)" "400 nosniff"
check "a fragment in the request target is no part of the query: 200" \
    is "$(py raw "${PORT[A]}" "GET /v1/armatures/$ROBOT/pose?anim=Walk#frag HTTP/1.1\r\nHost: a\r\n\r\n")" 200
check "... nor of the path" is "$(py raw "${PORT[A]}" 'GET /healthz#x HTTP/1.1\r\nHost: a\r\n\r\n')" 200
check "HTTP/2.0 in a request line: 505, not an answer in HTTP/1.1 to a client that spoke 2.0" \
    is "$(py raw "${PORT[A]}" 'GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n')" 505
check "a bare request line (HTTP/0.9): 505" is "$(py raw "${PORT[A]}" 'GET /healthz\r\n\r\n')" 505
get e "$A/v1/files/"
check "/v1/files/ with no file named: 404 saying so (was 403 'relative to the root')" \
    errjson e 404 "no file named"
check "Expect: 100-continue behind a request still being answered: 200, then 100, then 201" \
    is "$(py expectpipe "${PORT[A]}" "$S/lamp-0.7.skf")" "200 100 201"
uploads_201=$((uploads_201 + 1))
get e "$A/v1/armatures" --request-target "http://x/v1/armatures?a=/healthz"
check "absolute form: the query after the path, even with a / in it (400 naming a)" errjson e 400 "a: this resource"
get e "$A/" --request-target "http://x?a=/v1/armatures/nosuch"
check "absolute form with no path: \"/\" and the query, not a path found in the query" \
    is "$ST $(hdr e Content-Type)" "200 text/html; charset=utf-8"
get e "$A/v1/armatures/$ROBOT/pose?anim=Walk&warmup=-1"
check "400: warmup=-1 names -1, not the wire's clamp" errjson e 400 warmup -1
get e "$A/v1/armatures/$ROBOT/render.png?anim=Walk&frames=0-3&sheet=0x0"
check "400: sheet=0x0 refused, not dropped" errjson e 400 sheet 0x0
get e "$A/v1/armatures/$ROBOT/render.png?anim=Walk&frames=0-3&sheet=70000x1"
check "400: sheet=70000x1 names sheet" errjson e 400 sheet 70000x1
# (timeout only ends a daemon that wrongly started)
timeout 120 "$BIN" serve --listen http://127.0.0.1:0 \
    --cors-origin "$(printf 'https://a.example\r\nX-Evil: 1')" >/dev/null 2>"$TMP/cors.err"
cors_rc=$?
check "--cors-origin with a CR LF: refused at start (exit $cors_rc), named" \
    eval '[ $cors_rc -eq 2 ] && grep -q -- --cors-origin "$TMP/cors.err"'

get m "$A/metrics"
check "GET /metrics: 200 text/plain; version=0.0.4" is "$ST $(hdr m Content-Type)" "200 text/plain; version=0.0.4"
check "/metrics is the Prometheus text format" py prom "$TMP/m.body"
metric() { awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' "$TMP/$1.body"; }
check "/metrics: uploads answered 201 ($uploads_201) and 400 ($uploads_400)" is \
    "$(metric m 'skeld_http_requests_total{route="upload",status="201"}') $(metric m 'skeld_http_requests_total{route="upload",status="400"}')" \
    "$uploads_201 $uploads_400"
check "/metrics: the 405s of the test (5)" \
    is "$(awk '/^skeld_http_requests_total\{.*status="405"\}/ { n += $2 } END { print n + 0 }' "$TMP/m.body")" 5
check "/metrics: the armatures cached" is "$(metric m skeld_cache_entries)" 4
# An armature's info and a DELETE over HTTP count as INFO_JSON and UNLOAD, as over the binary
# protocol (the HTTP front answers them without a job)
get i1 "$A/v1/armatures/$ROBOT"
get i2 "$A/v1/armatures/0000000000000000000000000000000000000000000000000000000000000000" -X DELETE
get m3 "$A/metrics"
check "/metrics: an HTTP info counts as INFO_JSON and a DELETE as UNLOAD" \
    is "$(($(metric m3 'skeld_requests_total{op="INFO_JSON"}') - $(metric m 'skeld_requests_total{op="INFO_JSON"}'))) $(($(metric m3 'skeld_requests_total{op="UNLOAD"}') - $(metric m 'skeld_requests_total{op="UNLOAD"}')))" "1 1"
# A lone small POSE over HTTP, with the workers idle, runs on the loop thread (pool_stage).
get pose "$A/v1/armatures/$ROBOT/pose?anim=Walk&frame=11.5"
pose_st=$ST
get m2 "$A/metrics"
check "a lone HTTP POSE runs on the loop thread (jobs_inline_total + 1)" \
    is "$pose_st $(($(metric m2 skeld_jobs_inline_total) - $(metric m skeld_jobs_inline_total)))" "200 1"
check "skeld_job_seconds: the POSE adds a job to _count and its time to _sum" \
    eval 'is "$(($(metric m2 skeld_job_seconds_count) - $(metric m skeld_job_seconds_count)))" 1 &&
    awk "\$1 == \"skeld_job_seconds_sum\" { s[FILENAME] = \$2 } END { exit !(s[ARGV[2]] > s[ARGV[1]]) }" "$TMP/m.body" "$TMP/m2.body"'
check "/metrics names the node (--node-name) and the version" \
    grep -qx "skeld_node_info{node=\"node-a.1\",version=\"$(sed -n 's/^skeld \([^ ]*\).*/\1/p' "$TMP/version")\"} 1" "$TMP/m.body"
check "every answer names the node in X-Skeld-Node" \
    eval 'is "$(hdr m X-Skeld-Node)" node-a.1 && is "$(hdr ops X-Skeld-Node)" node-a.1'
get fwd "$A/v1/armatures" -H "X-Forwarded-For: 198.51.100.7"
check "/metrics counts the answers of the connection layer (413, 414, 431, 408)" \
    eval 'grep -q "status=\"413\"" "$TMP/m.body" && grep -q "status=\"408\"" "$TMP/m.body"'
check "the access log (logfmt): peer, method, path, status, bytes, microseconds" \
    grep -qE "^ts=[0-9T:.-]+Z level=info event=access proto=http peer=127\.0\.0\.1:[0-9]+ method=GET path=/v1/files/robot\.skf status=200 bytes=$(wc -c <"$TMP/info-robot.json") us=[0-9]+$" "$TMP/A.err"
check "behind a balancer the access log has the client X-Forwarded-For names (fwd=)" \
    grep -qE "event=access proto=http peer=127\.0\.0\.1:[0-9]+ fwd=198\.51\.100\.7 method=GET path=/v1/armatures status=200 " "$TMP/A.err"
stop A

# =============================================================================================
# Daemon B: --auth-token, a full queue (429), and /metrics counting exactly what was asked.
start B --root "$S" --preload "$S" --threads 1 --queue-depth 1 --auth-token s3cret || exit 1
B=http://127.0.0.1:${PORT[B]}
declare -A N=([ops,200]=${READYZ[B]})
[ "${NOTREADY[B]}" -eq 0 ] || N[ops,503]=${NOTREADY[B]}
tally() { N[$1,$2]=$((${N[$1,$2]:-0} + 1)); }
AUTH=(-H 'Authorization: Bearer s3cret')
get au "$B/v1/armatures"
check "401 without Authorization, with WWW-Authenticate: Bearer" \
    eval 'errjson au 401 Bearer && is "$(hdr au WWW-Authenticate)" Bearer'
tally other 401
get au "$B/v1/armatures/$ROBOT/pose" -H 'Authorization: Bearer s3cre'
check "401 with a wrong token" errjson au 401
tally other 401
get au "$B/v1/armatures" -H 'Authorization: Basic czNjcmV0'
check "401 with another scheme" errjson au 401
tally other 401
get au "$B/metrics"
check "401 for /metrics without the token" errjson au 401
tally other 401
get au "$B/v1/armatures" -X POST --data-binary "@$S/robot.skf"
check "401 for an upload without the token" errjson au 401
tally other 401
get au "$B/healthz"
check "/healthz is open without the token" is "$ST" 200
tally ops 200
get au "$B/readyz"
check "/readyz is open without the token" is "$ST" 200
tally ops 200
get au "$B/v1/armatures" "${AUTH[@]}"
check "with Authorization: Bearer s3cret: 200" eval 'is "$ST" 200 && py list "$TMP/au.body" "$ROBOT" robot.skf Idle Walk Wave Glitch'
tally list 200
# The preview page: its files are open (code, no data; it asks for the token on a 401), and it
# sends the token as the cookie skeld_token, percent-encoded (pictures carry no header)
for f in / /app.js /style.css; do
    get au "$B$f"
    check "the preview page's $f is open without the token" is "$ST" 200
    tally ops 200
done
get au "$B/v1/armatures" -H 'Authorization: bearer s3cret'
check "the scheme in lower case (bearer): 200, as RFC 9110 11.1 says" is "$ST" 200
tally list 200
get au "$B/v1/armatures" -H 'Authorization:   Bearer s3cret  '
check "spaces around the Authorization value are not part of it: 200" is "$ST" 200
tally list 200
check "a body without the token is refused at its head, before a 100 Continue: 401" \
    is "$(py raw "${PORT[B]}" 'POST /v1/armatures HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n')" 401
tally other 401
check "a token in a chunked body's trailer is no Authorization header: 401" \
    is "$(py raw "${PORT[B]}" 'POST /v1/armatures HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nAuthorization: Bearer s3cret\r\n\r\n')" 401
tally other 401
check "a request line in HTTP/2.0 is answered 505 (counted in /metrics as every answer is)" \
    is "$(py raw "${PORT[B]}" 'GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n')" 505
tally other 505
get au "$B/v1/armatures" -H 'Cookie: theme=dark; skeld_token=s3%63ret'
check "with the cookie skeld_token (percent-encoded) among others: 200" is "$ST" 200
tally list 200
get au "$B/v1/armatures/$ROBOT/render.png?anim=Walk&size=16x16" -H 'Cookie: skeld_token=s3cre'
check "with a wrong skeld_token cookie: 401" errjson au 401
tally other 401
get au "$B/v1/armatures" -H 'Cookie: skeld_token=s3cre' "${AUTH[@]}"
check "a right Bearer token with a wrong cookie: 200 (the header decides)" is "$ST" 200
tally list 200
"$BIN" eval "$S/robot.skf" --anim Walk --frame 3 >"$TMP/want.json"
get au "$B/v1/files/robot.skf/pose?anim=Walk&frame=3" "${AUTH[@]}"
check "with the token: a pose is skeld eval's JSON" eval 'is "$ST" 200 && same "$TMP/au.body" "$TMP/want.json"'
tally pose 200
check "behind a token an answer is for the browser's cache only (private, not public)" \
    eval 'case "$(hdr au Cache-Control)" in private,*) true ;; *) false ;; esac'
check "every answer says nosniff and no-referrer" \
    eval 'is "$(hdr au X-Content-Type-Options)" nosniff && is "$(hdr au Referrer-Policy)" no-referrer'
get au "$B/"
check "the page's own files carry a Content-Security-Policy: its own origin, no framing" \
    eval 'case "$(hdr au Content-Security-Policy)" in "default-src '"'self'"';"*"frame-ancestors '"'none'"'"*) true ;; *) false ;; esac'
tally ops 200
PAGE_TAG=$(hdr au ETag)
check "the page's files carry a strong ETag of their bytes ($PAGE_TAG)" \
    eval 'case "$PAGE_TAG" in \"page-*\") true ;; *) false ;; esac'
get au "$B/" -H "If-None-Match: $PAGE_TAG"
check "a reload of the unchanged page is a 304" is "$ST" 304
tally ops 304
get au "$B/" -H 'If-None-Match: *'
check "If-None-Match: * on the page (it exists): 304" is "$ST" 304
tally ops 304
get au "$B/app.js" -H "If-None-Match: $PAGE_TAG"
check "another file's tag is not this one's: 200" is "$ST" 200
tally ops 200
get au "$B/v1/armatures" -X OPTIONS -H 'Origin: https://x.example' -H 'Access-Control-Request-Method: GET'
check "without --cors-origin: a preflight gets 204 without Access-Control-Allow-Origin" \
    eval 'is "$ST" 204 && not has_hdr au Access-Control-Allow-Origin'
tally other 204

# One worker, one queued job: of N slow renders at once, some are refused with 429.
busy=0 busy_bad=
for round in 1 2 3; do
    pids=()
    for i in $(seq 8); do
        curl -s --max-time 60 "${AUTH[@]}" -o "$TMP/busy$i.body" -D "$TMP/busy$i.hdr" -w '%{http_code}' \
            "$B/v1/armatures/$ROBOT/render.png?size=1024x1024&anim=Walk&frame=$i&warmup=$((round * 100))" \
            >"$TMP/busy$i.st" &
        pids+=($!)
    done
    wait "${pids[@]}"
    for i in $(seq 8); do
        st=$(cat "$TMP/busy$i.st")
        tally render "$st"
        if [ "$st" = 429 ]; then
            busy=$((busy + 1))
            ST=429
            if ! errjson "busy$i" 429 || ! is "$(hdr "busy$i" Retry-After)" 1; then
                busy_bad="$busy_bad $st"
            fi
        elif [ "$st" != 200 ] || ! is "$(hdr "busy$i" Content-Type)" image/png; then
            busy_bad="$busy_bad $st"
        fi
    done
    [ $busy -gt 0 ] && break
done
check "429 with Retry-After: 1 and a JSON error when the queue is full ($busy in round $round)" \
    test $busy -gt 0
check "of the parallel renders, the others are 200 PNGs${busy_bad:+ (not:$busy_bad)}" test -z "$busy_bad"
get m "$B/metrics" "${AUTH[@]}"
for k in "${!N[@]}"; do
    echo "skeld_http_requests_total{route=\"${k%,*}\",status=\"${k#*,}\"} ${N[$k]}"
done | sort >"$TMP/want.metrics"
grep '^skeld_http_requests_total{' "$TMP/m.body" | sort >"$TMP/got.metrics"
check "/metrics: skeld_http_requests_total is exactly what this daemon was asked" \
    same "$TMP/got.metrics" "$TMP/want.metrics"
same "$TMP/got.metrics" "$TMP/want.metrics" || diff "$TMP/want.metrics" "$TMP/got.metrics"
check "/metrics: skeld_busy_total counts the 429s" is "$(metric m skeld_busy_total)" "${N[render,429]:-0}"
stop B

# =============================================================================================
# Daemon C: SIGTERM drains. A slow pose is running with a request queued behind it (unread:
# --max-inflight 1), half a
# request has been read on another connection and a third is idle: the pose is answered, and
# so is the half request completed after SIGTERM (begun before the drain: an upload under way
# when the grace ended, refused after its whole body, could not be sent elsewhere); the
# request read only after SIGTERM gets 503; each connection ends, and the daemon exits 0.
start C --root "$S" --preload "$S" --threads 1 --max-inflight 1 || exit 1
SLOW="/v1/armatures/$ROBOT/pose?anim=Walk&frame=5&warmup=300000"
"$BIN" eval "$S/robot.skf" --anim Walk --frame 5 --warmup 300000 >"$TMP/want-slow.json" &
evalpid=$!
mkdir -p "$TMP/drain"
py drain "${PORT[C]}" "${PID[C]}" "$TMP/drain" "$SLOW" "$S/critter.skf" >"$TMP/drain.out" 2>&1
drc=$?
wait $evalpid
[ $drc -eq 0 ] || sed 's/^/# /' "$TMP/drain.out"
check "drain: the request running at SIGTERM is answered 200" grep -qE '^c1 200 ' "$TMP/drain.out"
check "drain: its answer is skeld eval's JSON" same "$TMP/drain/c1.body" "$TMP/want-slow.json"
check "drain: the request read after SIGTERM behind it gets 503, Connection: close, then the end" \
    eval 'grep -qx "c1b 503 close end" "$TMP/drain.out" && py err "$TMP/drain/c1b.body" "Service Unavailable"'
check "drain: a request begun before SIGTERM and finished after is answered, then the end" \
    grep -qx 'c2 200 close end' "$TMP/drain.out"
check "drain: an idle keep-alive connection is ended" grep -qx 'c3 end' "$TMP/drain.out"
check "drain: an upload part-way in behind a running request (--max-inflight 1) is answered 201" \
    eval 'grep -qE "^c4 200 " "$TMP/drain.out" && grep -qx "c4b 201 close end" "$TMP/drain.out"'
check "drain: the whole request waiting before it there gets 503" grep -qE "^c4h 503 " "$TMP/drain.out"
stop C nosignal

# =============================================================================================
# Daemon D: pipelining past --max-inflight, the answers to the requests read meanwhile given at
# once (http.c once re-entered parse_input from each answer, one stack level per request, and
# lost track of reading: the connection was reset, or the daemon died of a stack overflow).
start D --root "$S" --preload "$S" --max-inflight 2 || exit 1
check "D: 2 slow requests then 3000 small ones pipelined past --max-inflight 2, all answered" is "$(py flood "${PORT[D]}" "/v1/armatures/$ROBOT/pose?warmup=20000" 3000)" 3002
# A drawing past the request's share of --max-bone-steps: 400 naming the frame, before a pixel
# is drawn; the frames before it and the frame at a small size are drawn.
py growskf "$TMP/grow.skf"
D=http://127.0.0.1:${PORT[D]}
get grow -X POST --data-binary @"$TMP/grow.skf" "$D/v1/armatures"
GROW=$(sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p' "$TMP/grow.body")
check "D: the growing layers load (201)" is "$ST" 201
get grow "$D/v1/armatures/$GROW/render.png?anim=grow&frame=5&size=4096x4096"
check "D: render.png of frame 5 past its share: 400 naming frame 5 and the fill" \
    errjson grow 400 "frame 5: its triangles would take at least" "pixels of fill"
get grow "$D/v1/armatures/$GROW/render.png?anim=grow&frame=4&size=4096x4096"
check "D: frame 4, a thousandth the size, is drawn (200 PNG)" \
    is "$ST $(hdr grow Content-Type)" "200 image/png"
get grow "$D/v1/armatures/$GROW/render.png?anim=grow&frame=5&size=16x16"
check "D: frame 5 at 16x16 is drawn (200 PNG)" is "$ST $(hdr grow Content-Type)" "200 image/png"
get m "$D/metrics"
check "D: /metrics counts the refusal by its cause (skeld_refusals_total{status=\"LIMIT\"} 1)" \
    is "$(metric m 'skeld_refusals_total{status="LIMIT"}')" 1
# sheet.json describes the sheet without drawing it: the sheet whose drawing is past its share
# is described (200). (Its bytes are skeld render's OUT.json: the sheets above.)
sheet5="anim=grow&frame=5&size=4096x4096&sheet=1x1"
get grow "$D/v1/armatures/$GROW/render.png?$sheet5"
check "D: the 1x1 sheet of frame 5 at 4096x4096 is past its share too (400)" \
    errjson grow 400 "frame 5: its triangles would take at least" "pixels of fill"
get grow "$D/v1/armatures/$GROW/sheet.json?$sheet5"
check "D: its sheet.json is answered, nothing drawn: one 4096x4096 cell holding frame 5" \
    eval '[ "$ST" = 200 ] && "$PY" -c "import json, sys; j = json.load(open(sys.argv[1])); sys.exit(j[\"cell\"] != {\"w\": 4096, \"h\": 4096} or j[\"frames\"] != [{\"frame\": 5, \"x\": 0, \"y\": 0, \"w\": 4096, \"h\": 4096}])" "$TMP/grow.body"'
# ... but it plays the frames: a pose that overflows fails it as it fails the drawing
edit_skf "$S/robot.skf" "$TMP/over.skf" '
for b in j["bones"]:
    b["scale"] = b["init_scale"] = {"x": 1e300, "y": 1e300}'
get over -X POST --data-binary @"$TMP/over.skf" "$D/v1/armatures"
OVER=$(sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p' "$TMP/over.body")
for r in render.png sheet.json; do
    get over "$D/v1/armatures/$OVER/$r?anim=Walk&frames=0-1&sheet=2x1&size=16x16"
    check "D: $r of a sheet whose poses overflow: 400 naming frame 0's bone" \
        errjson over 400 "frame 0: bone" "is not a finite number"
done
stop D

# =============================================================================================
# Daemon E: HTTP bodies count against --max-input-mb with the binary frames.
start E --root "$S" --max-input-mb 1 --max-skf-mb 8 || exit 1
py budget "${PORT[E]}" >"$TMP/budget.out" 2>&1
sed 's/^/# /' "$TMP/budget.out"
check "E: a half-sent body of 700 kB holds the 1 MiB --max-input-mb (skeld_input_buffer_bytes)" \
    grep -qx held "$TMP/budget.out"
check "E: meanwhile another upload gets 503, Retry-After: 1, a message naming --max-input-mb" \
    grep -qx 'c2 503 1 names' "$TMP/budget.out"
check "E: the first body, once whole, is read (400: not a .skf)" grep -qx 'c1 400' "$TMP/budget.out"
check "E: then nothing is held, and the same upload is read (400, not 503)" \
    eval 'grep -qx released "$TMP/budget.out" && grep -qx "c3 400" "$TMP/budget.out"'
stop E

# =============================================================================================
# Daemon F: --drain-grace. SIGTERM turns /readyz to 503 and serves the rest as before (a long
# grace, so nothing here depends on timing); a second SIGTERM drains at once.
start F --root "$S" --drain-grace 3600 --idle-timeout 1 || exit 1
F=http://127.0.0.1:${PORT[F]}
check "F: a client sending only CR LFs (no request) is ended by --idle-timeout 1" \
    is "$(py crlfs "${PORT[F]}")" closed
kill -TERM "${PID[F]}"
for i in $(seq 2400); do
    [ "$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$F/readyz")" = 503 ] && break
    sleep 0.05
done
get fr "$F/readyz"
check "F: after SIGTERM with --drain-grace, /readyz answers 503 not ready" \
    is "$ST $(cat "$TMP/fr.body")" "503 not ready"
get fp "$F/v1/files/robot.skf/pose?anim=Walk&frame=3"
check "F: ... while the rest is served as before (a pose: 200)" is "$ST" 200
check "F: the log says when the drain begins" grep -q 'draining in 3600 s (--drain-grace)' "$TMP/F.err"
stop F

# =============================================================================================
# Daemon G: --max-connections counts both fronts' connections, and HTTP is told why it is refused.
start G --root "$S" --max-connections 2 --listen "unix:$TMP/g.sock" || exit 1
py maxconn "${PORT[G]}" "$TMP/g.sock" >"$TMP/maxconn.out" 2>&1
sed 's/^/# /' "$TMP/maxconn.out"
check "G: a binary and an HTTP connection are held under --max-connections 2" \
    grep -qx 'held 200' "$TMP/maxconn.out"
check "G: a third, HTTP, gets 503, Retry-After: 1, a message naming --max-connections, the end" \
    grep -qx 'third 503 1 names end' "$TMP/maxconn.out"
check "G: past the limit /healthz and /readyz are still answered 200, then the connection ends" \
    eval "grep -qx 'probe /healthz 200 end' '$TMP/maxconn.out' && grep -qx 'probe /readyz 200 end' '$TMP/maxconn.out'"
check "G: ... and so is a probe in absolute form (http://skeld/healthz)" \
    grep -qx 'probe http://skeld/healthz 200 end' "$TMP/maxconn.out"
for i in $(seq 2400); do # until the daemon has seen both end: the limit held /metrics too
    get gm "http://127.0.0.1:${PORT[G]}/metrics"
    [ "$ST" = 200 ] && break
    sleep 0.05
done
check "G: /metrics counts the refusal (skeld_connections_refused_total)" \
    grep -qE '^skeld_connections_refused_total [1-9]' "$TMP/gm.body"
"$CTL" --uri "unix:$TMP/g.sock" stats >"$TMP/gs.out" 2>&1
check "G: so does STATS over the binary protocol (connections.refused)" \
    grep -qE '^connections\.refused [1-9]' "$TMP/gs.out"
stop G

# =============================================================================================
# Daemon R: what --root is (skeld(8)): the directory opened at the start, here named through a
# symbolic link that is then pointed at another (a deploy's "current"); inside it a relative
# symlink is followed, and an absolute one refused even though it names a file inside.
RR="$TMP/r-roots"
mkdir -p "$RR/v1" "$RR/v2"
cp "$S/robot.skf" "$RR/v1/a.skf"
cp "$S/critter.skf" "$RR/v2/a.skf"
ln -s a.skf "$RR/v1/rel.skf"
ln -s "$RR/v1/a.skf" "$RR/v1/abs.skf"
ln -s v1 "$RR/current"
start R --root "$RR/current" || exit 1
R=http://127.0.0.1:${PORT[R]}
get r1 "$R/v1/files/rel.skf"
check "R: a relative symlink inside the root is followed" \
    eval 'is "$ST" 200 && grep -q "^{\"id\":\"$ROBOT\"" "$TMP/r1.body"'
get r2 "$R/v1/files/abs.skf"
check "R: an absolute symlink naming a file inside the root is refused: 403" errjson r2 403 abs.skf
ln -sfn v2 "$RR/current"
get r3 "$R/v1/files/a.skf"
check "R: the root's symlink pointed elsewhere since the start: the directory opened then is served" \
    eval 'is "$ST" 200 && grep -q "^{\"id\":\"$ROBOT\"" "$TMP/r3.body"'
stop R

# =============================================================================================
# Daemon H: a file under --root replaced and removed while the daemon serves it. With
# --file-settle-ms 0 every file's version is remembered at once, so an evaluation under
# /v1/files/ of a known file runs without a LOAD: its worker checks the file first. Anything
# answered without evaluating (the result cache, 304) waits for a LOAD's check; a file found
# changed, or a query the remembered armature refuses, is LOADed again.
HR="$TMP/h-root"
mkdir -p "$HR"
cp "$S/robot.skf" "$HR/a.skf"
case $(stat -f -c %T "$HR") in # the filesystems whose file times the daemon trusts
ext2/ext3 | xfs | btrfs | tmpfs | overlayfs | f2fs | zfs) ;;
*)
    echo "# SKIP: daemon H: $HR is on $(stat -f -c %T "$HR"), whose files the daemon never remembers"
    echo "http: $passed passed, $failed failed in $(($(date +%s) - START)) s"
    [ $failed -eq 0 ]
    exit
    ;;
esac
start H --root "$HR" --file-settle-ms 0 || exit 1
H=http://127.0.0.1:${PORT[H]}
# loads: LOAD_PATH requests, and files found unchanged (by a LOAD or an evaluation)
loads() {
    get hm "$H/metrics"
    echo "$(metric hm 'skeld_requests_total{op="LOAD_PATH"}') $(metric hm skeld_loads_unchanged_total)"
}
get h1 "$H/v1/files/a.skf/pose?anim=Walk&frame=3"
check "H: the first pose of a file LOADs it" eval 'is "$ST" 200 && is "$(loads)" "1 0"'
get h2 "$H/v1/files/a.skf/pose?anim=Walk&frame=4"
get byid "$H/v1/armatures/$ROBOT/pose?anim=Walk&frame=4"
check "H: a known file's next pose needs no LOAD (the evaluation checked the file)" \
    eval 'is "$ST" 200 && same "$TMP/h2.body" "$TMP/byid.body" && is "$(loads)" "1 1"'
get h3 "$H/v1/files/a.skf/pose?anim=Walk&frame=4"
check "H: the same query is answered from the result cache, after a LOAD found the file unchanged" \
    eval 'is "$ST" 200 && same "$TMP/h3.body" "$TMP/byid.body" && is "$(loads)" "2 2"'
get h4 "$H/v1/files/a.skf/pose?anim=Walk&frame=4" -H "If-None-Match: $(hdr h3 ETag)"
check "H: ... and If-None-Match with its ETag is 304, after a LOAD too" \
    eval 'is "$ST" 304 && is "$(loads)" "3 3"'
cp "$S/critter.skf" "$HR/new.skf"
mv "$HR/new.skf" "$HR/a.skf"
get h5 "$H/v1/files/a.skf/pose?frame=2"
get byid "$H/v1/armatures/$CRITTER/pose?frame=2"
check "H: a file replaced by rename is found changed by the evaluation and LOADed: the new pose" \
    eval 'is "$ST" 200 && same "$TMP/h5.body" "$TMP/byid.body" && is "$(loads)" "4 3"'
poses() {
    get hm "$H/metrics"
    metric hm 'skeld_requests_total{op="POSE"}'
}
poses_before=$(poses)
get h6 "$H/v1/files/a.skf/pose?anim=Walk&frame=4"
check "H: the robot's cached answer is not served for the critter's file: no Walk, 404" \
    errjson h6 404 Walk
check "H: ... and it is one POSE in /metrics, though the remembered armature was asked first" \
    is "$(($(poses) - poses_before))" 1
get h7 "$H/v1/files/a.skf/pose?anim=Hop&frame=2"
check "H: a query the remembered armature takes is evaluated with the file's check again" \
    eval 'is "$ST" 200 && is "$(loads)" "5 5"'
rm "$HR/a.skf"
get h8 "$H/v1/files/a.skf/pose?frame=3"
check "H: a removed file is 404, as a LOAD of it is" errjson h8 404 a.skf
get h9 "$H/v1/files/a.skf/pose?bogus=1"
check "H: a bad query for a removed file is 404 too: the file is looked for first" \
    errjson h9 404 a.skf
stop H

echo "http: $passed passed, $failed failed in $(($(date +%s) - START)) s"
[ $failed -eq 0 ]
