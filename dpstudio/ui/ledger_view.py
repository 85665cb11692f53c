"""The "Ledger" tab: the open project's releases of one dataset, its cumulative ε as a step
curve under the budget line, and what is left.

It only reads: :meth:`LedgerView.set_data` takes what
:class:`~dpstudio.ui.project_controller.ProjectController` read from the project.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_CEILING, Decimal
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from dpstudio.project import BudgetState, CumulativePoint, ReleaseRecord
from dpstudio.ui.plots import add_hint, linear_ticks, retitle, style_plot
from dpstudio.ui.style import MUTED
from dpstudio.ui.texts import QUERY_LABELS
from dpstudio.ui.utility_plot import trust_colour

__all__ = ["ACCOUNTANT_TIPS", "COLUMNS", "LedgerData", "LedgerView", "plot_title",
           "tamper_text"]

COLUMNS = ("#", "Time", "Query", "Column", "Mechanism", "ε", "δ", "Status", "Files")
BUDGET_COLOUR = "#b42318"
STATUS_COLOURS = {"done": trust_colour("central"), "pending": "#d97706", "aborted": "#9aa1a9",
                  "deleted": BUDGET_COLOUR}
STATUS_TIPS = {
    "done": "Released: its files were written and recorded",
    "pending": "Interrupted and not yet recovered (its output folder is missing); its budget "
               "is charged",
    "aborted": "Interrupted before its files were all written: they were removed, but its "
               "budget stays charged (the noise was drawn)",
    "deleted": "Deleted from the ledger outside DP Studio: its chain entry or manifest says "
               "it was released, so its budget stays charged",
}
PLOT_TOOLTIP = ("ε spent on this dataset after each release under its accountant (basic: the "
                "ε of its releases add up; advanced, zcdp, pld: what the releases drew, "
                "composed up to each one, at the δ they spent so far); the red line is its "
                "total budget. See \"Spent under each accountant\" for what the others "
                "would show.")


def plot_title(accountant: str) -> str:
    """The cumulative plot's title, naming the accountant that computed it."""
    return f"Cumulative ε ({accountant} accountant)" if accountant else "Cumulative ε"
ACCOUNTANT_TIPS = {
    "basic": "Basic composition: the ε and δ of every release add up",
    "advanced": "The optimal composition of Kairouz, Oh & Viswanath (2015) of the "
                "releases' (ε, δ)",
    "zcdp": "Zero-concentrated DP: ρ of Gaussian releases adds up (pure-ε releases enter "
            "as ε²/2), converted to (ε, δ)",
    "pld": "Privacy-loss distributions of what each release drew, composed exactly by FFT "
           "(pessimistic)",
}
BY_ACCOUNTANT_TIP = ("ε spent by this dataset's releases under every accountant, at the "
                     "same δ (the sum of the releases' δ), rounded up: what tight "
                     "accounting buys. The starred one is the dataset's accountant, fixed at "
                     "its first release; its remaining budget follows it. A release known "
                     "only by its (ε, δ) (made before DP Studio stored what was drawn) "
                     "counts as the worst case of its (ε, δ).")
NO_PROJECT = "No project open — File ▸ New Project… or File ▸ Open Project…"
TAMPER_STYLE = ("background:#fdecea; border:1px solid #e8a39b; border-radius:4px; "
                "padding:6px; color:#7a1a10;")
ACKNOWLEDGE_TIP = ("Keep the pessimistic charges (the largest ε and δ the ledger, its "
                   "hash chain or a release manifest records; deleted releases restored and "
                   "still charged; a raised budget lowered back), record the acknowledgement "
                   "in the ledger and allow releases again.")


@dataclass
class LedgerData:
    """What the tab shows: one dataset's ledger in one project."""

    project: str
    datasets: list[tuple[str, str]] = field(default_factory=list)  # (key, label) for the combo
    current: str | None = None        # key of the dataset shown
    dataset: str = ""                 # its name
    releases: list[ReleaseRecord] = field(default_factory=list)
    points: list[CumulativePoint] = field(default_factory=list)
    budget: BudgetState | None = None
    message: str = ""                 # shown when there is nothing to list
    #: What was changed in the ledger outside DP Studio (one line each); [] when intact.
    problems: list[str] = field(default_factory=list)
    #: (ε, δ) spent under every accountant (``Project.spent_by_accountant``); {} to hide.
    spent_by_accountant: dict[str, tuple[Decimal, Decimal]] = field(default_factory=dict)


def tamper_text(problems: list[str]) -> str:
    """The warning the tab shows over an edited ledger ("" when it is intact)."""
    if not problems:
        return ""
    return ("This ledger was changed outside DP Studio — new releases are refused until "
            "you acknowledge it:\n• " + "\n• ".join(problems))


def _time(iso: str) -> str:
    """The ledger's UTC time ("2026-01-02T03:04:05Z") as local "YYYY-MM-DD HH:MM"."""
    try:
        t = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except (TypeError, ValueError):
        return iso
    return t.astimezone().strftime("%Y-%m-%d %H:%M")


def _num(v: Any) -> str:
    value = float(v)
    return "0" if value == 0 else f"{value:.4g}"


def _up(v: Decimal, digits: int = 4) -> str:
    """A spent amount to ``digits`` significant digits, rounded up (never shown below
    what was spent)."""
    if v == 0 or not v.is_finite():
        return str(v)
    q = Decimal(1).scaleb(v.adjusted() - digits + 1)
    return format(v.quantize(q, rounding=ROUND_CEILING).normalize(), "f")


class LedgerView(QWidget):
    """Table of releases, cumulative-ε plot and the remaining budget.

    ``dataset_chosen(key)`` asks for another registered dataset's ledger.
    """

    dataset_chosen = Signal(str)
    acknowledge_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: LedgerData | None = None
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.combo = QComboBox(self)
        self.combo.setToolTip("Whose ledger to show: the datasets registered in the project")
        self.combo.setMinimumContentsLength(14)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.combo.activated.connect(self._chosen)
        self.remaining = QLabel(self)
        self.remaining.setTextFormat(Qt.TextFormat.RichText)
        self.remaining.setToolTip("The dataset's total budget minus every release charged "
                                  "to it (aborted ones included)")
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setStyleSheet(f"color: {MUTED};")
        self.remaining.setWordWrap(True)
        # An edited ledger: what changed, and the one way on (acknowledge it).
        self.tamper = QLabel(self)
        self.tamper.setWordWrap(True)
        self.tamper.setTextFormat(Qt.TextFormat.PlainText)
        self.tamper.setStyleSheet(TAMPER_STYLE)
        self.acknowledge_button = QPushButton("Acknowledge the changes…", self)
        self.acknowledge_button.setToolTip(ACKNOWLEDGE_TIP)
        self.acknowledge_button.clicked.connect(lambda: self.acknowledge_requested.emit())
        # ε spent under every accountant, side by side (one row; the columns are the
        # accountants).
        self.by_accountant_label = QLabel(self)
        self.by_accountant_label.setToolTip(BY_ACCOUNTANT_TIP)
        self.by_accountant = QTableWidget(1, 0, self)
        self.by_accountant.setToolTip(BY_ACCOUNTANT_TIP)
        self.by_accountant.setVerticalHeaderLabels(["ε spent"])
        self.by_accountant.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.by_accountant.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.Stretch)
        self.by_accountant.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.by_accountant.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        tamper_row = QHBoxLayout()
        tamper_row.addWidget(self.tamper, 1)
        tamper_row.addWidget(self.acknowledge_button, 0, Qt.AlignmentFlag.AlignTop)
        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addWidget(self.combo)
        top.addStretch(1)

        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setHighlightSections(False)
        for i in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(i, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setToolTip("Every release of this dataset, as recorded in the project "
                              "(double-click a row to open its folder)")
        self.table.cellDoubleClicked.connect(self._open_row)

        self.plot = pg.PlotWidget(self)
        style_plot(self.plot, "Cumulative ε", "Release", "ε spent", PLOT_TOOLTIP)
        self.plot.setMinimumHeight(240)
        self._budget_line = pg.InfiniteLine(angle=0, movable=False,
                                            pen=pg.mkPen(BUDGET_COLOUR, width=1.6,
                                                         style=Qt.PenStyle.DashLine),
                                            label="budget ε = {value:.4g}",
                                            labelOpts={"position": 0.08, "color": BUDGET_COLOUR,
                                                       "anchors": [(0, 1), (0, 1)]})
        self._step = pg.PlotDataItem(pen=pg.mkPen(trust_colour("central"), width=2.4))
        self._dots = pg.ScatterPlotItem(size=10, pen=pg.mkPen("w", width=1.2))
        self._dots.setZValue(10)
        for item in (self._budget_line, self._step, self._dots):
            self.plot.addItem(item)
        self.hint = add_hint(self.plot, 0.5, 0.5, "No releases yet")
        self._plotted: dict[str, Any] = {}

        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.plot)
        split.setChildrenCollapsible(False)
        split.setSizes([360, 440])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addLayout(top)
        layout.addLayout(tamper_row)
        layout.addWidget(self.remaining)
        layout.addWidget(self.by_accountant_label)
        layout.addWidget(self.by_accountant)
        layout.addWidget(self.message)
        layout.addWidget(split, 1)
        self.set_data(None)

    # -- state ---------------------------------------------------------------------------

    def plotted(self) -> dict[str, Any]:
        """What the plot shows: release ids, cumulative ε after each, the budget line."""
        return dict(self._plotted)

    def accountant_columns(self) -> dict[str, str]:
        """The "spent under each accountant" row: header → ε shown ({} when hidden)."""
        t = self.by_accountant
        if t.isHidden():
            return {}
        return {t.horizontalHeaderItem(c).text(): t.item(0, c).text()
                for c in range(t.columnCount())}

    def rows(self) -> list[list[str]]:
        """The table's texts (tests)."""
        return [[self.table.item(r, c).text() if self.table.item(r, c) else ""
                 for c in range(self.table.columnCount())] for r in range(self.table.rowCount())]

    def set_data(self, data: LedgerData | None) -> None:
        self.data = data
        problems = data.problems if data is not None else []
        self.tamper.setText(tamper_text(problems))
        self.tamper.setVisible(bool(problems))
        self.acknowledge_button.setVisible(bool(problems))
        self.combo.blockSignals(True)
        self.combo.clear()
        if data is None:
            self.title.setText("<b>Ledger</b>")
            self.combo.hide()
            self.remaining.setText("")
            self.message.setText(NO_PROJECT)
            self.message.show()
            self._fill_table([])
            self._fill_accountants({}, "")
            self._draw([], None)
            self.combo.blockSignals(False)
            return
        self.title.setText(f"<b>Ledger</b> &nbsp;<span style='color:{MUTED}'>"
                           f"{escape(data.project)}</span> &nbsp;")
        for key, label in data.datasets:
            self.combo.addItem(label, key)
        index = self.combo.findData(data.current) if data.current is not None else -1
        if index < 0 and data.dataset:
            self.combo.addItem(f"{data.dataset} (no releases yet)", None)
            index = self.combo.count() - 1
        self.combo.setCurrentIndex(index)
        self.combo.setVisible(self.combo.count() > 0)
        self.combo.blockSignals(False)
        b = data.budget
        if b is not None:
            self.remaining.setText(
                f"Remaining: <b>ε {_num(max(b.remaining_epsilon, 0))}</b> of "
                f"{_num(b.total_epsilon)}, <b>δ {_num(max(b.remaining_delta, 0))}</b> of "
                f"{_num(b.total_delta)} &nbsp;<span style='color:{MUTED}'>"
                f"({b.accountant} composition)</span>")
        else:
            self.remaining.setText("")
        self.message.setText(data.message)
        self.message.setVisible(bool(data.message))
        self._fill_table(data.releases)
        self._fill_accountants(data.spent_by_accountant if data.releases else {},
                               b.accountant if b is not None else "")
        self._draw(data.points, b)

    def _chosen(self, index: int) -> None:
        key = self.combo.itemData(index)
        if key is not None:
            self.dataset_chosen.emit(str(key))

    def _open_row(self, row: int, _column: int) -> None:
        from dpstudio.ui.project_dialogs import open_folder

        if self.data is not None and 0 <= row < len(self.data.releases):
            folder = self.data.releases[row].out_dir
            if Path(folder).is_dir():
                open_folder(folder)

    # -- table -----------------------------------------------------------------------------

    def _fill_accountants(self, by: dict[str, tuple[Decimal, Decimal]], own: str) -> None:
        t = self.by_accountant
        t.setVisible(bool(by))
        self.by_accountant_label.setVisible(bool(by))
        t.setColumnCount(len(by))
        if not by:
            return
        delta = next(iter(by.values()))[1]
        self.by_accountant_label.setText(f"Spent under each accountant (at δ = "
                                         f"{_num(delta)}):")
        t.setHorizontalHeaderLabels([name + (" ★" if name == own else "") for name in by])
        for col, (name, (eps, _)) in enumerate(by.items()):
            header = t.horizontalHeaderItem(col)
            header.setToolTip(ACCOUNTANT_TIPS.get(name, "") + (
                " — this dataset's accountant" if name == own else ""))
            item = QTableWidgetItem(_up(eps))
            item.setToolTip(f"ε = {eps} ({name})")
            item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            if name == own:
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            t.setItem(0, col, item)
        # One row, all of it visible: header + row + frame, measured once filled.
        t.resizeRowsToContents()
        t.setFixedHeight(t.horizontalHeader().sizeHint().height() + t.rowHeight(0)
                         + 2 * t.frameWidth())

    def _fill_table(self, releases: list[ReleaseRecord]) -> None:
        table = self.table
        table.setRowCount(len(releases))
        for row, r in enumerate(releases):
            files = ", ".join(f.name for f in r.files) or "—"
            cells = [
                (str(r.id), f"uid {r.uid}"),
                (_time(r.created_at), f"{r.created_at} (UTC)"),
                (QUERY_LABELS.get(r.query, r.query), r.query),
                (r.column or "", ""),
                (r.mechanism, f"{r.trust_model} model"),
                (_num(r.epsilon), str(r.epsilon)),
                (_num(r.delta), str(r.delta)),
                (r.status, STATUS_TIPS.get(r.status, "") + (f"\n{r.note}" if r.note else "")),
                (files, "\n".join(str(f.path) for f in r.files) or "no files"),
            ]
            for col, (text, tip) in enumerate(cells):
                item = QTableWidgetItem(text)
                if tip:
                    item.setToolTip(tip)
                if col in (0, 5, 6):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                if col == 7 and r.status != "done":
                    item.setForeground(pg.mkColor(STATUS_COLOURS.get(r.status, MUTED)))
                table.setItem(row, col, item)

    # -- plot ------------------------------------------------------------------------------

    def _draw(self, points: list[CumulativePoint], budget: BudgetState | None) -> None:
        total = float(budget.total_epsilon) if budget is not None else None
        n = len(points)
        cumulative = np.array([p.cumulative_epsilon for p in points], dtype=float)
        ids = [p.release_id for p in points]
        accountant = budget.accountant if budget is not None else ""
        self._plotted = {"ids": ids, "cumulative_epsilon": cumulative.copy(),
                         "budget_epsilon": total,
                         "status": [p.status for p in points], "accountant": accountant}
        retitle(self.plot, plot_title(accountant))
        if n:
            x = np.arange(1, n + 1, dtype=float)
            # A step curve: flat at the previous total, a jump at each release.
            xs = np.concatenate([[0.0], np.repeat(x, 2), [n + 0.6]])
            ys = np.concatenate([[0.0, 0.0], np.repeat(cumulative[:-1], 2), cumulative[-1:],
                                 cumulative[-1:]])
            self._step.setData(xs, ys)
            brushes = [pg.mkBrush(STATUS_COLOURS.get(p.status, MUTED)) for p in points]
            self._dots.setData(x=x, y=cumulative, brush=brushes,
                               data=[f"#{i}" for i in ids])
        else:
            self._step.setData([], [])
            self._dots.setData([], [])
        self.hint.setVisible(n == 0)
        self._budget_line.setVisible(total is not None)
        top = max([total or 0.0] + cumulative.tolist()) or 1.0
        if total is not None:
            self._budget_line.setValue(total)
        item = self.plot.getPlotItem()
        step = max(1, int(np.ceil(n / 12)))
        item.getAxis("bottom").setTicks([[(float(i + 1), f"#{ids[i]}") for i in
                                          range(0, n, step)], []])
        item.getAxis("left").setTicks(linear_ticks(0.0, top * 1.12, 5))
        self.plot.setXRange(0.0, max(n, 1) + 0.6, padding=0.02)
        self.plot.setYRange(-top * 0.03, top * 1.12, padding=0)
        self.hint.setPos(max(n, 1) / 2 + 0.3, top * 0.56)
