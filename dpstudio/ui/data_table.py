"""The Data tab's table: a read-only view of the rows whose column widths are fitted lazily.

Fitting all 5,000 columns of a wide file up front asked the model for a million cells and
resized 5,000 header sections, about 8 s on the UI thread; :class:`ColumnFitter` sizes only
the columns that scroll into view, each to a sample of its rows.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QAbstractItemView, QTableView, QWidget

from dpstudio.ui.table_model import DataFrameModel


def make_table_view(model: DataFrameModel, parent: QWidget) -> QTableView:
    """Build the row table: whole-row selection, no editing, fixed-height rows, and Tab
    moving on out of it.

    Parameters
    ----------
    model : DataFrameModel
        The virtualized model of the dataset's rows (not a cell-by-cell QTableWidget).
    parent : QWidget
        The view's parent.

    Returns
    -------
    QTableView
        The configured view, showing ``model``.
    """
    view = QTableView(parent)
    view.setModel(model)
    view.setAlternatingRowColors(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setWordWrap(False)
    view.setCornerButtonEnabled(False)
    # Tab leaves the table (to the next panel) instead of walking its cells: with thousands
    # of cells a keyboard user is otherwise stuck; the arrow keys move within it.
    view.setTabKeyNavigation(False)
    vertical = view.verticalHeader()
    vertical.setDefaultSectionSize(vertical.fontMetrics().height() + 8)
    vertical.setSectionResizeMode(vertical.ResizeMode.Fixed)
    horizontal = view.horizontalHeader()
    horizontal.setHighlightSections(False)
    horizontal.setTextElideMode(Qt.TextElideMode.ElideRight)
    horizontal.setStretchLastSection(True)
    return view


class ColumnFitter(QObject):
    """Fits each column of ``view`` to its contents once, when it first comes into view.

    Scrolling, showing or resizing the view fits the newly visible columns on the next
    turn of the event loop; :meth:`reset` starts over for a new table.

    Parameters
    ----------
    view : QTableView
        The table whose columns are sized.
    model : DataFrameModel
        The model ``view`` shows; its :meth:`~DataFrameModel.cell_text` gives the texts
        measured.
    parent : QObject, optional
        The fitter's parent (it lives as long as the view's window).
    """

    def __init__(self, view: QTableView, model: DataFrameModel,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._view = view
        self._model = model
        self._fitted: set[int] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.fit_visible)
        view.horizontalScrollBar().valueChanged.connect(self._schedule)
        self._viewport_watch = _ResizeWatch(self._schedule, self)
        view.viewport().installEventFilter(self._viewport_watch)

    def _schedule(self, *_args: object) -> None:
        # Not valueChanged -> QTimer.start directly: that picks start(msec) and waits as many
        # milliseconds as the scroll value (two seconds to fit column 2,000).
        self._timer.start()

    def reset(self) -> None:
        """Forget the widths fitted so far and fit the columns now in view."""
        self._fitted = set()
        self.fit_visible()

    def fit_visible(self) -> None:
        """Size the columns in view not sized yet to a sample of their contents.

        The sample is the first 100 rows and 100 spread over the rest: Qt's
        ``resizeColumnToContents`` takes seconds on a million rows.
        """
        view, model = self._view, self._model
        count = model.columnCount()
        if not count:
            return
        header = view.horizontalHeader()
        width = view.viewport().width()
        if not view.isVisible():  # another tab is shown: its size may be stale
            width = max(width, view.window().width())
        column = max(header.logicalIndexAt(0), 0)
        # Columns grow or shrink as they are fitted, so walk until the view's width is full.
        while column < count and header.sectionViewportPosition(column) < width:
            if column not in self._fitted:
                self._fitted.add(column)
                header.resizeSection(column, self.column_width(column))
            column += 1

    def column_width(self, column: int) -> int:
        """The width ``column`` needs for its title and a sample of its cells.

        Parameters
        ----------
        column : int
            The column's index in the model.

        Returns
        -------
        int
            Width in pixels: at least six digits wide, at most 260.
        """
        view, model = self._view, self._model
        header = view.horizontalHeader()
        metrics, header_metrics = view.fontMetrics(), header.fontMetrics()
        rows = model.rowCount()
        sample = sorted(set(range(min(rows, 100))) | {
            int(i) for i in np.linspace(0, rows - 1, num=min(rows, 100))} if rows else set())
        padding = 2 * view.style().pixelMetric(view.style().PixelMetric.PM_FocusFrameHMargin) + 14
        texts = [model.cell_text(row, column) for row in sample]
        title = str(model.headerData(column, Qt.Orientation.Horizontal) or "")  # elided
        width = max([metrics.horizontalAdvance(t) for t in texts] or [0]) + padding
        width = max(width, header_metrics.horizontalAdvance(title) + padding + 8)
        return min(max(width, metrics.horizontalAdvance("0") * 6), 260)


class _ResizeWatch(QObject):
    """Calls ``callback`` when the watched widget is shown or resized."""

    def __init__(self, callback: Callable[[], object], parent: QObject) -> None:
        super().__init__(parent)
        self._callback = callback

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self._callback()
        return False
