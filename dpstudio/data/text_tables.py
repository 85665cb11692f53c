"""Reading text tables the way pandas reads them, with pyarrow where it can: the file
kinds, the delimiter, the missing-value markers, the CSV options and the checks that send a
file back to pandas' parser. Shared by the whole-table loader (:mod:`dpstudio.data.loading`)
and the one-column reader (:mod:`dpstudio.data.projected`).
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpstudio.data.errors import shorten
from dpstudio.jobs import check

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PARQUET_EXTENSIONS", "TEXT_EXTENSIONS", "header_note", "sniff_delimiter"]

TEXT_EXTENSIONS = (".csv", ".tsv", ".txt")
PARQUET_EXTENSIONS = (".parquet", ".pq")


_SNIFF_DELIMITERS = ",\t;|"
_SNIFF_BYTES = 64 * 1024

_READ_CHUNK = 8 * 1024 * 1024
_UTF8_BOM = b"\xef\xbb\xbf"

#: Share of a text load's progress bar spent reading bytes, then parsing.
_READ_SHARE, _CONVERT_AT = 0.3, 0.85

_HEX_RE = re.compile(rb"0[xX]")


def header_note(df: pd.DataFrame, name: str = "the file") -> str | None:
    """A one-line note when every column name is a number, else ``None``.

    A file of numbers without a header line loses its first row to the column names
    (which then read "1.5", "2", …). Names like years can be numbers too, so this is
    said, not refused; ``--no-header`` (``header = false`` in a release spec) reads
    the first line as data.
    """
    names = [str(c) for c in df.columns]
    if not names or not all(_is_number(n) for n in names):
        return None
    shown = ", ".join(shorten(n, 20) for n in names[:3]) + (", …" if len(names) > 3 else "")
    return (f"{name}: every column name is a number ({shown}); if the file has no header "
            "line, its first row was read as the names: use --no-header to keep it as data")


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def sniff_delimiter(sample: str, default: str = ",") -> str:
    """Guess the field delimiter of delimited ``sample`` text among ``, TAB ; |``."""
    lines = [line for line in sample.splitlines() if line.strip()][:50]
    if not lines:
        return default
    try:
        return csv.Sniffer().sniff("\n".join(lines), delimiters=_SNIFF_DELIMITERS).delimiter
    except csv.Error:
        pass
    # The sniffer gives up on ragged or quoted samples; fall back to the header's
    # most frequent candidate.
    counts = {d: lines[0].count(d) for d in _SNIFF_DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > 0 else default


def _delimiter(ext: str, head: str) -> str:
    if ext == ".tsv":
        return "\t"
    if ext == ".txt":
        return sniff_delimiter(head)
    # CSV; but Excel in many European locales writes ';'-separated ".csv" files.
    first = head.lstrip().splitlines()[0] if head.strip() else ""
    return ";" if "," not in first and ";" in first else ","


def _step(state: Any, fraction: float, message: str) -> None:
    """Stop here if the caller cancelled; else report progress."""
    if state is not None:
        check(state)
        state.progress(min(max(fraction, 0.0), 1.0), message)


# --- the fast path: pyarrow's CSV reader ------------------------------------------------

#: What pandas' C parser reads as missing (pandas' default ``na_values``).
_NA_VALUES = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
)


def _has_hex(raw: bytes, chunk: int = 4 * 1024 * 1024) -> bool:
    """Whether ``0x``/``0X`` occurs, searched in slices so other threads (the UI) get
    the interpreter between them."""
    for start in range(0, len(raw), chunk):
        if _HEX_RE.search(raw, start, min(len(raw), start + chunk + 1)):
            return True
    return False


def _arrow_table(raw: bytes | str, delimiter: str, strings: frozenset[str] = frozenset(),
                 header: bool = True, include: Sequence[str] | None = None) -> Any:
    """The pyarrow table of ``raw``, or ``None`` if it might differ from pandas' reading.

    ``raw`` is the file's bytes, or its path (read in blocks, never whole).
    ``strings`` names columns to read as text (those pyarrow would read as dates).
    ``header=False``: the first line is data (columns named f0, f1, …; renamed later).
    ``include``: convert only these columns (the file's own names), in this order.
    """
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return None
    try:
        read_options, parse_options, convert_options = _csv_options(delimiter, header, strings,
                                                                    include)
        if isinstance(raw, bytes):
            table = pcsv.read_csv(pa.py_buffer(raw), read_options=read_options,
                                  parse_options=parse_options, convert_options=convert_options)
        else:
            # From the file, block by block: read_csv would hold every block of the file
            # (all its columns' text) until the end, ~6× one numeric column of 10⁷ rows.
            # The stream fixes the types on the first block; a later block that does not
            # fit them raises, and the full load reads the file instead.
            with pcsv.open_csv(raw, read_options=read_options, parse_options=parse_options,
                               convert_options=convert_options) as reader:
                table = pa.Table.from_batches(list(reader), schema=reader.schema)
    except Exception:  # ArrowInvalid for ragged rows, quoted line breaks, …
        return None

    names = list(table.column_names)
    if len(set(names)) != len(names):
        return None  # pandas renames repeats ("a", "a.1"): leave it to the C parser
    columns, renamed, temporal = [], [], set()
    for position, (name, column) in enumerate(zip(names, table.columns, strict=True)):
        kind = column.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            # The C parser skips spaces after a delimiter and reads " 2" as a number.
            padded = pc.not_equal(column, pc.utf8_trim_whitespace(column))
            if len(column) and pc.any(padded).as_py():
                return None
        elif pa.types.is_boolean(kind):
            if column.null_count:
                return None  # pandas keeps missing values in an object column
        elif pa.types.is_null(kind):
            column = pa.nulls(len(column), pa.float64())  # an empty column: all NaN
        elif pa.types.is_temporal(kind):
            temporal.add(name)
        elif pa.types.is_float64(kind):
            if _beyond_int64(column):
                return None
        elif not pa.types.is_int64(kind):
            return None
        columns.append(column)
        renamed.append(name if name.strip() else f"Unnamed: {position}")
    if temporal:
        if strings:
            return None  # pragma: no cover - a second reading is always all text there
        return _arrow_table(raw, delimiter, frozenset(temporal), header, include)
    return pa.table(columns, names=renamed)


def _csv_options(delimiter: str, header: bool, strings: frozenset[str] = frozenset(),
                 include: Sequence[str] | None = None) -> tuple[Any, Any, Any]:
    """pyarrow's read, parse and convert options that read text as pandas' parser does
    (its missing-value spellings, its booleans); ``strings`` are read as text."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    read_options = pcsv.ReadOptions(use_threads=True, autogenerate_column_names=not header)
    parse_options = pcsv.ParseOptions(
        delimiter=delimiter, quote_char='"', double_quote=True,
        newlines_in_values=False, ignore_empty_lines=True,
    )
    convert_options = pcsv.ConvertOptions(
        null_values=list(_NA_VALUES), strings_can_be_null=True,
        quoted_strings_can_be_null=True,
        true_values=["True", "TRUE", "true"], false_values=["False", "FALSE", "false"],
        column_types={name: pa.string() for name in strings},
        include_columns=list(include or ()),
    )
    return read_options, parse_options, convert_options


def _beyond_int64(column: Any) -> bool:
    """Whether a float64 column holds a finite value of magnitude ≥ 2⁶³: pandas' parser
    keeps such whole numbers exact (uint64 or objects), pyarrow makes them floats."""
    import pyarrow.compute as pc

    huge = pc.and_(pc.is_finite(column), pc.greater_equal(pc.abs(column), 2.0**63))
    return bool(pc.any(huge).as_py())


def _numbers_as_pandas_reads_them(column: Any) -> bool:
    """Whether a streamed int64 or float64 batch reads as pandas' parser reads it."""
    import pyarrow as pa

    return not (pa.types.is_float64(column.type) and _beyond_int64(column))


def _first_line(exc: BaseException | str) -> str:
    text = str(exc).strip()
    # Library messages may quote the user's data (a whole overlong line): keep it short.
    return shorten(text.splitlines()[0], 200) if text else type(exc).__name__
