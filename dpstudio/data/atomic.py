"""Atomic file writes: a file appears whole under its final name, or not at all.

Every file DP Studio writes for the user (sidecar schemas, release specs, settings,
exported plots, released files, new project files) goes through this module:

- :func:`write_atomic` writes bytes or text to a temporary file in the target's folder and
  renames it over the target; the temporary is removed on any failure, so the target
  holds either its old content or the new one, never a part.
- :func:`atomic_path` does the same for writers that want a path rather than bytes (an
  SQLite database, a plot exporter), and can publish without replacing an existing file.
- :func:`write_durably` and :func:`fsync_dir` are the two steps the release transaction of
  :mod:`dpstudio.project.release` orders itself, with crash-test pauses between them, over
  several files at once.

"Durable" means fsynced: the file's data before the rename, and the folder (the rename
itself) after it, so a power cut cannot leave an empty or missing file behind a name that
was reported written. New files get the umask's usual permissions (``os.open`` with
``0o666``, as :func:`open` does), not the private ``0o600`` of :func:`tempfile.mkstemp`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "fsync_dir", "write_atomic", "write_durably"]

#: The mode a new file is created with before the umask applies (what ``open()`` uses).
_NEW_FILE_MODE = 0o666


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make a folder's entries (files created, renamed or removed in it) durable.

    Parameters
    ----------
    path : str or os.PathLike
        The folder.

    Raises
    ------
    OSError
        If the folder cannot be opened or synced. On Windows nothing is done: folders
        cannot be opened for fsync there, and NTFS journals their entries.
    """
    if sys.platform.startswith("win"):
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None
                  ) -> None:
    """Create the new file ``path`` holding ``data``, and fsync it.

    The file must not exist: this is the first step of a write-then-rename, whose caller
    owns the (temporary) name. A file this call created is removed again if writing it
    fails.

    Parameters
    ----------
    path : str or os.PathLike
        The file to create.
    data : bytes
        Its content.
    mode : int, optional
        Permission bits to create it with, before the umask; ``0o666`` by default.

    Raises
    ------
    FileExistsError
        If ``path`` exists (it is left untouched).
    OSError
        If the file cannot be created, written or synced.
    """
    _create(Path(path), data, mode, sync=True)


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, encoding: str = "utf-8",
                 durable: bool = True, mode: int | None = None, tmp_name: str | None = None
                 ) -> Path:
    """Replace (or create) ``path`` with ``data`` atomically.

    ``data`` goes to a temporary file in the same folder, which is then renamed over
    ``path``. Text is encoded as given, with no newline translation.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write; its folder must exist.
    data : bytes or str
        The new content.
    encoding : str, default "utf-8"
        The encoding of ``data`` when it is text.
    durable : bool, default True
        Fsync the file before the rename and the folder after it.
    mode : int, optional
        Permission bits of the new file, before the umask; ``0o666`` by default (the
        usual permissions of a new file).
    tmp_name : str, optional
        The temporary's file name (in ``path``'s folder); by default a hidden name
        unique to this call (``.NAME.PID.RANDOM.tmp``).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    FileExistsError
        If a file named ``tmp_name`` already exists (it is left untouched).
    OSError
        If writing, syncing or renaming fails: ``path`` then keeps its old content (or
        stays absent) and the temporary is removed. When only the folder's fsync fails,
        the new content is in place but may not survive a power cut.
    """
    p = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else data
    tmp = p.with_name(tmp_name or _unique_tmp_name(p))
    _create(tmp, payload, mode, sync=durable)
    try:
        _publish(tmp, p, exclusive=False, durable=durable)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, durable: bool = True, exclusive: bool = False,
                tmp_name: str | None = None) -> Iterator[Path]:
    """A temporary path to write ``path``'s new content to, published when the block ends.

    The block creates the file at the path it is given (with any writer). If the block
    returns, the file is fsynced (``durable``) and renamed over ``path``; if it raises, or
    publishing fails, the temporary is removed and ``path`` is left as it was.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write; its folder must exist.
    durable : bool, default True
        Fsync the written file before publishing it and the folder after.
    exclusive : bool, default False
        Never replace an existing ``path``: publish by hard link, which fails if ``path``
        exists (on a file system without hard links, a check then a rename).
    tmp_name : str, optional
        The temporary's file name (in ``path``'s folder); by default a hidden name unique
        to this call. Choose one ending like ``path`` when the writer picks its format by
        the extension.

    Yields
    ------
    pathlib.Path
        The temporary path; nothing exists there yet.

    Raises
    ------
    FileExistsError
        If ``exclusive`` and ``path`` exists, or if a file named ``tmp_name`` exists
        already (left untouched).
    OSError
        If the block did not create the file, or syncing or publishing fails.
    """
    p = Path(path)
    tmp = p.with_name(tmp_name or _unique_tmp_name(p))
    if os.path.lexists(tmp):  # not ours: never write over it, nor remove it on failure
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(tmp))
    try:
        yield tmp
        if durable:
            _fsync_file(tmp)
        _publish(tmp, p, exclusive=exclusive, durable=durable)
    finally:
        tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------------------- internals


def _unique_tmp_name(p: Path) -> str:
    # Hidden, and unique per process and call: two writers of one file never share one.
    return f".{p.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"


def _create(path: Path, data: bytes, mode: int | None, *, sync: bool) -> None:
    """Create ``path`` (which must not exist), write ``data``, fsync if ``sync``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, _NEW_FILE_MODE if mode is None else mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if sync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)  # created above by this call (O_EXCL): ours to remove
        raise
    os.close(fd)


def _fsync_file(path: Path) -> None:
    # Writable: Windows commits a file only through a handle that may write to it.
    fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish(tmp: Path, target: Path, *, exclusive: bool, durable: bool) -> None:
    """Give the finished ``tmp`` the name ``target``; fsync the folder if ``durable``."""
    if not exclusive:
        os.replace(tmp, target)
    else:
        try:
            os.link(tmp, target)  # fails if target exists: never clobbers
        except FileExistsError:
            raise
        except OSError:  # no hard links on this file system
            if os.path.lexists(target):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST),
                                      str(target)) from None
            os.replace(tmp, target)
        else:
            tmp.unlink()
    if durable:
        fsync_dir(target.parent)
