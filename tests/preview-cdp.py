"""preview-cdp.py SKELD ROOT UPLOAD TMP: the preview page (GET /) clicked and typed into in
headless Chromium (tests/helpers/cdp.py), against a skeld this script starts, stops and starts
again on the same port. Run by tests/preview-cdp.sh, which makes ROOT (robot.skf, and
one.skf whose Glitch is one frame long), UPLOAD (a robot.skf no other check loads) and
TMP/onebone.skf (a robot.skf of its root bone alone). The browser is $CHROMIUM (default
chromium).

While skeld is stopped this script holds its port (bound, not listening: a connection is
refused, as with nothing there), so that no other process is given it meanwhile. Should one
take it all the same (in the moment between the hold and skeld's bind), skeld cannot listen
on it again: the check under way is run again from its start, on a port skeld gets afresh
(the page's state lives on its origin, so a check cannot carry on elsewhere), at most three
times.

Checks, each on a page opened afresh:
  words       a count of one reads "1 frame" and "1 bone", and the ?file= entry of the list
              is isolated (U+2068 .. U+2069) as every name from a file or a URL is
  bad size    a bad size (0x0, abc) stops playing; a good one then plays again (and a
              change made while paused stays paused)
  unreachable skeld stopped: the frames of a new size fail, the status says so; skeld again
              on the port and Play: the frames play and the status no longer says they fail
  late give-up
              the frames of a new size unreachable (the page's requests failed through the
              Fetch domain) until frame 0 gives up, its siblings' last retries held; Play
              with skeld reachable, then the siblings give up: playing goes on
  error stays the frames of a new size failed through the Fetch domain, frame 0's held, until
              another gives up and stops playing: frame 0, arriving late, is drawn, but the
              status keeps the error; Play, and it says what plays
  lost upload skeld restarted (it forgets uploads) under a page playing a file uploaded from
              it: a new size, and then Refresh, send the file again and play on; Refresh says
              that it sent the file again
  resend fails
              skeld restarted under a page playing a file uploaded from it, the upload again
              refused (the Fetch domain answers its PUT 503): Refresh says that sending the
              file (named) again failed, and why (the answer's message)
  listed      two files uploaded from the page, then skeld restarted (it lost both): Refresh
              lists both (the page holds them; behind a cluster's HAProxy the list is one
              node's, which lacks uploads that live on other nodes); skeld restarted again,
              the first chosen from the list, with the browser's cache off, is sent again
              (the status says so) and plays
  cannot open an upload chosen from the list while skeld is down: "Cannot open" names the
              file, not its id
  insecure    the page on a host that is not loopback (an insecure context: no crypto.subtle)
              still uploads with PUT by the file's SHA-256, which a cluster's HAProxy routes
              (it refuses a POST), and plays the file
  port taken  another process listens on skeld's port while skeld is down: skeld cannot
              start on it, and the check runs again on a new port
Exit 0 if all passed, 1 if one failed, 77 if this skeld has no http listener, 99 on trouble
outside the page (skeld or the browser do not start, or another process took skeld's port
in each of a check's three runs)."""
import base64
import hashlib
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree (read-only in distcheck)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))
from cdp import Browser, CDPError, Timeout  # noqa: E402

skeld_bin, root, upload, tmp = sys.argv[1:5]
browser_bin = os.environ.get("CHROMIUM", "chromium")
TIMEOUT = 60  # seconds for any one wait: a loaded CI machine, or a sanitizer build
# A name that is not loopback, which Chromium resolves to 127.0.0.1: a page served from it is not
# a secure context (plain http off localhost), as a page reached over a LAN would be.
INSECURE_HOST = "skeld.test"


class Skip(Exception):
    pass


class PortTaken(Exception):
    """skeld could not listen on its port again: another process has it."""


class Skeld:
    """The daemon, on an http:// listener only; started again on the port it had, which this
    script holds while skeld is stopped."""

    def __init__(self):
        self.port = 0
        self.proc = None
        self.hold = None  # the port, bound while skeld is stopped
        self.moves = 0  # new ports taken in the check under way (main counts them)
        self.err = os.path.join(tmp, "skeld.err")

    def start(self):
        """Starts skeld on its port (a new one if that is 0); PortTaken if it is not free."""
        self.release()
        out = os.path.join(tmp, "skeld.out")
        with open(self.err, "ab") as e:
            seen = e.tell()  # what this start writes there comes after
        with open(out, "wb") as o, open(self.err, "ab") as e:
            self.proc = subprocess.Popen(
                [skeld_bin, "serve", "--listen", f"http://127.0.0.1:{self.port}", "--root", root],
                stdin=subprocess.DEVNULL, stdout=o, stderr=e)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            with open(out) as o:
                for line in o:
                    if line.startswith("listening http://127.0.0.1:"):
                        self.port = int(line.rsplit(":", 1)[1])
                        return
            if self.proc.poll() is not None:
                rc, self.proc = self.proc.returncode, None
                with open(self.err) as e:
                    e.seek(seen)
                    text = e.read()
                if self.port == 0 and "http://" in text:
                    raise Skip(f"this skeld has no http listener:\n{text}")
                if self.port and f"127.0.0.1:{self.port}: address already in use" in text:
                    raise PortTaken(f"port {self.port} taken while skeld was stopped")
                raise RuntimeError(f"skeld exited with status {rc}:\n{text}")
            time.sleep(0.1)
        raise RuntimeError(f"skeld did not say it listens within {TIMEOUT} s")

    def release(self):
        """Lets the port go (skeld binds it next)."""
        if self.hold:
            self.hold.close()
            self.hold = None

    def move(self):
        """The port is lost to another process: the next start gets a new one."""
        self.release()
        self.port = 0
        self.moves += 1

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"skeld did not exit within {TIMEOUT} s of SIGTERM")
        self.proc = None
        # Held until skeld starts again: a kernel handing out ports (to another test's port 0,
        # to an outgoing connection) passes over a bound one. SO_REUSEADDR: skeld's closed
        # connections may still hold the port in TIME_WAIT. Not listening: refused, as before.
        hold = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            hold.bind(("127.0.0.1", self.port))
            self.hold = hold
        except OSError:
            hold.close()  # taken already: start() will say so
        if rc != 0:
            raise RuntimeError(f"skeld exited with status {rc} after SIGTERM")

    def restart(self):
        self.stop()
        self.start()

    def running(self):
        return self.proc is not None

    def has(self, armature_id):
        """Whether skeld has the armature cached (a HEAD of it is not a 404)."""
        req = urllib.request.Request(f"{self.url()}/v1/armatures/{armature_id}", method="HEAD")
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT):
                return True
        except urllib.error.HTTPError as e:
            return e.code != 404

    def url(self):
        return f"http://127.0.0.1:{self.port}"


# The page, as JavaScript expressions.
STATUS = "document.getElementById('status').textContent"
PLAYED = "Number(document.body.dataset.framesPlayed)"
PLAYING = "document.getElementById('play').textContent === 'Pause'"
ISO = "\u2068{}\u2069"


def set_size(b, size):
    """Types a size and leaves the field, as a user would (its change event)."""
    b.evaluate("(() => { const s = document.getElementById('size'); "
               f"s.value = {json.dumps(size)}; s.dispatchEvent(new Event('change')); }})()")


def plays_on(b, what, frames=3):
    """Waits until the page is playing and has drawn `frames` more frames."""
    start = b.evaluate(PLAYED)
    b.wait_for(f"{PLAYING} && {PLAYED} >= {start + frames}", what)


def open_list(b, url):
    """Opens the page at url and waits until it has listed the armatures."""
    b.navigate(url)
    b.wait_for(f"!{STATUS}.startsWith('Loading')", "the list of armatures")


def open_playing(b, skeld, query):
    b.navigate(f"{skeld.url()}/?{query}")
    plays_on(b, f"/?{query} playing")


def check_words(b, skeld):
    b.navigate(f"{skeld.url()}/?file=one.skf&anim=Glitch")
    b.wait_for(f"{STATUS}.includes('Glitch')", "one.skf's Glitch chosen")
    wrong = []
    label = b.evaluate("[...document.getElementById('armature').options]"
                       ".find((o) => o.value === 'file:one.skf').text")
    if label != ISO.format("one.skf") + " (under skeld's root)":
        wrong.append(f"the ?file= entry of the list is {label!r}: not isolated")
    anims = b.evaluate("[...document.getElementById('anim').options].map((o) => o.text)")
    if ISO.format("Glitch") + " (1 frame, 24 fps)" not in anims or \
            ISO.format("Walk") + " (41 frames, 30 fps)" not in anims:
        wrong.append(f"the animations are listed as {anims!r}")
    status = b.evaluate(STATUS)
    if status != ISO.format("Glitch") + ": 1 frame at 24 fps, 128x128":
        wrong.append(f"the status says {status!r}")
    # a file of one bone, uploaded: its entry of the list counts it
    path = os.path.join(tmp, "onebone.skf")
    with open(path, "rb") as f:
        armature = hashlib.sha256(f.read()).hexdigest()
    b.set_files("#upload", [path])
    b.wait_for(f"document.getElementById('armature').value === 'id:{armature}'",
               "the file of one bone uploaded and chosen")
    label = b.evaluate("(() => { const s = document.getElementById('armature'); "
                       "return s.options[s.selectedIndex].text; })()")
    if not label.startswith(ISO.format(f"onebone.skf ({armature[:8]}\u2026)") + ": 1 bone; "):
        wrong.append(f"the file of one bone is listed as {label!r}")
    if wrong:
        raise AssertionError("; ".join(wrong))


def check_bad_size(b, skeld):
    open_playing(b, skeld, "file=robot.skf&anim=Walk&size=96x96")
    for bad in ("0x0", "abc"):
        set_size(b, bad)
        status = b.evaluate(STATUS)
        if "The size is width x height" not in status or b.evaluate(PLAYING):
            raise AssertionError(f"size {bad}: the page says {status!r}, playing: "
                                 f"{b.evaluate(PLAYING)}")
    set_size(b, "64x64")
    plays_on(b, "a good size after a bad one playing again")
    width = b.evaluate("document.getElementById('view').width")
    if width != 64:
        raise AssertionError(f"the picture drawn is {width} pixels wide, not 64")
    # paused, a bad size and then a good one: still paused
    b.evaluate("document.getElementById('play').click()")
    set_size(b, "0x0")
    set_size(b, "72x72")
    if b.evaluate(PLAYING):
        raise AssertionError("paused, a bad size then a good one: the page plays")


def check_unreachable(b, skeld):
    open_playing(b, skeld, "file=robot.skf&anim=Walk&size=96x96")
    skeld.stop()
    set_size(b, "80x80")  # frames the page does not have: asked of skeld, which is gone
    b.wait_for(f"{STATUS}.includes('could not be rendered')", "the status saying frames fail")
    skeld.start()
    b.evaluate("document.getElementById('play').click()")
    plays_on(b, "Play once skeld is back")
    summary = ISO.format("Walk") + ": 41 frames at 30 fps, 80x80"
    b.wait_for(f"{STATUS} === {json.dumps(summary)}",
               "playing again, the status saying what plays")


def max_retries(skeld):
    """The retries the page gives a frame before it gives up (app.js's MAX_RETRIES)."""
    with urllib.request.urlopen(f"{skeld.url()}/app.js", timeout=TIMEOUT) as r:
        found = re.search(r"const MAX_RETRIES = ([0-9]+);", r.read().decode())
    if not found:
        raise AssertionError("app.js has no MAX_RETRIES: this check must learn its retries")
    return int(found[1])


def check_late_give_up(b, skeld):
    retries = max_retries(skeld)
    open_playing(b, skeld, "file=robot.skf&anim=Walk&size=96x96")
    # The frames of a new size, as skeld's being unreachable would fail them (a frame is an
    # Image; when one fails the page fetch()es its URL to learn why, and retries while that
    # fails too). Frame 0's requests fail until it gives up; its siblings' too, but for the
    # fetch after their last retry, whose failure gives them up: it is held. Once frame 0 has
    # given up, the requests of the other frames (and later ones of these) reach skeld.
    held = {}  # frame -> its last fetch, held
    fetches = {}  # frame -> the fetches of it seen
    down = set()  # the frames whose requests fail: those asked for while all failed
    state = {"all down": True}

    def paused(params):
        request = params["requestId"]
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(params["request"]["url"]).query)
        f = int(query["frame"][0])
        if state["all down"]:
            down.add(f)
        if params["resourceType"] != "Image" and f in down:  # a fetch(): Chromium says XHR
            fetches[f] = fetches.get(f, 0) + 1
            if f != 0 and fetches[f] == retries + 1:
                held[f] = request
                return
        if f in down and f not in held and (state["all down"] or f != 0):
            b.post("Fetch.failRequest", {"requestId": request, "errorReason": "ConnectionRefused"})
        else:
            b.post("Fetch.continueRequest", {"requestId": request})

    b.handlers["Fetch.requestPaused"] = paused
    b.send("Fetch.enable", {"patterns": [{"urlPattern": "*/render.png?*"}]})
    try:
        set_size(b, "88x88")  # a size no other check asks for: nothing of it in the cache
        b.wait_for(f"{STATUS}.startsWith('Frame 0 could not be rendered')", "frame 0 given up")
        if b.evaluate(PLAYING):
            raise AssertionError("frame 0 gave up, and the page plays on")
        state["all down"] = False
        b.wait_until(lambda: down - {0} <= held.keys(), "the other frames at their last retry")
        if not held:
            raise AssertionError("no frame was asked for beside frame 0: nothing to check")
        b.evaluate("document.getElementById('play').click()")
        summary = ISO.format("Walk") + ": 41 frames at 30 fps, 88x88"
        b.wait_for(f"{STATUS} === {json.dumps(summary)}", "Play: frame 0 drawn")
        start = b.evaluate(PLAYED)
        for request in held.values():  # their last retries fail: they give up
            b.send("Fetch.failRequest", {"requestId": request, "errorReason": "ConnectionRefused"})
        # the next frames (1, 2, 3) are drawn only once they gave up and were asked for again
        b.wait_for(f"!({PLAYING}) || {PLAYED} >= {start + 5}",
                   "frames played on after the older give-ups, or playing stopped")
        if not b.evaluate(PLAYING):
            raise AssertionError(f"frames {sorted(held)}, given up after Play, stopped playing: "
                                 f"{b.evaluate(STATUS)!r}")
        status = b.evaluate(STATUS)
        if status != summary:
            raise AssertionError(f"playing on, the status says {status!r}")
    finally:
        del b.handlers["Fetch.requestPaused"]
        b.send("Fetch.disable")  # what is held goes on


def check_error_stays(b, skeld):
    retries = max_retries(skeld)
    open_playing(b, skeld, "file=robot.skf&anim=Walk&size=96x96")
    # The frames of a new size: frame 0's request held, the others failed (as skeld's being
    # unreachable would fail them) until one of them gives up and stops playing; from that
    # failure on every request is held, so that no other frame gives up. Then frame 0 arrives,
    # late: it is drawn, and the status keeps the error, nothing playing.
    held = []  # (frame, request) of the requests held
    fetches = {}  # frame -> the fetches of it seen (a frame that fails fetch()es its URL)
    state = {"given up": None}  # the frame whose last fetch failed

    def paused(params):
        request = params["requestId"]
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(params["request"]["url"]).query)
        f = int(query["frame"][0])
        if f == 0 or state["given up"] is not None:
            held.append((f, request))
            return
        if params["resourceType"] != "Image":  # a fetch(): Chromium says XHR
            fetches[f] = fetches.get(f, 0) + 1
            if fetches[f] == retries + 1:  # its last: failed, it gives up
                state["given up"] = f
        b.post("Fetch.failRequest", {"requestId": request, "errorReason": "ConnectionRefused"})

    b.handlers["Fetch.requestPaused"] = paused
    b.send("Fetch.enable", {"patterns": [{"urlPattern": "*/render.png?*"}]})
    try:
        set_size(b, "84x84")  # a size no other check asks for: nothing of it in the cache
        b.wait_until(lambda: state["given up"] is not None, "a frame at its last retry")
        said = f"Frame {state['given up']} could not be rendered: "
        error = b.wait_for(f"{STATUS}.startsWith({json.dumps(said)}) && {STATUS}",
                           "a frame given up")
        if b.evaluate(PLAYING):
            raise AssertionError(f"a frame gave up, and the page plays on: {error!r}")
        first = [request for f, request in held if f == 0]
        if len(first) != 1:
            raise AssertionError(f"frame 0 asked for {len(first)} times, not once")
        b.send("Fetch.continueRequest", {"requestId": first[0]})
        # drawn in the handler that says the status, after it: one evaluation reads both
        status = b.wait_for(f"document.getElementById('view').width === 84 && {STATUS}",
                            "frame 0 arrived late and drawn")
        if status != error or b.evaluate(PLAYING):
            raise AssertionError(f"frame 0 arrived after frame {state['given up']} gave up: "
                                 f"the status says {status!r}, not {error!r}; playing: "
                                 f"{b.evaluate(PLAYING)}")
        # Play, then what is held goes on: the frames play and the status says what plays
        b.evaluate("document.getElementById('play').click()")
        del b.handlers["Fetch.requestPaused"]
        b.send("Fetch.disable")
        plays_on(b, "Play after the error")
        summary = ISO.format("Walk") + ": 41 frames at 30 fps, 84x84"
        b.wait_for(f"{STATUS} === {json.dumps(summary)}",
                   "playing again, the status saying what plays")
    finally:
        if b.handlers.pop("Fetch.requestPaused", None):
            b.send("Fetch.disable")  # what is held goes on


def check_lost_upload(b, skeld):
    open_list(b, f"{skeld.url()}/")
    b.set_files("#upload", [upload])
    plays_on(b, "the uploaded file playing")
    choice = b.evaluate("document.getElementById('armature').value")
    if not choice.startswith("id:"):
        raise AssertionError(f"playing the upload, the list has {choice!r} chosen")
    armature = choice[3:]
    skeld.restart()
    if skeld.has(armature):
        raise AssertionError("a restarted skeld still has the upload: nothing to check")
    set_size(b, "72x72")  # frames the page does not have: asked of skeld, which lost the file
    plays_on(b, "frames of an upload skeld lost")
    b.wait_for(f"{STATUS}.endsWith(': 49 frames at 24 fps, 72x72')",
               "playing again, the status saying what plays")
    # Refresh finds it missing from the list, and sends it again too
    skeld.restart()
    b.evaluate("document.getElementById('refresh').click()")
    b.wait_until(lambda: skeld.has(armature), "Refresh sending the upload again")
    b.wait_for(f"document.getElementById('armature').value === {json.dumps(choice)}",
               "the upload chosen in the list again")
    plays_on(b, "the upload playing after Refresh")
    said = "skeld lost " + ISO.format("upload.skf") + ": sent it again."
    b.wait_for(f"{STATUS} === {json.dumps(said)}", "Refresh saying it sent the upload again")


def check_resend_fails(b, skeld):
    path, armature = variant("refused")
    open_list(b, f"{skeld.url()}/")
    b.set_files("#upload", [path])
    plays_on(b, "the upload playing")
    # Its upload again refused with skeld's kind of error; its frames held (one that found it
    # missing would send it again too, and say so), so that what Refresh says is what is read.
    refused = "preview-cdp refuses this upload"

    def paused(params):
        request, method = params["requestId"], params["request"]["method"]
        if "/render.png?" in params["request"]["url"]:
            return  # held
        if method == "PUT":
            body = json.dumps({"error": "unavailable", "message": refused}).encode()
            b.post("Fetch.fulfillRequest", {
                "requestId": request, "responseCode": 503,
                "responseHeaders": [{"name": "Content-Type", "value": "application/json"}],
                "body": base64.b64encode(body).decode()})
        else:
            b.post("Fetch.continueRequest", {"requestId": request})

    b.handlers["Fetch.requestPaused"] = paused
    b.send("Fetch.enable", {"patterns": [{"urlPattern": "*/render.png?*"},
                                         {"urlPattern": f"*/v1/armatures/{armature}"}]})
    try:
        skeld.restart()
        if skeld.has(armature):
            raise AssertionError("a restarted skeld still has the upload: nothing to check")
        b.evaluate("document.getElementById('refresh').click()")
        # the upload is no longer on show: nothing of it plays
        b.wait_for("document.getElementById('playback').disabled",
                   "Refresh done with the upload it could not send again")
        status = b.evaluate(STATUS)
        said = f"skeld lost {ISO.format('refused.skf')}, and sending it again failed: {refused}"
        if status != said or b.evaluate(PLAYING):
            raise AssertionError(f"the upload not sent again, Refresh says {status!r}; playing: "
                                 f"{b.evaluate(PLAYING)}")
    finally:
        del b.handlers["Fetch.requestPaused"]
        b.send("Fetch.disable")  # what is held goes on


def variant(name):
    """A copy of the upload with bytes of its own (a zip comment): (its path, its id)."""
    buf = io.BytesIO(open(upload, "rb").read())
    with zipfile.ZipFile(buf, "a") as z:
        z.comment = b"preview-cdp " + name.encode()
    path = os.path.join(tmp, name + ".skf")
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    return path, hashlib.sha256(buf.getvalue()).hexdigest()


OPTIONS = "[...document.getElementById('armature').options].map((o) => o.value)"


def check_listed(b, skeld):
    open_list(b, f"{skeld.url()}/")
    ids = []
    for name in ("first", "second"):
        path, armature = variant(name)
        b.set_files("#upload", [path])
        b.wait_for(f"document.getElementById('armature').value === 'id:{armature}'",
                   f"the {name} upload chosen")
        plays_on(b, f"the {name} upload playing")
        ids.append(armature)
    skeld.restart()
    # the list emptied first, so that what Refresh lists is told from what was there
    b.evaluate("[...document.getElementById('armature').options]"
               ".filter((o) => o.value.startsWith('id:')).forEach((o) => o.remove())")
    b.evaluate("document.getElementById('refresh').click()")
    b.wait_for(f"{OPTIONS}.includes('id:{ids[1]}')", "the upload on show listed again")
    if f"id:{ids[0]}" not in b.evaluate(OPTIONS):
        raise AssertionError("Refresh lists the upload on show (sent again), not the one "
                             "uploaded before it")
    # Chosen again once skeld lost it: the browser's cache off, as once it dropped the answers,
    # so that skeld is asked for the armature (it answered for it, immutable, while it held it).
    skeld.restart()
    b.send("Network.enable")
    b.send("Network.setCacheDisabled", {"cacheDisabled": True})
    try:
        b.evaluate("(() => { const s = document.getElementById('armature'); "
                   f"s.value = 'id:{ids[0]}'; s.dispatchEvent(new Event('change')); }})()")
        b.wait_for(f"{PLAYING} || {STATUS}.startsWith('Cannot open')",
                   "the first upload opened, or not")
        if not b.evaluate(PLAYING):
            raise AssertionError("an upload skeld lost, chosen from the list: "
                                 f"{b.evaluate(STATUS)!r}")
        plays_on(b, "the first upload, sent again, playing")
        status = b.evaluate(STATUS)
        if not status.endswith(" (skeld lost " + ISO.format("first.skf") + ": sent it again)"):
            raise AssertionError(f"the first upload sent again, the status says {status!r}")
    finally:
        b.send("Network.setCacheDisabled", {"cacheDisabled": False})
        b.send("Network.disable")


def check_insecure(b, skeld):
    # bytes of their own: one PUT of them, in this check only
    path, armature = variant("insecure")
    b.navigate(f"http://{INSECURE_HOST}:{skeld.port}/")
    if b.evaluate("window.isSecureContext"):
        raise AssertionError(f"http://{INSECURE_HOST}/ is a secure context: nothing to check")
    b.wait_for(f"!{STATUS}.startsWith('Loading')", "the list of armatures")
    b.set_files("#upload", [path])
    plays_on(b, "the file uploaded from an insecure context playing")
    with open(skeld.err) as e:
        log = e.read()
    if f"method=PUT path=/v1/armatures/{armature} status=201" not in log:
        posted = "method=POST path=/v1/armatures " in log
        raise AssertionError("the upload was not a PUT by its SHA-256 (%s)" %
                             ("it was a POST" if posted else "no PUT of it in skeld's log"))


def check_cannot_open(b, skeld):
    path, armature = variant("named")
    open_list(b, f"{skeld.url()}/")
    b.set_files("#upload", [path])
    plays_on(b, "the upload playing")
    skeld.stop()
    # the browser's cache off, which would answer for the armature without skeld
    b.send("Network.enable")
    b.send("Network.setCacheDisabled", {"cacheDisabled": True})
    try:
        for choice in ("", f"id:{armature}"):
            b.evaluate("(() => { const s = document.getElementById('armature'); "
                       f"s.value = '{choice}'; s.dispatchEvent(new Event('change')); }})()")
        status = b.wait_for(f"{STATUS}.startsWith('Cannot open') && {STATUS}",
                            "the upload chosen while skeld is down")
        label = b.evaluate("document.getElementById('view').getAttribute('aria-label')")
        said = "Cannot open " + ISO.format("named.skf")
        if not status.startswith(said + ": ") or label != said:
            raise AssertionError(f"the status says {status!r}, the picture {label!r}")
    finally:
        b.send("Network.setCacheDisabled", {"cacheDisabled": False})
        b.send("Network.disable")


def check_port_taken(b, skeld):
    open_playing(b, skeld, "file=robot.skf&anim=Walk&size=64x64")
    if skeld.moves:
        return  # the check run again on a new port: the page plays there
    skeld.stop()
    skeld.release()  # the moment between the hold and skeld's bind
    thief = socket.create_server(("127.0.0.1", skeld.port))
    try:
        skeld.start()  # PortTaken: main moves skeld to a new port, and runs this again
    finally:
        thief.close()
    raise AssertionError(f"skeld started on port {skeld.port}, which another process listens on")


CHECKS = [("words", check_words), ("bad size", check_bad_size), ("unreachable", check_unreachable),
          ("late give-up", check_late_give_up), ("error stays", check_error_stays),
          ("lost upload", check_lost_upload), ("resend fails", check_resend_fails),
          ("listed", check_listed), ("cannot open", check_cannot_open),
          ("insecure", check_insecure), ("port taken", check_port_taken)]
PORT_TRIES = 3  # runs of one check, each on a new port when another process took skeld's


def main():
    skeld = Skeld()
    try:
        skeld.start()
    except Skip as e:
        print(f"preview-cdp: {e}: skipped")
        return 77
    failed = 0
    home = os.path.join(tmp, "home")
    os.makedirs(home, exist_ok=True)
    try:
        with Browser(browser_bin, os.path.join(tmp, "profile"), os.path.join(tmp, "browser.err"),
                     home=home, timeout=TIMEOUT,
                     args=[f"--host-resolver-rules=MAP {INSECURE_HOST} 127.0.0.1"]) as b:
            for name, check in CHECKS:
                skeld.moves = 0
                result = run(b, skeld, name, check)
                while result is None:
                    if skeld.moves == PORT_TRIES - 1:
                        raise RuntimeError(f"{name}: skeld's port taken {PORT_TRIES} times")
                    skeld.move()
                    result = run(b, skeld, name, check)
                failed |= result
    finally:
        if skeld.running():
            skeld.stop()
        skeld.release()
    return failed


def run(b, skeld, name, check):
    """Runs one check and says how it went: 0 passed, 1 failed, None to run it again on a new
    port (another process took skeld's while skeld was stopped)."""
    b.errors.clear()
    try:
        if not skeld.running():
            skeld.start()
        check(b, skeld)
        print(f"preview-cdp: {name}: ok")
        return 0
    except PortTaken as e:
        print(f"preview-cdp: {name}: {e}: run again on a new port")
        return None
    except (AssertionError, Timeout, CDPError) as e:
        print(f"preview-cdp: {name}: FAILED: {e}")
        try:
            print(f"  the status says: {b.evaluate(STATUS)!r}")
        except (Timeout, CDPError) as e2:
            print(f"  the page cannot be read: {e2}")
        for err in b.errors:
            print(f"  the page: {err}")
        return 1


if __name__ == "__main__":
    # `timeout` ending this script: skeld and the browser stopped too (the finally clauses)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(99))
    try:
        sys.exit(main())
    except (RuntimeError, OSError, CDPError, Timeout) as e:
        print(f"preview-cdp: {e}")
        sys.exit(99)
