"""One task per file (or per range of a Parquet file's row groups) where the data is, and
the exact reduce on the client.

:func:`file_partial` is what a worker runs: read one file's column (its bytes read once;
for a release, hashed from those same bytes), convert it as the in-process path does,
clamp, snap with randomized rounding from a :class:`~dpstudio.engine.rng.SecureSource` made
*in the task* (a seeded source only for a simulation), and return the engine's
:class:`~dpstudio.engine.queries.partial.Partial` — exact integers — with the file's
fingerprint entry. :func:`sum_files` submits the tasks, follows their progress, cancels
them when asked, and adds the integers on the client. No value of a record comes back.

A number column of a Parquet file goes straight from its pages into one ``float64`` numpy
array (no pandas frame), and a count of one only counts its nulls and NaNs: the same
values, and so the same integers, as the in-process reader gives. A Parquet file holding
more than :data:`PIECE_ROWS` rows in several row groups is split into tasks of whole row
groups (:func:`pieces`), so a few big files still spread over the workers — except in a
release that fingerprints its files: there each file is one task, which hashes the very
bytes it parses (a file's SHA-256 cannot be put together from pieces read apart).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from dpstudio.data.errors import DataError, shorten
from dpstudio.data.folders import FileDataset, FileEntry, hash_bytes
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.queries.partial import (
    Partial,
    add_partials,
    count_partial,
    partial_sums,
)
from dpstudio.engine.rng import SecureSource, SimulationSource
from dpstudio.execution.engines import ExecutionError
from dpstudio.execution.futures import check_cancelled, gather_tasks, report_progress

__all__ = ["PIECE_ROWS", "READERS", "file_bytes", "file_partial", "folder_values", "pieces",
           "read_column", "seeds", "sum_files"]

#: How a column is read for the engine, as the in-process path reads it.
READERS = ("numeric", "category", "yes_no")
#: A Parquet file with more rows than this is summed in tasks of whole row groups of about
#: this many rows (16 MiB of float64 per task): enough work to outweigh a task's overhead
#: (a few milliseconds), small enough to spread a big file over every worker.
PIECE_ROWS = 1 << 21
#: Rows per Parquet batch read into the numpy column (~0.5 MiB of float64 in flight).
_BATCH = 1 << 16


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


def file_bytes(path: Path, root: str | None = None) -> tuple[bytes, FileEntry]:
    """A file's bytes, read once, and its fingerprint entry hashed from those same bytes
    (a release parses what it hashed).

    Parameters
    ----------
    path : pathlib.Path
        The file.
    root : str, optional
        The dataset's folder (the entry names the file relative to it).

    Returns
    -------
    (bytes, FileEntry)

    Raises
    ------
    DataError
        In one line, when the file cannot be read.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{shorten(path.name)}: cannot read file ({exc.strerror or exc})"
                        ) from None
    return raw, hash_bytes(path, raw, Path(root) if root else None)


def file_partial(path: str, fmt: str, column: str, reader: str, spec: QuerySpec,
                 header: bool = True, seed: int | None = None, fingerprint: bool = False,
                 root: str | None = None, row_groups: tuple[int, int] | None = None
                 ) -> tuple[Partial, FileEntry | None]:
    """What one worker computes for one file (or for the row groups ``row_groups`` =
    ``(first, stop)`` of a Parquet file): its exact integer aggregates, and (for a
    release) the file's fingerprint entry from the bytes it parsed.

    The randomized rounding draws from a fresh OS-CSPRNG source made here, on the worker;
    ``seed`` (a simulation only) gives a seeded one instead.
    """
    p = Path(path)
    if fingerprint and row_groups is not None:
        raise ExecutionError("a release hashes each file whole, in one task")
    raw, entry = file_bytes(p, root) if fingerprint else (None, None)
    source = SecureSource() if seed is None else SimulationSource(seed)
    if fmt == "parquet":
        fast = _parquet_partial(p if raw is None else raw, column, reader, spec, source,
                                row_groups)
        if fast is not None:
            return fast, entry
    if row_groups is not None:
        values = _row_group_column(p, column, reader, row_groups)
    else:
        values = read_column(p, fmt, column, reader, header, raw)
    del raw
    return partial_sums(values, spec, source), entry


# ----------------------------------------------------------- Parquet, without pandas


def _stored_name(schema: Any, column: str) -> str | None:
    """The file's own name of ``column`` as the loader matches it (names stripped; a
    pandas index is no column), or None when the loader must say what is wrong."""
    index = {c for c in (schema.pandas_metadata or {}).get("index_columns", ())
             if isinstance(c, str)}
    stored = [c for c in schema.names if c not in index]
    names = [str(c).strip() for c in stored]
    if len(set(names)) != len(names) or names.count(column) != 1:
        return None
    return stored[names.index(column)]


def _open_parquet(source: Path | bytes) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    # Page by page through a 1 MiB buffer, never a whole column chunk at once.
    return pq.ParquetFile(pa.BufferReader(source) if isinstance(source, bytes) else source,
                          pre_buffer=False, buffer_size=1 << 20)


def _parquet_partial(source: Path | bytes, column: str, reader: str, spec: QuerySpec,
                     rng: Any, row_groups: tuple[int, int] | None) -> Partial | None:
    """The aggregates of a Parquet number column read straight into numpy, or None when
    the column is not a plain number (then the loader reads it, or says what is wrong).

    A number column reads as the in-process path reads it: ``float64``, NaN where a value
    is null (:func:`~dpstudio.data.columns.numeric_column`). A count (which reads labels:
    any column can be counted) of a number column needs no value at all: its present
    values are those neither null nor NaN, as the label reader counts them (an infinity
    prints as a label, so it counts). Booleans are counted alike, never read as numbers.
    """
    import pyarrow as pa

    try:
        handle = _open_parquet(source)
    except Exception:  # pyarrow raises many types: the loader says what is wrong
        return None
    try:
        name = _stored_name(handle.schema_arrow, column)
        if name is None:
            return None
        kind = handle.schema_arrow.field(name).type
        number = pa.types.is_integer(kind) or pa.types.is_floating(kind)
        meta = handle.metadata
        groups = list(range(*row_groups) if row_groups else range(meta.num_row_groups))
        if spec.query == "count" and reader == "category" and (
                number or pa.types.is_boolean(kind)):
            size, present = _present(handle, name, groups, pa.types.is_floating(kind))
            return count_partial(size, present, spec, rng)
        if reader != "numeric" or not number:
            return None
        return partial_sums(_numbers(handle, name, groups), spec, rng)
    finally:
        handle.close()


def _batches(handle: Any, name: str, groups: list[int]) -> Any:
    if not groups:
        return iter(())
    return (b.column(0) for b in handle.iter_batches(
        batch_size=_BATCH, row_groups=groups, columns=[name], use_threads=False,
        use_pandas_metadata=False))


def _numbers(handle: Any, name: str, groups: list[int]) -> np.ndarray:
    """The row groups' values of a number column as one ``float64`` array, NaN for null."""
    meta = handle.metadata
    out = np.empty(sum(meta.row_group(g).num_rows for g in groups), dtype=np.float64)
    at = 0
    for col in _batches(handle, name, groups):
        n = len(col)
        out[at:at + n] = col.to_numpy(zero_copy_only=False)  # nulls: NaN
        at += n
    return out[:at]


def _present(handle: Any, name: str, groups: list[int], floating: bool) -> tuple[int, int]:
    """(rows, present values) of the row groups: not null and, for floats, not NaN.

    Integers and booleans are counted from the row groups' null counts when every one
    has them (no page is read), else batch by batch.
    """
    meta = handle.metadata
    rows = sum(meta.row_group(g).num_rows for g in groups)
    if not floating:
        leaf = [i for i in range(meta.num_columns) if meta.schema.column(i).path == name]
        stats = [meta.row_group(g).column(leaf[0]).statistics for g in groups] \
            if len(leaf) == 1 else [None]
        if all(s is not None and s.has_null_count for s in stats):
            return rows, rows - sum(int(s.null_count) for s in stats)
    present = 0
    for col in _batches(handle, name, groups):
        if floating:
            x = col.to_numpy(zero_copy_only=False)
            present += int(np.count_nonzero(x == x))  # NaN (and null, read as NaN) ≠ itself
        else:
            present += len(col) - col.null_count
    return rows, present


def _row_group_column(path: Path, column: str, reader: str, row_groups: tuple[int, int]
                      ) -> np.ndarray:
    """The column of some row groups of a Parquet file as the engine takes it, converted
    by the same readers as a whole file's (labels, or numbers stored as text)."""
    import pandas as pd

    from dpstudio.data.columns import category_column, numeric_column, yes_no_column

    handle = _open_parquet(path)
    try:
        name = _stored_name(handle.schema_arrow, column)
        if name is None:  # pieces() splits only files whose column it found
            raise ExecutionError(f"{shorten(path.name)}: no column '{shorten(column)}'")
        table = handle.read_row_groups(list(range(*row_groups)), columns=[name],
                                       use_threads=False, use_pandas_metadata=False)
    finally:
        handle.close()
    frame = pd.DataFrame({column: table.column(0).to_pandas()})
    del table
    if reader == "numeric":
        return numeric_column(frame, column)
    if reader == "yes_no":
        return yes_no_column(frame, column)
    return category_column(frame, column)


def pieces(ds: FileDataset, column: str, reader: str, fingerprint: bool = False
           ) -> list[tuple[Path, tuple[int, int] | None]]:
    """The tasks of a query: each file whole (``None``), or a Parquet file of more than
    :data:`PIECE_ROWS` rows as ranges ``(first, stop)`` of whole row groups.

    Files are read whole when fingerprinting (a release: the task hashes the bytes it
    parses), for text files, for a yes/no column (whose messages name the file's row),
    and for a number column stored as anything but numbers; a file whose footer cannot
    be read is one task, which reports it. Only footers are read here, never a page.
    """
    whole: list[tuple[Path, tuple[int, int] | None]] = [(f, None) for f in ds.files]
    if fingerprint or ds.format != "parquet" or reader == "yes_no":
        return whole
    import pyarrow as pa
    import pyarrow.parquet as pq

    out: list[tuple[Path, tuple[int, int] | None]] = []
    for f in ds.files:
        try:
            meta = pq.read_metadata(f)
            name = _stored_name(meta.schema.to_arrow_schema(), column)
        except Exception:  # pyarrow raises many types: the task says what is wrong
            name = None
        if name is None or meta.num_rows <= PIECE_ROWS or meta.num_row_groups < 2 or (
                reader == "numeric" and not _is_number(
                    meta.schema.to_arrow_schema().field(name).type, pa)):
            out.append((f, None))
            continue
        ranges = _ranges([meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
        out.extend([(f, r) for r in ranges] if len(ranges) > 1 else [(f, None)])
    return out


def _is_number(kind: Any, pa: Any) -> bool:
    return bool(pa.types.is_integer(kind) or pa.types.is_floating(kind))


def _ranges(rows: list[int]) -> list[tuple[int, int]]:
    """Consecutive row groups gathered into ranges of at least :data:`PIECE_ROWS` rows;
    a remainder under half of it joins the last range."""
    out: list[tuple[int, int]] = []
    first, held = 0, 0
    for g, n in enumerate(rows):
        held += n
        if held >= PIECE_ROWS:
            out.append((first, g + 1))
            first, held = g + 1, 0
    if first < len(rows):
        if out and held < PIECE_ROWS // 2:
            out[-1] = (out[-1][0], len(rows))
        else:
            out.append((first, len(rows)))
    return out


def seeds(seed: int | None, n: int) -> list[int | None]:
    """Independent seeds per task for a simulation; None (the OS CSPRNG) otherwise.

    Parameters
    ----------
    seed : int or None
        The simulation's seed; None for a release (every task draws from its own OS
        CSPRNG: no seed is ever shipped to a worker).
    n : int
        How many tasks.

    Returns
    -------
    list of int or None
        One seed per task, spawned from ``seed`` (``numpy.random.SeedSequence``).
    """
    if seed is None:
        return [None] * n
    children = np.random.SeedSequence(seed).spawn(n)
    return [int(c.generate_state(2, np.uint64).view(np.uint64)[0]) for c in children]


def sum_files(ds: FileDataset, column: str, reader: str, spec: QuerySpec, *,
              client: Any = None, header: bool = True, seed: int | None = None,
              fingerprint: bool = False, state: Any = None
              ) -> tuple[Partial, list[FileEntry]]:
    """The dataset's exact integer aggregates of ``spec``, one task per file or per range
    of a big Parquet file's row groups (:func:`pieces`; a release's files whole).

    On ``client`` (a ``distributed.Client``) when given, else file by file in this
    process. ``state`` receives progress per file and may cancel: the pending tasks are
    cancelled and :class:`~dpstudio.jobs.Cancelled` raised (no noise has been drawn).
    A worker lost mid-query has its tasks rerun by Dask; when that fails too, one line.
    """
    if reader not in READERS:
        raise ExecutionError(f"unknown column reader {reader!r}")
    spec = spec.validated()
    root = str(Path(ds.source)) if Path(ds.source).is_dir() else None
    tasks = pieces(ds, column, reader, fingerprint)
    args = [(str(f), ds.format, column, reader, spec, header, s, fingerprint, root, r)
            for (f, r), s in zip(tasks, seeds(seed, len(tasks)), strict=True)]
    results: list[tuple[Partial, FileEntry | None]] = []
    text = f"Summing {len(ds.files)} files of {ds.name}" + (
        f" ({len(tasks)} parts)" if len(tasks) != len(ds.files) else "")
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
