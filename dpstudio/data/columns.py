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

from dpstudio.data.errors import DataError
from dpstudio.data.schema import NO_SPELLINGS, YES_SPELLINGS, ColumnSpec, ColumnType

_MAX_LISTED_COLUMNS = 12


def require_column(df: pd.DataFrame, name: str) -> pd.Series:
    """``df[name]``, or a :class:`DataError` listing the columns there are."""
    if name in df.columns:
        column = df[name]
        if isinstance(column, pd.DataFrame):  # duplicated name
            raise DataError(f"column '{name}' appears more than once")
        return column
    names = [str(c) for c in df.columns]
    listed = ", ".join(names[:_MAX_LISTED_COLUMNS])
    if len(names) > _MAX_LISTED_COLUMNS:
        listed += f", … ({len(names)} in all)"
    raise DataError(f"no column '{name}' (available: {listed or 'none'})")


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
    """
    series = require_column(df, name)
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
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "…"
