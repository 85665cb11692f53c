"""A loaded dataset: the table, where it came from, and its (declared or guessed) schema."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from dpstudio.data.fingerprint import sha256_file
from dpstudio.data.loading import load_table
from dpstudio.data.schema import Schema, complete_schema, schema_for
from dpstudio.jobs import check

#: Share of :func:`open_dataset`'s progress spent reading the table (the rest: types).
_TABLE_SHARE = 0.9


@dataclass(frozen=True, eq=False)
class Dataset:
    """``schema`` has one spec per column of ``frame``; ``declared`` is the sidecar, if any."""

    path: Path
    frame: pd.DataFrame
    schema: Schema
    declared: Schema | None = None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def n_rows(self) -> int:
        return int(self.frame.shape[0])

    @property
    def n_columns(self) -> int:
        return int(self.frame.shape[1])

    def is_declared(self, column: str) -> bool:
        """Whether the column's type comes from the sidecar rather than a guess."""
        return self.declared is not None and column in self.declared

    @cached_property
    def sha256(self) -> str:
        """Fingerprint of the file's bytes (computed on first use)."""
        return sha256_file(self.path)


def open_dataset(path: str | os.PathLike[str], *, state: Any = None,
                 header: bool = True) -> Dataset:
    """Load the table and its sidecar schema; undeclared columns get guessed types.

    ``state`` (optional; ``progress(fraction, message)`` and ``cancelled()``) follows the
    load and may cancel it between steps (:class:`~dpstudio.jobs.Cancelled`).
    ``header=False``: the file's first line is data (see :func:`load_table`).
    """
    p = Path(path)
    frame = load_table(p, state=_Scaled(state, 0.0, _TABLE_SHARE) if state is not None else None,
                       header=header)
    declared = schema_for(p)
    if state is not None:
        check(state)
        state.progress(_TABLE_SHARE, "Guessing column types")
    schema = complete_schema(frame, declared)
    if state is not None:
        check(state)
        state.progress(1.0, "Done")
    return Dataset(path=p, frame=frame, schema=schema, declared=declared)


class _Scaled:
    """A job state reporting ``progress(f)`` as ``lo + f·(hi − lo)`` of another's."""

    def __init__(self, state: Any, lo: float, hi: float) -> None:
        self._state, self._lo, self._hi = state, lo, hi

    def progress(self, fraction: float, message: str = "") -> None:
        self._state.progress(self._lo + float(fraction) * (self._hi - self._lo), message)

    def cancelled(self) -> bool:
        return bool(self._state.cancelled())
