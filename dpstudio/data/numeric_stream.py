"""Numeric columns streamed from a file into numpy arrays, never whole in Arrow.

A one-column query on a large file needs that column as a numpy array and nothing else.
Reading it as an Arrow table and converting that to pandas holds it two or three times
over (Arrow's pool keeps what it freed; the conversion makes a copy). Here the column is
read in batches (Parquet: by row group pages; text: by parser block) and each batch is
copied into one numpy array of the dtype the full load gives the column, so the peak is
the column once plus a batch. Parquet texts (which pandas keeps in Arrow, as
``large_string``) are cast batch by batch and kept as Arrow chunks, never held as both
Arrow string types at once.

Only the plain cases are taken, where the result is provably the full load's: numbers of
a numpy dtype (``float*``, ``int*``, ``uint*``, and ``bool`` without missing values),
Parquet texts that pandas reads as Arrow-backed ``str``, a Parquet file whose index is
a plain range, a text file whose types the first block fixes. Anything else returns
``None`` and the caller reads the file its usual way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: Rows per Parquet batch: ~0.5 MB of float64 in flight, whatever the row groups' size
#: (measured at 10⁷ rows: Arrow's pool then peaks at ~5 MB, against ~36 MB for 2²⁰ rows
#: with the whole row group pre-buffered, for the same time).
_PARQUET_BATCH = 1 << 16
#: Bytes per parsed text block: Arrow's pool then peaks at ~9 MB (at pyarrow's default
#: 1 MB, with threads reading ahead, ~37 MB); one thread reads the 10⁷-row file of the
#: benchmark in ~0.65 s either way.
_TEXT_BLOCK = 1 << 18


def parquet_numeric(path: os.PathLike[str] | str, stored: Sequence[str],
                    names: Sequence[str]) -> pd.DataFrame | None:
    """The ``stored`` columns of a Parquet file as a frame with columns ``names``, or
    ``None`` unless every one is a number that reads as a plain numpy dtype.

    Same values, dtypes and index as ``pd.read_parquet(path, columns=stored)``: the dtype
    is the one pandas gives the empty table (so pandas metadata naming an extension type
    sends the file back), made ``float64`` for an integer column with missing values
    (as pandas does); a ``bool`` column with missing values (pandas: objects) or a
    column without null counts in its statistics is left to pandas.

    Parameters
    ----------
    path : path-like
        The Parquet file.
    stored : sequence of str
        The columns as the file names them.
    names : sequence of str
        The names the frame gives them.

    Returns
    -------
    pandas.DataFrame or None
        The columns, or None when pandas must read them.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    # Page by page through a 1 MB buffer, never a whole column chunk (a row group) at once.
    handle = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
    try:
        return _read_parquet_numbers(handle, stored, names, pa)
    finally:
        handle.close()


def _read_parquet_numbers(handle: Any, stored: Sequence[str], names: Sequence[str],
                          pa: Any) -> pd.DataFrame | None:
    schema = handle.schema_arrow
    rows = handle.metadata.num_rows
    if not _plain_range_index(schema.pandas_metadata, rows):
        return None
    empty = schema.empty_table().select(list(stored)).to_pandas()
    dtypes: list[Any] = []
    for position, name in enumerate(stored):
        kind = schema.field(name).type
        dtype = empty.iloc[:, position].dtype
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
                return None
            dtypes.append(dtype)  # texts: Arrow-backed in pandas, kept as Arrow chunks
            continue
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                or pa.types.is_boolean(kind)) or not isinstance(dtype, np.dtype) \
                or dtype.kind not in "iufb":
            return None
        if dtype.kind in "iub":
            nulls = _null_count(handle, schema.get_field_index(name))
            if nulls is None or (nulls and dtype.kind == "b"):
                return None
            if nulls:
                dtype = np.dtype(np.float64)  # pandas: integers with missing values
        dtypes.append(dtype)
    out: list[Any] = [np.empty(rows, dtype=d) if isinstance(d, np.dtype) else [] for d in dtypes]
    at = 0
    for batch in handle.iter_batches(batch_size=_PARQUET_BATCH, columns=list(stored),
                                     use_pandas_metadata=False):
        n = batch.num_rows
        for column, target in zip(batch.columns, out, strict=True):
            if isinstance(target, list):
                # pandas holds texts as large_string: cast batch by batch, never the
                # whole column twice (string and large_string) at once.
                target.append(column.cast(pa.large_string()))
            else:
                target[at:at + n] = column.to_numpy(zero_copy_only=False)
        at += n
    if at != rows:  # pragma: no cover - a footer that lies: pandas says what is wrong
        return None
    for i, (target, dtype) in enumerate(zip(out, dtypes, strict=True)):
        if isinstance(target, list):
            chunks = pa.chunked_array(target, type=pa.large_string())
            target.clear()
            series = pa.table([chunks], names=["c"]).to_pandas().iloc[:, 0]
            if series.dtype != dtype:
                return None
            out[i] = series.reset_index(drop=True)
    return _frame(names, out)


def _plain_range_index(meta: dict | None, rows: int) -> bool:
    """Whether pandas reads the file with the index ``0 … rows-1`` (no stored index)."""
    index = (meta or {}).get("index_columns", [])
    if not index:
        return True
    if len(index) != 1 or not isinstance(index[0], dict):
        return False
    r = index[0]
    return (r.get("kind") == "range" and r.get("name") is None and r.get("start") == 0
            and r.get("step") == 1 and r.get("stop") == rows)


def _null_count(handle: Any, field: int) -> int | None:
    """Missing values in a top-level column from the row groups' statistics, or None."""
    meta = handle.metadata
    leaf = [i for i in range(meta.num_columns)
            if meta.schema.column(i).path == handle.schema_arrow.names[field]]
    if len(leaf) != 1:
        return None
    total = 0
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(leaf[0]).statistics
        if stats is None or not stats.has_null_count:
            return None
        total += stats.null_count
    return total


def text_numeric(path: os.PathLike[str] | str, options: tuple[Any, Any, Any],
                 names: Sequence[str], allowed: Callable[[Any], bool],
                 step: Callable[[], None] | None = None) -> pd.DataFrame | None:
    """The included columns of a text file, streamed by pyarrow's CSV reader, as a frame
    with columns ``names``, or ``None`` unless each is ``int64`` or ``float64`` for the
    whole file and every batch passes ``allowed``.

    The types are those the first block gives (a later block that does not fit raises,
    and the caller reads the file otherwise); an ``int64`` column with a missing value
    becomes ``float64`` with NaN there, as ``Table.to_pandas`` makes it.

    Parameters
    ----------
    path : path-like
        The text file.
    options : tuple
        pyarrow's ``(ReadOptions, ParseOptions, ConvertOptions)``, the latter with
        ``include_columns``.
    names : sequence of str
        The names the frame gives the included columns, in their order.
    allowed : callable
        ``allowed(arrow_array)``: whether a batch of a column reads as pandas' parser
        reads it (else None).
    step : callable, optional
        Called between batches (progress; it may raise to cancel).

    Returns
    -------
    pandas.DataFrame or None
        The columns, or None when the file must be read otherwise.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    read_options, parse_options, convert_options = options
    read_options.block_size = _TEXT_BLOCK
    read_options.use_threads = False  # threads read ahead a varying number of blocks
    try:
        reader = pcsv.open_csv(os.fspath(path), read_options=read_options,
                               parse_options=parse_options, convert_options=convert_options)
    except Exception:
        return None
    with reader:
        kinds = [f.type for f in reader.schema]
        if len(kinds) != len(names) or not all(
                pa.types.is_int64(k) or pa.types.is_float64(k) for k in kinds):
            return None
        expected = _expected_rows(path)
        out = [_Growing(np.int64 if pa.types.is_int64(k) else np.float64, expected)
               for k in kinds]
        try:
            for batch in reader:
                for column, target in zip(batch.columns, out, strict=True):
                    if not allowed(column):
                        return None
                    target.add(column)
                if step is not None:
                    step()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # ragged rows, a late type
            return None
    return _frame(names, [g.finish() for g in out])


class _Growing:
    """A numpy array filled batch by batch, first sized from an estimate of the rows.

    ``np.empty`` of a large size maps pages that cost nothing until written; when the
    estimate falls short the array grows by a quarter with ``ndarray.resize``
    (``realloc``: a large array is remapped, not copied; only the new part is zeroed),
    and :meth:`finish` gives back the unused end.
    """

    def __init__(self, dtype: Any, expected: int) -> None:
        self.array = np.empty(max(expected, 1), dtype=dtype)
        self.size = 0

    def add(self, column: Any) -> None:
        if column.null_count and self.array.dtype.kind == "i":
            # pandas makes an integer column with a missing value float64 (NaN there).
            self.array = self.array[: self.size].astype(np.float64)
        need = self.size + len(column)
        if need > len(self.array):
            self.array.resize(max(need, len(self.array) + len(self.array) // 4 + (1 << 16)),
                              refcheck=False)
        self.array[self.size:need] = column.to_numpy(zero_copy_only=False)
        self.size = need

    def finish(self) -> np.ndarray:
        self.array.resize(self.size, refcheck=False)
        return self.array


def _expected_rows(path: os.PathLike[str] | str) -> int:
    """Rows in a text file, estimated from the line breaks in its first megabyte (a
    little over: the array is then sized once)."""
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        head = handle.read(1 << 20)
    lines = head.count(b"\n") or 1
    return int(size * lines / max(len(head), 1) * 1.02) + 1024


def _frame(names: Sequence[str], arrays: list[Any]) -> pd.DataFrame:
    """A frame over ``arrays`` (numpy arrays or Series; not copied), with a plain range
    index."""
    return pd.DataFrame({n: pd.Series(a, copy=False) for n, a in zip(names, arrays, strict=True)},
                        copy=False)
