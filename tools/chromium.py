"""A small driver for headless Chromium over the DevTools protocol, with no network.

The slide checker and the token-picture screenshots need a real browser: only layout tells
whether a slide overflows or a glyph is drawn. Debian's ``chromium`` package is enough; no
Python package is needed, because Chromium speaks its DevTools protocol over two pipes
(``--remote-debugging-pipe``: commands on file descriptor 3, answers on 4, each message a
JSON object ended by a NUL byte), so not even a local port is opened.

The browser runs with a fresh profile and with name lookups and background services off, and
the driver records every URL a page requests, so a caller can prove a page loaded nothing but
``file:`` and ``data:`` URLs.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Flags for a browser that reaches nothing outside the machine and keeps no state.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # running as root in a container
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
    # Every host name fails to resolve, so a stray CDN URL fails fast instead of hanging;
    # only the loopback address stays reachable (a local Jupyter server, for RISE).
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--remote-debugging-pipe",
)

#: URL schemes a page may load from without touching the network.
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome-error:")


class ChromiumError(RuntimeError):
    """The browser is missing, died, or did not answer in time."""


def find_chromium() -> str | None:
    """The path of a Chromium binary, or None when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Page:
    """One browser tab: navigate, run JavaScript, take screenshots."""

    def __init__(self, browser: Chromium, session_id: str) -> None:
        self.browser = browser
        self.session_id = session_id

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, session_id=self.session_id)

    def set_size(self, width: int, height: int) -> None:
        """Make the visible area exactly ``width`` x ``height`` CSS pixels."""
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def evaluate(self, expression: str, timeout: float = 60.0) -> Any:
        """The value of a JavaScript expression (a promise is awaited); errors raise."""
        reply = self.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            session_id=self.session_id,
            timeout=timeout,
        )
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise ChromiumError(f"JavaScript error: {text}")
        return reply["result"].get("value")

    def goto(self, url: str, ready: str = "true", timeout: float = 60.0) -> None:
        """Open ``url`` and wait until the page has loaded and ``ready`` is truthy."""
        self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + timeout
        condition = f"document.readyState === 'complete' && !!({ready})"
        while True:
            try:
                if self.evaluate(condition, timeout=timeout):
                    break
            except ChromiumError:
                pass  # the old document is going away, or the new one is not ready yet
            if time.monotonic() > deadline:
                raise ChromiumError(f"{url} was not ready after {timeout:.0f} s ({ready})")
            time.sleep(0.1)
        # Fonts and images change the layout; measure after they are in.
        self.evaluate(
            "Promise.all([document.fonts.ready, ...Array.from(document.images, im => "
            "im.complete ? null : new Promise(ok => { im.onload = im.onerror = ok; }))])"
            ".then(() => true)"
        )

    def screenshot(self, path: str | os.PathLike[str]) -> Path:
        """Save what the tab shows as a PNG."""
        reply = self.send("Page.captureScreenshot", {"format": "png"})
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(base64.b64decode(reply["data"]))
        return target

    def requested_urls(self) -> list[str]:
        """Every URL this tab asked for, in order, except inline ``data:`` URLs."""
        return [url for url in self.browser.requests.get(self.session_id, [])
                if not url.startswith("data:")]

    def remote_urls(self) -> list[str]:
        """The requested URLs that are not local files or inline data."""
        return [url for url in self.requested_urls() if not url.startswith(LOCAL_SCHEMES)]

    def errors(self) -> list[str]:
        """Uncaught JavaScript errors and failed loads reported so far."""
        return self.browser.errors.get(self.session_id, [])


class Chromium:
    """A headless Chromium process driven over pipes; use :func:`launch`."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def wire_pipes() -> None:  # runs in the child, before exec
            inbox, outbox = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(inbox, 3)
            os.dup2(outbox, 4)

        self.process = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(3, 4),
            preexec_fn=wire_pipes,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.requests: dict[str, list[str]] = {}
        self.errors: dict[str, list[str]] = {}

    # The protocol -----------------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, *,
             session_id: str | None = None, timeout: float = 60.0) -> dict[str, Any]:
        """Send one command and return its result, handling events that arrive meanwhile."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline, method)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise ChromiumError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if "method" in reply:
                self._on_event(reply)

    def _read(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise ChromiumError(f"Chromium did not answer {waiting_for} in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise ChromiumError(f"Chromium exited while waiting for {waiting_for}: "
                                    f"{self._stderr_tail()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _on_event(self, event: dict[str, Any]) -> None:
        session = event.get("sessionId", "")
        params = event.get("params", {})
        if event["method"] == "Network.requestWillBeSent":
            self.requests.setdefault(session, []).append(params["request"]["url"])
        elif event["method"] == "Network.loadingFailed" and not params.get("canceled"):
            self.errors.setdefault(session, []).append(
                f"load failed ({params.get('errorText')}), request {params.get('requestId')}")
        elif event["method"] == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.setdefault(session, []).append(f"uncaught: {text}")

    def _stderr_tail(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return "(still running)"
        return self.process.stderr.read().decode(errors="replace")[-2000:]

    # Tabs ---------------------------------------------------------------------------------

    def new_page(self, width: int = 1280, height: int = 720) -> Page:
        """A fresh tab of the given size that records its requests and errors."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        page = Page(self, session["sessionId"])
        for domain in ("Page", "Runtime", "Network"):
            page.send(f"{domain}.enable")
        page.set_size(width, height)
        return page

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                try:
                    self.send("Browser.close", timeout=5)
                except (ChromiumError, OSError):
                    pass
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        finally:
            for fd in (self._to_browser, self._from_browser):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if self.process.stderr is not None:
                self.process.stderr.close()


@contextmanager
def launch(binary: str | None = None) -> Iterator[Chromium]:
    """Start headless Chromium with a fresh profile; stop it and delete the profile after."""
    binary = binary or find_chromium()
    if binary is None:
        raise ChromiumError("Chromium is not installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="bpe-course-chromium-") as profile:
        browser = Chromium(binary, Path(profile))
        try:
            browser.send("Browser.getVersion", timeout=60)
            yield browser
        finally:
            browser.close()
