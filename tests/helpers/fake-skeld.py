"""fake-skeld.py SOCKET MODE: a daemon that answers RENDER with the wrong pictures, so the tests
can see what skelctl does with a reply no real skeld sends. It listens on the unix socket
SOCKET (a path: no port to clash), prints "ready" once it does, and serves one connection at
a time until killed. HELLO is answered as skeld answers it (proto/PROTOCOL.md); an armature
given to skelctl as 64 hex digits is its id, sent as it is (resolve_arm), so no INFO or LOAD
comes; every other request but RENDER gets an error reply. A RENDER reply holds valid PNGs of
the size asked (libskc checks each IHDR against it), for these frames, per MODE:
  zero         no picture
  wrong-frame  one picture, of frame 999999
  extra        the frames asked for, and one more after them
  fewer        the frames asked for but the last
  two-for-one  two pictures of each frame asked for (two for a single frame)
and, for what skelctl prints of what a daemon says:
  hostile-text RENDER refused with a message holding terminal escapes (C0, and C1 both as
               UTF-8 and as a raw byte), a right-to-left override and Japanese, and STATS answered
               with a counter whose name holds a newline (a forged line) and an escape
and, for a sheet (a RENDER of C x R cells) and INFO_JSON:
  sheet        a well-formed sheet (one picture of C x R cells from the first frame, a JSON
               object), and INFO_JSON a JSON object
  sheet-size   a sheet picture of one cell's size, not C x R cells
  not-json     the sheet's JSON, and INFO_JSON, cut short (not JSON)
  info-nul     INFO_JSON a JSON object followed by a NUL and terminal escapes
  info-array   INFO_JSON JSON, but an array"""
import os
import socket
import struct
import sys
import zlib

OP_HELLO, OP_RENDER, OP_STATS, OP_INFO_JSON = 1, 11, 12, 13
F_REPLY = 1
S_UNKNOWN_OPCODE, S_NOT_FOUND = 5, 7
ESCAPES = "\x1b]0;pwned\x07\x1b[2J"  # retitle the window, clear the screen
# past ASCII: a CSI as a UTF-8 C1 character and as a raw byte (an 8-bit terminal's), a
# right-to-left override, and two characters a UTF-8 terminal must show
HIGH = "\u009b2J".encode() + b"\x9b" + "\u202e\u6b69\u304f".encode()
RANGE = 1 << 5  # evaluation flag: a frame range (first..last in the render request)


def frame(op, status, req_id, body):
    """The 20-byte header (magic, version 1, opcode, flags, status, reserved, id, body_len)."""
    return b"SKLD" + struct.pack("<BBHHHII", 1, op, F_REPLY, status, 0, req_id, len(body)) + body


def string(s):
    b = s if isinstance(s, bytes) else s.encode()
    return struct.pack("<H", len(b)) + b


def png(width, height):
    """A transparent RGBA picture: 8-bit, every row filter 0."""

    def chunk(kind, data):
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = (b"\0" + b"\0" * 4 * width) * height
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def render_request(body):
    """(frames asked for, width, height) from an evaluation request and a render request."""
    at = 1 + (32 if body[0] == 0 else 4)  # target, then an armature id or an instance
    flags, count = struct.unpack_from("<HB", body, at)
    at += 3
    single = 0
    for i in range(count):  # str name, f64 frame, f64 smoothing
        (n,) = struct.unpack_from("<H", body, at)
        (f,) = struct.unpack_from("<d", body, at + 2 + n)
        single = int(f) if i == 0 else single
        at += 2 + n + 16
    at += 8 + 4 + 48  # from, warmup, position, scale, velocity
    width, height = struct.unpack_from("<II", body, at)
    at += 8 + 4 + 1 + 8 + 32  # size, background, camera, fit, scale and position
    count = body[at]
    at += 1
    for _ in range(count):  # styles: str name-or-index each
        at += 2 + struct.unpack_from("<H", body, at)[0]
    at += 3  # samples, format, png level
    first, last, cols, rows = struct.unpack_from("<IIHH", body, at)
    frames = list(range(first, last + 1)) if flags & RANGE else [single]
    return frames, width, height, cols, rows


SHEET_MODES = {"sheet", "sheet-size", "not-json", "info-nul", "info-array"}
INFO_JSON = {
    "not-json": b'{"id":"ab",',
    "info-nul": b'{"id":"ab"}\0' + ESCAPES.encode(),
    "info-array": b'[{"id":"ab"}]',
}


def sheet_reply(mode, frames, w, h, cols, rows):
    """One picture for the sheet and its JSON."""
    if mode != "sheet-size":
        w, h = w * cols, h * rows
    picture = png(w, h)
    json = b'{"cell":' if mode == "not-json" else b'{"cols":%d,"rows":%d}' % (cols, rows)
    reply = struct.pack("<I", 1) + struct.pack("<IIII", frames[0], w, h, len(picture)) + picture
    return reply + struct.pack("<I", len(json)) + json


def pictures(mode, frames):
    if mode in SHEET_MODES:
        return frames
    if mode == "zero":
        return []
    if mode == "wrong-frame":
        return [999999]
    if mode == "extra":
        return frames + [frames[-1] + 1]
    if mode == "fewer":
        return frames[:-1]
    if mode == "two-for-one":
        return [f for f in frames for _ in range(2)]
    if mode == "hostile-text":
        return None
    sys.exit("fake-skeld: unknown mode " + mode)


def recv_exactly(conn, n):
    data = b""
    while len(data) < n:
        more = conn.recv(n - len(data))
        if not more:
            raise EOFError
        data += more
    return data


def serve(conn, mode):
    while True:
        head = recv_exactly(conn, 20)
        op = head[5]
        req_id, length = struct.unpack_from("<II", head, 12)
        body = recv_exactly(conn, length)
        if op == OP_HELLO:  # the version it speaks, its name, its max request body
            reply = struct.pack("<H", 1) + string("skeld 0.0.0 on fake")
            reply += struct.pack("<I", 1 << 20)
        elif op == OP_RENDER and mode == "hostile-text":
            text = ("unknown animation " + ESCAPES).encode() + HIGH
            conn.sendall(frame(op, S_NOT_FOUND, req_id, string(text)))
            continue
        elif op == OP_STATS and mode == "hostile-text":  # str name, u32 high, u32 low
            reply = struct.pack("<I", 1) + string("evil\nforged 1" + ESCAPES)
            reply += struct.pack("<II", 0, 5)
        elif op == OP_INFO_JSON and mode in SHEET_MODES:
            json = INFO_JSON.get(mode, b'{"id":"ab"}\n')
            reply = struct.pack("<I", len(json)) + json
        elif op == OP_RENDER and mode in SHEET_MODES:
            reply = sheet_reply(mode, *render_request(body))
        elif op == OP_RENDER:
            frames, w, h, _, _ = render_request(body)
            picture = png(w, h)
            shown = pictures(mode, frames)
            reply = struct.pack("<I", len(shown))
            for f in shown:  # frame, width, height, bytes data
                reply += struct.pack("<IIII", f, w, h, len(picture)) + picture
            reply += struct.pack("<I", 0)  # no sheet JSON
        else:
            conn.sendall(frame(op, S_UNKNOWN_OPCODE, req_id, string("fake-skeld: no such request")))
            continue
        conn.sendall(frame(op, 0, req_id, reply))


def main():
    path, mode = sys.argv[1:3]
    pictures(mode, [0])  # an unknown mode fails now, not at the first RENDER
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)
    print("ready", flush=True)
    while True:
        conn, _ = srv.accept()
        with conn:
            try:
                serve(conn, mode)
            except (EOFError, OSError):
                pass  # skelctl gave up on the reply (as it should) and went: the next one


main()
