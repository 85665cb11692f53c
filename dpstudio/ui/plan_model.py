"""The release plan's table model: one row per statistic, its share and expected error.

:class:`PlanModel` holds the rows as a plan table holds them (column, query, ``by``,
weight, target) and the plan's settings (total ε and δ, split method, confidence,
mechanism, a public number of rows). Every change rebuilds the
:class:`~dpstudio.analysis.plan.ReleasePlan` with
:func:`~dpstudio.analysis.plan_resolve.plan_from_rows` against the declared schema and
reads its :meth:`~dpstudio.analysis.plan.ReleasePlan.table` (which never raises): the
ε and δ shares, each statistic's expected error, the total and the refusal. Nothing here
chooses ε from the data; the analyst's columns only add the measured clamping bias to a
cell's tooltip (analyst only).

Edits of a weight or a target are :class:`PlanEdit` commands on the model's undo stack
(Ctrl+Z), as are added and removed rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QUndoCommand, QUndoStack

from dpstudio.analysis.plan import ExpectedError, PlanTable, ReleasePlan
from dpstudio.analysis.plan_resolve import plan_from_rows
from dpstudio.engine.errors import EngineError
from dpstudio.ui.plan_texts import COLUMN_TIPS
from dpstudio.ui.style import current_palette
from dpstudio.ui.texts import QUERY_LABELS

__all__ = ["COLUMNS", "COL_BY", "COL_COLUMN", "COL_DELTA", "COL_EPSILON", "COL_ERROR",
           "COL_NOTE", "COL_QUERY", "COL_VALUE", "PlanEdit", "PlanModel"]

COLUMNS = ("Column", "Query", "By", "Weight", "ε share", "δ share", "Expected error", "Note")
(COL_COLUMN, COL_QUERY, COL_BY, COL_VALUE, COL_EPSILON, COL_DELTA, COL_ERROR,
 COL_NOTE) = range(len(COLUMNS))

_Index = QModelIndex | QPersistentModelIndex


def _num(x: float | None, digits: int = 4) -> str:
    if x is None or not math.isfinite(x):
        return "—"
    if 1e4 <= abs(x) < 1e15:
        return f"{x:,.0f}"  # 1,048,576 reads better than 1.049e+06
    return "0" if x == 0 else f"{x:.{digits}g}"


class PlanEdit(QUndoCommand):
    """One change of the plan's rows: ``apply(rows)`` sets them after or before."""

    def __init__(self, apply: Callable[[list[dict[str, Any]]], None],
                 before: list[dict[str, Any]], after: list[dict[str, Any]], text: str) -> None:
        super().__init__(text)
        self._apply = apply
        self._before = [dict(r) for r in before]
        self._after = [dict(r) for r in after]

    def redo(self) -> None:
        self._apply([dict(r) for r in self._after])

    def undo(self) -> None:
        self._apply([dict(r) for r in self._before])


class PlanModel(QAbstractTableModel):
    """The plan table: rows of statistics, their shares and expected errors.

    ``changed`` is emitted after every recomputation (the total, the refusal and the
    errors may all have moved); ``rejected`` carries the one sentence of a typed value
    that was not taken.
    """

    changed = Signal()
    rejected = Signal(str)

    def __init__(self, declared: Any = None, columns: Callable[[], Mapping[str, Any] | None]
                 | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self.declared = declared
        self._columns = columns
        self.undo_stack = QUndoStack(self)
        self._rows: list[dict[str, Any]] = []
        self.epsilon = 1.0
        self.delta = 0.0
        self.method = "weights"
        self.confidence = 0.95
        self.mechanism = "laplace"
        self.public_rows: int | None = None
        self.relation = "add-remove"
        self.plan: ReleasePlan | None = None
        self.table = PlanTable([], None, "a plan needs at least one statistic")

    # -- reading -------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """The rows as plan-table dicts (copies)."""
        return [dict(r) for r in self._rows]

    def errors(self) -> list[ExpectedError | None]:
        """Each row's expected error (None where the plan has none to show)."""
        found = self.table.rows
        return [found[i] if i < len(found) else None for i in range(len(self._rows))]

    def half_widths(self) -> list[float]:
        """Each row's planned half-width at the confidence (NaN where none)."""
        return [e.half_width if e is not None else math.nan for e in self.errors()]

    def shares(self) -> list[tuple[float, float] | None]:
        """Each row's (ε, δ) share, as the table shows it."""
        return [(e.epsilon, e.delta) if e is not None else None for e in self.errors()]

    @property
    def refusal(self) -> str | None:
        return self.table.refusal

    # -- settings --------------------------------------------------------------------------

    def set_settings(self, **settings: Any) -> None:
        """Change ``epsilon``, ``delta``, ``method``, ``confidence``, ``mechanism``,
        ``public_rows`` or ``relation`` and recompute."""
        for key, value in settings.items():
            if key not in ("epsilon", "delta", "method", "confidence", "mechanism",
                           "public_rows", "relation"):
                raise TypeError(f"unknown plan setting {key!r}")
            setattr(self, key, value)
        if "method" in settings:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, COL_VALUE, COL_VALUE)
        self.recompute()

    def set_declared(self, declared: Any) -> None:
        self.declared = declared
        self.recompute()

    # -- editing (every change is an undo command) ---------------------------------------

    def _put_rows(self, rows: list[dict[str, Any]]) -> None:
        if len(rows) == len(self._rows):
            # An edited value: the same rows (a reset would close the open editor).
            self._rows = rows
        else:
            self.beginResetModel()
            self._rows = rows
            self.endResetModel()
        self.recompute()

    def _push(self, after: list[dict[str, Any]], text: str) -> None:
        self.undo_stack.push(PlanEdit(self._put_rows, self._rows, after, text))

    def add_row(self, column: str, query: str, by: tuple[str, ...] = (),
                bins: int | None = None) -> None:
        """Append a statistic (weight 1, no target)."""
        row: dict[str, Any] = {"column": column, "query": query, "by": tuple(by),
                               "weight": 1.0, "target": None}
        if bins is not None:
            row["bins"] = int(bins)
        label = QUERY_LABELS.get(query, query).lower()
        self._push([*self.rows(), row], f"add {label} of {column}")

    def remove_row(self, index: int) -> None:
        if 0 <= index < len(self._rows):
            rows = self.rows()
            gone = rows.pop(index)
            self._push(rows, f"remove {gone['query']} of {gone['column']}")

    def set_value(self, row: int, text: str) -> bool:
        """A typed weight (weights split) or target (accuracy split); False if refused."""
        key = "weight" if self.method == "weights" else "target"
        text = text.strip()
        value: float | None
        if not text and key == "target":
            value = None
        else:
            try:
                value = float(text.replace("±", "").strip())
            except ValueError:
                self.rejected.emit(f"{key} must be a number, not {text!r}")
                return False
            if not (math.isfinite(value) and value > 0):
                self.rejected.emit(f"{key} must be a positive number, not {text!r}")
                return False
        if self._rows[row].get(key) == value:
            return True
        rows = self.rows()
        rows[row][key] = value
        self._push(rows, f"{key} of {rows[row]['column']} → {text or 'none'}")
        return True

    def fill_targets(self) -> bool:
        """Give every row without a target the half-width it has now (rounded up to 2
        significant digits): switching to accuracy targets starts from the current split."""
        widths = self.half_widths()
        rows = self.rows()
        changed = False
        for r, h in zip(rows, widths, strict=True):
            if r.get("target") is None and math.isfinite(h) and h > 0:
                # Rounded up: each target needs at most its current share, so the
                # targets fit the total the weights were splitting.
                step = 10.0 ** (math.floor(math.log10(h)) - 1)
                r["target"] = float(f"{math.ceil(h / step * (1 - 1e-12)) * step:.3g}")
                changed = True
        if changed:
            self._push(rows, "targets from the current split")
        return changed

    # -- the plan --------------------------------------------------------------------------

    def recompute(self) -> None:
        """Rebuild the plan and its table; never raises (a refusal says why)."""
        self.plan = None
        if not self._rows:
            self.table = PlanTable([], None, "add a statistic to the plan")
        else:
            try:
                self.plan = plan_from_rows(
                    self._rows, self.epsilon, self.delta, method=self.method,
                    confidence=self.confidence, relation=self.relation,
                    mechanism=self.mechanism,
                    public_rows=self.public_rows, declared=self.declared)
            except EngineError as exc:
                self.table = PlanTable([], None, str(exc))
            else:
                columns = self._columns() if self._columns is not None else None
                self.table = self.plan.table(columns)
        if self._rows:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(self._rows) - 1, len(COLUMNS) - 1))
        self.changed.emit()

    # -- Qt model ----------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section == COL_VALUE:
                return "Weight" if self.method == "weights" else "Target ±"
            if section == COL_ERROR:
                return f"Expected error ({self.confidence:.0%})"
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            if section == COL_VALUE:
                return COLUMN_TIPS["weight" if self.method == "weights" else "target"]
            return COLUMN_TIPS.get(COLUMNS[section])
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.isValid() and index.column() == COL_VALUE:
            return base | Qt.ItemFlag.ItemIsEditable
        return base

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        r, col = self._rows[index.row()], index.column()
        err = self.errors()[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self._text(r, err, col, role == Qt.ItemDataRole.EditRole)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(r, err, col)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_VALUE, COL_EPSILON,
                                                                 COL_DELTA, COL_ERROR):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole:
            palette = current_palette()
            if col == COL_NOTE or (col == COL_VALUE and self.method == "accuracy"
                                   and r.get("target") is None):
                return QColor(palette.muted)
            if col in (COL_EPSILON, COL_DELTA, COL_ERROR) and self.refusal is not None:
                return QColor(palette.muted)  # what it would take, not what is released
        return None

    def _text(self, r: dict[str, Any], err: ExpectedError | None, col: int,
              edit: bool) -> str:
        if col == COL_COLUMN:
            return str(r["column"])
        if col == COL_QUERY:
            q = QUERY_LABELS.get(r["query"], r["query"])
            return q + (f" ({r['bins']} bins)" if r.get("bins") else "")
        if col == COL_BY:
            return " × ".join(r.get("by") or ()) or "—"
        if col == COL_VALUE:
            v = float(r.get("weight", 1.0)) if self.method == "weights" else r.get("target")
            if v is None:
                return "" if edit else "none"
            return f"{v:.12g}" if edit else _num(v, 6)
        if err is None:
            return "—" if col != COL_NOTE else ""
        if col == COL_EPSILON:
            return _num(err.epsilon)
        if col == COL_DELTA:
            return _num(err.delta, 3)
        if col == COL_ERROR:
            cell = " per cell" if r.get("by") or r["query"] == "histogram" else ""
            if not math.isfinite(err.half_width):
                return "—"
            # The clamping bias the data shows sits beside the noise's half-width (the
            # analyst's figure; the plan never chooses ε from it).
            bias = f", bias {_num(err.bias)}" if err.bias else ""
            return f"± {_num(err.half_width)}{cell}{bias}"
        return err.note

    def _tip(self, r: dict[str, Any], err: ExpectedError | None, col: int) -> str | None:
        if col == COL_ERROR and err is not None:
            lines = [f"Half-width of the {self.confidence:.0%} interval, planned from the "
                     f"noise alone: ± {_num(err.half_width)}",
                     f"Root-mean-square error of the noise: {_num(err.noise)}"]
            if err.bias is not None:
                lines.append(f"Clamping bias measured on your data (analyst only, never "
                             f"used to choose ε): {_num(err.bias)}; expected error "
                             f"{_num(err.expected)}")
            if err.target is not None:
                lines.append(f"Target: ± {err.target:g}")
            return "\n".join(lines)
        if col == COL_NOTE and err is not None and err.note:
            return err.note
        if col == COL_VALUE:
            return COLUMN_TIPS["weight" if self.method == "weights" else "target"]
        if col == COL_BY:
            return COLUMN_TIPS["By"]
        return None

    def setData(self, index: _Index, value: Any,  # noqa: N802 - Qt API
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if (role != Qt.ItemDataRole.EditRole or not index.isValid()
                or index.column() != COL_VALUE):
            return False
        return self.set_value(index.row(), str(value))
