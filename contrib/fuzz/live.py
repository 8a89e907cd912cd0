#!/usr/bin/env python3
"""Live fuzzing of a running daemon over its real sockets: what fuzz-request.c cannot reach
(conn.c's buffering, backpressure, framing errors and half-closes, the real pool's threads,
cancelled work, the LOAD pipeline).

    contrib/fuzz/live.py [--seconds 30] [--batches 1000] [--seed N] [--skeld daemon/skeld]
                         [--samples samples] [--out DIR]

Run from a built tree. It starts `skeld serve` on a unix socket in a temp dir (small limits,
2 workers, a short queue), loads the samples by path and learns their ids, then runs batches
until either bound is reached. A batch opens 4-16 connections at once and sends on each a few
streams made from the seed corpus (contrib/fuzz/corpus/request, with the fuzzer's fixed ids
replaced by the daemon's) and mutated: bit flips, truncation, length fields that lie, random
opcodes, versions and flags, special numbers, spliced and repeated frames, LOAD_BYTES of
mutated samples, LOAD_PATH of hostile paths, UNLOAD. Bytes go out in random chunk sizes;
most connections then half-close and read every reply to the end of stream, some just go
away (with a reset, or with requests still running). Every reply must be a well-formed
reply frame, an OK RENDER must hold its pictures and an OK POSE or MESH its count. After
each batch a fresh connection must have a PING answered; at the end the daemon must still be
running, and exit 0 on SIGTERM with no sanitizer report on stderr.

On failure it exits 1 and leaves the batch's streams in --out (default a temp dir) with the
daemon's stderr; the seed it prints makes the same streams again (their interleaving on the
daemon's threads differs). Nothing waits on time except the deadlines that declare a hang.
CI runs it for 20 s against the ASan+UBSan daemon and 15 s against the TSan daemon (.ci/run).
"""

import argparse
import os
import random
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

MAGIC = b"SKLD"
HEADER = 20
OP = {"HELLO": 1, "PING": 2, "LOAD_PATH": 3, "LOAD_BYTES": 4, "UNLOAD": 5, "INFO": 6,
      "INSTANCE_NEW": 7, "INSTANCE_FREE": 8, "POSE": 9, "MESH": 10, "RENDER": 11, "STATS": 12}
SAMPLES = ["robot.skf", "critter.skf", "robot-0.7.skf", "lamp-0.7.skf"]
BATCH_DEADLINE = 60.0  # s for one batch's connections to end: longer is a hang
PING_DEADLINE = 20.0
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer")


class Failure(Exception):
    pass


def header(opcode, req_id, body_len, version=1, flags=0, status=0):
    return MAGIC + struct.pack("<BBHHHII", version, opcode, flags, status, 0, req_id, body_len)


def frame(opcode, req_id, body):
    return header(opcode, req_id, len(body)) + body


def wire_str(s):
    return struct.pack("<H", len(s)) + s


def fixed_id(name):
    """The request fuzzer's id for a sample (fuzz-request.c): its name padded to 32 bytes."""
    return name.encode().ljust(32, b"\0")


def frames_of(stream):
    """Offsets of the frame headers in a well-formed stream (the seeds)."""
    offs, at = [], 0
    while at + HEADER <= len(stream) and stream[at:at + 4] == MAGIC:
        offs.append(at)
        at += HEADER + struct.unpack_from("<I", stream, at + 16)[0]
    return offs


# ---- the daemon ---------------------------------------------------------------------------

class Daemon:
    def __init__(self, skeld, samples, workdir):
        self.sock = os.path.join(workdir, "s.sock")
        self.err_path = os.path.join(workdir, "skeld.stderr")
        self.err = open(self.err_path, "wb")
        args = [skeld, "serve", "--listen", "unix:" + self.sock, "--root", samples,
                "--threads", "2", "--queue-depth", "32", "--log-level", "warn",
                "--max-image-pixels", "16384", "--max-bone-steps", "200000",
                "--max-frame", "4194304", "--max-skf-mb", "4"]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.err)
        self.listening = threading.Event()
        # Drains stdout for the whole run (a full pipe would block the daemon) and signals
        # the "listening unix:" line: startup is awaited on that event, not on a sleep.
        threading.Thread(target=self._read_stdout, daemon=True).start()
        if not self.listening.wait(30) or not self.alive():
            if self.alive():
                self.proc.kill()
            self.proc.wait()
            raise Failure("skeld did not start listening within 30 s:\n" + self.stderr())

    def _read_stdout(self):
        for line in self.proc.stdout:
            if line.startswith(b"listening unix:"):
                self.listening.set()
        self.listening.set()  # ended before listening: the waiter sees it from proc

    def alive(self):
        return self.proc.poll() is None

    def stderr(self):
        self.err.flush()
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")

    def connect(self, timeout=PING_DEADLINE):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.sock)
        return s


def call(d, opcode, body, req_id=1):
    """One request on a fresh connection; returns (status, body)."""
    with d.connect() as s:
        s.sendall(frame(opcode, req_id, body))
        buf = b""
        while True:
            if len(buf) >= HEADER:
                n = struct.unpack_from("<I", buf, 16)[0]
                if len(buf) >= HEADER + n:
                    break
            chunk = s.recv(65536)
            if not chunk:
                raise Failure("connection closed before the reply to %d" % opcode)
            buf += chunk
    _, op, flags, status, _, rid, n = struct.unpack_from("<BBHHHII", buf, 4)
    if buf[:4] != MAGIC or op != opcode or rid != req_id or not flags & 1:
        raise Failure("bad reply header %r to opcode %d" % (buf[:HEADER], opcode))
    return status, buf[HEADER:HEADER + n]


def ping(d, token):
    try:
        status, body = call(d, OP["PING"], struct.pack("<I", len(token)) + token, 7)
    except (OSError, Failure) as e:
        raise Failure("PING after the batch: %s" % e)
    if status != 0 or body != struct.pack("<I", len(token)) + token:
        raise Failure("PING after the batch: status %d, body %r" % (status, body[:64]))


BUSY = 100  # the wire's "server busy": the workers' queue is full, and the client retries


def load_samples(d):
    """LOAD_PATH of each sample: the ids the daemon gives them. The last batch's requests may
    still fill the workers' queue (PING does not wait for them), so a LOAD_PATH answered BUSY
    is asked again, as a client would, until the queue has room: polled, with 120 s as the
    bound past which the daemon is taken for stuck."""
    ids = {}
    for name in SAMPLES:
        deadline = time.monotonic() + 120
        status, body = call(d, OP["LOAD_PATH"], wire_str(name.encode()))
        while status == BUSY and time.monotonic() < deadline:
            time.sleep(0.005)
            status, body = call(d, OP["LOAD_PATH"], wire_str(name.encode()))
        if status != 0 or len(body) < 32:
            raise Failure("LOAD_PATH %s: status %d %r" % (name, status, body[:80]))
        ids[name] = body[:32]
    return ids


# ---- mutations ----------------------------------------------------------------------------

SPECIAL_F64 = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e308, -1e308, 5e-324,
               1e12, -1e12, 1e6, 65536.0, -1.0, 0.5, 4294967296.0]
SPECIAL_U32 = [0, 1, 2, 255, 256, 4095, 4096, 65535, 65536, 16384, 0x7FFFFFFF, 0x80000000,
               0xFFFFFFFF, 0xFFFFFFFE]


class Mutator:
    def __init__(self, rng, seeds, skf_bytes, ids):
        self.rng = rng
        self.seeds = seeds
        self.skf = skf_bytes
        self.ids = ids

    def stream(self):
        """One stream for a connection: a few mutated seeds, or something stranger."""
        r = self.rng.random()
        if r < 0.05:
            return bytes(self.rng.getrandbits(8) for _ in range(self.rng.randrange(1, 200)))
        if r < 0.12:
            return self.load_bytes()
        if r < 0.17:
            return self.load_path()
        parts = []
        for _ in range(self.rng.randrange(1, 5)):
            s = bytearray(self.rng.choice(self.seeds))
            if self.rng.random() < 0.85:
                for _ in range(self.rng.randrange(1, 5)):
                    self.rng.choice(self.OPS)(self, s)
            parts.append(bytes(s))
        return b"".join(parts)

    def _header_at(self, s):
        offs = [i for i in range(0, max(len(s) - HEADER + 1, 0)) if s[i:i + 4] == MAGIC]
        return self.rng.choice(offs) if offs else None

    def bit_flips(self, s):
        for _ in range(self.rng.randrange(1, 9)):
            if s:
                s[self.rng.randrange(len(s))] ^= 1 << self.rng.randrange(8)

    def truncate(self, s):
        if s:
            del s[self.rng.randrange(len(s)):]

    def length_lie(self, s):
        at = self._header_at(s)
        if at is None:
            return
        n = struct.unpack_from("<I", s, at + 16)[0]
        lie = self.rng.choice([0, 1, n - 1, n + 1, n + 8, n * 2, 65536, 4194304, 4194305,
                               64 << 20, (64 << 20) + 1, 0xFFFFFFFF])
        struct.pack_into("<I", s, at + 16, lie & 0xFFFFFFFF)

    def opcode(self, s):
        at = self._header_at(s)
        if at is not None:
            s[at + 5] = self.rng.choice([0, 13, 14, 255, self.rng.randrange(256)] +
                                        list(range(1, 13)))

    def header_bits(self, s):
        at = self._header_at(s)
        if at is None:
            return
        field = self.rng.randrange(4)
        if field == 0:
            s[at + 4] = self.rng.choice([0, 2, 255])  # version
        elif field == 1:
            struct.pack_into("<H", s, at + 6, self.rng.choice([1, 2, 0x8000]))  # flags
        elif field == 2:
            struct.pack_into("<H", s, at + 8, self.rng.randrange(65536))  # status
        else:
            struct.pack_into("<H", s, at + 10, self.rng.randrange(1, 65536))  # reserved

    def special_number(self, s):
        if len(s) < HEADER + 8:
            return
        at = self.rng.randrange(HEADER, len(s) - 7)
        if self.rng.random() < 0.5:
            struct.pack_into("<d", s, at, self.rng.choice(SPECIAL_F64))
        else:
            struct.pack_into("<I", s, at, self.rng.choice(SPECIAL_U32))

    def splice(self, s):
        other = self.rng.choice(self.seeds)
        cut = self.rng.randrange(len(s) + 1)
        s[cut:] = other[self.rng.randrange(len(other) + 1):]

    def repeat_frame(self, s):
        offs = frames_of(bytes(s))
        if not offs:
            return
        i = self.rng.randrange(len(offs))
        end = offs[i + 1] if i + 1 < len(offs) else len(s)
        s[end:end] = s[offs[i]:end] * self.rng.randrange(1, 20)

    def insert_delete(self, s):
        at = self.rng.randrange(len(s) + 1)
        if self.rng.random() < 0.5:
            s[at:at] = bytes(self.rng.getrandbits(8) for _ in range(self.rng.randrange(1, 16)))
        else:
            del s[at:at + self.rng.randrange(1, 16)]

    OPS = [bit_flips, truncate, length_lie, opcode, header_bits, special_number, special_number,
           splice, repeat_frame, insert_delete]

    def load_bytes(self):
        data = bytearray(self.rng.choice(self.skf))
        for _ in range(self.rng.randrange(0, 6)):
            if not data:  # a cut at offset 0 leaves nothing to flip or cut
                break
            if self.rng.random() < 0.8:
                data[self.rng.randrange(len(data))] ^= 1 << self.rng.randrange(8)
            else:
                del data[self.rng.randrange(len(data)):]
        return frame(OP["LOAD_BYTES"], 1, struct.pack("<I", len(data)) + bytes(data))

    def load_path(self):
        path = self.rng.choice([b"../samples/robot.skf", b"/etc/passwd", b"", b"robot.skf\0x",
                                b"./robot.skf", b"nope.skf", b".", b"..", b"a/../../b",
                                b"x" * 1024, b"robot.skf/", self.rng.choice(SAMPLES).encode()])
        out = frame(OP["LOAD_PATH"], 1, wire_str(path))
        if self.rng.random() < 0.3:  # and drop an armature the other streams use
            out += frame(OP["UNLOAD"], 2, self.rng.choice(self.ids))
        return out


# ---- a batch of connections ---------------------------------------------------------------

class Conn:
    def __init__(self, sock, data, rude):
        self.sock = sock
        self.out = data
        self.sent = 0
        self.wrote_all = False
        self.inbuf = bytearray()
        self.rude = rude  # goes away after sending, without reading to the end
        self.done = False


def check_images(body):
    """An OK RENDER body: u32 count, count x (u32 frame, width, height, bytes), bytes JSON."""
    try:
        (count,), at = struct.unpack_from("<I", body), 4
        for _ in range(count):
            _, w, h, n = struct.unpack_from("<IIII", body, at)
            at += 16 + n
            if not w or not h or at > len(body):
                raise struct.error("picture %d x %d of %d bytes" % (w, h, n))
        at += 4 + struct.unpack_from("<I", body, at)[0]
        if at != len(body):
            raise struct.error("%d bytes for %d" % (len(body), at))
    except struct.error as e:
        raise Failure("an OK RENDER reply that does not hold its pictures: %s" % e)


def check_replies(buf, seen):
    """Consumes the whole reply frames at the front of buf, counting them by status in seen;
    raises on a malformed one."""
    while len(buf) >= HEADER:
        if buf[:4] != MAGIC:
            raise Failure("a reply without the magic: %r" % bytes(buf[:HEADER]))
        version, opcode, flags, status, reserved, _, n = struct.unpack_from("<BBHHHII", buf, 4)
        if version != 1 or not flags & 1 or reserved:
            raise Failure("a malformed reply header: %r" % bytes(buf[:HEADER]))
        if n > 64 << 20:
            raise Failure("a reply of %d bytes" % n)
        if len(buf) < HEADER + n:
            return
        if status == 0 and opcode == OP["RENDER"]:
            check_images(bytes(buf[HEADER:HEADER + n]))
        elif status == 0 and opcode in (OP["POSE"], OP["MESH"]) and n < 4:
            raise Failure("an OK %s reply of %d bytes" % ("POSE" if opcode == 9 else "MESH", n))
        del buf[:HEADER + n]
        seen[status] = seen.get(status, 0) + 1


def run_batch(d, streams, rng, seen):
    sel = selectors.DefaultSelector()
    conns = []
    try:
        for data in streams:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(d.sock)
            s.setblocking(False)
            c = Conn(s, data, rng.random() < 0.2)
            conns.append(c)
            sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
        deadline = time.monotonic() + BATCH_DEADLINE
        open_count = len(conns)
        while open_count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("%d connections still open %d s into the batch (a hang)" %
                              (open_count, BATCH_DEADLINE))
            for key, ev in sel.select(min(left, 1.0)):
                c = key.data
                if ev & selectors.EVENT_WRITE and not c.wrote_all:
                    n = rng.choice([1, 3, 7, 20, 64, 500, 4096, len(c.out)])
                    try:
                        if c.sent < len(c.out):
                            c.sent += c.sock.send(c.out[c.sent:c.sent + n])
                    except (BrokenPipeError, ConnectionResetError):
                        c.sent = len(c.out)
                    if c.sent >= len(c.out):  # an empty stream too: it half-closes at once
                        c.wrote_all = True
                        if c.rude:
                            if rng.random() < 0.5:  # a reset instead of a FIN
                                c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                                  struct.pack("ii", 1, 0))
                            sel.unregister(c.sock)
                            c.sock.close()
                            c.done = True
                            open_count -= 1
                            continue
                        try:
                            c.sock.shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
                        sel.modify(c.sock, selectors.EVENT_READ, c)
                if ev & selectors.EVENT_READ and not c.done:
                    try:
                        chunk = c.sock.recv(65536)
                    except ConnectionResetError:
                        chunk = b""
                    except BlockingIOError:
                        continue
                    if chunk:
                        c.inbuf += chunk
                        check_replies(c.inbuf, seen)
                    else:
                        sel.unregister(c.sock)
                        c.sock.close()
                        c.done = True
                        open_count -= 1
    finally:
        for c in conns:
            if not c.done:
                c.sock.close()
        sel.close()


def read_inputs(a, ids):
    """The corpus streams with the fuzzer's fixed ids replaced by ids, and the samples' bytes."""
    seeds = []
    for name in sorted(os.listdir(a.corpus)):
        with open(os.path.join(a.corpus, name), "rb") as f:
            s = f.read()
        for sample, real in ids.items():
            s = s.replace(fixed_id(sample), real)
        seeds.append(s)
    skf = []
    for name in SAMPLES:
        with open(os.path.join(a.samples, name), "rb") as f:
            skf.append(f.read())
    return seeds, skf


# ---- main -----------------------------------------------------------------------------------

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--batches", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--skeld", default="daemon/skeld")
    ap.add_argument("--samples", default="samples")
    ap.add_argument("--corpus", default=os.path.join(here, "corpus", "request"))
    ap.add_argument("--out", default=None, help="where a failing batch is saved")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 32)
    rng = random.Random(seed)
    print("live.py: seed %d, %g s or %d batches" % (seed, a.seconds, a.batches), flush=True)

    work = tempfile.mkdtemp(prefix="skeld-live.")
    try:
        d = Daemon(a.skeld, a.samples, work)
    except Failure as e:
        print("live.py: FAILED: %s" % e)
        return 1
    batch = []
    stats = {"batches": 0, "connections": 0, "bytes": 0}
    seen = {}  # replies by status
    try:
        ids = load_samples(d)
        seeds, skf = read_inputs(a, ids)
        mut = Mutator(rng, seeds, skf, sorted(ids.values()))
        end = time.monotonic() + a.seconds
        while stats["batches"] < a.batches and time.monotonic() < end:
            load_samples(d)  # a batch may have unloaded one
            batch = [mut.stream() for _ in range(rng.randrange(4, 17))]
            run_batch(d, batch, rng, seen)
            ping(d, b"batch %d" % stats["batches"])
            stats["batches"] += 1
            stats["connections"] += len(batch)
            stats["bytes"] += sum(map(len, batch))
        if not d.alive():
            raise Failure("skeld is not running at the end (status %s)" % d.proc.returncode)
        d.proc.send_signal(signal.SIGTERM)
        try:
            rc = d.proc.wait(30)
        except subprocess.TimeoutExpired:
            raise Failure("skeld did not exit within 30 s of SIGTERM")
        if rc != 0:
            raise Failure("skeld exited %d after SIGTERM" % rc)
        err = d.stderr()
        if any(m in err for m in SANITIZER_MARKS):
            raise Failure("a sanitizer report on skeld's stderr")
    except (Failure, OSError) as e:
        out = a.out or tempfile.mkdtemp(prefix="skeld-live-fail.")
        os.makedirs(out, exist_ok=True)
        for i, s in enumerate(batch):
            with open(os.path.join(out, "conn-%02d" % i), "wb") as f:
                f.write(s)
        if d.alive():
            d.proc.kill()
            d.proc.wait()
        err = d.stderr()
        with open(os.path.join(out, "skeld.stderr"), "w") as f:
            f.write(err)
        print("live.py: FAILED after %d batches (seed %d): %s" % (stats["batches"], seed, e))
        print("live.py: the batch's streams and skeld's stderr are in %s" % out)
        print("\n".join(err.splitlines()[-60:]))
        return 1
    finally:
        if d.alive():
            d.proc.kill()
            d.proc.wait()
    shutil.rmtree(work, ignore_errors=True)
    print("live.py: ok: %d batches, %d connections, %d bytes; PING answered after each, "
          "exit 0 on SIGTERM" % (stats["batches"], stats["connections"], stats["bytes"]))
    print("live.py: replies by status: " +
          ", ".join("%d: %d" % (k, seen[k]) for k in sorted(seen)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
