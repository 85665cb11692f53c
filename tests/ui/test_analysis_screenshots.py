"""Each main view rendered offscreen at 1400×900, checked by its pixels: the plot areas
hold many colours (curves, points, bands), the trust models' colours are there, and
``run_app(..., view=...)`` writes the view once the computations have finished."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QColor, QImage

from dpstudio.data import open_dataset, sample_path
from dpstudio.ui import session as session_module
from dpstudio.ui.app import run_app
from dpstudio.ui.main_window import VIEWS, MainWindow
from dpstudio.ui.session import TRUST_MODELS

SIZE = (1400, 900)


def _pixels(image: QImage, rect: QRect | None = None) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    if rect is not None:
        image = image.copy(rect)
    raw = np.frombuffer(image.constBits(), dtype=np.uint32).reshape(image.height(), -1)
    return raw[:, : image.width()] & 0xFFFFFF


def _near(pixels: np.ndarray, colour: str, tolerance: int = 40) -> int:
    c = QColor(colour)
    r, g, b = (pixels >> 16) & 255, (pixels >> 8) & 255, pixels & 255
    close = (np.abs(r.astype(int) - c.red()) + np.abs(g.astype(int) - c.green())
             + np.abs(b.astype(int) - c.blue())) < tolerance
    return int(close.sum())


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("DPSTUDIO_CONFIG_DIR", str(tmp_path))
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    win = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(win)
    yield win
    win.analysis.shutdown()


def _render(win: MainWindow, view: str) -> QImage:
    win.resize(*SIZE)
    win.show_view(view)
    win.show()
    assert win.analysis.wait_idle(30)
    return win.grab().toImage()


def _rect(win: MainWindow, widget) -> QRect:
    return QRect(widget.mapTo(win, QPoint(0, 0)), widget.size())


@pytest.mark.parametrize("view", ["analysis", "utility", "tradeoff", "data"])
def test_views_render_with_content(window, view, tmp_path):
    image = _render(window, view)
    image.save(str(tmp_path / f"{view}.png"))
    assert (image.width(), image.height()) == SIZE
    if view == "data":
        table = _pixels(image, _rect(window, window.table_view))
        assert len(np.unique(table)) > 30  # text, grid, alternating rows
        return
    plots = {"analysis": [window.utility_plot, window.tradeoff_plot],
             "utility": [window.utility_plot], "tradeoff": [window.tradeoff_plot]}[view]
    central = TRUST_MODELS["central"]["colour"]
    for plot in plots:
        rect = _rect(window, plot)
        assert rect.width() > 300 and rect.height() > 250, (view, rect)
        pixels = _pixels(image, rect)
        assert len(np.unique(pixels)) > 150, view  # antialiased curves, bands, text
        assert _near(pixels, central) > 100, view  # the central model's curve is drawn
    if view == "utility":  # the local model's curve is there too, in its own colour
        assert _near(_pixels(image, _rect(window, window.utility_plot)),
                     TRUST_MODELS["local"]["colour"]) > 100
    if view != "analysis":
        other = window.tradeoff_plot if view == "utility" else window.utility_plot
        assert not other.isVisibleTo(window)
    else:
        preview = _pixels(image, _rect(window, window.result_panel.plot))
        assert _near(preview, central) > 50  # the simulated release is drawn


def test_run_app_renders_a_view_after_the_computations(qtbot, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setenv("DPSTUDIO_CONFIG_DIR", str(tmp_path))
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    shot = tmp_path / "tradeoff.png"
    assert run_app(screenshot=str(shot), size=SIZE, view="tradeoff") == 0
    image = QImage(str(shot))
    assert (image.width(), image.height()) == SIZE
    pixels = _pixels(image)
    assert _near(pixels, TRUST_MODELS["central"]["colour"]) > 200  # curves, not a hint
    assert len(np.unique(pixels)) > 300
    capsys.readouterr()
    assert run_app(screenshot=str(tmp_path / "x.png"), view="nope") == 2
    err = capsys.readouterr().err
    assert "unknown view 'nope'" in err and all(v in err for v in VIEWS)
