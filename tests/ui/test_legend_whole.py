"""Legends are never truncated (issue 12, items 14 and 15): in every trust model and
query, the trade-off plot's three entries (this release, random guessing, k releases) and
the privacy–utility plot's entries are drawn whole, wrapped onto more lines where the plot
is too narrow for one, inside the legend's box and the plot.

The person picks the column and the statistic, clicks a trust model and types ε = 20, as
in the report: "Survey sample, column age, Mean, Shuffle, ε = 20: the trade-off legend
shows 'this release: at most what ε = 20, δ = 1e…'".
"""

from __future__ import annotations

import pytest
from legend_checks import ELLIPSIS, cut_entries
from PySide6.QtCore import Qt
from ui_helpers import pick, type_into

TIMEOUT = 60.0


def _settle(qtbot, win, ms: int = 300) -> None:
    qtbot.wait(ms)
    assert win.analysis.wait_idle(TIMEOUT)
    qtbot.wait(150)


def _choose(qtbot, win, column: str, query: str, trust: str, epsilon: str = "20") -> None:
    """Column, statistic and trust model from the Analysis panel, ε typed in its box."""
    panel = win.analysis_panel
    if win.session.column != column:
        pick(qtbot, panel.column_combo, column)
        _settle(qtbot, win)
    qtbot.mouseClick(panel.trust_buttons[trust], Qt.MouseButton.LeftButton)
    _settle(qtbot, win)
    if panel.query_combo.currentText() != query:
        pick(qtbot, panel.query_combo, query)
        _settle(qtbot, win)
    type_into(qtbot, panel.epsilon.spin, epsilon)
    _settle(qtbot, win)
    assert (win.session.column, win.session.trust_model) == (column, trust)
    assert panel.query_combo.currentText() == query
    assert win.session.epsilon == float(epsilon)


def tradeoff_entries(plot) -> list[str]:
    return [label.item.toPlainText() for _s, label in plot.legend.items
            if label.isVisible()]


#: (column, query, trust models that answer it) — on the survey sample no local mechanism
#: releases a sum, and no shuffle or distributed one a histogram.
CASES = [
    ("age", "Mean", ("central", "local", "shuffle", "distributed")),
    ("age", "Sum", ("central", "shuffle", "distributed")),
    ("faculty", "Histogram", ("central", "local")),
]


@pytest.mark.parametrize(("column", "query", "models"), CASES,
                         ids=[case[1].lower() for case in CASES])
def test_legends_are_whole_in_every_trust_model(qtbot, window, column, query, models):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    _settle(qtbot, window)
    try:
        for trust in models:
            _choose(qtbot, window, column, query, trust)
            trade = window.tradeoff_plot
            entries = tradeoff_entries(trade)
            # The three a stakeholder needs, by default: this release, guessing, k.
            assert len(entries) == 3, (trust, entries)
            assert entries[1] == "random guessing"
            assert entries[2].startswith("after 10 "), (trust, entries)
            if trust == "shuffle":  # only its (ε, δ) is known: the region, named so
                assert entries[0] == "(ε, δ) region: ε = 20, δ = 1e-6"
                tip = trade.legend.items[0][1].toolTip()
                assert "Only the (ε, δ) guarantee" in tip
            else:
                assert entries[0].startswith("this release"), (trust, entries)
            assert cut_entries(trade) == [], (query, trust)
            assert cut_entries(window.utility_plot) == [], (query, trust)
    finally:
        window.analysis.shutdown()
        window.projects.shutdown()


def test_a_narrow_plot_wraps_the_entry_instead_of_cutting_it(qtbot, window):
    """At 800×800 the trade-off plot is about 230 px wide: the long entries take two
    lines, every word on screen."""
    window.resize(800, 800)
    window.show()
    qtbot.waitExposed(window)
    _settle(qtbot, window)
    try:
        _choose(qtbot, window, "age", "Mean", "shuffle")
        trade = window.tradeoff_plot
        label = trade.legend.items[0][1]
        assert label.item.toPlainText() == "(ε, δ) region: ε = 20, δ = 1e-6"
        one_line = trade.legend.items[1][1].item.boundingRect().height()
        assert label.item.boundingRect().height() > 1.5 * one_line  # wrapped
        assert cut_entries(trade) == []
        _choose(qtbot, window, "faculty", "Histogram", "local")
        # The analysis layer's "K-ary randomized resp…" is given whole.
        assert tradeoff_entries(trade)[0] == ("this release: K-ary randomized response: "
                                              "one report")
        assert ELLIPSIS not in trade.legend.items[0][1].toolTip()
        assert cut_entries(trade) == []
        assert cut_entries(window.utility_plot) == []
    finally:
        window.analysis.shutdown()
        window.projects.shutdown()
