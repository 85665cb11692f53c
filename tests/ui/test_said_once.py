"""Said once (issue 12, items 5, 6 and 17): what a half-declared column lacks appears once
beside the column, not over every plot; Enter in the bounds editor leaves the focus on the
edited row; the guide says each term and each trust model once."""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox
from test_declaring_columns import click, open_bounds_editor, type_keys
from ui_helpers import TIMEOUT, close_window, open_window

from dpstudio.ui.analysis_view import WAITING
from dpstudio.ui.guide import GuideDialog
from dpstudio.ui.texts import TRUST_MODELS

LACKS = "upper bound missing"


@pytest.fixture
def affairs(tmp_path):
    """A survey file without a schema: ages, a 1–5 scale, a 0/1 column, a word column."""
    rng = np.random.default_rng(12)
    n = 300
    path = tmp_path / "affairs.csv"
    pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "religious": rng.integers(1, 6, n),
        "children": rng.integers(0, 2, n),
        "gender": rng.choice(["female", "male"], n),
    }).to_csv(path, index=False)
    return path


@pytest.fixture
def win(qtbot, affairs, monkeypatch):
    # The widgets close before this fixture's teardown: unsaved edits must not ask then.
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *_a, **_k: QMessageBox.StandardButton.Discard)
    window = open_window(qtbot, affairs, monkeypatch)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    yield window
    close_window(window)


def plain(text: str) -> str:
    """A label's text as a person reads it (rich text without its tags)."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def visible_texts(win) -> list[str]:
    """Every text on screen outside the tables: the visible labels and the plots' hints."""
    texts = [plain(label.text()) for label in win.findChildren(QLabel) if label.isVisible()]
    texts += [plot.hint.textItem.toPlainText() for plot in (win.utility_plot,
                                                            win.tradeoff_plot)
              if plot.isVisible() and plot.hint.isVisible()]
    return texts


def test_a_half_declared_current_column_says_what_it_lacks_once(qtbot, win):
    panel = win.schema_panel
    click(qtbot, panel, "religious")  # the analysis column, at once
    qtbot.waitUntil(lambda: win.session.column == "religious", timeout=2000)
    assert win.session.problem().startswith("declare public bounds")

    open_bounds_editor(qtbot, panel, "religious")
    type_keys(qtbot, "1", Qt.Key.Key_Return)  # the lower bound only
    # The current column's problem follows the declaration, without choosing it again.
    qtbot.waitUntil(lambda: win.session.problem() == f"religious: {LACKS}", timeout=2000)
    assert win.analysis.wait_idle(TIMEOUT)
    qtbot.wait(50)

    assert panel.cell_texts("religious")[2] == f"1 – ? · {LACKS}"  # beside the column
    shown = visible_texts(win)
    assert sum(text.count(LACKS) for text in shown) == 1, [t for t in shown if LACKS in t]
    # ... and the once is the Analysis panel's Declared row, never "nothing declared".
    domain = plain(win.analysis_panel.domain_label.text())
    assert domain == f"{LACKS} · declared by you, unsaved"
    assert not win.analysis_panel.problem_label.isVisible()
    # The plots and the preview wait, in a short neutral hint.
    assert win.utility_plot.hint.textItem.toPlainText() == WAITING
    assert win.tradeoff_plot.hint.textItem.toPlainText() == WAITING
    assert plain(win.analysis_view.result_panel.summary.text()) == WAITING

    # The upper bound too: the plots draw again, and nothing says "missing" any more.
    open_bounds_editor(qtbot, panel, "religious")
    type_keys(qtbot, Qt.Key.Key_Tab, "5", Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: win.session.problem() is None, timeout=2000)
    assert win.analysis.wait_idle(TIMEOUT)
    qtbot.wait(50)
    assert not any("missing" in text for text in visible_texts(win))
    assert plain(win.analysis_panel.domain_label.text()).startswith("1 to 5 · declared by you")


def test_enter_in_the_bounds_editor_leaves_the_focus_on_the_edited_row(qtbot, win):
    panel = win.schema_panel
    click(qtbot, panel, "age")
    editor = open_bounds_editor(qtbot, panel, "age")
    type_keys(qtbot, "18", Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is editor.upper
    type_keys(qtbot, "65", Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.schema()["age"].bounds == (18.0, 65.0), timeout=2000)
    qtbot.waitUntil(lambda: panel.table.findChild(type(editor)) is None, timeout=2000)
    assert win.analysis.wait_idle(TIMEOUT)
    qtbot.wait(50)
    assert QApplication.focusWidget() is panel.table
    assert panel.table.currentIndex().row() == panel.model.row_of("age")
    # The keyboard carries on from there: Down moves to the next column's row.
    qtbot.keyClick(panel.table, Qt.Key.Key_Down)
    assert panel.table.currentIndex().row() == panel.model.row_of("age") + 1


def test_the_guide_says_each_term_and_trust_model_once(qtbot, win):
    qtbot.keyClick(win, Qt.Key.Key_F1)
    guide = win.findChild(GuideDialog)
    assert guide is not None and guide.isVisible()
    lines = guide.text().splitlines()
    # "Mechanism. Mechanism: …", "ε — the privacy budget. ε (privacy-loss budget): …"
    repeated = [line for line in lines if re.match(r"^(\S+)[^.]*\. \1[\s:]", line)]
    assert repeated == []
    for meta in TRUST_MODELS.values():
        line = next(line for line in lines if line.startswith(f"● {meta['label']} "))
        assert meta["tooltip"] not in line  # the short sentence and the long one: once
        assert line.count(meta["explanation"]) == 1
    guide.close()
