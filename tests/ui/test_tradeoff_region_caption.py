"""The trade-off plot says when it shows only the (ε, δ) region (issue 14).

The person opens the survey sample, picks "age" and Mean, clicks the Shuffle trust model
and chooses the invisibility cloak in the mechanism box: the curve under "this release"
is only the boundary of the cloak's (ε, δ) region (its amplification bound), so the
legend calls it "(ε, δ) region" and the caption under the plot says so in one sentence.
Back on Central with the Laplace mechanism, the curve is the release's own: no such
sentence, and the legend says "this release".
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from ui_helpers import pick

from dpstudio.ui.texts import TRADEOFF_CAPTION

TIMEOUT = 60.0
REGION = "Only the (ε, δ) guarantee of"


def _settle(qtbot, win, ms: int = 300) -> None:
    qtbot.wait(ms)
    assert win.analysis.wait_idle(TIMEOUT)
    qtbot.wait(150)


def _trust(qtbot, win, name: str) -> None:
    qtbot.mouseClick(win.analysis_panel.trust_buttons[name], Qt.MouseButton.LeftButton)
    _settle(qtbot, win)
    assert win.session.trust_model == name


def _mechanism(qtbot, win, name: str) -> None:
    """Choose ``name`` in the mechanism box by typing its label's first letters."""
    combo = win.analysis_panel.mechanism_combo
    index = combo.findData(name)
    assert index >= 0, [combo.itemData(i) for i in range(combo.count())]
    if combo.currentIndex() != index:
        pick(qtbot, combo, combo.itemText(index)[:5])
        _settle(qtbot, win)
    assert win.session.mechanism == name


def test_region_only_curve_is_named_and_captioned(qtbot, window, tmp_path):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    _settle(qtbot, window)
    try:
        panel = window.analysis_panel
        if window.session.column != "age":
            pick(qtbot, panel.column_combo, "age")
            _settle(qtbot, window)
        _trust(qtbot, window, "shuffle")
        if panel.query_combo.currentText() != "Mean":
            pick(qtbot, panel.query_combo, "Mean")
            _settle(qtbot, window)
        _mechanism(qtbot, window, "cloak")
        plot = window.tradeoff_plot
        caption = plot.caption_text()
        assert caption.startswith(TRADEOFF_CAPTION)
        assert REGION in caption and "Invisibility cloak" in caption
        assert caption.count(REGION) == 1
        legend = [label.text for _s, label in plot.legend.items if label.isVisible()]
        assert legend[0].startswith("(ε, δ) region"), legend
        assert not any(t.startswith("this release") for t in legend), legend
        # What the person sees (kept where DPSTUDIO_SCREENSHOT_DIR says, to look at).
        folder = Path(os.environ.get("DPSTUDIO_SCREENSHOT_DIR") or tmp_path)
        assert window.grab().save(str(folder / "tradeoff-shuffle-cloak.png"))

        _trust(qtbot, window, "central")
        _mechanism(qtbot, window, "laplace")
        caption = plot.caption_text()
        assert caption == TRADEOFF_CAPTION and REGION not in caption
        legend = [label.text for _s, label in plot.legend.items if label.isVisible()]
        assert legend[0].startswith("this release"), legend
    finally:
        window.analysis.shutdown()
        window.projects.shutdown()
