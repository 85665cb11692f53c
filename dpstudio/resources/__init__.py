"""The files DP Studio reads at run time: the bundled samples with their schema sidecars
(``samples/``), the report's HTML template (``templates/``) and the icons (``icons/``).

They live inside the package so that they travel with it: in the source checkout, in an
editable install, in an installed wheel and in a frozen (PyInstaller) bundle alike, and
they are found with :mod:`importlib.resources`, never relative to the source tree.
``samples/make_samples.py``, which regenerates the samples, stays beside them in the
source (and the sdist) but is not part of the wheel: nothing reads it at run time.
"""

from __future__ import annotations

import atexit
from contextlib import ExitStack
from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path

__all__ = ["resource", "resource_path"]

# Copies extracted from a package that is not on the file system (a zip), removed at exit.
_extracted = ExitStack()
atexit.register(_extracted.close)


def resource(*parts: str) -> Traversable:
    """One of the bundled files, as :mod:`importlib.resources` sees it.

    Parameters
    ----------
    *parts : str
        Path inside ``dpstudio/resources``, one component per argument, e.g.
        ``resource("templates", "report.html")``.

    Returns
    -------
    importlib.resources.abc.Traversable
        The file or folder (it may not exist: check ``is_file()``).
    """
    return files(__name__).joinpath(*parts)


def resource_path(*parts: str) -> Path:
    """A bundled file as a path on the file system, for APIs that want one.

    Parameters
    ----------
    *parts : str
        Path inside ``dpstudio/resources``, one component per argument, e.g.
        ``resource_path("samples", "survey.csv")``.

    Returns
    -------
    pathlib.Path
        The file itself when the package is on the file system (checkout, wheel, frozen
        bundle); otherwise a temporary copy of a file, kept until the process exits. The
        path may not exist: callers check and say what is missing.
    """
    found = resource(*parts)
    if isinstance(found, Path):
        return found
    if not found.is_file():  # a folder inside a zip cannot be copied out on Python 3.11
        return Path(str(found))
    return _extracted.enter_context(as_file(found))
