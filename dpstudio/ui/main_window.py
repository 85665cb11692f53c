"""DP Studio's main window: column list, data table, result plots, menus and status bar.

The window lays out its parts, holds the open dataset and handles what the menus ask;
the menu bar itself is built in :mod:`dpstudio.ui.window_menus` and the Data tab's table
(with its lazily fitted columns) in :mod:`dpstudio.ui.data_table`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabWidget,
)

from dpstudio.data.dataset import Dataset
from dpstudio.data.errors import DataError
from dpstudio.data.loading import FILE_DIALOG_FILTER, SUPPORTED_EXTENSIONS, header_note
from dpstudio.data.samples import sample_path
from dpstudio.ui import window_layout
from dpstudio.ui.analysis_jobs import Analysis
from dpstudio.ui.analysis_panel import AnalysisPanel
from dpstudio.ui.analysis_view import VIEWS as ANALYSIS_VIEWS
from dpstudio.ui.analysis_view import AnalysisView
from dpstudio.ui.data_table import ColumnFitter, make_table_view
from dpstudio.ui.execution_status import ExecutionStatus, ReleaseProgress
from dpstudio.ui.export_plot import FORMATS, PlotFocusTracker, export_plot, suggested_file_name
from dpstudio.ui.folder_open import FolderDataset, open_any
from dpstudio.ui.ledger_view import LedgerView
from dpstudio.ui.loader import DatasetLoader, LoadStatus
from dpstudio.ui.model_view import ModelView
from dpstudio.ui.presentation import PresentationMode
from dpstudio.ui.presentation_bar import PresentationBar
from dpstudio.ui.project_controller import ProjectController
from dpstudio.ui.schema_panel import SchemaPanel
from dpstudio.ui.session import Session
from dpstudio.ui.settings import AppSettings
from dpstudio.ui.style import app_icon, apply_palette
from dpstudio.ui.table_model import DataFrameModel
from dpstudio.ui.window_folder import FolderActions
from dpstudio.ui.window_menus import ABOUT_TEXT, APP_NAME, build_menus, fill_recent

__all__ = ["APP_NAME", "VIEWS", "MainWindow"]

#: Views :meth:`MainWindow.show_view` (and ``dpstudio --screenshot --view``) can show.
VIEWS = ("analysis", "data", "ledger", "models") + tuple(
    v for v in ANALYSIS_VIEWS if v != "analysis")

_ENCODING_NAMES = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8 (BOM)",
    "cp1252": "Windows-1252",
    "latin-1": "Latin-1",
}


class MainWindow(FolderActions, QMainWindow):
    """The application window; :meth:`open_path` loads a dataset in the background, keeping
    the old one on error or cancel.

    ``settings`` defaults to :meth:`AppSettings.load` (``$DPSTUDIO_CONFIG_DIR`` or the platform's
    config folder). Its menu actions (``open_action``, ``quit_action``, ``palette_actions``…)
    are attributes set by :func:`~dpstudio.ui.window_menus.build_menus`.
    """

    dataset_changed = Signal(object)

    def __init__(self, dataset: Dataset | None = None, parent: Any = None,
                 settings: AppSettings | None = None) -> None:
        super().__init__(parent)
        self._dataset: Dataset | None = None
        self.settings = settings if settings is not None else AppSettings.load()
        self.setWindowIcon(app_icon())
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks)

        # Centre: the data table, its columns fitted as they come into view.
        self.table_model = DataFrameModel(parent=self)
        self.table_view = make_table_view(self.table_model, self)
        self._column_fitter = ColumnFitter(self.table_view, self.table_model, self)

        # Centre: tabs "Analysis" (plots, preview, budget) and "Data" (the table).
        self.session = Session(self)
        self.analysis = Analysis(self.session, self)
        self.analysis_view = AnalysisView(self.session, self.analysis, self)
        self.utility_plot = self.analysis_view.utility_plot
        self.tradeoff_plot = self.analysis_view.tradeoff_plot
        self.result_panel = self.analysis_view.result_panel
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.analysis_view, "Analysis")
        self.tabs.addTab(self.table_view, "Data")
        self.ledger_view = LedgerView(self)
        self.tabs.addTab(self.ledger_view, "Ledger")
        self.model_view = ModelView(self.session, self)
        self.tabs.addTab(self.model_view, "Models")
        self.tabs.setTabToolTip(0, "Privacy–utility, trade-off and result preview (Ctrl+1)")
        self.tabs.setTabToolTip(1, "The dataset's rows (Ctrl+2)")
        self._build_preview_label()
        self.tabs.setTabToolTip(2, "The project's real releases of this dataset and its "
                                   "budget (Ctrl+3)")
        self.tabs.setTabToolTip(3, "Train a model privately: accuracy against ε, "
                                   "coefficients (Ctrl+4)")
        self.setCentralWidget(self.tabs)

        # Left: the columns' declared types, bounds and categories (editable).
        self.schema_panel = SchemaPanel(self)
        self.columns_dock = self._dock("Columns", self.schema_panel, "columns_dock")
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.columns_dock)

        # Right: the analysis controls (trust model, query, mechanism, ε, δ, views).
        self.analysis_panel = AnalysisPanel(self.session, self)
        self.analysis_dock = self._dock("Analysis", self.analysis_panel, "analysis_dock")
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.analysis_dock)
        self.schema_panel.schema_changed.connect(self.session.set_schema)
        # Tab moves on from the column list to the next panel (arrows move within it).
        self.schema_panel.table.setTabKeyNavigation(False)
        self._follow_column_selection()

        self.loader = DatasetLoader(self, open_fn=open_any)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_load_failed)
        self.presentation = PresentationMode(
            self, self.settings.presentation_font_scale, session=self.session,
            focus=lambda: self.presentation_bar.epsilon.spin)  # the one control left
        self.presentation.toggled.connect(self.analysis_view.set_presenting)
        self.presentation_bar = PresentationBar(
            self.session, lambda: self.presentation.set_enabled(False), self)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.presentation_bar)
        self.presentation_bar.hide()
        self.plot_tracker = PlotFocusTracker(self)
        self.setAcceptDrops(True)
        self.projects = ProjectController(self)
        self.model_view.attach_projects(self.projects)  # the Models tab's Release…
        self.tabs.currentChanged.connect(self._tab_changed)

        build_menus(self)
        self._build_status_bar()
        self._docks_sized = False  # sized once, when first shown (or restored from settings)
        self._first_width = 1400
        self.resize(*self._default_size())
        self.set_dataset(dataset)
        self.columns_dock.dockLocationChanged.connect(lambda *_: window_layout.fit_minimums(self))
        self._restore_settings()

    # -- state ------------------------------------------------------------------------

    @property
    def dataset(self) -> Dataset | None:
        return self._dataset

    def set_dataset(self, dataset: Dataset | None) -> None:
        self._dataset = dataset
        self._show_preview_label()
        if isinstance(dataset, FolderDataset):
            self._show_folder(dataset)
        elif dataset is None:
            self.table_model.set_frame(pd.DataFrame())
            self.file_label.setText("No dataset — File ▸ Open… or File ▸ Open Sample")
            self.file_label.setToolTip("")
            self.size_label.setText("")
        else:
            self.table_model.set_frame(dataset.frame)
            details = [dataset.name]
            if encoding := dataset.frame.attrs.get("encoding"):
                details.append(_ENCODING_NAMES.get(encoding, encoding))
            self.file_label.setText("  ·  ".join(details))
            self.file_label.setToolTip(str(dataset.path))
            rows, cols = dataset.n_rows, dataset.n_columns
            self.size_label.setText(
                f"{rows:,} {'row' if rows == 1 else 'rows'} × "
                f"{cols:,} {'column' if cols == 1 else 'columns'}"
            )
        self.update_title()
        self._column_fitter.reset()  # before the session starts its background jobs
        # The session first: the panel's schema_changed must meet the new dataset, not ask
        # the old one for columns it lacks (an error listing every column, on every plot).
        self.session.set_dataset(dataset)
        self.schema_panel.set_dataset(dataset)
        window_layout.set_useful_widths(self)  # the controls' width follows their contents
        if dataset is not None:
            remembered = self.settings.last_choices.get("analysis", {}).get(dataset.name)
            if isinstance(remembered, dict):
                self.session.apply_choices(remembered)
        self.dataset_changed.emit(dataset)

    def update_title(self) -> None:
        """"DP Studio — survey.csv — study.dpstudio": the dataset and the open project."""
        parts = [APP_NAME]
        if self._dataset is not None:
            parts.append(self._dataset.name)
        if self.projects.project is not None:
            parts.append(f"project {self.projects.project.path.name}")
        self.setWindowTitle(" — ".join(parts))

    def open_path(self, path: str | os.PathLike[str], *, header: bool = True) -> bool:
        """Start loading ``path`` in the background (``False`` if the user kept the current
        declarations unsaved and chose Cancel). The current dataset stays until the new one
        has loaded; an error shows a dialog and changes nothing. ``header=False`` reads
        the first line as data (a release spec's ``header = false``)."""
        if not self._confirm_unsaved_schema():
            return False
        self.loader.load(path, header=header)
        return True

    def open_path_now(self, path: str | os.PathLike[str]) -> bool:
        """Load ``path`` on this thread (scripts); on failure show the message, keep the data."""
        try:
            dataset = open_any(path)
        except DataError as exc:
            QMessageBox.critical(self, "Could not open the dataset", str(exc))
            return False
        self._on_loaded(dataset)
        return True

    def _on_loaded(self, dataset: Dataset) -> None:
        self.set_dataset(dataset)
        self.settings.add_recent_file(dataset.path)
        self.settings.save()
        self._offer_no_header(dataset)

    def _offer_no_header(self, dataset: Dataset) -> None:
        """A file whose column names are all numbers may have no header line: its first
        row was read as the names. Say so and offer to read that line as data."""
        frame = dataset.frame
        if not frame.attrs.get("header", True) or frame.attrs.get("format") == "parquet":
            return
        note = header_note(frame, dataset.path.name)
        if note is None:
            return
        box = QMessageBox(QMessageBox.Icon.Question, "Is the first line a header?",
                          f"Every column name of {dataset.path.name} is a number, so its "
                          "first line may be a row of data read as the names.", parent=self)
        box.setInformativeText("Read the first line as data (columns named 1, 2, …), or "
                               "keep it as the column names.")
        as_data = box.addButton("Read it as data", QMessageBox.ButtonRole.AcceptRole)
        keep = box.addButton("Keep as names", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.exec()
        if box.clickedButton() is as_data:
            self.loader.load(dataset.path, header=False)
        else:
            self.statusBar().showMessage(note, 15000)

    def _on_load_failed(self, path: str, message: str) -> None:
        if not Path(path).exists():
            self.settings.remove_recent_file(path)
            self.settings.save()
        QMessageBox.critical(self, "Could not open the dataset", message)

    def _confirm_unsaved_schema(self) -> bool:
        """Offer to save edited declarations before they are replaced; ``False``: cancel."""
        if not self.schema_panel.is_dirty():
            return True
        buttons = (QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                   | QMessageBox.StandardButton.Cancel)
        answer = QMessageBox.question(
            self, "Unsaved declarations",
            "The column declarations have changed. Save them before continuing?",
            buttons, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.schema_panel.save()
        return answer == QMessageBox.StandardButton.Discard

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

    def show_guide(self) -> Any:
        """Help ▸ Guide: the built-in guide and glossary (one window, raised if open)."""
        from dpstudio.ui.guide import GuideDialog

        dialog = self.findChild(GuideDialog)
        if dialog is None:
            dialog = GuideDialog(self)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def show_about(self) -> None:
        QMessageBox.about(self, f"About {APP_NAME}", ABOUT_TEXT)

    def set_palette(self, name: str) -> None:
        """Switch to the ``"light"`` or ``"dark"`` palette and remember it."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_palette(app, name)
        self.settings.palette = name
        self.settings.save()
        for key, action in self.palette_actions.items():
            action.setChecked(key == name)

    def export_current_plot(self, fmt: str) -> bool:
        """Ask where, then export the plot under focus as ``"png"`` or ``"svg"``."""
        plot = self.plot_tracker.current()
        if plot is None:
            QMessageBox.information(self, "Export plot", "There is no plot to export.")
            return False
        folder = self._dataset.path.parent if self._dataset is not None else Path.home()
        start = str(folder / suggested_file_name(plot, fmt))
        path, _ = QFileDialog.getSaveFileName(self, f"Export plot as {fmt.upper()}", start,
                                              FORMATS[fmt])
        if not path:
            return False
        if not path.lower().endswith(f".{fmt}"):
            path += f".{fmt}"
        try:
            written = export_plot(plot, path)
        except (OSError, ValueError) as exc:
            QMessageBox.critical(self, "Could not export the plot", str(exc))
            return False
        self.statusBar().showMessage(f"Plot exported to {written}", 5000)
        return True

    def show_release_plan(self) -> Any:
        """Analysis ▸ New Release Plan…: the plan dialog (one window, raised if open)."""
        from dpstudio.ui.plan_view import PlanDialog

        dialog = self.findChild(PlanDialog)
        if dialog is None:
            dialog = PlanDialog(self)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def show_rr_demo(self) -> Any:
        from dpstudio.ui.rr_demo import RRDemoDialog

        dialog = RRDemoDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_questionnaire(self) -> Any:
        """Tools ▸ Sensitivity Questionnaire: propose this dataset's total budget."""
        from dpstudio.ui.questionnaire import QuestionnaireDialog

        pb = self.session.project_budget
        fixed = None
        if pb is not None:
            fixed = (f"The project {pb.project} fixes the total of {pb.dataset} at "
                     f"ε {pb.total_epsilon:g}, δ {pb.total_delta:.0e}: this proposal sets "
                     "the budget of each release only.")
        dialog = QuestionnaireDialog(
            self, n_rows=self._dataset.n_rows if self._dataset is not None else None,
            releases=self.session.compositions,
            dataset=self._dataset.name if self._dataset is not None else "",
            fixed_total=fixed)
        dialog.budget_chosen.connect(self._use_budget)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def _use_budget(self, epsilon: float, delta: float, releases: int) -> None:
        """The questionnaire's total (ε, δ) becomes the session's total budget, split
        evenly over the planned releases: each release's ε and δ, and the view's k."""
        from dpstudio.ui.questionnaire import Split

        split = Split(epsilon, delta, releases)
        if self.session.project_budget is None:
            self.session.set_total_budget(epsilon, delta)
        self.session.set_compositions(releases)
        self.session.set_budget(split.per_release_epsilon, split.per_release_delta)
        self.statusBar().showMessage(f"Privacy budget: {split.sentence()}", 8000)

    # -- drag and drop ----------------------------------------------------------------------

    @staticmethod
    def _dropped_path(mime: Any) -> Path | None:
        for url in mime.urls() if mime is not None and mime.hasUrls() else []:
            if url.isLocalFile():
                path = Path(url.toLocalFile())
                if path.suffix.lower() in SUPPORTED_EXTENSIONS or path.is_dir():
                    return path
        return None

    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        if self._dropped_path(event.mimeData()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.dragEnterEvent(event)

    def dropEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        path = self._dropped_path(event.mimeData())
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_path(path)

    # -- settings -----------------------------------------------------------------------------

    def _restore_settings(self) -> None:
        settings = self.settings
        app = QApplication.instance()
        if isinstance(app, QApplication) and settings.palette != "light":
            apply_palette(app, settings.palette)
        if (geometry := settings.window_bytes("geometry")) is not None:
            self.restoreGeometry(geometry)
        if (state := settings.window_bytes("state")) is not None and self.restoreState(state):
            self._docks_sized = True  # the user's own dock sizes, not the defaults
            window_layout.fit_minimums(self)
        self.presentation_bar.hide()  # shown only while presenting
        if settings.warning:
            self.statusBar().showMessage(f"Settings: {settings.warning}", 10000)

    def save_settings(self) -> bool:
        if self._dataset is not None:
            per_dataset = self.settings.last_choices.setdefault("analysis", {})
            per_dataset[self._dataset.name] = self.session.choices()
        self.settings.set_window_bytes("geometry", self.saveGeometry())
        self.settings.set_window_bytes("state", self.saveState())
        return self.settings.save()

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        if self.isVisible() and not self._confirm_unsaved_schema():
            event.ignore()
            return
        if self.presentation.enabled:
            self.presentation.set_enabled(False)
        if not self.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen):
            self.save_settings()  # not for offscreen screenshots
        self.loader.shutdown()
        self.analysis.shutdown()
        self.model_view.shutdown()
        self.projects.shutdown()
        super().closeEvent(event)

    # -- layout -----------------------------------------------------------------------

    def _dock(self, title: str, widget: Any, name: str) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        return dock

    def _default_size(self) -> tuple[int, int]:
        """1400×900, or the screen's available size if smaller."""
        width, height = 1400, 900
        if screen := window_layout.available_screen(self):
            width, height = min(width, screen.width()), min(height, screen.height())
        return width, height

    def _build_status_bar(self) -> None:
        self.file_label = QLabel(self)
        self.size_label = QLabel(self)
        self.load_status = LoadStatus(self.loader, self)
        status = self.statusBar()
        status.addWidget(self.file_label, 1)
        status.addPermanentWidget(self.load_status)
        self.compute_label = QLabel(self)
        self.analysis_view.status_changed.connect(self.compute_label.setText)
        status.addPermanentWidget(self.compute_label)
        status.addPermanentWidget(self.size_label)
        self.execution_status = ExecutionStatus(self.analysis, self.settings.engine,
                                                self.settings.scheduler, self)
        status.addPermanentWidget(self.execution_status)
        self.release_progress = ReleaseProgress(self.projects, self)
        status.addPermanentWidget(self.release_progress)
        self.analysis.engine = self.settings.engine
        self.analysis.scheduler = self.settings.scheduler

    def setVisible(self, visible: bool) -> None:  # noqa: N802 - Qt override
        if visible and not self.isVisible():
            # Arranged before the first show, at the size asked for: showing lays the
            # window out at its minimum size, which the arrangement decides.
            if not self._docks_sized:
                self._first_width = window_layout.target_width(self)
                window_layout.arrange(self, self._first_width)
            elif not window_layout.fits(self):
                # A layout saved on a larger screen: the default one for this size.
                self._docks_sized = False
                self._first_width = window_layout.target_width(self)
                window_layout.arrange(self, self._first_width)
        super().setVisible(visible)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._docks_sized:
            self._docks_sized = True
            window_layout.size_docks(self, self._first_width)

    def reset_layout(self) -> None:
        """View ▸ Reset Layout: both docks shown, docked and sized for the window's width."""
        if self.presentation.enabled:
            self.presentation.set_enabled(False)
        width = window_layout.target_width(self)
        window_layout.apply_default_layout(self)
        if self.width() != width:
            # Re-docking lays the window out for a moment at the wide arrangement's
            # minimums, which widened it (800 → 833 px): back to its width.
            self.layout().activate()
            self.resize(width, self.height())
            window_layout.size_docks(self, width)
        self.analysis_view.reset_layout()
        self.statusBar().showMessage("Layout reset", 3000)

    # -- menus (built by window_menus.build_menus) ----------------------------------------

    def _fill_recent_menu(self) -> None:
        fill_recent(self.recent_menu, self.settings.recent_files, self.open_path,
                    "files", self._clear_recent)

    def _clear_recent(self) -> None:
        self.settings.clear_recent_files()
        self.settings.save()

    def _fill_recent_projects_menu(self) -> None:
        fill_recent(self.recent_projects_menu, self.settings.recent_projects,
                    self.projects.open_project, "projects", self._clear_recent_projects)

    def _clear_recent_projects(self) -> None:
        self.settings.clear_recent_projects()
        self.settings.save()

    def _project_actions(self, *_args: Any) -> None:
        """Project actions wait while a release runs; Close needs an open project."""
        idle = self.projects.busy is None
        for action in (self.new_project_action, self.open_project_action):
            action.setEnabled(idle)
        self.recent_projects_menu.setEnabled(idle)
        self.close_project_action.setEnabled(idle and self.projects.project is not None)

    # -- analysis view ----------------------------------------------------------------

    def show_view(self, view: str) -> None:
        """Show "data", "ledger", "models", "analysis", or one analysis plot filling the tab
        ("utility", "tradeoff")."""
        if view == "data":
            self.tabs.setCurrentWidget(self.table_view)
            return
        if view == "ledger":
            self.tabs.setCurrentWidget(self.ledger_view)
            return
        if view == "models":
            self.tabs.setCurrentWidget(self.model_view)
            return
        self.analysis_view.focus(view)
        self.tabs.setCurrentWidget(self.analysis_view)

    def _tab_changed(self, index: int) -> None:
        self._show_preview_label()
        if self.tabs.widget(index) is self.ledger_view and self.projects.project is not None:
            self.projects.refresh()  # releases made meanwhile by dpstudio release

    def _focus_epsilon(self) -> None:
        if self.presentation.enabled:  # the ε bar stands in for the hidden controls
            self.presentation_bar.epsilon.spin.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.presentation_bar.epsilon.spin.selectAll()
            return
        self.analysis_dock.show()
        self.analysis_dock.raise_()  # in front of the Columns tab on a small screen
        self.analysis_panel.focus_epsilon()

    def _follow_column_selection(self) -> None:
        """A click on a row of the Columns panel chooses that column for analysis (free-text
        columns too: their query is heavy hitters), and the panel's current row follows
        the analysis column when it is chosen elsewhere (the Column combo)."""
        self.schema_panel.column_chosen.connect(self.session.set_column)

        def follow(aspect: str) -> None:
            if aspect in ("column", "dataset", "all") and self.session.column:
                self.schema_panel.show_column(self.session.column)

        self.session.changed.connect(follow)

