"""Presentation mode enlarges the legends with the rest of the text (issue 12, item 13:
"all text larger"), never cuts them, and keeps the larger type when ε moves on the
presentation bar (item 14: legends scaled with the rest and never truncated).

The person chooses Shuffle (the longest trade-off entry), presses F11, reads the plots,
types another ε in the presentation bar and presses F11 again.
"""

from __future__ import annotations

import pytest
from legend_checks import cut_entries, entry_pixels
from PySide6.QtCore import Qt

from dpstudio.ui.presentation import LEGEND_SCALE

TIMEOUT = 60.0


def _settle(qtbot, win, ms: int = 400) -> None:
    qtbot.wait(ms)
    assert win.analysis.wait_idle(TIMEOUT)
    qtbot.wait(200)


def _legend_pixels(win) -> dict[str, list[int]]:
    return {name: [entry_pixels(label) for _s, label in getattr(win, name).legend.items]
            for name in ("utility_plot", "tradeoff_plot")}


def _cut(win) -> list[str]:
    return [f"{name}: {entry}" for name in ("utility_plot", "tradeoff_plot")
            for entry in cut_entries(getattr(win, name))]


@pytest.mark.parametrize("size", [(1400, 900), (800, 800)])
def test_presenting_enlarges_the_legends_with_the_rest(qtbot, window, size):
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    _settle(qtbot, window)
    try:
        qtbot.mouseClick(window.analysis_panel.trust_buttons["shuffle"],
                         Qt.MouseButton.LeftButton)
        _settle(qtbot, window)
        normal = _legend_pixels(window)
        assert all(normal.values()), normal
        trade = window.tradeoff_plot
        title = trade.getPlotItem().titleLabel
        normal_title = title.opts.get("size")

        qtbot.keyClick(window, Qt.Key.Key_F11)  # View ▸ Presentation
        _settle(qtbot, window)
        presentation = window.presentation
        assert presentation.enabled
        shown = _legend_pixels(window)
        for name, sizes in shown.items():
            for before, now in zip(normal[name], sizes, strict=True):
                assert now >= before + 2, (name, before, now)  # visibly larger
        for before, now in zip(normal["tradeoff_plot"], shown["tradeoff_plot"], strict=True):
            # As much larger as the rest of the type (the presentation scale) where the
            # legend leaves the data area half the height (a longer legend on a small
            # screen gets what that leaves).
            assert now >= 0.9 * presentation.scale * LEGEND_SCALE * before, (before, now)
        assert _cut(window) == []
        presenting_title = title.opts.get("size")
        assert presenting_title != normal_title

        # ε typed on the presentation bar redraws the plots: still the larger type.
        spin = window.presentation_bar.epsilon.spin
        spin.setFocus()
        spin.selectAll()
        qtbot.keyClicks(spin, "5")
        qtbot.keyClick(spin, Qt.Key.Key_Return)
        _settle(qtbot, window)
        assert window.session.epsilon == 5.0
        assert "ε = 5" in title.text
        assert title.opts.get("size") == presenting_title
        assert _legend_pixels(window) == shown
        assert _cut(window) == []

        qtbot.keyClick(window, Qt.Key.Key_F11)  # and back
        _settle(qtbot, window, 800)
        assert not presentation.enabled
        assert _legend_pixels(window) == normal
        assert title.opts.get("size") == normal_title
        # The title says the ε of the plot, not the one before presenting.
        assert "ε = 5" in title.text and "ε = 5" in title.item.toPlainText()
        assert _cut(window) == []
    finally:
        window.analysis.shutdown()
        window.projects.shutdown()
