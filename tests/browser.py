"""Headless Chromium for the tests that look at an HTML page: found on the PATH; a page's DOM after its
scripts ran (:func:`dump_dom`: the tests add a script to a copy of the page that writes what it
measured); and :class:`Browser`, a page driven through the DevTools protocol over a pipe (no driver, no
package beyond the standard library): open, evaluate JavaScript, wait, take screenshots, collect errors.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def chromium() -> str | None:
    """The Chromium (or Chrome) executable, or None when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def headless(page: Path, *flags: str, text: bool = True) -> subprocess.CompletedProcess:
    """One headless Chromium run on ``page`` with ``flags`` (``--dump-dom``, ``--screenshot=...``, a
    window size), its profile in a folder beside the page: without one, Chromium leaves a folder of
    its own in the system's temporary directory after every run."""
    browser = chromium()
    assert browser is not None
    profile = page.parent / "chromium-profile"
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile}",
            *flags,
            page.as_uri(),
        ],
        capture_output=True,
        text=text,
        timeout=180,
        check=False,
    )


def dump_dom(page: Path, *flags: str) -> str:
    """The DOM of ``page`` once loaded in headless Chromium (with ``flags``: a window size, a virtual
    time budget for the load event's scripts)."""
    return headless(page, *flags, "--dump-dom").stdout


# A promise of a condition's first truthy value, or null after a number of milliseconds; an exception
# (the page's script not there yet) counts as false.
_POLLED = """new Promise(resolve => { const end = performance.now() + %s;
  const check = () => { let value = null; try { value = (%s); } catch (e) {}
    if (value || performance.now() >= end) resolve(value || null); else setTimeout(check, 10); };
  check(); })"""


class Browser:
    """Headless Chromium over ``--remote-debugging-pipe``: DevTools messages as NUL-terminated JSON on
    file descriptors 3 (to the browser) and 4 (from it). A page's console errors, uncaught exceptions
    and the browser's own error reports (a content security policy's refusals among them) are kept in
    :attr:`errors`, in order."""

    def __init__(self, executable: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the browser expects its ends as fds 3 and 4: bash puts them there and closes the originals
        moves = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w}'
        moves += "".join(f" {fd}>&-" for fd in (to_browser_r, from_browser_w) if fd not in (3, 4))
        self.process = subprocess.Popen(
            [
                "bash",
                "-c",
                moves,
                executable,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "--no-first-run",
                "about:blank",
            ],
            pass_fds=(to_browser_r, from_browser_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer, self._next = b"", 0
        self.errors: list[str] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)
        self.call("Log.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=1280,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )

    def call(self, method: str, session: bool = False, **params):
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                self._note(reply)
                if reply.get("id") == self._next:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += chunk
        raise TimeoutError(method)

    def _note(self, message: dict) -> None:
        """Keep an event that reports an error."""
        params = message.get("params", {})
        method = message.get("method")
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(
                " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            )
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(
                details.get("exception", {}).get("description") or details.get("text", "exception")
            )
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(params["entry"].get("text", "error"))

    def js(self, expression: str):
        """The value of a JavaScript expression (awaited if a promise) in the page."""
        result = self.call(
            "Runtime.evaluate", session=True, expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, condition: str, timeout: float = 30.0):
        """Poll a JavaScript condition until it is truthy; its value.

        The page polls it itself (every 10 ms, in a promise this call awaits), so the wait ends as soon
        as the condition holds: polled from here every 0.2 s, a wait outlasted its condition by 0.1 s on
        average, the test's core idle (issue 35: the site's and the report's browser tests took 1.3x the
        wall time)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                value = self.js(_POLLED % (round(left * 1000), condition))
            except RuntimeError:  # the page is between documents: its context went with the old one
                value = None
                time.sleep(0.01)
            if value:
                return value
        raise TimeoutError(condition)

    def open(self, url: str) -> None:
        self.call("Page.navigate", session=True, url=url)
        self.wait_for(
            f"document.readyState === 'complete' && location.href.startsWith({json.dumps(url.split('#')[0])})"
        )

    def screenshot(self, path: Path, *, full: bool = False) -> None:
        """A PNG of the window, or with ``full`` of the whole page (its full height at the window's width)."""
        extra = {"captureBeyondViewport": True} if full else {}
        if full:
            width, height = self.js(
                "[document.documentElement.clientWidth, document.documentElement.scrollHeight]"
            )
            extra["clip"] = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
        data = self.call("Page.captureScreenshot", session=True, format="png", **extra)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        # Asked to close, the browser removes the folder of its profile's lock socket, which it keeps in
        # the system's temporary directory; terminated, it leaves the folder there.
        with contextlib.suppress(RuntimeError):  # it closed the pipe before it answered
            self.call("Browser.close")
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            self.process.wait(timeout=30)
        os.close(self._to_browser)
        os.close(self._from_browser)


def started(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """A :class:`Browser` for a module's tests, closed after them (a fixture's body: ``yield from``);
    the tests skip when no Chromium is installed."""
    executable = chromium()
    if executable is None:
        pytest.skip("no headless Chromium installed")
    b = Browser(executable, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()
