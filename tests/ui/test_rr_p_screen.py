"""Randomized response with a chosen p on screen (issue 10, item 5): p = 0.75 makes the
randomizer ln 3 ≈ 1.099-DP whatever the ε slider says, and every ε the screen shows
must be that one — the budget panel's visible text (without anyone refreshing it), the
trade-off plot's title and the privacy–utility marker; the slider, which then changes
nothing, is disabled and says why.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from ui_helpers import TIMEOUT, close_window, open_window, write_declared_csv

ROWS = 2_000
LN3 = math.log(3.0)


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    answers = rng.choice(np.array(["yes", "no"], dtype=object), ROWS, p=[0.3, 0.7])
    path = write_declared_csv(tmp_path / "exam.csv", ["cheated"],
                              ([a] for a in answers.tolist()),
                              [{"name": "cheated", "type": "categorical",
                                "categories": ["yes", "no"]}])
    win = open_window(qtbot, path, monkeypatch)
    yield win
    close_window(win)


def _rr_with_p(window, qtbot) -> None:
    s = window.session
    qtbot.mouseClick(window.analysis_panel.trust_buttons["local"],
                     Qt.MouseButton.LeftButton)
    s.set_query("histogram")
    s.set_mechanism("rr")
    s.set_epsilon(1.0)
    assert window.analysis.wait_idle(TIMEOUT)
    assert (s.trust_model, s.query, s.mechanism) == ("local", "histogram", "rr")
    s.set_param("p", 0.75)
    assert window.analysis.wait_idle(TIMEOUT)


def test_every_epsilon_on_the_screen_is_the_randomizers(window, qtbot):
    _rr_with_p(window, qtbot)
    panel = window.analysis_panel
    # The budget panel's visible text follows the parameter by itself (before: it kept
    # the slider's ε 1 until something else refreshed it).
    assert "+ 1.09861 this release of" in panel.budget_panel.words.text()
    total = panel.budget_panel.figures()["total_epsilon"]
    assert panel.budget_panel.bar.parts()["this"] == pytest.approx(LN3 / total)
    # The trade-off plot's title, and the privacy–utility marker, at the same ε.
    assert window.tradeoff_plot.result.epsilon == pytest.approx(LN3)
    assert window.tradeoff_plot.getPlotItem().titleLabel.text.startswith(
        "Attacker's trade-off at ε = 1.1")
    plot = window.utility_plot
    assert plot.marker_epsilon() == pytest.approx(LN3)
    assert plot.marker.value() == pytest.approx(math.log10(LN3))
    assert plot.marker_text().startswith("ε = 1.099 (fixed)")
    assert any("fix its guarantee at ε = 1.099" in n for n in plot.notes())
    # The slider changes nothing now: disabled, and it says which ε holds.
    assert not panel.epsilon.isEnabled()
    assert "p fixes ε = 1.099" in panel.epsilon.spin.toolTip()
    window.session.set_epsilon(3.0)  # e.g. a restored session: still ln 3 everywhere
    assert window.analysis.wait_idle(TIMEOUT)
    assert plot.marker_epsilon() == pytest.approx(LN3)
    assert "+ 1.09861 this release of" in panel.budget_panel.words.text()

    window.grab().save(str(window.session.dataset.path.parent / "rr_p.png"))

    # p back to 0 (derived from ε): the slider's ε again, everywhere.
    window.session.set_param("p", 0.0)
    assert window.analysis.wait_idle(TIMEOUT)
    assert panel.epsilon.isEnabled()
    assert "+ 3 this release of" in panel.budget_panel.words.text()
    assert plot.marker_epsilon() == pytest.approx(3.0)
    assert window.tradeoff_plot.result.epsilon == pytest.approx(3.0)
