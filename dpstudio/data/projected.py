"""Reading only some columns of a table: :func:`~dpstudio.data.loading.load_table` with
``columns``.

The projected read gives the very frame the full load would give those columns (values,
dtypes, names, ``attrs``, notes and errors), or steps aside (``None``) and the full load
reads the file and cuts it. Parquet reads only the asked column chunks; UTF-8 text is
parsed from the file in blocks, converting only the asked columns; numbers go straight
into numpy arrays (:mod:`~dpstudio.data.numeric_stream`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from dpstudio.data.errors import DataError, shorten
from dpstudio.data.numeric_stream import parquet_numeric, text_numeric
from dpstudio.data.text_tables import (
    _CONVERT_AT,
    _HEX_RE,
    _READ_CHUNK,
    _READ_SHARE,
    _SNIFF_BYTES,
    _UTF8_BOM,
    PARQUET_EXTENSIONS,
    TEXT_EXTENSIONS,
    _arrow_table,
    _csv_options,
    _delimiter,
    _first_line,
    _has_hex,
    _numbers_as_pandas_reads_them,
    _step,
    header_note,
)


def load_projected(p: Path, ext: str, state: Any, header: bool, wanted: tuple[str, ...]
                   ) -> tuple[pd.DataFrame, list[str]] | None:
    """The ``wanted`` columns read on their own, and every column's name; ``None`` when
    only the full load reads the file right (it then reads it, and the columns are cut
    from its frame)."""
    if ext in PARQUET_EXTENSIONS:
        return _parquet(p, wanted)
    if ext in TEXT_EXTENSIONS:
        return _text(p, ext, state, header, wanted)
    return None  # Excel: openpyxl reads every cell of a sheet whatever is asked


def finish_projected(df: pd.DataFrame, names: list[str], p: Path, ext: str,
                     header: bool) -> pd.DataFrame:
    """The checks and ``attrs`` of :func:`load_table`, made on every column's name."""
    name = shorten(p.name or str(p))
    if df.shape[0] == 0:
        raise DataError(f"{name}: has column names but no data rows")
    named = header and ext not in PARQUET_EXTENSIONS
    note = header_note(pd.DataFrame(columns=names), name) if named else None
    df.attrs.update(source=str(p), header=header if ext not in PARQUET_EXTENSIONS else True,
                    load_notes=[note] if note else [])
    return df


def select(df: pd.DataFrame, names: list[str], wanted: tuple[str, ...]) -> pd.DataFrame:
    """``df``'s ``wanted`` columns (a new frame, ``attrs`` kept); an unknown name raises
    the data layer's one message for it, which lists ``names``."""
    _require(names, wanted)
    attrs = dict(df.attrs)
    out = df[list(wanted)]
    out.attrs.update(attrs)
    return out


def _require(names: list[str], wanted: tuple[str, ...]) -> None:
    """Raise :func:`~dpstudio.data.columns.require_column`'s error for the first of
    ``wanted`` not among ``names`` (so a projected read says what a full one says)."""
    missing = [w for w in wanted if w not in set(names)]
    if missing:
        from dpstudio.data.columns import require_column

        require_column(pd.DataFrame(columns=names), missing[0])


def _parquet(p: Path, wanted: tuple[str, ...]) -> tuple[pd.DataFrame, list[str]] | None:
    """Only the ``wanted`` column chunks of a Parquet file; the names from its footer."""
    try:
        import pyarrow.parquet as pq

        schema = pq.read_schema(p)
    except Exception:  # the full load reports an unreadable file in its own words
        return None
    # pandas keeps a frame's named index as a column of the file; read_parquet makes it
    # the index again, so it is no column of the table.
    index = {c for c in (schema.pandas_metadata or {}).get("index_columns", ())
             if isinstance(c, str)}
    stored = [c for c in schema.names if c not in index]
    names = [str(c).strip() for c in stored]
    if len(set(names)) != len(names) or any(not n for n in names):
        return None  # repeated or blank names: the full load says what is wrong
    _require(names, wanted)
    by_name = dict(zip(names, stored, strict=True))
    try:
        # Numbers only (the common query): row group by row group into numpy arrays.
        df = parquet_numeric(p, [by_name[w] for w in wanted], wanted)
    except Exception:  # pandas reads it, or says what is wrong
        df = None
    if df is not None:
        df.attrs.update(format="parquet", encoding=None)
        return df, names
    try:
        df = pd.read_parquet(p, columns=[by_name[w] for w in wanted])
    except Exception as exc:
        raise DataError(f"{p.name}: not a readable Parquet file ({_first_line(exc)})") from exc
    df.columns = list(wanted)
    df.attrs.update(format="parquet", encoding=None)
    return df, names


def _text(p: Path, ext: str, state: Any, header: bool, wanted: tuple[str, ...]
          ) -> tuple[pd.DataFrame, list[str]] | None:
    """The ``wanted`` columns of a UTF-8 text file, parsed by pyarrow from the file.

    The same conditions as :func:`_load_utf8_fast` (valid UTF-8, no ``0x``, no byte 0
    at the start, names neither repeated nor blank), checked in one streaming pass, and
    the same checks of the columns read; ``None`` otherwise.
    """
    scan = _scan_text(p, state)
    if scan is None:
        return None
    encoding, head = scan
    delimiter = _delimiter(ext, head)
    stored = _text_names(p, delimiter, header)
    if stored is None:
        return None
    names = stored if header else [str(i) for i in range(1, len(stored) + 1)]
    if not header:
        stored = [f"f{i}" for i in range(len(stored))]  # pyarrow's generated names
    if len(set(names)) != len(names) or any(not n.strip() or n != n.strip() for n in names):
        return None  # the C parser renames repeats and blanks; names with spaces get trimmed
    _require(names, wanted)
    by_name = dict(zip(names, stored, strict=True))
    _step(state, _READ_SHARE, f"Parsing {p.name}")
    include = [by_name[w] for w in wanted]
    # Numbers only (the common query): streamed into numpy arrays, never a whole Arrow table.
    df = text_numeric(p, _csv_options(delimiter, header, include=include), wanted,
                      allowed=_numbers_as_pandas_reads_them,
                      step=lambda: _step(state, _READ_SHARE, f"Parsing {p.name}"))
    if df is not None:
        df.attrs.update(format=ext[1:], encoding=encoding, delimiter=delimiter)
        return df, names
    table = _arrow_table(os.fspath(p), delimiter, header=header, include=include)
    if table is None:
        return None
    _step(state, _CONVERT_AT, "Converting")
    try:
        # self_destruct: each column's Arrow buffers are freed as soon as it is converted.
        df = table.to_pandas(split_blocks=True, self_destruct=True)
    except Exception:  # pragma: no cover - the C parser's path reports the problem
        return None
    del table
    df.columns = list(wanted)
    df.attrs.update(format=ext[1:], encoding=encoding, delimiter=delimiter)
    return df, names


def _scan_text(p: Path, state: Any) -> tuple[str, str] | None:
    """One pass over the file in chunks: its encoding and first characters if it is
    non-empty UTF-8 without ``0x`` (the fast path's conditions), else ``None``."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    size, done, head, tail, content = max(p.stat().st_size, 1), 0, b"", b"", False
    try:
        with p.open("rb") as handle:
            while chunk := handle.read(_READ_CHUNK):
                if not head:
                    head = chunk[:_SNIFF_BYTES]
                    if b"\x00" in head:
                        return None
                if not chunk.isascii():
                    decoder.decode(chunk)  # raises on invalid UTF-8
                if _HEX_RE.search(tail + chunk[:1]) or _has_hex(chunk):
                    return None  # pyarrow reads 0x10 as 16, pandas as text
                content = content or not chunk.isspace()
                tail = chunk[-1:]
                done += len(chunk)
                _step(state, _READ_SHARE * done / size, f"Reading {p.name}")
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return None
    except OSError as exc:
        raise DataError(f"{p.name}: cannot read file ({exc.strerror or exc})") from exc
    if not content:
        return None  # "empty" comes from the full load's path
    encoding = "utf-8"
    if head.startswith(_UTF8_BOM):
        head, encoding = head[len(_UTF8_BOM):], "utf-8-sig"
    if not head.strip():
        return None
    return encoding, head.decode("utf-8", errors="ignore")


def _text_names(p: Path, delimiter: str, header: bool) -> list[str] | None:
    """The names of a text file's columns as pyarrow reads its first line (``f0``, … for
    a file without a header), from its first block only; ``None`` if it cannot."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        # From the first megabyte's whole lines, not the file: a reader of the file reads
        # blocks ahead in the background (up to ~36 MB) even when closed after one.
        with p.open("rb") as handle:
            head = handle.read(1 << 20)
            if handle.read(1):
                cut = head.rfind(b"\n")
                if cut < 0:
                    return None
                head = head[:cut + 1]
        reader = pcsv.open_csv(
            pa.py_buffer(head),
            read_options=pcsv.ReadOptions(use_threads=False, block_size=1 << 20,
                                          autogenerate_column_names=not header),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char='"',
                                            double_quote=True, newlines_in_values=False,
                                            ignore_empty_lines=True),
        )
        names = list(reader.schema.names)
        reader.close()
    except Exception:
        return None
    return names
