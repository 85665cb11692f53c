"""Where a release's files go: its output folder, checked (and created) before the
charge, and the stem its files are named by, chosen inside the charge once its id is
known.

Every kind of release (one statistic, a trained model, a plan) uses these two; the stem's
candidates are ``rNNNN-NAME`` and then ``rNNNN-NAME-UID8``, never a name already taken in
the folder (by a file or by another release's temporary file).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from dpstudio.project._fs import tmp_name
from dpstudio.project.errors import ProjectError

__all__ = ["free_stem", "output_folder"]


def output_folder(out_dir: str | os.PathLike[str], create: bool) -> tuple[Path, list[Path]]:
    """The output folder as an absolute path, created if asked.

    Parameters
    ----------
    out_dir : str or os.PathLike
        The folder the spec or the user names.
    create : bool
        Create it (and its missing parents) if it does not exist (a release; a check
        only looks).

    Returns
    -------
    (pathlib.Path, list of pathlib.Path)
        The folder, and the folders created (outermost first), to remove if the release
        does not happen.

    Raises
    ------
    ProjectError
        Unless it is (or could be made) a writable folder.
    """
    out = Path(out_dir).expanduser().absolute()
    created: list[Path] = []
    if out.exists() and not out.is_dir():
        raise ProjectError(f"output folder {out} is a file, not a folder")
    if not out.exists():
        if not create:
            return out, created
        missing = [out] + [p for p in out.parents if not p.exists()]
        try:
            out.mkdir(parents=True)
        except OSError as exc:
            raise ProjectError(f"cannot create output folder {out} ({exc.strerror or exc})"
                               ) from None
        created = list(reversed(missing))
    try:
        # An unnamed temporary file (O_TMPFILE where available): proves we may create files
        # there, and leaves nothing behind even if the process is killed right now.
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        for d in reversed(created):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise ProjectError(f"output folder {out} is not writable ({exc.strerror or exc})"
                           ) from None
    return out, created


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s[:48].strip("-.") or "release"


def free_stem(out: Path, uid: str, release_id: int, name: str,
              names_of: Callable[[str], list[str]]) -> str:
    """The stem release ``release_id`` names its files by.

    Parameters
    ----------
    out : pathlib.Path
        The output folder.
    uid : str
        The release's uid (its temporary files carry it).
    release_id : int
        The release's id in the ledger.
    name : str
        The release's name (made safe for a file name).
    names_of : callable
        The names the release writes for a stem.

    Returns
    -------
    str
        ``rNNNN-NAME``, or ``rNNNN-NAME-UID8`` if one of its names is taken.

    Raises
    ------
    ProjectError
        If both are taken.
    """
    base = _slug(name)
    for stem in (f"r{release_id:04d}-{base}", f"r{release_id:04d}-{base}-{uid[:8]}"):
        if not any((out / n).exists() or (out / tmp_name(n, uid)).exists()
                   for n in names_of(stem)):
            return stem
    raise ProjectError(f"{out} already holds files named like this release's; choose "
                       "another output folder")
