"""cdp.py: headless Chromium driven through the Chrome DevTools Protocol, standard library
only, for the tests that must click and type in the preview page (a DOM dump cannot).

Chromium started with --remote-debugging-pipe reads CDP messages (JSON, each ended by a NUL
byte) on its descriptor 3 and writes its replies and events on descriptor 4: no port, no
WebSocket. One page is opened and attached to with flatten=True, so its commands go over the
same pipe with a sessionId.

    with Browser("chromium", "/tmp/profile", "/tmp/browser.err") as b:
        b.navigate("http://127.0.0.1:8080/")
        b.wait_for("document.body.dataset.framesPlayed > 5", "5 frames played")

A handler answers an event as it is read, whatever is awaited then: with Fetch.enable,
b.handlers["Fetch.requestPaused"] = fn holds the page's requests for fn to fail, continue or
keep (answering with b.post, which awaits no reply).

Every wait has a deadline (Timeout names what was awaited); none sleeps for a fixed time."""
import fcntl
import json
import os
import select
import subprocess
import time


class Timeout(Exception):
    pass


class CDPError(Exception):
    pass


class Browser:
    def __init__(self, binary, profile, log, home=None, timeout=60, args=()):
        """args: more of Chromium's switches, such as --host-resolver-rules."""
        self.timeout = timeout  # seconds any one reply or wait may take
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def descriptors():  # in the child, before exec: its 3 and 4 are the pipe's ends
            # copied above 4 first, so that neither dup2 below is onto itself (which would keep
            # the close-on-exec flag os.pipe sets); the copies themselves close at exec
            r = fcntl.fcntl(to_r, fcntl.F_DUPFD_CLOEXEC, 10)
            w = fcntl.fcntl(from_w, fcntl.F_DUPFD_CLOEXEC, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        env = dict(os.environ)
        if home:
            env["HOME"] = home
        self.log = open(log, "wb")  # the browser's own messages
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", *args, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=env,
            close_fds=False, preexec_fn=descriptors)
        os.close(to_r)
        os.close(from_w)
        self.next_id = 0
        self.buf = b""
        self.events = []  # (method, params) not read yet
        self.errors = []  # what the page threw or logged as an error, for a failure's report
        self.handlers = {}  # event method -> a function of its params, called as it is read
        self.posted = set()  # ids of commands sent by post(), whose replies no one awaits
        self.session = None
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                     browser=True)["sessionId"]
            self.send("Page.enable")
            self.send("Runtime.enable")
        except BaseException:
            self.close()  # no browser left running behind a failed start
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.send("Browser.close", browser=True, timeout=10)
            except (CDPError, Timeout, OSError):
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self.to_w, self.from_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()

    def _read(self, deadline):
        """Reads one message from the browser; None when the deadline passed first."""
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                return None
            chunk = os.read(self.from_r, 65536)
            if not chunk:
                raise CDPError(f"the browser closed its pipe (status {self.proc.poll()})")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        msg = json.loads(msg)
        if "id" not in msg:
            self._event(msg)
        elif msg["id"] in self.posted:
            self.posted.discard(msg["id"])
            if "error" in msg:
                self.errors.append(f"a posted command: {msg['error'].get('message')}")
        return msg

    def _event(self, msg):
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.errors.append(d.get("exception", {}).get("description") or d.get("text"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(" ".join(str(a.get("value", a.get("description")))
                                        for a in params.get("args", [])))
        self.events.append((method, params))
        if method in self.handlers:
            self.handlers[method](params)

    def _write(self, method, params, browser):
        """Sends a command and returns its id."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.to_w, data):]
        return msg["id"]

    def post(self, method, params=None):
        """Sends a command to the page without awaiting its reply (an error in it is kept in
        self.errors): what an event handler may send, being called while another command's
        reply is awaited."""
        self.posted.add(self._write(method, params, False))

    def send(self, method, params=None, browser=False, timeout=None):
        """Sends a command (to the page unless `browser`) and returns its result."""
        msg = {"id": self._write(method, params, browser)}
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read(deadline)
            if reply is None:
                raise Timeout(f"no reply to {method} within {timeout or self.timeout} s")
            if reply.get("id") == msg["id"]:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})

    def wait_event(self, method, what, timeout=None):
        """Waits for the event `method` (one that came since the last wait counts)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for k, (m, params) in enumerate(self.events):
                if m == method:
                    del self.events[:k + 1]
                    return params
            self.events.clear()
            if self._read(deadline) is None:
                raise Timeout(f"{what}: no {method} within {timeout or self.timeout} s")

    def navigate(self, url):
        self.events.clear()
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise CDPError(f"cannot open {url}: {result['errorText']}")
        self.wait_event("Page.loadEventFired", f"loading {url}")

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            d = result["exceptionDetails"]
            raise CDPError(f"{expression}: {d.get('exception', {}).get('description') or d}")
        return result["result"].get("value")

    def wait_for(self, expression, what, timeout=None):
        """Polls the expression every 0.1 s until it is truthy, and returns its value."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() >= deadline:
                raise Timeout(f"{what}: not within {timeout or self.timeout} s")
            # not a sleep: the pipe is read meanwhile, so events and errors are kept
            self._read(min(deadline, time.monotonic() + 0.1))

    def wait_until(self, predicate, what, timeout=None):
        """Reads the pipe (so handlers run) until predicate() is true."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while not predicate():
            if time.monotonic() >= deadline:
                raise Timeout(f"{what}: not within {timeout or self.timeout} s")
            self._read(min(deadline, time.monotonic() + 0.1))

    def set_files(self, selector, paths):
        """Chooses files in an <input type=file>, as the file picker would (change fires)."""
        root = self.send("DOM.getDocument")["root"]["nodeId"]
        node = self.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        self.send("DOM.setFileInputFiles", {"nodeId": node, "files": paths})
