"""File ▸ Export Plot: every exported plot says what it shows, in readable text, with its
whole legend (issue 12, item 14).

The person clicks a plot, then File ▸ Export Plot as PNG…, and picks a file name. What is
checked is what they get: the scene drawn into the PNG holds a caption with the dataset,
column, statistic, mechanism and ε; the legend is drawn at the image's scale (not at
screen size, as pyqtgraph does by default), whole, inside the image; the PNG is taller than
the plot by the caption; and the window looks the same afterwards.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo, QImage
from PySide6.QtWidgets import QFileDialog, QGraphicsItem, QGraphicsTextItem

from dpstudio.ui.export_plot import export_plot
from dpstudio.ui.export_style import MAX_ENLARGE, TICK_SHARE, set_export_caption
from dpstudio.ui.plots import bottom_legend, style_plot

IGNORES = QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations


@pytest.fixture
def seen(monkeypatch):
    """What the scene holds while the PNG is drawn: caption texts, legend labels with
    their scene rectangles and whether they follow the export's scale, the exported rect,
    and the tick font's pixel size."""
    record: dict = {}
    original = ImageExporter.export

    def spy(self, *args, **kwargs):
        item = self.item
        scene = item.scene()
        record["rect"] = self.getSourceRect()
        record["captions"] = [i.toPlainText() for i in scene.items()
                              if isinstance(i, QGraphicsTextItem)
                              and i.objectName() == "export_caption"]
        legends = [i for i in scene.items() if isinstance(i, pg.LegendItem)
                   and item.isAncestorOf(i)]
        record["legend_scaled"] = [not (lg.flags() & IGNORES) for lg in legends]
        record["labels"] = [(label.text, label.sceneBoundingRect())
                            for lg in legends for _s, label in lg.items]
        # What each entry draws (its text item: wrapped or not), and the legend's box.
        record["drawn"] = [(label.text, label.item.toPlainText(),
                            label.item.sceneBoundingRect(), lg.sceneBoundingRect())
                           for lg in legends for _s, label in lg.items if label.isVisible()]
        record["tick_px"] = item.getAxis("bottom").style["tickFont"].pixelSize()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ImageExporter, "export", spy)
    return record


def _save_as(monkeypatch, path):
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(path), "PNG image (*.png)")))


def _dark_rows(image: QImage, top: int) -> int:
    """Rows below ``top`` with text-dark pixels (the caption band)."""
    img = image.convertToFormat(QImage.Format.Format_RGB32)
    arr = np.frombuffer(img.constBits(), dtype=np.uint8).reshape(img.height(),
                                                                  img.bytesPerLine())
    px = arr[top:, : img.width() * 4].reshape(img.height() - top, img.width(), 4)[:, :, :3]
    return int(np.count_nonzero((px < 120).all(axis=2).any(axis=1)))


def test_file_export_plot_png_carries_caption_and_whole_legend(qtbot, window, tmp_path,
                                                               monkeypatch, seen):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    assert window.analysis.wait_idle(60)
    plot = window.analysis_view.utility_plot
    legend = plot.getPlotItem().legend
    labels_on_screen = [label.text for _s, label in legend.items]
    assert labels_on_screen, "the utility plot has a legend"
    window.plot_tracker.watch()
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton)
    qtbot.wait(300)  # the layout's deferred fitting (legend, data areas) after the resize
    before = plot.grab().toImage()
    target = tmp_path / "utility.png"
    _save_as(monkeypatch, target)

    window.export_actions["png"].trigger()  # File ▸ Export Plot as PNG…

    assert target.is_file()
    # The caption says what the plot shows.
    (caption,) = seen["captions"]
    session = window.session
    for fact in ("Dataset survey.csv", f"column {session.column}", session.query,
                 session.info.label, f"ε = {session.epsilon:g}"):
        assert fact in caption, (fact, caption)
    # The legend is drawn at the image's scale, whole and inside the exported area.
    assert seen["legend_scaled"] and all(seen["legend_scaled"])
    assert [text for text, _r in seen["labels"]] == labels_on_screen
    for text, rect in seen["labels"]:
        assert not text.rstrip().endswith("…"), text
        assert seen["rect"].contains(rect), (text, rect, seen["rect"])
    # The PNG holds the caption band under the plot: taller than the plot, text in it.
    image = QImage(str(target))
    height = plot.getPlotItem().sceneBoundingRect().height()
    assert image.height() > 2 * height * 0.9 + 40
    assert _dark_rows(image, int(image.height() * 0.85)) >= 8
    # Nothing on screen changed: the legend ignores transformations again, no caption.
    assert legend.flags() & IGNORES
    assert not [i for i in plot.scene().items() if isinstance(i, QGraphicsTextItem)
                and i.objectName() == "export_caption"]
    # (Redrawn once the event loop turns; a lasting change fails here.)
    qtbot.waitUntil(lambda: plot.grab().toImage() == before, timeout=2000)


def test_a_large_plot_exports_text_scaled_to_its_width(qtbot, tmp_path, seen):
    widget = pg.PlotWidget()
    widget.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # gone after the test
    style_plot(widget, "Privacy–utility", "ε", "± years", "")
    bottom_legend(widget, 2)
    x = np.linspace(0.1, 10, 30)
    widget.plot(x, 1 / x, pen=pg.mkPen("#2563eb", width=2),
                name="Central: Laplace, noise and clamping bias measured on the data")
    widget.plot(x, 2 / x, pen=pg.mkPen("#d9661f", width=2),
                name="Local: randomized response with the other-or-missing cell")
    widget.resize(1300, 600)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    screen_px = QFontInfo(widget.getPlotItem().getAxis("bottom").style["tickFont"]).pixelSize()
    width = widget.getPlotItem().sceneBoundingRect().width()

    set_export_caption(widget, "Dataset d.csv · column age · mean · Laplace mechanism · "
                               "ε = 1")  # what an owner without a session says

    export_plot(widget, tmp_path / "big.png")

    assert seen["tick_px"] >= min(TICK_SHARE * width, MAX_ENLARGE * screen_px) - 1
    assert seen["tick_px"] > 1.4 * screen_px
    (caption,) = seen["captions"]
    assert caption.endswith("\nDataset d.csv · column age · mean · Laplace mechanism · ε = 1")
    for text, rect in seen["labels"]:
        assert seen["rect"].contains(rect), (text, rect, seen["rect"])


def _choose_model(qtbot, window, trust: str, epsilon: str) -> None:
    """Mean of age, ``trust`` clicked in the Analysis panel, ε typed in its box."""
    panel = window.analysis_panel
    qtbot.mouseClick(panel.trust_buttons[trust], Qt.MouseButton.LeftButton)
    qtbot.wait(200)
    assert window.analysis.wait_idle(60)
    panel.epsilon.spin.setFocus()
    panel.epsilon.spin.selectAll()
    qtbot.keyClicks(panel.epsilon.spin, epsilon)
    qtbot.keyClick(panel.epsilon.spin, Qt.Key.Key_Return)
    qtbot.wait(300)
    assert window.analysis.wait_idle(60)
    qtbot.wait(100)
    assert (window.session.trust_model, window.session.epsilon) == (trust, float(epsilon))


@pytest.mark.parametrize("trust", ["central", "local", "shuffle", "distributed"])
def test_exported_plots_draw_their_whole_legend_in_every_trust_model(qtbot, window, tmp_path,
                                                                     monkeypatch, seen, trust):
    """Survey sample, age, Mean, each trust model, ε = 20: File ▸ Export Plot as PNG… of
    the trade-off plot and of the privacy–utility plot draws every legend entry whole —
    no "…", the entry's every word, inside the legend's box and the exported image."""
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    assert window.analysis.wait_idle(60)
    assert window.session.column == "age" and window.session.query == "mean"
    _choose_model(qtbot, window, trust, "20")
    window.plot_tracker.watch()
    for name in ("tradeoff_plot", "utility_plot"):
        plot = getattr(window, name)
        on_screen = [label.text for _s, label in plot.getPlotItem().legend.items]
        qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton)
        target = tmp_path / f"{name}-{trust}.png"
        _save_as(monkeypatch, target)

        window.export_actions["png"].trigger()  # File ▸ Export Plot as PNG…

        assert target.is_file()
        assert [text for text, _r in seen["labels"]] == on_screen
        (caption,) = seen["captions"]
        assert f"{trust} model" in caption and "ε = 20" in caption
        if name == "tradeoff_plot":
            shown = [drawn for _t, drawn, _r, _b in seen["drawn"]]
            assert shown[1] == "random guessing" and shown[2].startswith("after 10 ")
            if trust == "shuffle":  # only its (ε, δ) is known: named so (issue 14)
                assert shown[0] == "(ε, δ) region: ε = 20, δ = 1e-6"
            else:
                assert shown[0].startswith("this release")
        for text, drawn, rect, box in seen["drawn"]:
            assert drawn == text and "…" not in drawn, (name, trust, text, drawn)
            assert box.adjusted(-0.5, -0.5, 0.5, 0.5).contains(rect), (name, text, rect, box)
            assert seen["rect"].contains(rect), (name, text, rect, seen["rect"])
    window.analysis.shutdown()
    window.projects.shutdown()
