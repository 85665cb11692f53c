"""A read-only, virtualized Qt table model over a pandas DataFrame.

The view asks only for the cells it shows, so a million-row table costs no more to
display than a ten-row one. Each column is held as one numpy array, so a cell lookup is
an array index, not a pandas ``iloc`` call.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

MISSING_TEXT = "—"
_MISSING_COLOUR = QColor("#9aa1a9")
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

_Index = QModelIndex | QPersistentModelIndex


class DataFrameModel(QAbstractTableModel):
    """Shows ``frame``; missing values appear as a grey dash, numbers right-aligned."""

    def __init__(self, frame: pd.DataFrame | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self._frame = pd.DataFrame()
        self._n_rows = 0
        self._columns: list[Any] = []
        self._numeric: list[bool] = []
        self._names: list[str] = []
        if frame is not None:
            self.set_frame(frame)

    @property
    def frame(self) -> pd.DataFrame:
        return self._frame

    def set_frame(self, frame: pd.DataFrame) -> None:
        self.beginResetModel()
        self._frame = frame
        self._n_rows = int(frame.shape[0])
        self._names = [str(c) for c in frame.columns]
        self._columns, self._numeric = [], []
        for j in range(frame.shape[1]):
            series = frame.iloc[:, j]
            numeric = ptypes.is_numeric_dtype(series.dtype) and not ptypes.is_bool_dtype(
                series.dtype
            )
            if isinstance(series.dtype, pd.StringDtype):
                # Indexed in place: turning a million strings into Python objects up front
                # would hold the UI thread for a good fraction of a second.
                values = series.array
            elif numeric and series.hasnans:
                values = series.to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                values = series.to_numpy()
            self._columns.append(values)
            self._numeric.append(numeric)
        self.endResetModel()

    # -- QAbstractTableModel ------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._n_rows

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        column = index.column()
        value = self._columns[column][index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return MISSING_TEXT if _is_missing(value) else format_value(value)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if self._numeric[column] else _LEFT
        if role == Qt.ItemDataRole.ForegroundRole and _is_missing(value):
            return _MISSING_COLOUR
        if role == Qt.ItemDataRole.ToolTipRole and _is_missing(value):
            return "Missing value"
        return None

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if orientation == Qt.Orientation.Horizontal:
                return self._names[section] if 0 <= section < len(self._names) else None
            return str(section + 1)
        if role == Qt.ItemDataRole.TextAlignmentRole and orientation == Qt.Orientation.Vertical:
            return _RIGHT
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


def format_value(value: Any) -> str:
    """Cell text: whole floats without ``.0``, other floats to 10 significant digits."""
    if isinstance(value, float | np.floating):
        if float(value).is_integer() and abs(value) < 1e15:
            return str(int(value))
        return format(float(value), ".10g")
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    return str(value)


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float | np.floating):
        return math.isnan(value)
    if isinstance(value, np.datetime64 | np.timedelta64):
        return bool(np.isnat(value))
    return False
