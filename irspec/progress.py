"""Progress of long work on standard error, shown only when standard error is a terminal.

>>> with Progress("evaluating runs", total=len(runs)) as progress:   # doctest: +SKIP
...     for run in runs:
...         progress.update(detail=run)
...         evaluate(run)
...         progress.advance()

One line, redrawn in place (``irspec: evaluating runs 3/10 dense``) at most ten times a second and
erased when the work is done, so the terminal is left as it was. When standard error is not a terminal
(a pipe, a log file, a test's capture) nothing at all is written: logs and pipes stay clean.
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO, Any

__all__ = ["Progress", "terminal_columns"]


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


class Progress:
    """A one-line progress display for ``label`` (``total`` steps, if known) on ``stream``
    (default :data:`sys.stderr`); silent unless the stream is a terminal."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        detail: str = "",
        stream: IO[str] | None = None,
        interval: float = 0.1,
    ) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.detail = detail
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream)
        self._interval = interval
        self._last = -float("inf")
        self._width = 0  # length of the line on screen, to erase it

    def update(self, done: int | None = None, *, detail: str | None = None, label: str | None = None) -> None:
        """Set the steps done (and what is being worked on), and redraw if it is time to."""
        if done is not None:
            self.done = done
        if detail is not None:
            self.detail = detail
        if label is not None:
            self.label = label
        self._draw(force=done is not None and done == self.total)

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more steps done."""
        self.update(self.done + steps)

    def close(self) -> None:
        """Erase the line (the work is over, and what it printed is no longer news)."""
        if self.enabled and self._width:
            self._write("\r" + " " * self._width + "\r")
            self._width = 0

    def __enter__(self) -> Progress:
        self._draw(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _draw(self, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self._interval:
            return
        self._last = now
        count = (
            f" {self.done}/{self.total}" if self.total is not None else (f" {self.done}" if self.done else "")
        )
        text = f"irspec: {self.label}{count}" + (f" {self.detail}" if self.detail else "")
        width = terminal_columns() - 1
        if len(text) > width:
            text = text[: max(width - 3, 0)] + "..."
        self._write("\r" + text.ljust(self._width))
        self._width = len(text)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal must not fail the evaluation
            self.enabled = False


def terminal_columns() -> int:
    """The terminal's width in columns, as ``shutil.get_terminal_size().columns`` gives it: ``COLUMNS``
    when it is a number above 0, else the width of the terminal standard output writes to, else 80.
    Read without importing shutil, whose import brings zlib, bz2 and lzma (~1.5 ms of a small
    evaluation, which argparse would pay as it adds the first option: ``irspec.cli``'s parser)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80
