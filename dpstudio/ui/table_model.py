"""A read-only, virtualized Qt table model over a pandas DataFrame.

The view asks only for the cells it shows, so a million-row table costs no more to
display than a ten-row one. Each column is held as one numpy array, so a cell lookup is
an array index, not a pandas ``iloc`` call; the arrays are taken from the frame the first
time a cell of their column is asked for, so a 5,000-column file costs nothing per column
until its columns are scrolled into view.

Column names can be anything a file's header holds (a reliability run used one of
100,000 characters): :func:`elide_name` bounds what a header, a list or a combo box
shows, and :func:`name_tooltip` gives the full name for its tooltip.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from dpstudio.data.errors import shorten

MISSING_TEXT = "—"
_MISSING_COLOUR = QColor("#9aa1a9")
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

_Index = QModelIndex | QPersistentModelIndex

#: Longest column name shown as is in a header, list or combo box (characters).
NAME_CHARS = 60
#: Longest name quoted inside a sentence shown in a word-wrapped label: a name is one
#: unbreakable word, and a wider one would widen the label (and its whole panel).
PHRASE_CHARS = 32
#: Longest name a tooltip shows in full; beyond it, a head and the length (a
#: 100,000-character tooltip would be a window wider than any screen).
TOOLTIP_CHARS = 2000


def elide_name(name: str, limit: int = NAME_CHARS) -> str:
    """``name`` cut to at most ``limit`` characters, ending in "…" when cut.

    Shown text is bounded up front because Qt lays out the whole string each time it
    measures, elides or paints it, and a name is one unbreakable word in a wrapped label.
    """
    name = str(name)
    if len(name) <= limit:
        return name
    return name[: max(limit - 1, 1)].rstrip() + "…"


def name_tooltip(name: str, limit: int = TOOLTIP_CHARS) -> str:
    """The full name for a tooltip; past ``limit`` characters its head and its length."""
    return shorten(name, limit + 1)  # the data layer's rule for echoed user text


class DataFrameModel(QAbstractTableModel):
    """Shows ``frame``; missing values appear as a grey dash, numbers right-aligned."""

    def __init__(self, frame: pd.DataFrame | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self._frame = pd.DataFrame()
        self._n_rows = 0
        self._n_columns = 0
        self._columns: list[Any] = []  # per column: its values, or None until first asked
        self._numeric: list[bool | None] = []
        self._names: list[str] = []
        self._shown: dict[int, str] = {}  # header texts already elided
        if frame is not None:
            self.set_frame(frame)

    @property
    def frame(self) -> pd.DataFrame:
        return self._frame

    def set_frame(self, frame: pd.DataFrame) -> None:
        self.beginResetModel()
        self._frame = frame
        self._n_rows = int(frame.shape[0])
        self._n_columns = int(frame.shape[1])
        self._names = [str(c) for c in frame.columns]
        # Nothing per column up front: each column's array is made when first shown.
        self._columns = [None] * self._n_columns
        self._numeric = [None] * self._n_columns
        self._shown = {}
        self.endResetModel()

    def column_values(self, column: int) -> Any:
        """Column ``column``'s values as one array (made on first use, then kept)."""
        values = self._columns[column]
        if values is None:
            series = self._frame.iloc[:, column]
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
            self._columns[column] = values
            self._numeric[column] = numeric
        return values

    def is_numeric(self, column: int) -> bool:
        """Whether column ``column`` holds numbers (right-aligned)."""
        if self._numeric[column] is None:
            self.column_values(column)
        return bool(self._numeric[column])

    def cell_text(self, row: int, column: int) -> str:
        """The text cell (``row``, ``column``) shows (no model index: column fitting)."""
        value = self.column_values(column)[row]
        return MISSING_TEXT if _is_missing(value) else format_value(value)

    def materialized_columns(self) -> int:
        """How many columns' arrays exist so far (tests: the model stays lazy)."""
        return sum(values is not None for values in self._columns)

    # -- QAbstractTableModel ------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._n_rows

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._n_columns

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        column = index.column()
        value = self.column_values(column)[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return MISSING_TEXT if _is_missing(value) else format_value(value)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if self.is_numeric(column) else _LEFT
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
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and not 0 <= section < len(self._names):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if horizontal:
                shown = self._shown.get(section)
                if shown is None:
                    shown = self._shown[section] = elide_name(self._names[section])
                return shown
            return str(section + 1)
        if role == Qt.ItemDataRole.ToolTipRole and horizontal:
            return name_tooltip(self._names[section])
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
