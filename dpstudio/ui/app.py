"""Start DP Studio: show the main window, or render it offscreen to an image file.

Importing this module is cheap: Qt, pandas, scipy and the window's modules are imported
by :func:`run_app` once it knows a window can be shown: "no display" is answered at
once (it used to come after a second of imports), and the first frame waits only for what
it draws.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpstudio.ui.display import display_problem

if TYPE_CHECKING:
    from PySide6.QtCore import QMessageLogContext, QtMsgType
    from PySide6.QtWidgets import QApplication

    from dpstudio.data.dataset import Dataset

#: The window's name (``window_menus.APP_NAME``), here without importing Qt.
APP_NAME = "DP Studio"
DEFAULT_SIZE = (1400, 900)
DEFAULT_SAMPLE = "survey"
#: Longest wait for the analysis computations before a screenshot is taken anyway.
SCREENSHOT_TIMEOUT_S = 60.0


def run_app(
    dataset: str | None = None,
    screenshot: str | None = None,
    size: tuple[int, int] = DEFAULT_SIZE,
    view: str | None = None,
) -> int:
    """Run DP Studio on ``dataset`` (default: the bundled survey sample): a file, or a
    folder or glob of Parquet/CSV files (opened as File ▸ Open Folder… opens it).

    With ``screenshot``, render the window offscreen at ``size`` into that image file,
    once the analysis computations have finished, print its path and return 0. ``view``
    picks what is shown: ``analysis`` (default), ``data``, ``utility`` or ``tradeoff``.
    Otherwise show the window and return the event loop's exit code. Returns 1 if there is
    no display, 2 if the dataset cannot be loaded, the view is unknown or the image cannot
    be written; the reason goes to stderr on one line.
    """
    if screenshot is not None:
        if not os.environ.get("QT_QPA_PLATFORM"):
            os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before any QApplication exists
    elif (problem := display_problem()) is not None:
        print(problem, file=sys.stderr)
        return 1

    try:
        width, height = (int(v) for v in size)
        if width < 1 or height < 1:
            raise ValueError
    except (TypeError, ValueError):
        return _fail(f"invalid window size {size!r}; give it as WIDTHxHEIGHT, e.g. 1400x900")

    from dpstudio.data.errors import DataError
    from dpstudio.data.samples import sample_path
    from dpstudio.ui.folder_open import open_any  # a file, or a folder of files
    from dpstudio.ui.main_window import VIEWS, MainWindow

    if view is not None and view not in VIEWS:
        return _fail(f"unknown view {view!r}; choose from {', '.join(VIEWS)}")

    from dpstudio.project import PROJECT_SUFFIX

    project = None
    if dataset is not None and str(dataset).lower().endswith(PROJECT_SUFFIX):
        # A double-clicked project (the desktop file passes %f): open its newest dataset
        # that still exists, or the sample, then the project itself once the window is up.
        project = Path(dataset)
        if not project.is_file():
            return _fail(f"project not found: {project}")
        dataset = _project_dataset(project)
    try:
        loaded = open_any(dataset if dataset is not None else sample_path(DEFAULT_SAMPLE))
    except DataError as exc:
        return _fail(str(exc))

    if screenshot is not None and not Path(screenshot).parent.is_dir():
        return _fail(f"could not write the screenshot to {screenshot}: no such folder")

    app = _application()
    if screenshot is not None:
        return _screenshot(app, loaded, Path(screenshot), (width, height), view, project)
    window = MainWindow(loaded)
    window.resize(width, height)
    if project is not None:
        window.projects.open_project(project)  # its errors appear in the window
    if view is not None:
        window.show_view(view)
    window.show()
    return int(app.exec())


def _application() -> QApplication:
    from PySide6.QtWidgets import QApplication

    from dpstudio.desktop import APP_ID
    from dpstudio.ui.style import app_icon, apply_light_theme, configure_pyqtgraph

    configure_pyqtgraph()
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication([sys.argv[0] if sys.argv and sys.argv[0] else "dpstudio"])
    app.setApplicationName(APP_NAME)
    # Links the window to its launcher and icon on Wayland docks (the .desktop file's id).
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    apply_light_theme(app)
    return app


def _quiet_offscreen_warnings(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Drop the offscreen plugin's harmless notices; print everything else as Qt would."""
    from PySide6.QtCore import QtMsgType

    if "does not support propagateSizeHints" in message:
        return
    if kind != QtMsgType.QtDebugMsg:
        print(message, file=sys.stderr)


def _models_idle(app: QApplication, window: Any) -> bool:
    """Wait for the Models tab's training curve (it runs once its tab is shown)."""
    import time

    jobs = getattr(getattr(window, "model_view", None), "jobs", None)
    deadline = time.monotonic() + SCREENSHOT_TIMEOUT_S
    while jobs is not None and jobs.busy:
        if time.monotonic() > deadline:
            return False
        app.processEvents()
        time.sleep(0.01)
    return True


def _project_dataset(project: Path) -> str | None:
    """The newest registered dataset of ``project`` that still exists, else None (the sample).

    A project that cannot be read yields None here; opening it in the window then says why.
    """
    from dpstudio.project.errors import ProjectError
    from dpstudio.project.project import Project

    try:
        with Project.open(project) as opened:
            paths = [record.path for record in opened.datasets()]
    except (ProjectError, OSError):
        return None
    return next((p for p in reversed(paths) if Path(p).is_file()), None)


def _screenshot(app: QApplication, dataset: Dataset, path: Path, size: tuple[int, int],
                view: str | None = None, project: Path | None = None) -> int:
    from PySide6.QtCore import qInstallMessageHandler

    previous = qInstallMessageHandler(_quiet_offscreen_warnings)
    try:
        return _render(app, dataset, path, size, view, project)
    finally:
        qInstallMessageHandler(previous)


def _render(app: QApplication, dataset: Dataset, path: Path, size: tuple[int, int],
            view: str | None = None, project: Path | None = None) -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImageWriter

    from dpstudio.ui.main_window import MainWindow  # imported by run_app already

    window = MainWindow(dataset)
    window.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    window.resize(*size)
    if project is not None:
        window.projects.open_project(project)
    window.show_view(view or "analysis")
    window.show()
    for _ in range(5):
        app.processEvents()
    if not window.analysis.wait_idle(SCREENSHOT_TIMEOUT_S) or not _models_idle(app, window):
        print(f"{APP_NAME}: computations still running after {SCREENSHOT_TIMEOUT_S:g} s; "
              "the screenshot shows what had finished", file=sys.stderr)
    for _ in range(5):
        app.processEvents()
    image = window.grab().toImage()
    window.close()
    window.deleteLater()
    if (image.width(), image.height()) != size:
        # A device-pixel ratio other than 1, or a window that refused to shrink that far.
        image = image.scaled(
            *size,
            Qt.AspectRatioMode.IgnoreAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    suffix = path.suffix.lower().lstrip(".")
    supported = {bytes(f).decode().lower() for f in QImageWriter.supportedImageFormats()}
    fmt = suffix if suffix in supported else "png"
    if not image.save(str(path), fmt.upper()):
        return _fail(f"could not write the screenshot to {path}")
    print(path.resolve())
    return 0


def _fail(message: str) -> int:
    print(f"{APP_NAME}: {message}", file=sys.stderr)
    return 2
