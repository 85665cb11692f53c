"""Read a user's table (CSV, TSV, text, Parquet, Excel) into a pandas DataFrame.

Every failure becomes a one-line :class:`DataError` naming the file and, when known,
the line. Text files are decoded as UTF-8 (with or without a byte-order mark), then
Windows-1252, then Latin-1; the encoding used is recorded in ``df.attrs["encoding"]``.

Speed: well-formed UTF-8 text is parsed by pyarrow's multi-threaded CSV reader straight
from the bytes (a million rows in a fraction of a second). Whenever that fast path could
read the file differently from pandas' C parser (padded fields, quoted line breaks,
ragged rows, duplicate names, …) it steps aside and the C parser reads the file, so the
result and every error message (with its line number) are the C parser's.

Long loads report progress and can be cancelled: pass ``state`` (any object with
``progress(fraction, message)`` and ``cancelled()``, see :mod:`dpstudio.jobs`);
a cancelled load raises :class:`~dpstudio.jobs.Cancelled` between steps.
"""

from __future__ import annotations

import csv
import io
import os
import re
import warnings
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from dpstudio.data.errors import DataError, shorten
from dpstudio.data.text_tables import (
    _CONVERT_AT,
    _READ_CHUNK,
    _READ_SHARE,
    _SNIFF_BYTES,
    _UTF8_BOM,
    PARQUET_EXTENSIONS,
    TEXT_EXTENSIONS,
    _arrow_table,
    _delimiter,
    _first_line,
    _has_hex,
    _step,
    header_note,
)

EXCEL_EXTENSIONS = (".xlsx", ".xlsm", ".xls")
SUPPORTED_EXTENSIONS: tuple[str, ...] = TEXT_EXTENSIONS + PARQUET_EXTENSIONS + EXCEL_EXTENSIONS

#: Filter string for ``QFileDialog`` (the data layer only builds the text).
FILE_DIALOG_FILTER = ";;".join(
    [
        "Data files (" + " ".join(f"*{ext}" for ext in SUPPORTED_EXTENSIONS) + ")",
        "CSV / TSV / text (*.csv *.tsv *.txt)",
        "Parquet (*.parquet *.pq)",
        "Excel (*.xlsx *.xlsm *.xls)",
        "All files (*)",
    ]
)

#: Encodings tried in order; Latin-1 decodes any byte string, so it is the last resort.
ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")

_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_EOF_QUOTE_RE = re.compile(r"EOF inside string starting at row (\d+)")


def load_table(path: str | os.PathLike[str], *, state: Any = None,
               header: bool = True, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Load a table from ``path``; the format follows the file extension.

    ``df.attrs`` records ``source`` (the path), ``format``, ``header`` and, for text
    files, ``encoding`` and ``delimiter``. Column names are strings without surrounding
    spaces. Raises :class:`DataError` for a missing, empty, malformed or unsupported file.
    ``state`` (optional) receives progress and may cancel the load between steps.

    ``header=False`` reads a text or Excel file whose first line is data: the columns
    are named ``"1"``, ``"2"``, … (Parquet files always carry their names). With a header,
    a first line made only of numbers is probably data: ``df.attrs["load_notes"]`` then
    holds a one-line note saying so (see :func:`header_note`). Infinities stay ±inf: every
    release treats them as missing and counts them for the analyst.

    ``columns`` (optional) names the only columns to read, as the full load would name
    them: the frame then holds those, in that order, with the same values and types the
    full load gives them. Parquet reads only their column chunks; UTF-8 text is parsed
    from the file in blocks, converting only those columns, and never held whole in
    memory; numeric columns go batch by batch into one numpy array each, so a column of
    numbers costs about its own size (see :mod:`dpstudio.data.projected`). Other text
    and Excel files are read whole and cut down (they would read differently otherwise).
    A name the file does not have raises the same
    :class:`DataError` as asking the full table for it (``no column 'x' (available: …)``).

    Parameters
    ----------
    path : str or os.PathLike
        The file: ``.csv``, ``.tsv``, ``.txt``, ``.parquet``, ``.pq``, ``.xlsx``,
        ``.xlsm`` or ``.xls``.
    state : object, optional
        Receives ``progress(fraction, message)`` and answers ``cancelled()``.
    header : bool, default True
        Whether the first line of a text or Excel file names the columns.
    columns : sequence of str, optional
        Read only these columns (all when None).

    Returns
    -------
    pandas.DataFrame
        The table, with ``attrs`` as above.

    Raises
    ------
    DataError
        A missing, empty, malformed or unsupported file, or an unknown column.
    """
    p = Path(path)
    name = shorten(p.name or str(p))
    if not p.exists():
        raise DataError(f"{name}: file not found ({shorten(p, 200)})")
    if p.is_dir():
        raise DataError(f"{name}: is a folder, not a data file")
    ext = p.suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        shown = ext or "no extension"
        raise DataError(
            f"{name}: unsupported file type ({shown}); "
            f"DP Studio reads {', '.join(SUPPORTED_EXTENSIONS)}"
        )
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise DataError(f"{name}: cannot read file ({exc.strerror or exc})") from exc
    if size == 0:
        raise DataError(f"{name}: the file is empty")

    _step(state, 0.0, f"Reading {name}")
    if columns is not None:
        wanted = tuple(dict.fromkeys(str(c) for c in columns))
        from dpstudio.data.projected import finish_projected, load_projected

        projected = load_projected(p, ext, state, header, wanted)
        if projected is not None:
            df, names = projected
            _step(state, 1.0, f"Read {name}")
            return finish_projected(df, names, p, ext, header)
    if ext in TEXT_EXTENSIONS:
        df = _load_text(p, ext, state, header)
    elif ext in PARQUET_EXTENSIONS:
        df = _load_parquet(p)
        header = True  # the format names its columns
    else:
        df = _load_excel(p, header)
    _step(state, 1.0, f"Read {name}")

    if not header:
        attrs = dict(df.attrs)
        df.columns = [str(i) for i in range(1, df.shape[1] + 1)]
        df.attrs.update(attrs)
    df = _tidy_columns(df, name)
    if df.shape[1] == 0:
        raise DataError(f"{name}: no columns found")
    if df.shape[0] == 0:
        raise DataError(f"{name}: has column names but no data rows")
    # Parquet names its columns itself: numbers there are names, never a lost row.
    named = header and ext not in PARQUET_EXTENSIONS
    notes = [note] if named and (note := header_note(df, name)) else []
    df.attrs.update(source=str(p), header=header, load_notes=notes)
    if columns is not None:  # the formats that cannot leave columns unread: cut them here
        from dpstudio.data.projected import select

        df = select(df, list(df.columns), wanted)
    return df






def decode_bytes(raw: bytes) -> tuple[str, str]:
    """Decode ``raw`` with the first encoding of :data:`ENCODINGS` that fits.

    Returns ``(text, encoding)``; ``encoding`` is ``"utf-8"`` when there is no BOM.
    """
    for encoding in ENCODINGS:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding == "utf-8-sig" and not raw.startswith(b"\xef\xbb\xbf"):
            encoding = "utf-8"
        return text, encoding
    raise AssertionError("latin-1 decodes every byte string")  # pragma: no cover




def _load_text(p: Path, ext: str, state: Any = None, header: bool = True) -> pd.DataFrame:
    name = shorten(p.name)
    raw = _read_bytes(p, state)
    if b"\x00" in raw[:_SNIFF_BYTES]:
        raise DataError(f"{name}: looks like a binary file, not {ext[1:].upper()} text")

    if (fast := _load_utf8_fast(raw, ext, state, header)) is not None:
        return fast

    _step(state, _READ_SHARE, f"Parsing {name}")
    text, encoding = decode_bytes(raw)
    del raw
    if not text.strip():
        raise DataError(f"{name}: the file is empty")
    delimiter = _delimiter(ext, text[:_SNIFF_BYTES])

    try:
        with warnings.catch_warnings():
            # With index_col=False pandas only warns (and drops data) when the first rows
            # have more fields than the header; treat that as the error it is.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.StringIO(text), sep=delimiter, skipinitialspace=True, index_col=False,
                header=0 if header else None,
            )
    except pd.errors.EmptyDataError as exc:
        raise DataError(f"{name}: the file is empty") from exc
    except pd.errors.ParserError as exc:
        message = None
        if _FIELDS_RE.search(str(exc)):
            # pandas counts records, not physical lines (quoted fields may span lines).
            message = _ragged_message(name, text, delimiter)
        raise DataError(message or _parser_message(name, str(exc))) from exc
    except pd.errors.ParserWarning as exc:
        message = _ragged_message(name, text, delimiter)
        raise DataError(message or f"{name}: some lines have more fields than the header") from exc
    except (ValueError, UnicodeError) as exc:
        raise DataError(f"{name}: cannot be read as a table ({_first_line(exc)})") from exc
    if header:
        df = _drop_empty_unnamed(df)
    df.attrs.update(format=ext[1:], encoding=encoding, delimiter=delimiter)
    return df




def _drop_empty_unnamed(df: pd.DataFrame) -> pd.DataFrame:
    """A trailing delimiter on the header line makes an empty "Unnamed: 3" column."""
    empty_unnamed = [c for c in df.columns if str(c).startswith("Unnamed: ") and df[c].isna().all()]
    return df.drop(columns=empty_unnamed) if empty_unnamed else df




def _read_bytes(p: Path, state: Any) -> bytes:
    """The file's bytes, read in chunks so that progress shows and cancelling is prompt."""
    try:
        size = p.stat().st_size
        if state is None:
            return p.read_bytes()
        chunks, done = [], 0
        with p.open("rb") as handle:
            while chunk := handle.read(_READ_CHUNK):
                chunks.append(chunk)
                done += len(chunk)
                _step(state, _READ_SHARE * done / max(size, 1), f"Reading {p.name}")
        return b"".join(chunks)
    except OSError as exc:
        raise DataError(f"{p.name}: cannot read file ({exc.strerror or exc})") from exc




def _load_utf8_fast(raw: bytes, ext: str, state: Any, header: bool = True
                    ) -> pd.DataFrame | None:
    """Parse UTF-8 text with pyarrow, or ``None`` to leave the file to the C parser.

    ``None`` whenever the result could differ from the C parser's: an encoding other than
    UTF-8, padded fields (the C parser skips initial spaces), a quoted line break, rows
    with more or fewer fields than the header, repeated names, dates, … — and on any
    error, so that the C parser's path reports it with its line number.
    """
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    encoding = "utf-8"
    if raw.startswith(_UTF8_BOM):
        raw, encoding = raw[len(_UTF8_BOM):], "utf-8-sig"
    if not raw or raw.isspace() or _has_hex(raw):
        return None  # "empty" comes from the C parser's path; pyarrow reads 0x10 as 16
    head = raw[:_SNIFF_BYTES].decode("utf-8", errors="ignore")
    delimiter = _delimiter(ext, head)
    _step(state, _READ_SHARE, "Parsing")
    table = _arrow_table(raw, delimiter, header=header)
    if table is None:
        return None
    _step(state, _CONVERT_AT, "Converting")
    try:
        df = table.to_pandas(split_blocks=True)
    except Exception:  # pragma: no cover - the C parser's path reports the problem
        return None
    if header:
        df = _drop_empty_unnamed(df)
    df.attrs.update(format=ext[1:], encoding=encoding, delimiter=delimiter)
    return df




def _ragged_message(name: str, text: str, delimiter: str) -> str | None:
    """Describe the first line with more (non-empty) fields than the header, if any."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter, skipinitialspace=True)
    expected = None
    for row in reader:
        if expected is None:
            if row:
                expected = len(row)
            continue
        if len(row) > expected and any(field.strip() for field in row[expected:]):
            return f"{name}: line {reader.line_num} has {len(row)} fields, expected {expected}"
    return None


def _parser_message(name: str, message: str) -> str:
    if m := _FIELDS_RE.search(message):
        expected, line, saw = m.groups()
        return f"{name}: line {line} has {saw} fields, expected {expected}"
    if m := _EOF_QUOTE_RE.search(message):
        line = int(m.group(1)) + 1  # pandas counts data rows from 0 after the header
        return f"{name}: a quote opened near line {line} is never closed"
    detail = message.split("C error:")[-1].strip() or message
    return f"{name}: malformed file ({_first_line(detail)})"


def _load_parquet(p: Path) -> pd.DataFrame:
    try:
        df = pd.read_parquet(p)
    except ImportError as exc:  # pragma: no cover - pyarrow is a dependency
        raise DataError(f"{p.name}: reading Parquet needs the 'pyarrow' package") from exc
    except Exception as exc:  # pyarrow raises many types (ArrowInvalid, OSError, ...)
        raise DataError(f"{p.name}: not a readable Parquet file ({_first_line(exc)})") from exc
    df.attrs.update(format="parquet", encoding=None)
    return df


def _load_excel(p: Path, header: bool = True) -> pd.DataFrame:
    try:
        with pd.ExcelFile(p) as book:
            if not book.sheet_names:
                raise DataError(f"{p.name}: the workbook has no sheets")
            sheet = book.sheet_names[0]
            df = pd.read_excel(book, sheet_name=sheet, header=0 if header else None)
    except DataError:
        raise
    except ImportError as exc:
        # Old binary .xls needs 'xlrd', which DP Studio does not ship.
        raise DataError(
            f"{p.name}: this Excel format needs an extra package; save it as .xlsx or .csv"
        ) from exc
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as exc:
        raise DataError(f"{p.name}: not a readable Excel workbook ({_first_line(exc)})") from exc
    df.attrs.update(format="excel", encoding=None, sheet=str(sheet))
    return df


def _tidy_columns(df: pd.DataFrame, name: str) -> pd.DataFrame:
    columns = [str(c).strip() for c in df.columns]
    seen: set[str] = set()
    for position, column in enumerate(columns, start=1):
        if column in seen:
            raise DataError(f"{name}: column {position} repeats the name '{shorten(column)}'")
        seen.add(column)
    if columns != list(df.columns):
        attrs = dict(df.attrs)
        df.columns = columns
        df.attrs.update(attrs)
    return df


