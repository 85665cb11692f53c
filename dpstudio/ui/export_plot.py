"""Export any ``pg.PlotWidget`` as PNG or SVG, and find the plot the user means.

:func:`export_plot` writes through a temporary file renamed into place, so a failed
export never leaves half a file. PNG comes from pyqtgraph's ``ImageExporter`` at twice
the on-screen size (crisp on slides); SVG from its ``SVGExporter``. That exporter cannot
parse the close-path commands of the SVG that Qt ≥ 6.8 writes (``… Z``); when it trips on
them, the paths are transformed here and the exporter runs again.

Every export carries a caption under the plot — what it shows: dataset, column,
statistic, mechanism and ε (:func:`~dpstudio.ui.export_style.export_caption`) — and is
dressed for its size while it is drawn (:func:`~dpstudio.ui.export_style.styled_for_export`:
readable text, the legend at the image's scale and whole).

:class:`PlotFocusTracker` remembers the last plot that had keyboard focus or a click in
a window, so "Export plot as PNG…" acts on the plot under focus.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import secrets
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter, SVGExporter
from PySide6.QtCore import QEvent, QObject, QRectF
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QApplication, QWidget

from dpstudio.ui.export_style import export_caption, styled_for_export

__all__ = ["FORMATS", "PlotFocusTracker", "export_plot", "plot_title", "suggested_file_name"]

FORMATS = {"png": "PNG image (*.png)", "svg": "SVG vector image (*.svg)"}
PNG_SCALE = 2.0


def export_plot(plot_widget: pg.PlotWidget, path: str | os.PathLike[str], *,
                scale: float = PNG_SCALE, caption: str | None = None) -> Path:
    """Write ``plot_widget`` to ``path`` (``.png`` or ``.svg``) atomically; return the path.

    ``caption`` is drawn under the plot; None (default) reads it off the plot and its
    window (:func:`~dpstudio.ui.export_style.export_caption`), "" leaves it out. Raises
    ``ValueError`` for another extension and ``OSError`` if the file cannot be written
    (nothing is left behind then).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"{p.name}: export as .png or .svg, not {suffix or 'no extension'}")
    item = plot_widget.getPlotItem()
    from dpstudio.data.atomic import atomic_path

    text = export_caption(plot_widget) if caption is None else caption
    # The exporter picks the format from the temporary's suffix: keep it last.
    name = f".{p.stem}.{os.getpid()}.{secrets.token_hex(4)}.tmp{suffix}"
    with atomic_path(p, durable=False, tmp_name=name) as tmp, \
            styled_for_export(plot_widget, text) as dress:
        if suffix == ".png":
            exporter = _RectExporter(item, dress.rect)
            width = max(1, int(round(dress.rect.width() * scale)))
            exporter.parameters()["width"] = width
            exporter.export(str(tmp))
        else:
            _export_svg(item, tmp)
            _svg_to_height(tmp, dress.rect.height())
        if not tmp.is_file() or tmp.stat().st_size == 0:
            raise OSError(f"could not write {p.name}")
    return p


class _RectExporter(ImageExporter):
    """pyqtgraph's image exporter over a given scene rectangle: the plot and its caption."""

    def __init__(self, item: Any, rect: QRectF) -> None:
        self._rect = QRectF(rect)
        super().__init__(item)

    def getSourceRect(self) -> QRectF:  # noqa: N802 - pyqtgraph's name
        return self._rect

    def getTargetRect(self) -> QRectF:  # noqa: N802 - pyqtgraph's name
        return QRectF(0, 0, self._rect.width(), self._rect.height())


_VIEWBOX = re.compile(r'viewBox\s*=\s*"0 0 ([0-9.]+) ([0-9.]+)"')


def _svg_to_height(path: Path, height: float) -> None:
    """Grow the SVG's view box to ``height`` so the caption under the plot shows."""
    text = path.read_text(encoding="utf-8")
    match = _VIEWBOX.search(text)
    if match is None or float(match.group(2)) >= height:
        return
    text = (text[:match.start()] + f'viewBox="0 0 {match.group(1)} {int(round(height))}"'
            + text[match.end():])
    path.write_text(text, encoding="utf-8")


def _export_svg(item: Any, path: Path) -> None:
    try:
        SVGExporter(item).export(str(path))
    except ValueError:
        path.unlink(missing_ok=True)
        with _svg_path_fix():
            SVGExporter(item).export(str(path))


_SVG_MODULE = "pyqtgraph.exporters.SVGExporter"
_PATH_TOKEN = re.compile(r"([A-Za-z])|(-?[0-9.]+(?:[eE][+-]?[0-9]+)?)[ ,]"
                         r"(-?[0-9.]+(?:[eE][+-]?[0-9]+)?)")


@contextlib.contextmanager
def _svg_path_fix() -> Iterator[None]:
    """Within the block, SVG paths are mapped to scene coordinates before pyqtgraph's
    ``correctCoordinates`` (which only reads ``x,y`` pairs) sees them."""
    module = importlib.import_module(_SVG_MODULE)
    original = module.correctCoordinates
    xml = importlib.import_module("xml.dom.minidom")

    def correct(node: Any, defs: Any, item: Any, options: Any) -> Any:
        fixed = []
        for group in node.getElementsByTagName("g"):
            matrix = re.match(r"matrix\((.*)\)", group.getAttribute("transform"))
            values = [float(v) for v in matrix.group(1).split(",")] if matrix else [1, 0, 0, 1,
                                                                                       0, 0]
            transform = np.array([[values[0], values[2], values[4]],
                                  [values[1], values[3], values[5]]])
            for child in group.childNodes:
                if isinstance(child, xml.Element) and child.tagName == "path":
                    fixed.append((child, _transform_path(child.getAttribute("d"), transform)))
                    child.setAttribute("d", "")
        result = original(node, defs, item, options)
        for child, d in fixed:
            child.setAttribute("d", d)
        return result

    module.correctCoordinates = correct
    try:
        yield
    finally:
        module.correctCoordinates = original


def _transform_path(d: str, transform: np.ndarray) -> str:
    out = []
    for match in _PATH_TOKEN.finditer(d):
        if match.group(1):
            out.append(match.group(1))
            continue
        point = np.array([[float(match.group(2)), float(match.group(3))]])
        x, y = pg.functions.transformCoordinates(transform, point, transpose=True)[0]
        out.append(f"{x:.4g},{y:.4g}" if abs(x) > 1e6 or abs(y) > 1e6 else f"{x:.3f},{y:.3f}")
    text = " ".join(out)
    return text if not text or text[0] in "Mm" else "M" + text[1:]


def plot_title(plot_widget: pg.PlotWidget) -> str:
    """The plot's title as plain text ("" if it has none)."""
    label = plot_widget.getPlotItem().titleLabel
    text = getattr(label, "text", "") or ""
    return re.sub(r"<[^>]+>", "", text).strip()


def suggested_file_name(plot_widget: pg.PlotWidget, fmt: str) -> str:
    """``privacy-utility.png`` from the title "Privacy–utility"."""
    title = plot_title(plot_widget) or plot_widget.objectName() or "plot"
    stem = re.sub(r"[^0-9A-Za-z]+", "-", title.replace("–", "-")).strip("-").lower() or "plot"
    return f"{stem}.{fmt}"


class PlotFocusTracker(QObject):
    """Which plot of ``window`` the user means: focused or last clicked, else under the
    mouse, else the first visible one."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._last: weakref.ref[pg.PlotWidget] | None = None
        self._watched: weakref.WeakSet[QObject] = weakref.WeakSet()
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus)

    def watch(self) -> None:
        """Follow clicks on the window's current plots (call again after adding plots)."""
        for plot in self._plots():
            for target in (plot, plot.viewport()):
                if target not in self._watched:
                    target.installEventFilter(self)
                    self._watched.add(target)

    def note(self, plot: pg.PlotWidget) -> None:
        self._last = weakref.ref(plot)

    def current(self) -> pg.PlotWidget | None:
        plots = [p for p in self._plots() if p.isVisibleTo(self._window)]
        if self._last is not None and (last := self._last()) is not None and last in plots:
            return last
        under = QApplication.widgetAt(QCursor.pos())
        if (plot := _plot_of(under)) is not None and plot in plots:
            return plot
        return plots[0] if plots else None

    def _plots(self) -> list[pg.PlotWidget]:
        return list(self._window.findChildren(pg.PlotWidget))

    def _on_focus(self, _old: QWidget | None, new: QWidget | None) -> None:
        plot = _plot_of(new)
        if plot is not None and self._window.isAncestorOf(plot):
            self.note(plot)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.MouseButtonPress:
            plot = _plot_of(obj)
            if plot is not None:
                self.note(plot)
        return False


def _plot_of(widget: Any) -> pg.PlotWidget | None:
    while widget is not None:
        if isinstance(widget, pg.PlotWidget):
            return widget
        widget = widget.parent() if isinstance(widget, QObject) else None
    return None
