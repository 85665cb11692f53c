"""The small datasets bundled with DP Studio (``dpstudio/resources/samples`` in the package).

They are found with :mod:`importlib.resources` (see :mod:`dpstudio.resources`), so they are
there in an installed wheel or a frozen bundle as in the source checkout. On the command
line a bundled sample is named ``sample:NAME`` (``dpstudio query sample:survey …``).
"""

from __future__ import annotations

import os
from pathlib import Path

from dpstudio.data.errors import DataError
from dpstudio.resources import resource_path

#: Sample name → one-line description (files are ``<name>.csv`` with a schema sidecar).
SAMPLES: dict[str, str] = {
    "survey": "Student survey (2,000 rows): exam cheating, study hours, income, faculty",
    "health": "Health records (3,000 rows): diabetes, BMI, blood pressure, cholesterol, region",
}

#: How a bundled sample is named where a data file is expected: ``sample:survey``.
SAMPLE_PREFIX = "sample:"


def samples_dir() -> Path:
    """The folder holding the bundled samples; a clear :class:`DataError` if it is missing."""
    folder = resource_path("samples")
    if not folder.is_dir():
        raise DataError(
            f"the bundled sample datasets are missing (expected in {folder}); "
            "this copy of DP Studio was installed without its package data"
        )
    return folder


def sample_path(name: str) -> Path:
    """Path of the bundled sample ``name`` (``"survey"`` or ``"survey.csv"``)."""
    stem = name.removesuffix(".csv")
    if stem not in SAMPLES:
        raise DataError(f"no sample dataset '{name}' (available: {', '.join(SAMPLES)})")
    path = samples_dir() / f"{stem}.csv"
    if not path.is_file():
        raise DataError(f"the bundled sample {path.name} is missing from {path.parent}")
    return path


def data_argument(text: str | os.PathLike[str]) -> str:
    """A data file named on the command line: a path, or ``sample:NAME`` for a bundled one.

    The prefix keeps the two apart: a file called ``survey`` in the current folder is
    never mistaken for the sample, and a mistyped path is "file not found", not a sample.

    Parameters
    ----------
    text : str or os.PathLike
        What the user typed.

    Returns
    -------
    str
        ``text`` itself, or the bundled sample's path (its schema sidecar beside it).
    """
    text = os.fspath(text)
    if text.startswith(SAMPLE_PREFIX):
        return str(sample_path(text.removeprefix(SAMPLE_PREFIX)))
    return text
