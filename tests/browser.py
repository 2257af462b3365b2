"""Headless Chromium for the tests that look at an HTML page: found on the PATH, and a page's DOM
after its scripts ran (the tests add a script to a copy of the page that writes what it measured)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def chromium() -> str | None:
    """The Chromium (or Chrome) executable, or None when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def dump_dom(page: Path, *flags: str) -> str:
    """The DOM of ``page`` once loaded in headless Chromium (with ``flags``: a window size, a virtual
    time budget for the load event's scripts)."""
    browser = chromium()
    assert browser is not None
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    ).stdout
