"""PROTOCOL.md checked against the daemon by a second implementation written from the
document alone: every message in its Messages table is encoded as the document lays it out,
sent to a real skeld over its unix socket, and its reply decoded as the document lays it out,
to the last byte. The opcode and status tables must name exactly the daemon's codes, and a
message the document lists without a check here fails the test (so the two cannot drift).

  protocol.py PROTOCOL.md SOCKET SAMPLES_DIR INFO_JSON   (exit 0: every check passed)

INFO_JSON holds `skeld info SAMPLES_DIR/robot.skf`, which INFO_JSON must answer byte for byte.
"""
import hashlib, os, re, socket, struct, sys

doc_path, sock_path, samples, info_path = sys.argv[1:5]
doc = open(doc_path, encoding="utf-8").read()
failures = 0


def check(what, ok):
    global failures
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        failures += 1


def table(section):
    """Rows of the first table under '## section': lists of cell strings."""
    part = doc.split("## " + section, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in part.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:]  # no header


opcodes = {int(r[0]): r[1] for r in table("Messages") if r[0].isdigit()}
statuses = {r[1]: (int(r[0]), r[2]) for r in table("Status codes") if r[0].isdigit()}

# ---- the wire, as "Frames" and "Body encoding" say ---------------------------------------
HDR = struct.Struct("<4sBBHHHII")


class W:
    def __init__(self):
        self.b = bytearray()

    def u8(self, v): self.b += struct.pack("<B", v); return self
    def u16(self, v): self.b += struct.pack("<H", v); return self
    def u32(self, v): self.b += struct.pack("<I", v); return self
    def i32(self, v): self.b += struct.pack("<i", v); return self
    def f64(self, v): self.b += struct.pack("<d", v); return self
    def str(self, s): s = s.encode(); return self.u16(len(s)).raw(s)
    def bytes(self, s): return self.u32(len(s)).raw(s)
    def raw(self, s): self.b += s; return self


class R:
    def __init__(self, b):
        self.b, self.o = b, 0

    def take(self, n):
        if self.o + n > len(self.b):
            raise ValueError("body ends early")
        v = self.b[self.o:self.o + n]
        self.o += n
        return v

    def u8(self): return self.take(1)[0]
    def u16(self): return struct.unpack("<H", self.take(2))[0]
    def u32(self): return struct.unpack("<I", self.take(4))[0]
    def i32(self): return struct.unpack("<i", self.take(4))[0]
    def f64(self): return struct.unpack("<d", self.take(8))[0]
    def str(self): return self.take(self.u16()).decode()
    def bytes(self): return self.take(self.u32())
    def end(self):
        if self.o != len(self.b):
            raise ValueError("%d bytes left over" % (len(self.b) - self.o))


sock = socket.socket(socket.AF_UNIX)
sock.settimeout(60)
sock.connect(sock_path)
next_id = 1


def recv_exact(n):
    b = bytearray()
    while len(b) < n:
        d = sock.recv(n - len(b))
        if not d:
            raise EOFError("the daemon closed the connection")
        b += d
    return bytes(b)


def call(opcode, body):
    """Sends one request; returns (status, reply body), after checking the reply's header."""
    global next_id
    rid = next_id
    next_id += 1
    sock.sendall(HDR.pack(b"SKLD", 1, opcode, 0, 0, 0, rid, len(body)) + bytes(body))
    magic, ver, op, flags, status, res, got_id, n = HDR.unpack(recv_exact(20))
    ok = magic == b"SKLD" and ver == 1 and op == opcode and flags == 1 and res == 0 and got_id == rid
    if not ok:
        raise ValueError("reply header %r" % ((magic, ver, op, flags, status, res, got_id),))
    return status, recv_exact(n)


def summary(r):
    s = {"bones": r.u32(), "anims": [], "styles": []}
    for _ in range(r.u16()):
        s["anims"].append((r.str(), r.f64(), r.u32()))
    for _ in range(r.u16()):
        s["styles"].append(r.str())
    s["atlases"] = r.u16()
    return s


def eval_request(target, flags=0, anims=(("0", 3.0, 0.0),), from_=0.0):
    w = W().u8(0).raw(target) if isinstance(target, bytes) else W().u8(1).u32(target)
    w.u16(flags).u8(len(anims))
    for name, frame, smooth in anims:
        w.str(name).f64(frame).f64(smooth)
    w.f64(from_).u32(0)
    for v in (0, 0, 1, 1, 0, 0):
        w.f64(v)
    return w


def render_request(w, size=32, frames=None, sheet=(0, 0), camera=0, fmt=0):
    w.u32(size).u32(size).raw(bytes((0, 0, 0, 0))).u8(camera).f64(0.9)
    for v in (1, 1, 0, 0):
        w.f64(v)
    w.u8(0).u8(1).u8(fmt).u8(255)
    w.u32(frames[0] if frames else 0).u32(frames[1] if frames else 0)
    return w.u16(sheet[0]).u16(sheet[1])


def bones(r):
    out = []
    for _ in range(r.u32()):
        b = [r.f64() for _ in range(5)] + [r.f64() for _ in range(6)]
        b += [r.u8(), r.i32(), r.str()] + [r.f64() for _ in range(4)]
        b.append([(r.f64(), r.f64()) for _ in range(r.u32())])
        out.append(b)
    return out


def draws(r):
    out = []
    for _ in range(r.u32()):
        d = [r.u32(), r.u32()] + [r.f64() for _ in range(4)]
        d.append([[r.f64() for _ in range(4)] for _ in range(r.u32())])
        d.append([r.u32() for _ in range(r.u32())])
        out.append(d)
    return out


def images(r):
    out = [(r.u32(), r.u32(), r.u32(), r.bytes()) for _ in range(r.u32())]
    return out, r.bytes()


def run(name, opcode, body, decode, expect=lambda v: True):
    """One message: OK, the reply decoded to its last byte, expect(value) true."""
    try:
        status, reply = call(opcode, body)
        if status != 0:
            raise ValueError("status %d: %s" % (status, R(reply).str()))
        r = R(reply)
        v = decode(r)
        r.end()
        good = expect(v)
    except (ValueError, EOFError, UnicodeDecodeError, struct.error) as e:
        print("# %s: %s" % (name, e))
        good, v = False, None
    check("%s: request and reply laid out as PROTOCOL.md says" % name, good)
    checked.add(name)
    return v


checked = set()
skf = open(os.path.join(samples, "robot.skf"), "rb").read()
arm = hashlib.sha256(skf).digest()
op = {name: code for code, name in opcodes.items()}

run("HELLO", op["HELLO"], W().u16(1).str("").b,
    lambda r: (r.u16(), r.str(), r.u32()), lambda v: v[0] == 1 and v[2] > 0)
run("PING", op["PING"], W().bytes(b"doc").b, lambda r: r.bytes(), lambda v: v == b"doc")
run("LOAD_PATH", op["LOAD_PATH"], W().str("robot.skf").b,
    lambda r: (r.take(32), summary(r)), lambda v: v[0] == arm and v[1]["bones"] > 0)
s = run("LOAD_BYTES", op["LOAD_BYTES"], W().bytes(skf).b,
        lambda r: (r.take(32), summary(r)), lambda v: v[0] == arm)
run("INFO", op["INFO"], W().raw(arm).b,
    lambda r: (summary(r), [(r.str(), r.i32()) for _ in range(s[1]["bones"])]),
    lambda v: v[0] == s[1] and all(p >= -1 for _, p in v[1]))
run("INFO_JSON", op["INFO_JSON"], W().raw(arm).b, lambda r: r.bytes(),
    lambda v: v == open(info_path, "rb").read())
inst = run("INSTANCE_NEW", op["INSTANCE_NEW"], W().raw(arm).b, lambda r: r.u32())
walk = [a[0] for a in s[1]["anims"]][1]
p1 = run("POSE", op["POSE"], eval_request(arm, anims=((walk, 4.0, 0.0),)).b, bones,
         lambda v: len(v) == s[1]["bones"])
run("POSE on an instance", op["POSE"], eval_request(inst, anims=((walk, 4.0, 0.0),)).b, bones,
    lambda v: v == p1)
run("MESH", op["MESH"], eval_request(arm, anims=((walk, 4.0, 0.0),)).b, draws,
    lambda v: len(v) > 0 and all(len(d[7]) % 3 == 0 for d in v))
run("RENDER", op["RENDER"], render_request(eval_request(arm)).b, images,
    lambda v: len(v[0]) == 1 and v[0][0][3][:8] == b"\x89PNG\r\n\x1a\n" and v[1] == b"")
run("RENDER of a range as a sheet", op["RENDER"],
    render_request(eval_request(arm, flags=0x20), frames=(0, 3), sheet=(2, 2)).b, images,
    lambda v: len(v[0]) == 1 and v[0][0][1:3] == (64, 64) and v[1].startswith(b"{"))
run("INSTANCE_FREE", op["INSTANCE_FREE"], W().u32(inst).b, lambda r: None)
run("STATS", op["STATS"], b"",
    lambda r: {r.str(): (r.u32() << 32) | r.u32() for _ in range(r.u32())},
    lambda v: v.get("requests.POSE", 0) >= 2 and "uptime.ms" in v)
# A request the daemon refuses names what is wrong, and the value.
def refused(name, opcode, body, status, text):
    st, reply = call(opcode, body)
    msg = R(reply).str() if st else ""
    good = st == statuses[status][0] and text in msg
    if not good:
        print("# %s: status %d, %r" % (name, st, msg))
    check("%s: %s naming it (%s)" % (name, status, text), good)


bad_target = W().u8(2).u16(0).u8(0).f64(0).u32(0)
for v in (0, 0, 1, 1, 0, 0):
    bad_target.f64(v)
refused("a target of 2", op["POSE"], bad_target.b, "BAD_REQUEST",
        "target 2: 0 (an armature) or 1 (an instance)")
refused("17 animations", op["POSE"], eval_request(arm, anims=(("0", 0.0, 0.0),) * 17).b,
        "BAD_REQUEST", "17 animations: at most 16")
refused("camera 2", op["RENDER"], render_request(eval_request(arm), camera=2).b, "BAD_REQUEST",
        "camera 2: 0 (fit) or 1")
refused("format 2", op["RENDER"], render_request(eval_request(arm), fmt=2).b, "BAD_REQUEST",
        "format 2: 0 (PNG) or 1")
refused("a sheet of 0x1", op["RENDER"],
        render_request(eval_request(arm, flags=0x20), frames=(0, 0), sheet=(0, 1)).b, "BAD_REQUEST",
        "sheet 0x1: columns and rows are 1 or more")
run("UNLOAD", op["UNLOAD"], W().raw(arm).b, lambda r: None)

# An error reply: one str naming the problem, with the documented status.
status, reply = call(op["INFO"], W().raw(arm).b)
check("an unknown armature: NOT_FOUND with one str", status == statuses["NOT_FOUND"][0] and
      R(reply).str() != "")

check("every message PROTOCOL.md lists is checked here (%s)" % ", ".join(
    sorted(set(opcodes.values()) - checked) or ["all"]), set(opcodes.values()) <= checked)
sys.exit(1 if failures else 0)
