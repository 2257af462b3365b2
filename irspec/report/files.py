"""Writing outputs atomically: a file through a temporary file and a rename, a directory of files
through a temporary directory, and several outputs all or none, so that a failed run never leaves a
half-written output behind.

This module is also the one guard every command's outputs pass (the invariant "Nothing lost" of
ARCHITECTURE.md): an output is never one of the command's inputs (:class:`Inputs`, told by resolved
path and by device and inode, so ``out/../run``, absolute paths and links are the same file), two
outputs never the same file, and a special file (``/dev/null``, a FIFO, a terminal) or one of the
process's own descriptors (``/dev/stdout``) is written in place, never replaced by a regular file, as are
such files among a directory output's; a block device or a socket is refused. A symbolic link is
written through, as a shell's ``>`` would: its target gets the output and the link stays.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from irspec.errors import IrspecError

__all__ = [
    "Inputs",
    "check_writable",
    "descriptor",
    "in_place",
    "write_all_atomic",
    "write_atomic",
    "write_files_atomic",
]

PathText = str | os.PathLike[str]


class Inputs:
    """The files a command reads, which none of its outputs may overwrite.

    Each is known by its resolved path (symbolic links followed, ``..`` folded) and, when it exists as
    a regular file, by its device and inode, so a hard link to it is caught too. Entries that name no
    file (``None``, ``-`` for standard input, an in-memory object) are passed over, as are special files
    (an output onto ``/dev/stdin``'s terminal is written in place and overwrites nothing).
    """

    def __init__(self, paths: Iterable[Any] = ()) -> None:
        self._paths: dict[str, str] = {}
        self._nodes: dict[tuple[int, int], str] = {}
        for p in paths:
            self.add(p)

    def add(self, path: Any) -> None:
        """Count ``path`` (as typed) among the inputs, if it names a file at all."""
        if not isinstance(path, (str, os.PathLike)):
            return  # a frame, a dict, a Run already read
        text = os.fspath(path)
        if not isinstance(text, str) or text in ("", "-"):
            return
        try:
            info = os.stat(text)
        except (OSError, ValueError):  # not there (yet), or not a path at all ("irds:...")
            info = None
        if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            return
        self._paths.setdefault(os.path.realpath(text), text)
        if info is not None:
            self._nodes.setdefault((info.st_dev, info.st_ino), text)

    def find(self, path: PathText) -> str | None:
        """The input (as it was typed) that writing ``path`` would overwrite, or ``None``."""
        if not self._paths:
            return None
        found = self._paths.get(os.path.realpath(path))
        if found is not None:
            return found
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return None
        return self._nodes.get((info.st_dev, info.st_ino))

    def check(self, path: PathText) -> None:
        """Raise the error of an output at ``path`` that would overwrite one of the inputs."""
        found = self.find(path)
        if found is not None:
            same = "" if os.fspath(path) == found else f" (the same file as the input {found!r})"
            raise IrspecError(
                f"cannot write {os.fspath(path)!r}: it is an input of this command{same}, which it would "
                "overwrite; write the output to another path"
            )

    def __bool__(self) -> bool:
        return bool(self._paths)


def _inputs(inputs: Inputs | Iterable[Any]) -> Inputs:
    return inputs if isinstance(inputs, Inputs) else Inputs(inputs)


_IN_PLACE = {stat.S_IFCHR: "a character device", stat.S_IFIFO: "a FIFO"}
"""Special files an output is written into as they are (a terminal, /dev/null, a named pipe): they hold
nothing to lose, and renaming a file over one would replace it."""

_REFUSED = {stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}
"""Special files an output is never written to: a disk's bytes would be overwritten; a socket cannot
be opened."""


def in_place(path: PathText) -> bool:
    """Whether an output at ``path`` is written into a special file as it is (a FIFO, a character device
    such as ``/dev/null`` or a terminal) or into one of this process's open files (``/dev/stdout``,
    :func:`descriptor`) rather than through a temporary file and a rename: no file goes beside it. A
    block device or a socket, which no output is written to, counts as neither."""
    if descriptor(path) is not None:
        return True
    try:
        return _special(Path(path))
    except OSError:
        return False


def descriptor(path: PathText) -> int | None:
    """The file descriptor of this process that ``path`` names (``/dev/stdout``, ``/dev/stderr``,
    ``/dev/fd/N``, ``/proc/self/fd/N``, or a link to one), else ``None``. An output there is written to
    that descriptor: ``irspec eval ... -o /dev/stdout >> log`` appends to ``log``, where a rename over the
    file the link leads to replaced it, and what the shell had written there was lost."""
    own = f"/proc/{os.getpid()}/fd"
    current = os.path.abspath(os.fspath(path))
    for _ in range(40):  # the system's own limit of links followed
        head, name = os.path.split(current)
        if name.isdigit() and os.path.realpath(head) == own:
            return int(name)
        try:
            link = os.readlink(current)
        except (OSError, ValueError):
            return None
        current = os.path.normpath(os.path.join(head, link))
    return None


def _special(target: Path) -> bool:
    """Whether ``target`` is a special file an output is written into in place (a FIFO, a character
    device); an ``OSError`` for one that is refused. Links are followed by the system, so that
    ``/dev/stdout`` is whatever standard output is."""
    try:
        mode = os.stat(target).st_mode
    except (OSError, ValueError):
        return False
    kind = stat.S_IFMT(mode)
    if kind in _REFUSED:
        raise OSError(errno.EINVAL, f"Is {_REFUSED[kind]}, which irspec does not write to", str(target))
    return kind in _IN_PLACE


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
    path: PathText,
    text: str | bytes | Callable[[BinaryIO], None],
    *,
    make_dirs: bool = True,
    inputs: Inputs | Iterable[Any] = (),
) -> None:
    """Write ``text`` (UTF-8; bytes as they are; a function writes its bytes to the file it is given)
    to ``path`` through a temporary file and a rename.

    Readers never see a half-written file. Missing directories are created, unless ``make_dirs`` is
    false. An error (an :class:`~irspec.errors.IrspecError`, ``cannot write 'path': why``) leaves any
    previous file untouched and no temporary file behind; see :func:`write_all_atomic`, which also says
    what ``inputs`` are and how special files are written.
    """
    write_all_atomic([(path, text)], make_dirs=make_dirs, inputs=inputs)


Content = str | bytes | dict[str, bytes] | Callable[[BinaryIO], None]
"""An output's content: text (UTF-8), bytes, ``{name: bytes}`` for the files of a directory, or a
function that writes a file's bytes to the binary file it is given (an output too large to hold)."""


def write_all_atomic(
    outputs: Sequence[tuple[PathText, Content]],
    *,
    make_dirs: bool = True,
    inputs: Inputs | Iterable[Any] = (),
) -> None:
    """Write every output or none: each ``(path, text)``, ``(path, bytes)`` or ``(path, writer)`` for a
    file, or ``(path, {name: bytes})`` for files in a directory (other files in it are left alone).

    Each output is checked first: none may be one of ``inputs`` (the files the command read, paths or
    an :class:`Inputs`), nor the same file as another output; a file's path must not be a directory, nor
    a directory's a file. Each is then written in full to a temporary file or directory beside its
    target (a symbolic link's target: the link stays); only when all are written are they renamed into
    place. An output whose path is a FIFO or a character device (``/dev/null``, a terminal) is written
    into it, just before the renames, never replaced; a block device or a socket is refused. An error
    before the renames removes the temporaries and the directories made for them, so every target is
    as it was, and is raised as an :class:`~irspec.errors.IrspecError` (``cannot write 'path': why``)
    when it is the system's. The renames themselves, within one directory each, can fail only with the
    file system; the outputs renamed by then stay.
    """
    staged: list[_Staged] = []
    created: list[Path] = []  # directories made for the outputs, parents first
    target: Any = None
    outputs = _members_apart(outputs)
    try:
        _check_files([p for target, content in outputs for p in _files_of(Path(target), content)], inputs)
        for target, content in outputs:
            staged.append(_Staged(Path(target)))
            staged[-1].write(content, make_dirs, created)
        # Special files first: writing into one (a FIFO whose reader left) can fail, and until the
        # renames nothing else has changed.
        for item in sorted(staged, key=lambda item: not item.in_place):
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


def check_writable(*paths: PathText, inputs: Inputs | Iterable[Any] = (), make_dirs: bool = False) -> None:
    """Raise the error :func:`write_all_atomic` would for files at ``paths`` when it can be seen already
    (one of ``inputs``, two the same file, a directory, a block device; without ``make_dirs``, a
    directory missing or not one), so that a long run fails first. Nothing is created."""
    target: Path | None = None
    try:
        _check_files([Path(p) for p in paths], inputs)
        for target in map(Path, paths):
            if descriptor(target) is not None or _special(target):
                continue
            if not make_dirs:
                _file_target(target, False, [])
            elif target.is_dir():
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target))
    except OSError as e:
        raise _cannot_write(target, e) from None


def _check_files(paths: Sequence[Path], inputs: Inputs | Iterable[Any]) -> None:
    """Raise the error of the first of ``paths`` (the files some outputs write) that is one of
    ``inputs``, or the same file as another, or a special file never written to."""
    guard = _inputs(inputs)
    seen: dict[str, Path] = {}
    for path in paths:
        if descriptor(path) is not None:  # written to the descriptor: two outputs may share it
            guard.check(path)  # but not an input's file (irspec eval q r -o /dev/stdout >> q)
            continue
        try:
            if _special(path):  # written in place: it overwrites nothing, and may take two outputs
                continue
        except OSError as e:
            raise _cannot_write(path, e) from None
        guard.check(path)
        key = os.path.realpath(path)
        if key in seen:
            other = os.fspath(seen[key])
            also = "it too" if other == os.fspath(path) else f"{other!r}, the same file"
            raise IrspecError(
                f"cannot write {os.fspath(path)!r}: another output of this command writes {also}; "
                "give each output a path of its own"
            )
        seen[key] = path


def _members_apart(outputs: Sequence[tuple[PathText, Content]]) -> list[tuple[PathText, Content]]:
    """``outputs`` with each file of a directory output that is a symbolic link or a special file in the
    directory already made an output of its own, written as any file output is (through the link, into
    the FIFO): renamed into place with the directory's other files, it replaced the link or the FIFO."""
    found: list[tuple[PathText, Content]] = []
    for target, content in outputs:
        if isinstance(content, dict):
            apart = {
                name
                for name in content
                if (Path(target) / name).is_symlink() or in_place(Path(target) / name)
            }
            found.extend((Path(target) / name, data) for name, data in content.items() if name in apart)
            content = {name: data for name, data in content.items() if name not in apart}
        found.append((target, content))
    return found


def _files_of(target: Path, content: Content) -> list[Path]:
    """The files an output writes: its path, or for a directory's files each file's in it."""
    return [target / name for name in content] if isinstance(content, dict) else [target]


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
    (:meth:`commit`) or removed (:meth:`discard`). ``names`` are the files of a directory output. An
    output into a special file (``in_place``) keeps its content until :meth:`commit` writes it there."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.tmp: Path | None = None
        self.names: list[str] | None = None
        self.in_place = False
        self.fd: int | None = None  # an output to one of this process's descriptors (descriptor)
        self._content: Content | None = None

    def write(self, content: Content, make_dirs: bool, created: list[Path]) -> None:
        target = self.target
        if not isinstance(content, dict):
            self.fd = descriptor(target)
            if self.fd is not None or _special(target):
                self.in_place, self._content = True, content
                return
            # through a symbolic link to its target, which the rename then replaces: the link stays
            target = self.target = Path(os.path.realpath(target)) if target.is_symlink() else target
            _file_target(target, make_dirs, created)
            fd, tmp = _temporary(target, directory=False)
            self.tmp = Path(tmp)
            with os.fdopen(fd, "wb") as f:
                _put(f, content)
            return
        if _special(target):
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(target))
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
        if self.in_place:
            if self.fd is not None:
                # after what Python's own streams hold for it, at the descriptor's offset (an append's)
                for stream in (sys.stdout, sys.stderr):
                    with contextlib.suppress(OSError, ValueError, AttributeError):
                        stream.flush()
                fd = os.dup(self.fd)
            else:  # O_WRONLY alone: a special file is opened as it is, never created or truncated
                fd = os.open(self.target, os.O_WRONLY)
            with os.fdopen(fd, "wb") as f:
                _put(f, self._content)  # type: ignore[arg-type]  # set with in_place by write()
            self.in_place, self._content = False, None
            return
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
            import shutil  # on failure only (its import brings three compression modules)

            shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp = None


def _put(f: BinaryIO, content: str | bytes | Callable[[BinaryIO], None]) -> None:
    """A file output's content written to the binary file ``f``: text as UTF-8, as it is."""
    if isinstance(content, bytes):
        f.write(content)
    elif callable(content):
        content(f)
    else:
        f.write(content.encode("utf-8"))


def write_files_atomic(directory: PathText, files: dict[str, bytes]) -> list[Path]:
    """Write ``files`` (``{name: bytes}``) into ``directory``, creating it; returns the paths written.

    The files are written to a temporary directory beside it first. A directory that does not exist
    yet is then created by renaming that one, in one step; into an existing directory each file is
    renamed over its old version (other files in it are left alone). An error while writing leaves
    the directory as it was (see :func:`write_all_atomic`).
    """
    write_all_atomic([(directory, files)])
    return [Path(directory) / name for name in files]
