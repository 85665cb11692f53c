"""A project's files: the inter-process lock, release temporaries' names, test pauses.

Writing files atomically and durably is :mod:`dpstudio.data.atomic`'s job.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import threading
import time
from pathlib import Path

from dpstudio.project.errors import ProjectBusyError

__all__ = ["PAUSE_ENV", "ProjectLock", "pause", "tmp_name"]

#: Test hook: when set to a number of seconds, :func:`pause` sleeps up to that long at each
#: step of a release and of recovery, so a test can kill the process inside a transaction.
PAUSE_ENV = "DPSTUDIO_TEST_PAUSE"


def pause(step: str) -> None:  # noqa: ARG001 - the step name documents the call site
    """Sleep a random moment if the test hook asks for it; otherwise nothing."""
    limit = os.environ.get(PAUSE_ENV)
    if limit:
        time.sleep(random.uniform(0.0, float(limit)))


def tmp_name(name: str, uid: str) -> str:
    """The temporary name a release writes its file ``name`` under before renaming it.

    Recovery recognises these (``.NAME.UID.tmp``) as the release's own and removes them.

    Parameters
    ----------
    name : str
        The file's final name.
    uid : str
        The release's unique id.

    Returns
    -------
    str
        The hidden temporary name, in the same folder.
    """
    return f".{name}.{uid}.tmp"


class ProjectLock:
    """An exclusive lock on ``<project>.lock``, held while releasing or recovering.

    The kernel drops the lock when its holder dies (even by kill -9), so a lock that can
    be taken means no live process is in the middle of a release: every ``pending``
    release in the ledger is then an interrupted one. The lock file is left in place
    (deleting it would race with a process about to lock it).
    """

    def __init__(self, project_path: Path) -> None:
        self.path = project_path.with_name(project_path.name + ".lock")
        self._fd: int | None = None
        self._threads = threading.Lock()  # flock does not order threads sharing this object

    def acquire(self, timeout: float = 30.0) -> bool:
        """Take the lock, waiting up to ``timeout`` seconds; False if still busy."""
        deadline = time.monotonic() + timeout
        got = (self._threads.acquire(blocking=False) if timeout <= 0 else
               self._threads.acquire(timeout=timeout))
        if not got:
            return False
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except BaseException:
            self._threads.release()
            raise
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                os.close(fd)
                self._threads.release()
                return False
            time.sleep(0.02)
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                _unlock(fd)
                os.close(fd)
            finally:
                self._threads.release()

    @contextlib.contextmanager
    def held(self, timeout: float = 30.0):
        if not self.acquire(timeout):
            raise ProjectBusyError(f"{self.path.name[:-5]} is busy: another release from "
                                   "this project is in progress; try again when it is done")
        try:
            yield self
        finally:
            self.release()


if sys.platform.startswith("win"):  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
