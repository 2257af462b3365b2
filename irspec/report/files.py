"""Writing outputs atomically: a file through a temporary file and a rename, a directory of files
through a temporary directory, and several outputs all or none, so that a failed run never leaves a
half-written output behind."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from irspec.errors import IrspecError

__all__ = ["check_writable", "write_all_atomic", "write_atomic", "write_files_atomic"]


def _temporary(target: Path, *, directory: bool) -> tuple[int, str]:
    """A new temporary file (open, as ``(fd, path)``) or directory (``(-1, path)``) beside ``target``.

    Created with the usual modes (0o666, 0o777) less the umask, as a plain ``open`` would, so the
    renamed output is readable as any other file (:func:`tempfile.mkstemp` would make it private).
    An error names the directory, where the user can act, not the temporary name.
    """
    import secrets  # here: a 50-topic `irspec eval` to the terminal writes no file (issue 23)

    for _ in range(100):
        name = str(target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            if directory:
                os.mkdir(name, 0o777)
                return -1, name
            return os.open(
                name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
            ), name
        except FileExistsError:
            continue
        except OSError as e:
            raise OSError(e.errno, e.strerror, str(target.parent)) from None
    raise FileExistsError(errno.EEXIST, "cannot create a temporary file", str(target.parent))


def write_atomic(
    path: str | os.PathLike[str],
    text: str | bytes | Callable[[BinaryIO], None],
    *,
    make_dirs: bool = True,
) -> None:
    """Write ``text`` (UTF-8; bytes as they are; a function writes its bytes to the file it is given)
    to ``path`` through a temporary file and a rename.

    Readers never see a half-written file. Missing directories are created, unless ``make_dirs`` is
    false. An error (an :class:`~irspec.errors.IrspecError`, ``cannot write 'path': why``) leaves any
    previous file untouched and no temporary file behind; see :func:`write_all_atomic`.
    """
    write_all_atomic([(path, text)], make_dirs=make_dirs)


Content = str | bytes | dict[str, bytes] | Callable[[BinaryIO], None]
"""An output's content: text (UTF-8), bytes, ``{name: bytes}`` for the files of a directory, or a
function that writes a file's bytes to the binary file it is given (an output too large to hold)."""


def write_all_atomic(
    outputs: Sequence[tuple[str | os.PathLike[str], Content]],
    *,
    make_dirs: bool = True,
) -> None:
    """Write every output or none: each ``(path, text)``, ``(path, bytes)`` or ``(path, writer)`` for a
    file, or ``(path, {name: bytes})`` for files in a directory (other files in it are left alone).

    Each output is checked (a file's path must not be a directory, nor a directory's a file) and
    written in full to a temporary file or directory beside its target; only when all are written are
    they renamed into place. An error before then removes the temporaries and the directories made
    for them, so every target is as it was, and is raised as an :class:`~irspec.errors.IrspecError`
    (``cannot write 'path': why``) when it is the system's. The renames themselves, within one
    directory each, can fail only with the file system; the outputs renamed by then stay.
    """
    staged: list[_Staged] = []
    created: list[Path] = []  # directories made for the outputs, parents first
    target: Any = None
    try:
        for target, content in outputs:
            staged.append(_Staged(Path(target)))
            staged[-1].write(content, make_dirs, created)
        for item in staged:
            target = item.target
            item.commit()
    except BaseException as e:
        for item in staged:
            item.discard()
        for directory in reversed(created):
            with contextlib.suppress(OSError):  # an output was renamed into it
                directory.rmdir()
        if isinstance(e, OSError):
            raise _cannot_write(target, e) from None
        raise


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise the error :func:`write_atomic` with ``make_dirs=False`` would for ``path`` when it can
    be seen already (a directory, a directory missing or not one), so a long run fails first."""
    target = Path(path)
    try:
        _file_target(target, False, [])
    except OSError as e:
        raise _cannot_write(target, e) from None


def _cannot_write(target: Any, error: OSError) -> IrspecError:
    reason = error.strerror or str(error)
    reason = reason[:1].lower() + reason[1:]
    if error.filename is not None and os.fspath(error.filename) != os.fspath(target):
        reason += f": {os.fspath(error.filename)!r}"
    return IrspecError(f"cannot write {os.fspath(target)!r}: {reason}")


def _make_parent(directory: Path, make_dirs: bool, created: list[Path]) -> None:
    """Make sure ``directory`` exists (creating it and its missing parents, recorded in ``created``)."""
    missing = []
    while not directory.is_dir():
        if directory.exists() or directory == directory.parent:
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(directory))
        missing.append(directory)
        directory = directory.parent
    if missing and not make_dirs:
        raise FileNotFoundError(errno.ENOENT, "No such directory", str(missing[0]))
    for directory in reversed(missing):
        os.mkdir(directory)
        created.append(directory)


def _file_target(target: Path, make_dirs: bool, created: list[Path]) -> None:
    """Make sure ``target`` can become a file: not a directory, in a directory (made if need be)."""
    _make_parent(target.parent, make_dirs, created)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target))


class _Staged:
    """One output on its way: written to ``tmp`` beside ``target`` (:meth:`write`), then renamed over it
    (:meth:`commit`) or removed (:meth:`discard`). ``names`` are the files of a directory output."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.tmp: Path | None = None
        self.names: list[str] | None = None

    def write(self, content: Content, make_dirs: bool, created: list[Path]) -> None:
        target = self.target
        if not isinstance(content, dict):
            _file_target(target, make_dirs, created)
            fd, tmp = _temporary(target, directory=False)
            self.tmp = Path(tmp)
            if isinstance(content, bytes):
                with os.fdopen(fd, "wb") as f:
                    f.write(content)
            elif callable(content):
                with os.fdopen(fd, "wb") as f:
                    content(f)
            else:
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                    f.write(content)
            return
        for name in content:
            if os.sep in name or (os.altsep and os.altsep in name) or name in ("", ".", ".."):
                raise ValueError(f"not a file name: {name!r}")
            if (target / name).is_dir():
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target / name))
        _make_parent(target.parent, make_dirs, created)
        if target.exists() and not target.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(target))
        self.tmp = Path(_temporary(target, directory=True)[1])
        self.names = list(content)
        for name, data in content.items():
            (self.tmp / name).write_bytes(data)

    def commit(self) -> None:
        tmp = self.tmp
        assert tmp is not None  # committed once, after __init__ wrote it
        if self.names is None or not self.target.exists():
            os.replace(tmp, self.target)  # a new directory appears whole, in one step
        else:
            for name in self.names:
                os.replace(tmp / name, self.target / name)
            tmp.rmdir()
        self.tmp = None

    def discard(self) -> None:
        if self.tmp is not None and self.names is None:
            self.tmp.unlink(missing_ok=True)
        elif self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp = None


def write_files_atomic(directory: str | os.PathLike[str], files: dict[str, bytes]) -> list[Path]:
    """Write ``files`` (``{name: bytes}``) into ``directory``, creating it; returns the paths written.

    The files are written to a temporary directory beside it first. A directory that does not exist
    yet is then created by renaming that one, in one step; into an existing directory each file is
    renamed over its old version (other files in it are left alone). An error while writing leaves
    the directory as it was (see :func:`write_all_atomic`).
    """
    write_all_atomic([(directory, files)])
    return [Path(directory) / name for name in files]
