"""Read a user's table (CSV, TSV, text, Parquet, Excel) into a pandas DataFrame.

Every failure becomes a one-line :class:`DataError` naming the file and, when known,
the line. Text files are decoded as UTF-8 (with or without a byte-order mark), then
Windows-1252, then Latin-1; the encoding used is recorded in ``df.attrs["encoding"]``.
"""

from __future__ import annotations

import csv
import io
import os
import re
import warnings
import zipfile
from pathlib import Path

import pandas as pd

from dpstudio.data.errors import DataError

TEXT_EXTENSIONS = (".csv", ".tsv", ".txt")
PARQUET_EXTENSIONS = (".parquet", ".pq")
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

_SNIFF_DELIMITERS = ",\t;|"
_SNIFF_BYTES = 64 * 1024

_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_EOF_QUOTE_RE = re.compile(r"EOF inside string starting at row (\d+)")


def load_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Load a table from ``path``; the format follows the file extension.

    ``df.attrs`` records ``source`` (the path), ``format`` and, for text files,
    ``encoding`` and ``delimiter``. Column names are strings without surrounding spaces.
    Raises :class:`DataError` for a missing, empty, malformed or unsupported file.
    """
    p = Path(path)
    name = p.name or str(p)
    if not p.exists():
        raise DataError(f"{name}: file not found ({p})")
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

    if ext in TEXT_EXTENSIONS:
        df = _load_text(p, ext)
    elif ext in PARQUET_EXTENSIONS:
        df = _load_parquet(p)
    else:
        df = _load_excel(p)

    df = _tidy_columns(df, name)
    if df.shape[1] == 0:
        raise DataError(f"{name}: no columns found")
    if df.shape[0] == 0:
        raise DataError(f"{name}: has column names but no data rows")
    df.attrs["source"] = str(p)
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


def _load_text(p: Path, ext: str) -> pd.DataFrame:
    name = p.name
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise DataError(f"{name}: cannot read file ({exc.strerror or exc})") from exc
    if b"\x00" in raw[:_SNIFF_BYTES]:
        raise DataError(f"{name}: looks like a binary file, not {ext[1:].upper()} text")
    text, encoding = decode_bytes(raw)
    if not text.strip():
        raise DataError(f"{name}: the file is empty")

    head = text[:_SNIFF_BYTES]
    if ext == ".tsv":
        delimiter = "\t"
    elif ext == ".txt":
        delimiter = sniff_delimiter(head)
    else:
        # CSV; but Excel in many European locales writes ';'-separated ".csv" files.
        first = head.lstrip().splitlines()[0] if head.strip() else ""
        delimiter = ";" if "," not in first and ";" in first else ","

    try:
        with warnings.catch_warnings():
            # With index_col=False pandas only warns (and drops data) when the first rows
            # have more fields than the header; treat that as the error it is.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.StringIO(text), sep=delimiter, skipinitialspace=True, index_col=False
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
    # A trailing delimiter on the header line makes an empty "Unnamed: 3" column.
    empty_unnamed = [c for c in df.columns if str(c).startswith("Unnamed: ") and df[c].isna().all()]
    if empty_unnamed:
        df = df.drop(columns=empty_unnamed)
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


def _load_excel(p: Path) -> pd.DataFrame:
    try:
        with pd.ExcelFile(p) as book:
            if not book.sheet_names:
                raise DataError(f"{p.name}: the workbook has no sheets")
            sheet = book.sheet_names[0]
            df = pd.read_excel(book, sheet_name=sheet)
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
            raise DataError(f"{name}: column {position} repeats the name '{column}'")
        seen.add(column)
    if columns != list(df.columns):
        attrs = dict(df.attrs)
        df.columns = columns
        df.attrs.update(attrs)
    return df


def _first_line(exc: BaseException | str) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
