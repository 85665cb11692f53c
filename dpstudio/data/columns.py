"""Turn DataFrame columns into the plain numpy arrays the engine works on.

Numeric columns become ``float64`` arrays with ``NaN`` for missing values; categorical
and yes/no columns become object arrays of ``str`` with ``None`` for missing values. A
count or histogram of categories needs no text per row: :func:`category_codes` (and
:func:`load_category_codes`, straight from a file) give the same texts as codes into a
dictionary, :func:`count_column` only which rows are missing.
Row numbers in messages count data rows from 1 (the header is not a row).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dpstudio.data.errors import DataError, shorten
from dpstudio.data.schema import NO_SPELLINGS, YES_SPELLINGS, ColumnSpec, ColumnType

_MAX_LISTED_COLUMNS = 12
_LISTED_NAME_CHARS = 40
# Rows looked at to guess whether a text column holds few distinct values.
_DISTINCT_SAMPLE = 20_000
# Rows converted to text at once: the codes of one slice (2 MB), never of the whole column.
_SLICE = 1 << 18


def require_column(df: pd.DataFrame, name: str) -> pd.Series:
    """``df[name]``, or a :class:`DataError` listing the columns there are."""
    if name in df.columns:
        column = df[name]
        if isinstance(column, pd.DataFrame):  # duplicated name
            raise DataError(f"column '{shorten(name)}' appears more than once")
        return column
    names = [shorten(c, _LISTED_NAME_CHARS) for c in df.columns[:_MAX_LISTED_COLUMNS]]
    listed = ", ".join(names)
    if df.shape[1] > _MAX_LISTED_COLUMNS:
        listed += f", … ({df.shape[1]} in all)"
    raise DataError(f"no column '{shorten(name)}' (available: {listed or 'none'})")


def numeric_column(df: pd.DataFrame, name: str) -> np.ndarray:
    """Column ``name`` as ``float64`` with ``NaN`` for missing values.

    Numbers stored as text (``" 12.5"``) are accepted; anything else raises
    ``DataError("column 'x' is not numeric (e.g. row 3: 'abc')")``.
    """
    series = require_column(df, name)
    dtype = series.dtype
    if ptypes.is_bool_dtype(dtype):
        return series.astype("float64").to_numpy(dtype=np.float64, na_value=np.nan)
    if ptypes.is_numeric_dtype(dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    present = series.notna().to_numpy()
    if isinstance(dtype, pd.StringDtype) or (
        dtype is np.dtype(object) and ptypes.infer_dtype(series, skipna=True) in ("string", "empty")
    ):
        stripped = series.astype("object").where(present, None).str.strip()
        empty = (stripped == "").fillna(False).to_numpy(dtype=bool)
    else:
        text = series.astype("object").where(present, None)
        stripped = text.map(lambda v: v.strip() if isinstance(v, str) else v)
        empty = stripped.map(lambda v: isinstance(v, str) and v == "").to_numpy()
    converted = pd.to_numeric(stripped.where(~empty, None), errors="coerce")
    bad = present & ~empty & converted.isna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"column '{name}' is not numeric (e.g. row {row + 1}: {_show(series.iloc[row])})"
        )
    return converted.to_numpy(dtype=np.float64, na_value=np.nan)


def category_column(df: pd.DataFrame, name: str, *, yes_no: bool = False) -> np.ndarray:
    """Column ``name`` as an object array of ``str`` (``None`` where missing).

    Values are stripped; whole-number floats print without ``.0`` (``2.0`` → ``"2"``).
    With ``yes_no=True`` common spellings (yes/no, y/n, true/false, t/f, 1/0) map to
    ``"yes"``/``"no"`` and any other value raises :class:`DataError`.

    Each distinct value is converted once, then spread to the rows by its code, so a
    million rows of a few categories cost little more than the categories. The column is
    converted in slices: beside the result, only one slice's codes are held at a time.
    """
    series = require_column(df, name)
    if not _factorizable(series):
        return _category_column_by_row(series, name, yes_no=yes_no)
    # Mostly distinct texts: stripping each row beats hashing them all.
    distinct = not yes_no and _is_text(series) and not _few_distinct(series)
    out = np.empty(len(series), dtype=object)
    for start in range(0, len(series), _SLICE):
        part = series.iloc[start:start + _SLICE]
        if distinct:
            stripped = part.str.strip()
            piece = stripped.to_numpy(dtype=object, na_value=None, copy=True)
            piece[(stripped == "").fillna(False).to_numpy(dtype=bool)] = None
            out[start:start + len(part)] = piece
        else:
            _coded(part, name, yes_no, series, start, out[start:start + len(part)])
    return out


def _coded(part: pd.Series, name: str, yes_no: bool, series: pd.Series, start: int,
           out: np.ndarray) -> None:
    """A slice of the column as texts into ``out``, each distinct value converted once."""
    codes, texts = _slice_texts(part, name, yes_no, series, start)
    lookup = np.empty(len(texts) + 1, dtype=object)
    lookup[: len(texts)] = texts
    lookup[-1] = None  # code -1: missing
    np.take(lookup, codes, out=out)


def _slice_texts(part: pd.Series, name: str, yes_no: bool, series: pd.Series, start: int
                 ) -> tuple[np.ndarray, list[str | None]]:
    """A slice's codes (−1 where missing) and the text of each code, converted once."""
    codes, uniques = pd.factorize(part, use_na_sentinel=True)
    texts = _texts(uniques)
    if yes_no:
        mapped = [None if t is None else normalize_yes_no(t) for t in texts]
        bad = [i for i, (t, m) in enumerate(zip(texts, mapped, strict=True))
               if t is not None and m is None]
        if bad:
            row = start + int(np.flatnonzero(np.isin(codes, bad))[0])
            raise DataError(
                f"column '{name}' is not yes/no (e.g. row {row + 1}: {_show(series.iloc[row])})"
            )
        texts = mapped
    return codes, texts


def _stripped_texts(part: pd.Series) -> tuple[np.ndarray, list[str | None]]:
    """A slice of mostly distinct texts, stripped as :func:`category_column` strips them
    (``str.strip``; blank → missing): codes (−1 where missing) and their texts."""
    codes, uniques = pd.factorize(part.str.strip(), use_na_sentinel=True)
    return codes, [t or None for t in uniques.tolist()]


def _slices(series: pd.Series, name: str, yes_no: bool):
    """Per slice of :data:`_SLICE` rows: its start, codes (−1 where missing) and the text
    of each code, exactly the texts :func:`category_column` gives those rows."""
    if not _factorizable(series):  # mixed objects: row by row, as category_column does
        texts = _category_column_by_row(series, name, yes_no=yes_no)
        for start in range(0, len(texts), _SLICE):
            codes, uniques = pd.factorize(texts[start:start + _SLICE], use_na_sentinel=True)
            yield start, codes, list(uniques)
        return
    distinct = not yes_no and _is_text(series) and not _few_distinct(series)
    for start in range(0, len(series), _SLICE):
        part = series.iloc[start:start + _SLICE]
        if distinct:
            yield start, *_stripped_texts(part)
        else:
            yield start, *_slice_texts(part, name, yes_no, series, start)


def category_codes(df: pd.DataFrame, name: str, *, yes_no: bool = False
                   ) -> tuple[np.ndarray, list[str]]:
    """Column ``name`` as codes into a dictionary of its distinct texts.

    The texts, missing values and errors of :func:`category_column` (row ``i`` reads
    ``dictionary[codes[i]]``, or is missing where the code is NaN), without a text per
    row: a slice at a time is factorized (an Arrow-backed column by Arrow's dictionary
    encoding), each distinct value converted to text once. What the engine takes as
    :func:`~dpstudio.engine.queries.codes.dictionary_codes`.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    name : str
        The column.
    yes_no : bool
        Map yes/no spellings to ``"yes"``/``"no"`` (any other value raises), as
        :func:`yes_no_column`.

    Returns
    -------
    codes : numpy.ndarray
        Floats, the narrowest that number the texts exactly (``float16`` up to 2¹¹
        distinct texts, ``float32`` up to 2²⁴, else ``float64``): per row, the index of
        its text in ``dictionary``, or NaN where missing.
    dictionary : list of str
        The distinct texts, in order of first appearance.
    """
    series = require_column(df, name)
    index: dict[str, int] = {}
    codes = np.empty(len(series), dtype=_CODE_TYPES[0][0])
    for start, local, texts in _slices(series, name, yes_no):
        table = np.empty(len(texts) + 1, dtype=np.float64)
        table[:-1] = [np.nan if t is None else index.setdefault(t, len(index)) for t in texts]
        table[-1] = np.nan  # code −1: missing
        codes = widened(codes, len(index))
        np.take(table.astype(codes.dtype), local, out=codes[start:start + len(local)])
    return codes, list(index)


#: The float types codes are kept in, each with the most texts it numbers exactly (it
#: holds every whole number up to 2¹¹, 2²⁴, 2⁵³); NaN marks a missing row.
_CODE_TYPES = ((np.float16, 1 << 11), (np.float32, 1 << 24), (np.float64, 1 << 53))


def widened(codes: np.ndarray, texts: int) -> np.ndarray:
    """``codes``, or a copy of a wider float type once ``texts`` texts outgrow it."""
    dtype = next(np.dtype(d) for d, limit in _CODE_TYPES if texts <= limit)
    return codes if dtype.itemsize <= codes.dtype.itemsize else codes.astype(dtype)


def count_column(df: pd.DataFrame, name: str) -> np.ndarray:
    """Column ``name`` as a count takes it: what is missing there is NaN.

    A count needs only which rows hold a value, and a value is missing exactly where
    :func:`category_column` gives None (None, NaN, ``pd.NA``, a blank text; ±inf is a
    value, as its text ``"inf"``). A column of plain numbers is given as it is (no copy)
    when it holds no ±inf; otherwise each row is 0 (present) or NaN (missing), in
    ``float16``.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    name : str
        The column.

    Returns
    -------
    numpy.ndarray
        Floats (NaN where missing) or integers and booleans (never missing), one per row.
    """
    series = require_column(df, name)
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return series.to_numpy()  # never missing
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        values = series.to_numpy()
        if not any(np.isinf(values[i:i + _SLICE]).any()
                   for i in range(0, values.size, _SLICE)):
            return values  # NaN where missing, nothing else non-finite
        out = np.zeros(values.size, dtype=np.float16)
        for i in range(0, values.size, _SLICE):
            out[i:i + _SLICE][np.isnan(values[i:i + _SLICE])] = np.nan
        return out
    out = np.zeros(len(series), dtype=np.float16)
    for start, local, texts in _slices(series, name, False):
        missing = np.array([t is None for t in texts] + [True])
        out[start:start + len(local)][missing[local]] = np.nan
    return out


def _few_distinct(series: pd.Series) -> bool:
    """Whether the first rows repeat their values (under 10% distinct): then the column
    is factorized and each distinct text stripped once, ~4x faster than every row."""
    head = series.iloc[:_DISTINCT_SAMPLE]
    return head.nunique(dropna=True) <= 0.1 * max(len(head), 1)


def _factorizable(series: pd.Series) -> bool:
    """Whether equal values (as pandas hashes them) always give equal texts.

    Not so for objects mixing numbers and booleans (``1 == 1.0 == True``, texts differ).
    """
    if series.dtype is not np.dtype(object):
        return True
    return pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty")


def _is_text(series: pd.Series) -> bool:
    return isinstance(series.dtype, pd.StringDtype) or series.dtype is np.dtype(object)


def _texts(uniques: Any) -> list[str | None]:
    """:func:`_to_text` of each distinct value (whole floats vectorized)."""
    values = np.asarray(uniques) if isinstance(uniques, np.ndarray | pd.Index) else None
    if values is not None and values.dtype == np.float64:
        whole = np.isfinite(values) & (values == np.floor(values)) & (np.abs(values) < 1e15)
        texts = np.empty(len(values), dtype=object)
        texts[whole] = values[whole].astype(np.int64).astype(str).astype(object)
        texts[~whole] = [_to_text(v) for v in values[~whole].tolist()]
        return texts.tolist()
    listed = uniques.tolist() if hasattr(uniques, "tolist") else list(uniques)
    return [_to_text(value) for value in listed]


def _category_column_by_row(series: pd.Series, name: str, *, yes_no: bool) -> np.ndarray:
    out = np.empty(len(series), dtype=object)
    for i, value in enumerate(series.tolist()):
        text = _to_text(value)
        if text is not None and yes_no:
            mapped = normalize_yes_no(text)
            if mapped is None:
                raise DataError(f"column '{name}' is not yes/no (e.g. row {i + 1}: {_show(value)})")
            text = mapped
        out[i] = text
    return out


def yes_no_column(df: pd.DataFrame, name: str) -> np.ndarray:
    """Shorthand for ``category_column(df, name, yes_no=True)``."""
    return category_column(df, name, yes_no=True)


def normalize_yes_no(value: Any) -> str | None:
    """``"yes"``, ``"no"``, or ``None`` if ``value`` is no known yes/no spelling."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    text = str(value).strip().lower()
    if text in YES_SPELLINGS:
        return "yes"
    if text in NO_SPELLINGS:
        return "no"
    return None


def column_values(df: pd.DataFrame, spec: ColumnSpec) -> np.ndarray:
    """The column as its declared type reads it (numeric, yes/no, or category strings)."""
    if spec.type is ColumnType.NUMERIC:
        return numeric_column(df, spec.name)
    return category_column(df, spec.name, yes_no=spec.type is ColumnType.BOOLEAN)


def _to_text(value: Any) -> str | None:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float | np.floating):
        if np.isnan(value):
            return None
        if float(value).is_integer() and abs(value) < 1e15:
            return str(int(value))
    text = str(value).strip()
    return text or None


def _show(value: Any) -> str:
    return shorten(repr(value) if isinstance(value, str) else str(value), 40)
