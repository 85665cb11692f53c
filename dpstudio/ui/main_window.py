"""DP Studio's main window: column list, data table, result plots, menus and status bar."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTableView,
)

import dpstudio
from dpstudio.data.dataset import Dataset, open_dataset
from dpstudio.data.errors import DataError
from dpstudio.data.loading import FILE_DIALOG_FILTER
from dpstudio.data.samples import SAMPLES, sample_path
from dpstudio.ui.columns_panel import ColumnsPanel
from dpstudio.ui.plots import PlotPanel
from dpstudio.ui.style import app_icon
from dpstudio.ui.table_model import DataFrameModel

APP_NAME = "DP Studio"
ABOUT_TEXT = (
    f"<h3>{APP_NAME} {dpstudio.__version__}</h3>"
    "<p>Differential privacy on your own data: declare each column's public bounds, "
    "pick a mechanism and a trust model, and see what the privacy budget ε costs in "
    "accuracy and what it leaves an attacker.</p>"
    "<p>Data never leaves this computer.</p>"
)

_ENCODING_NAMES = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8 (BOM)",
    "cp1252": "Windows-1252",
    "latin-1": "Latin-1",
}


class MainWindow(QMainWindow):
    """The application window; :meth:`open_path` loads a dataset, keeping the old one on error."""

    dataset_changed = Signal(object)

    def __init__(self, dataset: Dataset | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self._dataset: Dataset | None = None
        self.setWindowIcon(app_icon())
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks)

        # Centre: the data table (virtualized model, not a cell-by-cell QTableWidget).
        self.table_model = DataFrameModel(parent=self)
        self.table_view = QTableView(self)
        self.table_view.setModel(self.table_model)
        self.table_view.setAlternatingRowColors(True)
        self.table_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table_view.setWordWrap(False)
        self.table_view.setCornerButtonEnabled(False)
        vertical = self.table_view.verticalHeader()
        vertical.setDefaultSectionSize(vertical.fontMetrics().height() + 8)
        vertical.setSectionResizeMode(vertical.ResizeMode.Fixed)
        self.table_view.horizontalHeader().setHighlightSections(False)
        self.table_view.horizontalHeader().setStretchLastSection(True)
        self.setCentralWidget(self.table_view)

        # Left: the column list.
        self.columns_panel = ColumnsPanel(self)
        self.columns_dock = self._dock("Columns", self.columns_panel, "columns_dock")
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.columns_dock)

        # Right: the result plots (empty for now).
        self.plot_panel = PlotPanel(self)
        self.utility_plot = self.plot_panel.utility_plot
        self.tradeoff_plot = self.plot_panel.tradeoff_plot
        self.plots_dock = self._dock("Results", self.plot_panel, "plots_dock")
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.plots_dock)

        self._build_menus()
        self._build_status_bar()
        self.resize(1400, 900)
        self.set_dataset(dataset)

    # -- state ------------------------------------------------------------------------

    @property
    def dataset(self) -> Dataset | None:
        return self._dataset

    def set_dataset(self, dataset: Dataset | None) -> None:
        self._dataset = dataset
        if dataset is None:
            self.table_model.set_frame(pd.DataFrame())
            self.setWindowTitle(APP_NAME)
            self.file_label.setText("No dataset — File ▸ Open… or File ▸ Open Sample")
            self.file_label.setToolTip("")
            self.size_label.setText("")
        else:
            self.table_model.set_frame(dataset.frame)
            self.setWindowTitle(f"{APP_NAME} — {dataset.name}")
            details = [dataset.name]
            if encoding := dataset.frame.attrs.get("encoding"):
                details.append(_ENCODING_NAMES.get(encoding, encoding))
            self.file_label.setText("  ·  ".join(details))
            self.file_label.setToolTip(str(dataset.path))
            rows, cols = dataset.n_rows, dataset.n_columns
            self.size_label.setText(
                f"{rows:,} {'row' if rows == 1 else 'rows'} × "
                f"{cols} {'column' if cols == 1 else 'columns'}"
            )
        self.columns_panel.set_dataset(dataset)
        self._fit_table_columns()
        self.dataset_changed.emit(dataset)

    def open_path(self, path: str | os.PathLike[str]) -> bool:
        """Load ``path``; on failure show the message and keep the current dataset."""
        try:
            dataset = open_dataset(path)
        except DataError as exc:
            QMessageBox.critical(self, "Could not open the dataset", str(exc))
            return False
        self.set_dataset(dataset)
        return True

    # -- actions ----------------------------------------------------------------------

    def open_file(self) -> bool:
        start = str(self._dataset.path.parent) if self._dataset is not None else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Open dataset", start, FILE_DIALOG_FILTER)
        return bool(path) and self.open_path(path)

    def open_sample(self, name: str) -> bool:
        try:
            path = sample_path(name)
        except DataError as exc:
            QMessageBox.critical(self, "Could not open the sample", str(exc))
            return False
        return self.open_path(path)

    def show_about(self) -> None:
        QMessageBox.about(self, f"About {APP_NAME}", ABOUT_TEXT)

    # -- construction -----------------------------------------------------------------

    def _dock(self, title: str, widget: Any, name: str) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        return dock

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.open_action = QAction("&Open…", self)
        self.open_action.setShortcut(QKeySequence("Ctrl+O"))
        self.open_action.setStatusTip("Open a CSV, TSV, Parquet or Excel file")
        self.open_action.triggered.connect(self.open_file)
        file_menu.addAction(self.open_action)

        self.samples_menu = file_menu.addMenu("Open &Sample")
        self.sample_actions: dict[str, QAction] = {}
        for name, description in SAMPLES.items():
            action = QAction(f"{name}.csv", self)
            action.setStatusTip(description)
            action.setToolTip(description)
            action.triggered.connect(lambda _checked=False, n=name: self.open_sample(n))
            self.samples_menu.addAction(action)
            self.sample_actions[name] = action

        file_menu.addSeparator()
        self.quit_action = QAction("&Quit", self)
        self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.quit_action.triggered.connect(self.close)
        file_menu.addAction(self.quit_action)

        help_menu = self.menuBar().addMenu("&Help")
        self.about_action = QAction(f"&About {APP_NAME}", self)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.about_action.triggered.connect(self.show_about)
        help_menu.addAction(self.about_action)

    def _build_status_bar(self) -> None:
        self.file_label = QLabel(self)
        self.size_label = QLabel(self)
        status = self.statusBar()
        status.addWidget(self.file_label, 1)
        status.addPermanentWidget(self.size_label)

    def _fit_table_columns(self) -> None:
        """Size columns to a sample of their contents (never scanning every row)."""
        view = self.table_view
        header = view.horizontalHeader()
        header.setResizeContentsPrecision(200)
        metrics = view.fontMetrics()
        for column in range(self.table_model.columnCount()):
            view.resizeColumnToContents(column)
            width = min(max(header.sectionSize(column), metrics.horizontalAdvance("0") * 6), 260)
            header.resizeSection(column, width)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not getattr(self, "_docks_sized", False):
            self._docks_sized = True
            self._size_docks()

    def _size_docks(self) -> None:
        """Column list as wide as its contents need, plots a quarter: the table gets the rest."""
        width = self.width()
        columns = min(max(self.columns_panel.preferred_width(), 220), int(width * 0.3))
        plots = min(max(int(width * 0.24), 280), 440)
        self.resizeDocks(
            [self.columns_dock, self.plots_dock], [columns, plots], Qt.Orientation.Horizontal
        )
