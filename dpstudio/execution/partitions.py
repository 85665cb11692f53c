"""One task per file where the data is, and the exact reduce on the client.

:func:`file_partial` is what a worker runs: read one file's column (its bytes read once;
for a release, hashed from those same bytes), convert it as the in-process path does,
clamp, snap with randomized rounding from a :class:`~dpstudio.engine.rng.SecureSource` made
*in the task* (a seeded source only for a simulation), and return the engine's
:class:`~dpstudio.engine.queries.partial.Partial` — exact integers — with the file's
fingerprint entry. :func:`sum_files` submits the tasks, follows their progress, cancels
them when asked, and adds the integers on the client. No value of a record comes back.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from dpstudio.data.errors import DataError, shorten
from dpstudio.data.folders import FileDataset, FileEntry, hash_bytes
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.queries.partial import Partial, add_partials, partial_sums
from dpstudio.engine.rng import SecureSource, SimulationSource
from dpstudio.execution.engines import ExecutionError
from dpstudio.execution.futures import check_cancelled, gather_tasks, report_progress

__all__ = ["READERS", "file_partial", "folder_values", "read_column", "sum_files"]

#: How a column is read for the engine, as the in-process path reads it.
READERS = ("numeric", "category", "yes_no")


def read_column(path: Path, fmt: str, column: str, reader: str, header: bool = True,
                raw: bytes | None = None) -> np.ndarray:
    """One file's column as the engine takes it (floats with NaN, or labels with None).

    ``raw``: the file's bytes when already read (a release hashes them): Parquet is then
    parsed from them; text files are read by the loader (the same parsing as one file).
    """
    import pandas as pd

    from dpstudio.data.columns import category_column, numeric_column, yes_no_column
    from dpstudio.data.loading import load_table

    if raw is not None and fmt == "parquet":
        try:
            frame = pd.read_parquet(io.BytesIO(raw), columns=[column])
        except Exception as exc:  # pyarrow raises many types
            if column not in _parquet_names(raw):
                frame = pd.DataFrame(columns=_parquet_names(raw))  # the loader's message
            else:
                raise DataError(f"{shorten(path.name)}: not a readable Parquet file "
                                f"({shorten(str(exc).splitlines()[0], 120)})") from None
    else:
        frame = load_table(path, header=header, columns=[column])
    if reader == "numeric":
        return numeric_column(frame, column)
    if reader == "yes_no":
        return yes_no_column(frame, column)
    return category_column(frame, column)


def _parquet_names(raw: bytes) -> list[str]:
    import pyarrow.parquet as pq

    return list(pq.read_schema(io.BytesIO(raw)).names)


def file_partial(path: str, fmt: str, column: str, reader: str, spec: QuerySpec,
                 header: bool = True, seed: int | None = None, fingerprint: bool = False,
                 root: str | None = None) -> tuple[Partial, FileEntry | None]:
    """What one worker computes for one file: its exact integer aggregates, and (for a
    release) the file's fingerprint entry from the bytes it parsed.

    The randomized rounding draws from a fresh OS-CSPRNG source made here, on the worker;
    ``seed`` (a simulation only) gives a seeded one instead.
    """
    p = Path(path)
    raw, entry = None, None
    if fingerprint:
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise DataError(f"{shorten(p.name)}: cannot read file ({exc.strerror or exc})"
                            ) from None
        entry = hash_bytes(p, raw, Path(root) if root else None)
    values = read_column(p, fmt, column, reader, header, raw)
    del raw
    source = SecureSource() if seed is None else SimulationSource(seed)
    return partial_sums(values, spec, source), entry


def _seeds(seed: int | None, n: int) -> list[int | None]:
    """Independent seeds per file for a simulation; None (the OS CSPRNG) otherwise."""
    if seed is None:
        return [None] * n
    children = np.random.SeedSequence(seed).spawn(n)
    return [int(c.generate_state(2, np.uint64).view(np.uint64)[0]) for c in children]


def sum_files(ds: FileDataset, column: str, reader: str, spec: QuerySpec, *,
              client: Any = None, header: bool = True, seed: int | None = None,
              fingerprint: bool = False, state: Any = None
              ) -> tuple[Partial, list[FileEntry]]:
    """The dataset's exact integer aggregates of ``spec``, one task per file.

    On ``client`` (a ``distributed.Client``) when given, else file by file in this
    process. ``state`` receives progress per file and may cancel: the pending tasks are
    cancelled and :class:`~dpstudio.jobs.Cancelled` raised (no noise has been drawn).
    A worker lost mid-query has its tasks rerun by Dask; when that fails too, one line.
    """
    if reader not in READERS:
        raise ExecutionError(f"unknown column reader {reader!r}")
    spec = spec.validated()
    root = str(Path(ds.source)) if Path(ds.source).is_dir() else None
    args = [(str(f), ds.format, column, reader, spec, header, s, fingerprint, root)
            for f, s in zip(ds.files, _seeds(seed, len(ds.files)), strict=True)]
    results: list[tuple[Partial, FileEntry | None]] = []
    text = f"Summing {len(ds.files)} files of {ds.name}"
    if client is None:
        for i, a in enumerate(args):
            check_cancelled(state)
            results.append(file_partial(*a))
            report_progress(state, (i + 1) / len(args), text)
    else:
        results = gather_tasks(client, file_partial, args, state, text)
    for partial, _ in results:  # only exact integers come back, never a value
        if not isinstance(partial, Partial) or not all(
                isinstance(v, int) for v in partial.integers()):
            raise ExecutionError("a worker returned something other than integer sums")
    total = add_partials([p for p, _ in results])
    entries = [e for _, e in results if e is not None]
    return total, entries


def folder_values(ds: FileDataset, column: str, reader: str, header: bool = True
                  ) -> np.ndarray:
    """The whole column of a folder in this process (the pandas engine, when it fits)."""
    parts = [read_column(f, ds.format, column, reader, header) for f in ds.files]
    return np.concatenate(parts) if parts else np.zeros(0)
