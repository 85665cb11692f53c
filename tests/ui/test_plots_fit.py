"""The plots fit their widgets (issue 12, items 13 and 15): no title, legend, axis or
Details button past the widget's edge after choosing Shuffle or leaving presentation mode,
at 1400×900 and 800×800; and in presentation mode the y tick labels never pile up."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsWidget

from dpstudio.data import open_dataset, sample_path

TIMEOUT = 60.0


@pytest.fixture
def shown(qtbot):
    """The main window on the survey sample, at a size, shown and idle (comparisons on,
    as a person sees them)."""
    from dpstudio.ui.main_window import MainWindow

    made = []

    def make(width, height):
        win = MainWindow(open_dataset(sample_path("survey")))
        qtbot.addWidget(win)
        win.resize(width, height)
        win.show()
        qtbot.waitExposed(win)
        assert win.analysis.wait_idle(TIMEOUT)
        qtbot.wait(200)
        made.append(win)
        return win

    yield make
    for win in made:
        win.analysis.shutdown()
        win.projects.shutdown()


def _settle(qtbot, win, ms=400):
    qtbot.wait(ms)
    assert win.analysis.wait_idle(TIMEOUT)
    qtbot.wait(200)


def _outside(plot) -> list[str]:
    """The parts of ``plot`` drawn (even partly) outside its widget, with their rects."""
    bounds = QRectF(plot.rect()).adjusted(-0.5, -0.5, 0.5, 0.5)
    item = plot.getPlotItem()
    parts = {"plot": item, "title": item.titleLabel, "legend": item.legend,
             "left axis": item.getAxis("left"), "bottom axis": item.getAxis("bottom"),
             "data area": item.vb}
    out = []
    for name, part in parts.items():
        if part is None or not part.isVisible():
            continue
        # The part's own box (an axis's boundingRect also holds its grid lines).
        scene = part.mapRectToScene(QRectF(QPointF(0, 0), QGraphicsWidget.size(part)))
        rect = plot.viewportTransform().mapRect(scene)
        if not bounds.contains(rect):
            out.append(f"{name} {rect.getRect()} in {plot.width()}×{plot.height()}")
    details = getattr(plot, "details", None)
    if details is not None and details.isVisible():
        if not plot.rect().contains(details.geometry()):
            out.append(f"Details {details.geometry().getRect()} in {plot.width()}")
    return out


def _clipped(win) -> list[str]:
    return [f"{name}: {part}" for name in ("utility_plot", "tradeoff_plot")
            for part in _outside(getattr(win, name))]


@pytest.mark.parametrize("size", [(1400, 900), (800, 800)])
def test_the_plots_stay_inside_their_widgets_after_shuffle_and_presenting(qtbot, shown,
                                                                          size):
    win = shown(*size)
    assert _clipped(win) == []

    qtbot.mouseClick(win.analysis_panel.trust_buttons["shuffle"], Qt.MouseButton.LeftButton)
    _settle(qtbot, win)
    assert win.session.trust_model == "shuffle"
    assert _clipped(win) == []
    title = win.tradeoff_plot.getPlotItem().titleLabel
    # The title keeps ε in sight, and says the whole of it (δ too) in its tooltip.
    assert "ε = 1" in title.item.toPlainText()
    assert "δ = 1e-6" in title.toolTip() or "δ = 1e-6" in title.item.toPlainText()

    qtbot.keyClick(win, Qt.Key.Key_F11)
    _settle(qtbot, win)
    assert win.presentation.enabled
    assert _clipped(win) == []
    qtbot.keyClick(win, Qt.Key.Key_F11)
    _settle(qtbot, win, 800)
    assert not win.presentation.enabled
    assert _clipped(win) == []

    # The legend's entries that had to be cut say themselves whole in their tooltip.
    for _sample, label in win.tradeoff_plot.legend.items:
        shown_text = label.item.toPlainText()
        if shown_text.endswith("…"):
            assert label.toolTip().startswith(shown_text[:-1])


def _tick_label_rects(axis) -> list[QRectF]:
    """Where the axis draws its tick labels (pyqtgraph's own layout of them)."""
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        if axis.style.get("tickFont"):
            painter.setFont(axis.style["tickFont"])
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return sorted((rect for rect, _flags, _text in specs[2]), key=lambda r: r.top())


@pytest.mark.parametrize("size", [(1400, 900), (800, 800)])
def test_presenting_keeps_the_y_tick_labels_apart(qtbot, shown, size):
    win = shown(*size)
    qtbot.keyClick(win, Qt.Key.Key_F11)
    _settle(qtbot, win)
    assert win.presentation.enabled
    for plot in (win.utility_plot, win.tradeoff_plot):
        rects = _tick_label_rects(plot.getAxis("left"))
        assert len(rects) >= 2, plot  # still a scale to read
        for upper, lower in zip(rects, rects[1:], strict=False):
            assert upper.bottom() <= lower.top(), (plot, upper.getRect(), lower.getRect())
    assert _clipped(win) == []
