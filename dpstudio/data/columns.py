"""Turn DataFrame columns into the plain numpy arrays the engine works on.

Numeric columns become ``float64`` arrays with ``NaN`` for missing values; categorical
and yes/no columns become object arrays of ``str`` with ``None`` for missing values.
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
    lookup = np.empty(len(texts) + 1, dtype=object)
    lookup[: len(texts)] = texts
    lookup[-1] = None  # code -1: missing
    np.take(lookup, codes, out=out)


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
