"""The small datasets bundled with DP Studio (``resources/samples`` in the source tree)."""

from __future__ import annotations

from pathlib import Path

from dpstudio.data.errors import DataError

#: Sample name → one-line description (files are ``<name>.csv`` with a schema sidecar).
SAMPLES: dict[str, str] = {
    "survey": "Student survey (2,000 rows): exam cheating, study hours, income, faculty",
    "health": "Health records (3,000 rows): diabetes, BMI, blood pressure, cholesterol, region",
}


def samples_dir() -> Path:
    """The folder holding the bundled samples; a clear :class:`DataError` if it is missing."""
    folder = Path(__file__).resolve().parents[2] / "resources" / "samples"
    if not folder.is_dir():
        raise DataError(
            f"the bundled sample datasets are missing (expected in {folder}); "
            "run DP Studio from its source checkout"
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
