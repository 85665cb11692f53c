"""Heavy hitters in the application (issue 10, item 6): on a text column, in the local
model, the analyst picks "Heavy hitters" and the sequence-fragment puzzle (or the
count-mean sketch), and the result panel lists the discovered words with their
estimated counts and intervals — a simulated release, labelled so — driven through the
real widgets with clicks and keys on a generated dataset with planted words."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from ui_helpers import TIMEOUT, close_window, open_window, pick, write_declared_csv

from dpstudio.engine.local import run_local
from dpstudio.engine.local.entries import sfp_from_params
from dpstudio.engine.rng import SimulationSource

ROWS = 12_000
#: Planted words and their shares; the rest are 300 rare words and 4% missing values.
PLANTED = {"paris": 0.30, "london": 0.22, "berlin": 0.16}


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(11)
    rare = [f"town{i}" for i in range(300)]
    words = np.array(list(PLANTED) + rare, dtype=object)
    p = np.array(list(PLANTED.values()) + [(1 - sum(PLANTED.values())) / 300] * 300)
    city = rng.choice(words, ROWS, p=p).astype(object)
    city[rng.random(ROWS) < 0.04] = ""
    city[::7] = [str(w).upper() for w in city[::7]]  # devices lower-case the words
    score = rng.uniform(20, 90, ROWS).round(1)
    return write_declared_csv(tmp_path / "people.csv", ["score", "city"],
                              zip(score.tolist(), city.tolist(), strict=True), [
        {"name": "score", "type": "numeric", "lower": 0, "upper": 100},
        {"name": "city", "type": "text"}])


@pytest.fixture
def window(qtbot, data, monkeypatch):
    win = open_window(qtbot, data, monkeypatch)
    yield win
    close_window(win)


def _set_epsilon(qtbot, win, value: str) -> None:
    spin = win.analysis_panel.epsilon.spin
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, value)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def _choose_heavy_hitters(qtbot, win, mechanism: str = "Seq") -> None:
    panel = win.analysis_panel
    qtbot.mouseClick(panel.trust_buttons["local"], Qt.MouseButton.LeftButton)
    assert win.session.trust_model == "local"
    pick(qtbot, panel.column_combo, "city")
    assert win.session.column == "city"
    assert panel.query_combo.currentData() == "heavy_hitters"
    assert panel.query_combo.currentText() == "Heavy hitters"
    pick(qtbot, panel.mechanism_combo, mechanism)


def test_heavy_hitters_list_the_planted_words(window, qtbot, tmp_path):
    panel, s = window.analysis_panel, window.session
    _choose_heavy_hitters(qtbot, window)
    assert s.mechanism == "sfp"
    # The form comes from the registry: sfp's own parameters, nothing hard-coded.
    assert set(panel.param_form.values()) == {"hashes", "buckets", "fragment_share"}
    # Central, shuffle and distributed have no heavy hitters: only local is offered.
    assert [n for n, b in panel.trust_buttons.items() if b.isEnabled()] == ["local"]
    _set_epsilon(qtbot, window, "6")
    assert s.epsilon == 6.0
    assert window.analysis.wait_idle(TIMEOUT)

    preview = window.result_panel.preview
    assert preview.query == "heavy_hitters" and preview.simulated
    assert preview.n == ROWS  # every row sends a report, missing ones included
    words = preview.labels
    assert set(PLANTED) <= set(words), words
    assert not any(w.startswith("town") for w in words)  # rare words stay hidden
    # The same release as the engine's, with the preview's fixed simulation seed.
    column = window.session.values
    res = run_local(column, "sfp", {"epsilon": 6.0}, query="heavy_hitters",
                    source=SimulationSource(window.analysis.preview_seed))
    assert [i["item"] for i in res.items] == words
    np.testing.assert_allclose(preview.value, [i["count"] for i in res.items])
    np.testing.assert_allclose(preview.ci_low, [i["ci_low"] for i in res.items])
    # The truth (analyst only) counts each word lower-cased, as the devices send it.
    lowered = np.array([str(v).lower() for v in column if v is not None])
    for w, t, lo, hi in zip(words, preview.truth, preview.ci_low, preview.ci_high,
                            strict=True):
        assert t == np.count_nonzero(lowered == w)
        # 95% intervals: each planted count is within 4 standard errors (not a flake).
        assert lo - (hi - lo) / 2 < t < hi + (hi - lo) / 2

    # What the analyst reads: a simulation, the words with counts and intervals, n.
    header = window.result_panel.header.text()
    summary = window.result_panel.summary.text()
    assert "simulation" in header and "Local model" in header
    assert f"{len(words)} words discovered" in summary and "95% interval" in summary
    assert f"n = {ROWS:,} reports" in summary
    for w in PLANTED:
        assert f"<b>{w}</b>" in summary
    assert window.result_panel.plot.isVisible()
    assert window.result_panel.plotted()["labels"] == words

    # The privacy–utility plot: one line, the standard error of a word's count, whose
    # value at ε is the word sketch's closed-form variance at n = rows (ε/2 on words).
    curves = window.utility_plot.curves()
    assert list(curves) == ["Local: Sequence-fragment puzzle: a word's count"]
    eps, err = curves["Local: Sequence-fragment puzzle: a word's count"]
    i = int(np.argmin(np.abs(np.log(eps / 6.0))))
    # Apple's count-mean sketch on the words, ε_word = ε/2 (fragment_share 0.5):
    # Var = (m/(m−1))² · n · (c² − 1)/4 with c = (e^{ε_word/2} + 1)/(e^{ε_word/2} − 1).
    m, half = 1024, float(eps[i]) / 4.0
    c = (math.exp(half) + 1.0) / (math.exp(half) - 1.0)
    expected = math.sqrt((m / (m - 1.0)) ** 2 * ROWS * (c * c - 1.0) / 4.0)
    assert err[i] == pytest.approx(expected, rel=1e-9)
    assert err[i] == pytest.approx(
        math.sqrt(float(sfp_from_params(epsilon=float(eps[i])).variance(ROWS)[0])), rel=1e-12)
    assert "word counts" in window.utility_plot.plotItem.titleLabel.text
    assert window.utility_plot.points() == {}  # no misleading Monte-Carlo points
    # The trade-off plot draws the ε-LDP guarantee of one person's report.
    assert window.tradeoff_plot.result is not None
    assert window.tradeoff_plot.result.epsilon == 6.0
    window.grab().save(str(tmp_path / "heavy_hitters.png"))

    # Hiding true values hides the true counts, keeps the release.
    panel.hide_true.setFocus()
    qtbot.keyClick(panel.hide_true, Qt.Key.Key_Space)
    assert window.session.hide_true
    assert window.result_panel.plotted()["truth"] is None
    assert "true" not in window.result_panel.summary.text().split("discovered")[1]


def test_count_mean_sketch_answers_heavy_hitters_too(window, qtbot):
    _choose_heavy_hitters(qtbot, window, mechanism="Count")
    assert window.session.mechanism == "cms"
    _set_epsilon(qtbot, window, "6")
    assert window.analysis.wait_idle(TIMEOUT)
    preview = window.result_panel.preview
    assert preview.mechanism == "cms" and preview.n == ROWS
    assert set(PLANTED) <= set(preview.labels)


def test_too_small_an_epsilon_discovers_nothing_and_says_so(window, qtbot):
    _choose_heavy_hitters(qtbot, window)
    _set_epsilon(qtbot, window, "0.2")
    assert window.analysis.wait_idle(TIMEOUT)
    preview = window.result_panel.preview
    assert preview.labels == [] and preview.n == ROWS
    text = window.result_panel.summary.text()
    assert "no word was frequent enough to be discovered" in text
    assert not window.result_panel.plot.isVisible()  # no empty plot


def test_a_text_column_is_picked_from_the_columns_panel(window, qtbot):
    """Clicking the free-text column in the Columns panel selects it for analysis (before:
    text rows were skipped), and the plot shows why it has no simulated points."""
    from dpstudio.analysis.utility import HEAVY_HITTERS_NOTE

    panel, s = window.analysis_panel, window.session
    qtbot.mouseClick(panel.trust_buttons["local"], Qt.MouseButton.LeftButton)
    assert s.column == "score"
    table, model = window.schema_panel.table, window.schema_panel.model
    rect = table.visualRect(model.index(model.row_of("city"), 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.analysis.wait_idle(TIMEOUT)
    assert (s.column, s.query) == ("city", "heavy_hitters")
    assert panel.column_combo.currentData() == "city"
    plot = window.utility_plot
    assert HEAVY_HITTERS_NOTE in plot.notes()
    assert HEAVY_HITTERS_NOTE in plot.toolTip()
