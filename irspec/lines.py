"""Lines of bounded length: input read a piece at a time and refused at the first line too long to be text.

A TREC line is a few dozen bytes, a JSON Lines record of a search session a few kilobytes. Binary data
(a file of NUL bytes, ``/dev/zero``, an image given by mistake) has no line ends, or lines of
megabytes: held whole, one line can take all memory before any parser sees it (an endless one, from
a device or a pipe, takes the machine down), and quoted whole it makes an error message of hundreds
of megabytes. So every reader of lines goes through this module, which raises an
:class:`~irspec.errors.InputError` naming the line (and quoting its first bytes) as soon as it is
longer than :data:`MAX_LINE`, having held at most that much of it and one piece more. A NUL byte,
which no text holds (C's trec_eval would end a field there, and read ``d\\0x`` as ``d``), is refused
the same way, naming its line.

- :func:`check_lines` checks a buffer held already (a memory-mapped file, a stream's pieces joined,
  a chunk of the streaming reader), counting lines only to name a bad one (counting costs more than
  the check); its callers stop reading once the last line has gone on too long.
- :class:`LineLimit` is fed an input's bytes piece by piece and counts the lines, for what is not
  held (standard input spooled to disk).
- :func:`read_bounded` reads a whole stream that way (standard input, a pipe, a device, a small file).
- :func:`bounded_lines` yields the lines of an open file one at a time (a JSON Lines log), each read
  with ``readline``'s own bound.

Light: nothing but :mod:`irspec.errors`, so the plan loader and plugins can use it freely.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, AnyStr, Union

from irspec.errors import InputError

__all__ = [
    "MAX_LINE",
    "READ_SIZE",
    "LineLimit",
    "binary",
    "bounded_lines",
    "check_lines",
    "count_newlines",
    "read_bounded",
    "too_long",
]

MAX_LINE = 1 << 20
"""The longest line accepted, in bytes (characters for a text stream) without its line end: 1 MiB,
thousands of times a TREC line (about 150 bytes with a 100-character docno) and ample for a JSON Lines
session record (hundreds of results with their clicks); binary data, not text, is longer."""

READ_SIZE = 1 << 20
"""How much is read (or decompressed) at a time from a stream: what is held beyond a line's limit
before it is refused."""

_HEAD = 16
"""How many bytes of a line too long the message quotes."""

if TYPE_CHECKING:  # (mmap, an extension module, is loaded by whoever maps a file: the readers of large ones)
    import mmap

    Buffer = Union[bytes, bytearray, mmap.mmap]  # noqa: UP007


def too_long(source: str | None, line: int, head: bytes | str, limit: int = MAX_LINE) -> InputError:
    """The error for line ``line`` of ``source``, longer than ``limit``, whose first bytes are ``head``."""
    text = head.decode("utf-8", errors="replace") if isinstance(head, bytes) else head
    size = "1 MiB" if limit == MAX_LINE else f"{limit:,} bytes"
    return InputError(
        f"line longer than {size}, starting {text!r}...: binary data, not lines of text?", source, line
    )


class LineLimit:
    """Checks an input's lines as its bytes come, piece by piece, and counts them.

    :meth:`feed` raises :func:`too_long`'s error for the first line longer than ``limit`` bytes, as
    soon as the pieces fed show it to be: a line that never ends is refused after ``limit`` bytes.
    ``first_line`` is the number of the line the first byte belongs to.
    """

    def __init__(self, source: str | None, limit: int = MAX_LINE, first_line: int = 1) -> None:
        self.source = source
        self.limit = limit
        self.line = first_line
        """The number of the line the next byte fed belongs to."""
        self.length = 0
        """How many bytes of that line were fed already."""
        self._head = b""  # its first bytes, for the message

    def feed(self, data: Buffer) -> None:
        """Account for the next piece of the input."""
        start, tail = _long_line(data, self.length, self.limit)
        if start is not None:
            self._raise(data, start)
        _check_nul(data, self.source, self.line)
        newlines = count_newlines(data, len(data))
        if newlines:
            self.line += newlines
            self._head = bytes(data[len(data) - tail : len(data) - tail + _HEAD])
        elif len(self._head) < _HEAD:
            self._head += bytes(data[: _HEAD - len(self._head)])
        self.length = tail

    def _raise(self, data: Buffer, start: int) -> None:
        if start < 0:  # the line begun in an earlier piece
            head = (self._head + bytes(data[:_HEAD]))[:_HEAD]
            raise too_long(self.source, self.line, head, self.limit)
        line = self.line + count_newlines(data, start)
        raise too_long(self.source, line, bytes(data[start : start + _HEAD]), self.limit)


def check_lines(data: Buffer, source: str | None, limit: int = MAX_LINE, first_line: int = 1) -> None:
    """Raise :func:`too_long`'s error if a line of ``data`` is longer than ``limit`` (the last line too,
    ended or not), or :func:`binary`'s if it holds a NUL byte; ``first_line`` is the number of its first
    line. A few memchr-fast searches per MiB; lines are counted only to name a bad one."""
    start, _ = _long_line(data, 0, limit)
    if start is not None:
        start = max(start, 0)
        line = first_line + count_newlines(data, start)
        raise too_long(source, line, bytes(data[start : start + _HEAD]), limit)
    _check_nul(data, source, first_line)


def binary(source: str | None, line: int) -> InputError:
    """The error for line ``line`` of ``source``, which holds a NUL byte."""
    return InputError("a NUL byte: binary data, not text", source, line)


def _check_nul(data: Buffer, source: str | None, first_line: int) -> None:
    at = data.find(b"\0")  # memchr: a few ms for a GB
    if at >= 0:
        if first_line == 1 and _utf16(bytes(data[:4])):
            raise InputError("UTF-16 text, where UTF-8 is read: save the file as UTF-8", source, 1)
        raise binary(source, first_line + count_newlines(data, at))


def _utf16(head: bytes) -> bool:
    """Whether an input's first bytes are UTF-16's: its byte-order mark, or text of one byte a character
    with NUL bytes between (what an editor on Windows saves as "Unicode"), where a NUL is found."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    return len(head) == 4 and (
        head[1] == head[3] == 0 < head[0] * head[2] or head[0] == head[2] == 0 < head[1] * head[3]
    )


def read_bounded(f: IO[bytes], source: str | None, limit: int = MAX_LINE, size: int = READ_SIZE) -> bytes:
    """Everything ``f`` holds, read ``size`` bytes at a time, its lines checked as they come: a line
    longer than ``limit`` (an endless one: ``/dev/zero``) is refused after about ``limit + size`` bytes."""
    check = LineLimit(source, limit)
    parts = []
    while piece := f.read(size):
        check.feed(piece)
        parts.append(piece)
    return b"".join(parts)


def bounded_lines(f: IO[AnyStr], source: str | None, limit: int = MAX_LINE) -> Iterator[tuple[int, AnyStr]]:
    """The lines of ``f`` (binary or text) with their 1-based numbers, each with its line end; a line
    longer than ``limit`` bytes (characters) is refused before more than ``limit + 1`` of it is read."""
    number = 0
    while True:
        line = f.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and line[-1:] not in ("\n", b"\n"):
            raise too_long(source, number, line[:_HEAD], limit)
        if (b"\0" if isinstance(line, bytes) else "\0") in line:
            raise binary(source, number)
        yield number, line


def _long_line(data: Buffer, carried: int, limit: int) -> tuple[int | None, int]:
    """``(start, tail)``: where in ``data`` the first line longer than ``limit`` starts (-1 for the line
    ``carried`` bytes of which came before ``data``), None if there is none; and how many bytes of the
    last line, unended, are in ``data``.

    One search per ``limit`` bytes, backwards from the far end of each window: if a window of
    ``limit + 1`` bytes after a line end holds another, every line up to it fits."""
    n = len(data)
    first = data.find(b"\n", 0, max(limit - carried + 1, 0))
    if first < 0:
        if carried + n > limit:
            return -1 if carried else 0, 0
        return None, carried + n
    pos = first
    while n - pos - 1 > limit:
        nxt = data.rfind(b"\n", pos + 1, pos + limit + 2)
        if nxt < 0:
            return pos + 1, 0
        pos = nxt
    return None, n - data.rfind(b"\n", pos) - 1


def count_newlines(data: Buffer, end: int) -> int:
    """Line ends in ``data[:end]``; a mapped file is counted in pieces, not copied whole."""
    if isinstance(data, (bytes, bytearray)):
        return data.count(b"\n", 0, end)
    step = 16 << 20
    return sum(bytes(data[i : min(i + step, end)]).count(b"\n") for i in range(0, end, step))
