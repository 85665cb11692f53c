"""Reading only some columns of a table: :func:`~dpstudio.data.loading.load_table` with
``columns``.

The projected read gives the very frame the full load would give those columns (values,
dtypes, names, ``attrs``, notes and errors), or steps aside (``None``) and the full load
reads the file and cuts it. Parquet reads only the asked column chunks; UTF-8 text is
parsed from the file in blocks, converting only the asked columns; numbers go straight
into numpy arrays (:mod:`~dpstudio.data.numeric_stream`). A text column can also be read
straight into codes into a dictionary of its texts (:func:`project_codes`, for a
histogram of categories), never holding its texts.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpstudio.data.errors import DataError, shorten
from dpstudio.data.numeric_stream import (
    _expected_rows,
    _plain_range_index,
    parquet_numeric,
    text_numeric,
)
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


# --- a text column as codes into its dictionary (a histogram of categories) ------------

#: Rows of a Parquet batch, bytes of a text block: coded at once.
_CODES_BATCH = 1 << 16
_CODES_BLOCK = 1 << 18


def project_codes(p: Path, ext: str, state: Any, header: bool, column: str,
                  texts: Callable[[Any, bool], list[str | None]]
                  ) -> tuple[np.ndarray, list[str], dict[str, Any]] | None:
    """A text column of a Parquet or UTF-8 text file as codes into a dictionary of its
    texts, each batch dictionary-encoded by Arrow, never one text per row; or ``None``
    when only the loader reads it right (the column is then loaded and coded).

    Only a column the projected read gives as Arrow-backed text (``str``) is taken, on
    the same conditions and checks. ``texts(values, strip)`` gives the text of each
    distinct raw value (``values``: a pandas ``str`` array) as
    :func:`~dpstudio.data.columns.category_codes` gives it on the loaded column;
    ``strip``: the column's first rows are mostly distinct, so pandas strips them.

    Returns
    -------
    tuple or None
        Codes (floats, NaN where missing), the dictionary, and the ``attrs`` the
        loaded frame would carry; None to load the column instead.
    """
    if ext in PARQUET_EXTENSIONS:
        read = _parquet_codes(p, column, texts)
    elif ext in TEXT_EXTENSIONS:
        read = _text_codes(p, ext, state, header, column, texts)
    else:
        return None
    if read is None:
        return None
    codes, dictionary, names, attrs = read
    frame = pd.DataFrame(index=pd.RangeIndex(codes.size))
    frame.attrs.update(attrs)
    frame = finish_projected(frame, names, p, ext, header)
    return codes, dictionary, dict(frame.attrs)


def _str_dtype() -> Any:
    """The dtype pandas gives an Arrow text column, if Arrow-backed (else None)."""
    import pyarrow as pa

    dtype = pa.table({"t": pa.array([], pa.string())}).to_pandas().iloc[:, 0].dtype
    return dtype if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow" else None


def _code_batches(batches: Iterable[Any], rows: int, dtype: Any,
                  texts: Callable[[Any, bool], list[str | None]],
                  step: Callable[[], None] | None = None) -> tuple[np.ndarray, list[str]]:
    """Codes of a text column given in Arrow batches (text arrays).

    The first batches are held until they make the sample of rows that decides whether
    the texts are stripped as a whole (as the loaded column would be); then each batch is
    dictionary-encoded, its distinct values mapped to the one dictionary of texts once,
    and each row costs one look-up in that table.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from dpstudio.data.columns import _DISTINCT_SAMPLE, widened

    codes = np.empty(max(rows, 1), dtype=np.float16)  # widened as the texts grow
    index: dict[str, int] = {}
    size, held, strip = 0, [], None
    for batch in itertools.chain(batches, [None]):
        if strip is None:
            if batch is not None:
                held.append(batch)
                if sum(len(b) for b in held) < _DISTINCT_SAMPLE:
                    continue
            first = pa.chunked_array(held, type=held[0].type).slice(0, _DISTINCT_SAMPLE) \
                if held else pa.chunked_array([], type=pa.string())
            distinct = pc.count_distinct(first, mode="only_valid").as_py()
            strip = not distinct <= 0.1 * max(len(first), 1)
            todo, held = held, []
        else:
            todo = [] if batch is None else [batch]
        for text in todo:
            encoded = text.dictionary_encode()
            values = pd.array(encoded.dictionary.to_pylist(), dtype=dtype)
            table = np.empty(len(values) + 1, dtype=np.float64)
            table[:-1] = [np.nan if t is None else index.setdefault(t, len(index))
                          for t in texts(values, strip)]
            table[-1] = np.nan  # a missing row
            codes = widened(codes, len(index))
            at = encoded.indices.fill_null(len(values)).to_numpy(zero_copy_only=False)
            need = size + at.size
            if need > codes.size:
                codes.resize(max(need, codes.size + codes.size // 4 + (1 << 16)),
                             refcheck=False)
            np.take(table.astype(codes.dtype), at, out=codes[size:need])
            size = need
            if step is not None:
                step()
    codes.resize(size, refcheck=False)
    return codes, list(index)


def _parquet_codes(p: Path, column: str, texts: Callable[[Any, bool], list[str | None]]
                   ) -> tuple[np.ndarray, list[str], list[str], dict[str, Any]] | None:
    """A text column of a Parquet file, on the conditions of :func:`parquet_numeric`."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pq.read_schema(p)
    except Exception:  # the loader reports an unreadable file in its own words
        return None
    index = {c for c in (schema.pandas_metadata or {}).get("index_columns", ())
             if isinstance(c, str)}
    stored = [c for c in schema.names if c not in index]
    names = [str(c).strip() for c in stored]
    if len(set(names)) != len(names) or any(not n for n in names):
        return None
    _require(names, (column,))
    name = dict(zip(names, stored, strict=True))[column]
    kind = schema.field(name).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return None
    dtype = schema.empty_table().select([name]).to_pandas().iloc[:, 0].dtype
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return None
    try:
        handle = pq.ParquetFile(p, pre_buffer=False, buffer_size=1 << 20)
    except Exception:
        return None
    try:
        rows = handle.metadata.num_rows
        if not _plain_range_index(schema.pandas_metadata, rows):
            return None
        batches = (b.column(0) for b in handle.iter_batches(
            batch_size=_CODES_BATCH, columns=[name], use_pandas_metadata=False))
        codes, dictionary = _code_batches(batches, rows, dtype, texts)
    except CodesNotTaken:
        raise
    except Exception:  # pandas reads it, or says what is wrong
        return None
    finally:
        handle.close()
    if codes.size != rows:  # pragma: no cover - a footer that lies
        return None
    return codes, dictionary, names, {"format": "parquet", "encoding": None}


class CodesNotTaken(Exception):
    """Raised by ``texts`` when the column must be loaded (a value it refuses)."""


def _text_codes(p: Path, ext: str, state: Any, header: bool, column: str,
                texts: Callable[[Any, bool], list[str | None]]
                ) -> tuple[np.ndarray, list[str], list[str], dict[str, Any]] | None:
    """A text column of a UTF-8 text file, on the conditions of :func:`_text`, streamed
    block by block with the checks :func:`_arrow_table` makes of a text column."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    dtype = _str_dtype()
    if dtype is None:  # pragma: no cover - pandas without Arrow-backed texts
        return None
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
        stored = [f"f{i}" for i in range(len(stored))]
    if len(set(names)) != len(names) or any(not n.strip() or n != n.strip() for n in names):
        return None
    _require(names, (column,))
    include = [dict(zip(names, stored, strict=True))[column]]

    def checked(reader: Any):
        for batch in reader:
            text = batch.column(0)
            if len(text) and pc.any(pc.not_equal(text, pc.utf8_trim_whitespace(text))).as_py():
                raise _Padded  # the C parser reads " 2" as a number: the loader reads it
            yield text

    for strings in (frozenset(), frozenset(include)):  # dates are read again, as text
        read_options, parse_options, convert_options = _csv_options(
            delimiter, header, strings, include=include)
        read_options.block_size = _CODES_BLOCK
        read_options.use_threads = False  # threads read ahead a varying number of blocks
        try:
            reader = pcsv.open_csv(os.fspath(p), read_options=read_options,
                                   parse_options=parse_options,
                                   convert_options=convert_options)
        except Exception:
            return None
        with reader:
            kind = reader.schema.field(0).type
            if pa.types.is_temporal(kind) and not strings:
                continue
            if not pa.types.is_string(kind):
                return None  # numbers, booleans, an empty column: the loader's frame
            try:
                codes, dictionary = _code_batches(
                    checked(reader), _expected_rows(p), dtype, texts,
                    step=lambda: _step(state, _READ_SHARE, f"Parsing {p.name}"))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, _Padded):
                return None  # ragged rows, a late type, padded texts
        return codes, dictionary, names, {"format": ext[1:], "encoding": encoding,
                                          "delimiter": delimiter}
    return None  # pragma: no cover - the second reading is all text


class _Padded(Exception):
    """A text with spaces around it: pandas' parser reads it otherwise."""
