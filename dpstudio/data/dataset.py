"""A loaded dataset: the table, where it came from, and its (declared or guessed) schema."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from dpstudio.data.fingerprint import sha256_file
from dpstudio.data.loading import load_table
from dpstudio.data.schema import Schema, complete_schema, schema_for


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


def open_dataset(path: str | os.PathLike[str]) -> Dataset:
    """Load the table and its sidecar schema; undeclared columns get guessed types."""
    p = Path(path)
    frame = load_table(p)
    declared = schema_for(p)
    return Dataset(path=p, frame=frame, schema=complete_schema(frame, declared), declared=declared)
