"""What ``dpstudio --version`` and Help ▸ About say: the version, where release noise
comes from, and the versions of Qt, numpy and Python underneath.

One function builds the lines for both, so the command line and the dialog never
disagree. It imports Qt's core module only (no widgets), so ``--version`` stays quick and
works without a display.
"""

from __future__ import annotations

import platform

import numpy as np

from dpstudio import __version__
from dpstudio.engine.rng import SecureSource

__all__ = ["about_lines", "version_line"]


def version_line() -> str:
    """The program and its version, ``"dpstudio 0.1.0"``.

    Returns
    -------
    str
        The first line of ``dpstudio --version``.
    """
    return f"dpstudio {__version__}"


def _qt_line() -> str:
    try:
        import PySide6
        from PySide6.QtCore import qVersion
    except ImportError as err:  # a broken install: say so rather than fail to say anything
        return f"Qt: not available ({err})"
    return f"Qt {qVersion()} (PySide6 {PySide6.__version__})"


def about_lines() -> list[str]:
    """The facts under the version: randomness source, Qt, numpy and Python.

    Returns
    -------
    list of str
        One fact a line, e.g. ``"Release randomness: OS CSPRNG (AES-256-CTR keyed from
        os.urandom)"``, ``"Qt 6.11.3 (PySide6 6.11.3)"``, ``"numpy 2.4.6"``,
        ``"Python 3.11.7 (CPython, Linux x86_64)"``.
    """
    python = (f"Python {platform.python_version()} ({platform.python_implementation()}, "
              f"{platform.system()} {platform.machine()})")
    return [
        f"Release randomness: {SecureSource.label}",
        _qt_line(),
        f"numpy {np.__version__}",
        python,
    ]
