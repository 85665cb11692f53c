"""The main window's part for folders of files (File ▸ Open Folder…, issue 16): the Data
tab's preview label, the status bar's words for a folder, and Tools ▸ Execution….

:class:`FolderActions` is mixed into :class:`~dpstudio.ui.main_window.MainWindow`, which
provides the attributes annotated here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLabel

from dpstudio.ui.folder_open import FolderDataset, preview_text

__all__ = ["FolderActions"]


class FolderActions:
    """Opening a folder, showing that the Data tab holds its first rows, and the
    Execution setting; part of the main window."""

    tabs: Any
    table_view: Any
    table_model: Any
    file_label: Any
    size_label: Any
    settings: Any
    analysis: Any
    execution_status: Any
    _dataset: Any

    def open_path(self, path: Any, *, header: bool = True) -> bool:  # the window's
        raise NotImplementedError

    def _build_preview_label(self) -> None:
        """A folder's Data tab holds its first rows only: said beside the tabs, on it."""
        self.preview_label = QLabel(self)  # type: ignore[arg-type]
        self.preview_label.setObjectName("preview_label")
        self.preview_label.setContentsMargins(8, 0, 8, 0)
        self.tabs.setCornerWidget(self.preview_label, Qt.Corner.TopRightCorner)
        self.preview_label.hide()

    def _show_folder(self, dataset: FolderDataset) -> None:
        """The table (the preview) and the status bar's words for a folder."""
        self.table_model.set_frame(dataset.frame)
        files = dataset.files
        k = len(files.files) if files is not None else 0
        kind = "Parquet" if files is not None and files.format == "parquet" else "CSV"
        self.file_label.setText(f"{dataset.name}  ·  folder of {k:,} {kind} "
                                f"file{'s' * (k != 1)}")
        self.file_label.setToolTip(str(dataset.path))
        rows = (f"{dataset.total_rows:,} rows" if dataset.total_rows is not None
                else "rows counted when read")
        self.size_label.setText(f"{rows} × {dataset.n_columns:,} columns")

    def _show_preview_label(self) -> None:
        """The Data tab of a folder says it holds a preview (its first rows)."""
        d = self._dataset
        folder = isinstance(d, FolderDataset)
        self.preview_label.setText(preview_text(d) if folder else "")
        self.preview_label.setToolTip("The Data tab holds the folder's first rows only; "
                                      "analyses and releases read every row of every "
                                      "file." if folder else "")
        self.preview_label.setVisible(folder and self.tabs.currentWidget() is self.table_view)
        self.tabs.setTabToolTip(1, f"The folder's first {d.preview_rows:,} rows (Ctrl+2)"
                                if folder else "The dataset's rows (Ctrl+2)")

    def open_folder(self) -> bool:
        """File ▸ Open Folder…: a folder of Parquet or CSV files, opened from metadata."""
        start = str(self._dataset.path.parent) if self._dataset is not None else str(Path.home())
        path = QFileDialog.getExistingDirectory(self, "Open a folder of Parquet or CSV files",
                                                start)
        return bool(path) and self.open_path(path)

    def show_execution_settings(self) -> Any:
        """Tools ▸ Execution…: the engine and the Dask scheduler's address."""
        from dpstudio.ui.execution_settings import ExecutionDialog

        dialog = ExecutionDialog(self.settings.engine, self.settings.scheduler, self)
        dialog.accepted.connect(lambda: self.set_execution(*dialog.values()))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def set_execution(self, engine: str, scheduler: str) -> None:
        """Use (and remember) ``engine`` and ``scheduler`` for folders' sums and releases;
        a folder open is summed again there (a bad address is said when used)."""
        self.settings.engine, self.settings.scheduler = engine, scheduler
        self.settings.save()
        self.analysis.set_execution(engine, scheduler)  # forgets the last run's cluster
        self.execution_status.set_setting(engine, scheduler)
