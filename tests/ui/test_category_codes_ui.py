"""A categorical column in the application is counted through codes (issue 12 item 18,
issue 16's first point), driven through the real widgets on a generated file whose
categorical column holds missing and undeclared values and one 300-character value.

* Choosing the column shows the histogram whose true counts are a plain count of the file
  (central and local, "other or missing" included), and all of its jobs (curves,
  simulation, preview) share one encoding of the column, with a memory peak far below the
  fixed-width text array the old code built (rows × 300 characters × 4 bytes).
* n (the δ hint's "1/n") is counted once per column, not at every redraw of the panel (a
  step of the "k releases" slider), and follows the column chosen.
"""

from __future__ import annotations

import csv
import tracemalloc
from collections import Counter

import numpy as np
import pytest
from PySide6.QtCore import Qt
from ui_helpers import TIMEOUT, close_window, open_window, pick, write_declared_csv

from dpstudio.engine.local import OTHER_LABEL
from dpstudio.engine.queries import codes as codes_module
from dpstudio.ui import session as session_module

ROWS = 60_000
SMALL_ROWS = 6_000  # where only n is in question
LONG = "x" * 300
DECLARED = ["apple", "banana", "cherry"]


def _write(path, rows: int):
    rng = np.random.default_rng(12)
    fruit = rng.choice(np.array(DECLARED + ["durian", ""], dtype=object), rows,
                       p=[0.4, 0.3, 0.15, 0.1, 0.05])  # durian: undeclared; "": missing
    fruit[123] = LONG  # one long undeclared value
    score = rng.uniform(0, 100, rows).round(1).astype(object)
    score[rng.random(rows) < 0.6] = ""  # 60% missing: another n than the fruit's
    return write_declared_csv(path, ["score", "fruit"],
                              zip(score.tolist(), fruit.tolist(), strict=True), [
        {"name": "score", "type": "numeric", "lower": 0, "upper": 100},
        {"name": "fruit", "type": "categorical", "categories": DECLARED}])


@pytest.fixture
def data(tmp_path):
    return _write(tmp_path / "fruit.csv", ROWS)


def _file_column(path, name: str) -> list[str]:
    with path.open(newline="", encoding="utf-8") as f:
        return [row[name] for row in csv.DictReader(f)]


@pytest.fixture
def window(qtbot, data, monkeypatch):
    win = open_window(qtbot, data, monkeypatch)
    yield win
    close_window(win)


def test_choosing_a_categorical_column_counts_it_once_through_codes(window, qtbot, data,
                                                                    monkeypatch):
    encoded: list[tuple[int, tuple[str, ...]]] = []
    encode = codes_module._encode

    def spy(values, labels):
        encoded.append((values.size, tuple(labels)))
        return encode(values, labels)

    monkeypatch.setattr(codes_module, "_encode", spy)
    s, panel = window.session, window.analysis_panel
    tracemalloc.start()
    try:
        pick(qtbot, panel.column_combo, "fruit")
        assert window.analysis.wait_idle(TIMEOUT)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (s.column, s.trust_model, s.query) == ("fruit", "central", "histogram")
    in_file = Counter(_file_column(data, "fruit"))
    preview = window.result_panel.preview
    assert preview.labels == DECLARED
    np.testing.assert_array_equal(preview.truth, [in_file[c] for c in DECLARED])
    assert window.utility_plot.curves() and window.utility_plot.points()
    # Before: every job sorted the column's text, as wide as its longest value
    # (60,000 × 300 characters × 4 bytes = 72 MB, several times over).
    assert peak < 40_000_000
    # The local model: the same codes, and the "other or missing" cell holds the rest.
    qtbot.mouseClick(panel.trust_buttons["local"], Qt.MouseButton.LeftButton)
    assert window.analysis.wait_idle(TIMEOUT)
    preview = window.result_panel.preview
    assert preview.labels == DECLARED + [OTHER_LABEL]
    declared = [in_file[c] for c in DECLARED]
    np.testing.assert_array_equal(preview.truth, declared + [ROWS - sum(declared)])
    assert in_file[LONG] == 1 and in_file["durian"] > 0 and in_file[""] > 0
    # Curves, simulation, preview, both trust models: one encoding of the column.
    assert encoded == [(ROWS, tuple(DECLARED))]


class _CountingNumpy:
    """numpy as the session module sees it, counting its passes over a whole column."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.passes = 0

    def __getattr__(self, name):
        return getattr(np, name)

    def count_nonzero(self, a, *args, **kwargs):
        if np.size(a) == self.rows:
            self.passes += 1
        return np.count_nonzero(a, *args, **kwargs)


def test_n_is_counted_once_per_column(qtbot, tmp_path, monkeypatch):
    data = _write(tmp_path / "small.csv", SMALL_ROWS)
    window = open_window(qtbot, data, monkeypatch)
    try:
        _count_n_once(window, qtbot, data, monkeypatch)
    finally:
        close_window(window)


def _count_n_once(window, qtbot, data, monkeypatch) -> None:
    counting = _CountingNumpy(SMALL_ROWS)
    monkeypatch.setattr(session_module, "np", counting)
    s, panel = window.session, window.analysis_panel
    pick(qtbot, panel.mechanism_combo, "Gaussian")
    assert window.analysis.wait_idle(TIMEOUT)
    assert s.mechanism == "gaussian" and panel.delta.isEnabled()
    n_score = sum(1 for v in _file_column(data, "score") if v != "")
    assert panel.delta_hint.text() == f"1/n = {1 / n_score:.0e}"
    passes = counting.passes
    assert passes <= 1
    panel.k_slider.setFocus()
    k = s.compositions
    for _ in range(5):  # each step of the "k releases" slider redraws the δ hint
        qtbot.keyClick(panel.k_slider, Qt.Key.Key_Right)
    assert s.compositions == k + 5
    assert counting.passes == passes  # before: one pass over the column per step
    assert panel.delta_hint.text() == f"1/n = {1 / n_score:.0e}"
    # Another column: its own n.
    pick(qtbot, panel.column_combo, "fruit")
    assert window.analysis.wait_idle(TIMEOUT)
    pick(qtbot, panel.mechanism_combo, "Gaussian")
    assert s.column == "fruit" and s.mechanism == "gaussian"
    n_fruit = sum(1 for v in _file_column(data, "fruit") if v != "")
    assert s.n == n_fruit != n_score
    assert panel.delta_hint.text() == f"1/n = {1 / n_fruit:.0e}"
