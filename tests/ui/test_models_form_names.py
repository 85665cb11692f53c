"""The Models form's Features and Compare lists: every name readable, no sideways scrolling.

At 1400×900 with both docks open the form is ~260 px wide. Its lists used to sit beside
their labels (~146 px) and cut "hours_studied_per_week" and "FedAvg, secure aggregation"
behind a horizontal scrollbar. Each row must now show its full name, or an elided one
with the full name in its tooltip, and fit the list's width (the scrollbar's range is 0,
which the Qt layout sets whatever the bar's policy).
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from ui_helpers import close_window, open_window, write_declared_csv

LONG = "respondent_hours_studied_per_week_during_the_spring_term"
FORM_WIDTH = 260  # model_view's _FORM_WIDTH: the form must not grow


def _models(qtbot, win):
    win.model_view.grid = (1.0,)  # the comparison is not what is tested: keep it short
    win.models_tab_action.trigger()
    view = win.model_view
    assert win.tabs.currentWidget() is view
    for dock in (win.columns_dock, win.analysis_dock):
        assert dock.isVisible() and not dock.isFloating()
    qtbot.wait(100)  # the layout settles
    return view


def _full_names(form):
    """Row → the full name a person must be able to read: the column or the way's label."""
    from dpstudio.ui.model_variants import variant

    names = {}
    for i in range(form.features.count()):
        item = form.features.item(i)
        names[id(item)] = (form.features, item, item.data(Qt.ItemDataRole.UserRole))
    for i in range(form.variants.count()):
        item = form.variants.item(i)
        key = item.data(Qt.ItemDataRole.UserRole)
        names[id(item)] = (form.variants, item, variant(key).label)
    return names.values()


def _assert_readable(form) -> None:
    for lst in (form.features, form.variants):
        bar = lst.horizontalScrollBar()
        assert bar.maximum() == 0 and not bar.isVisible(), (lst.viewport().width(),
                                                              [lst.item(i).text()
                                                               for i in range(lst.count())])
    for lst, item, full in _full_names(form):
        shown = item.text()
        assert full in shown or full in item.toolTip(), (shown, item.toolTip(), full)
        # What is shown fits the row: its width is within the text's room.
        assert lst.fontMetrics().horizontalAdvance(shown) <= lst.text_room(), shown


def _tick_by_key(qtbot, lst, item) -> None:
    """Toggle ``item`` as a keyboard user does: make it current, press Space."""
    lst.setFocus()
    lst.setCurrentItem(item)
    before = item.checkState()
    qtbot.keyClick(lst, Qt.Key.Key_Space)
    assert item.checkState() != before


@pytest.fixture
def survey_window(qtbot, config_dir, monkeypatch):
    from dpstudio.data import sample_path

    win = open_window(qtbot, sample_path("survey"), monkeypatch)
    yield win
    win.model_view.shutdown()
    close_window(win)


@pytest.fixture
def long_window(qtbot, config_dir, monkeypatch, tmp_path):
    path = write_declared_csv(
        tmp_path / "long.csv", [LONG, "passed", "age"],
        [[i % 40, i % 2, 18 + i % 50] for i in range(60)],
        [{"name": LONG, "type": "numeric", "lower": 0, "upper": 80},
         {"name": "passed", "type": "boolean"},
         {"name": "age", "type": "numeric", "lower": 18, "upper": 100}])
    win = open_window(qtbot, path, monkeypatch)
    yield win
    win.model_view.shutdown()
    close_window(win)


def test_every_name_is_readable_at_1400_by_900_with_both_docks(qtbot, survey_window):
    view = _models(qtbot, survey_window)
    form = view.form
    assert view.splitter.sizes()[0] <= FORM_WIDTH
    _assert_readable(form)
    # The sample's names fit whole, "hours_studied_per_week" too.
    item = form.item("hours_studied_per_week")
    assert item.text().startswith("hours_studied_per_week") and "…" not in item.text()
    # A long way of training has a shorter row; its full name leads the tooltip.
    sec = form.variant_item("fed-secagg")
    assert sec.text() == "FedAvg, secure agg."
    assert sec.toolTip().startswith("FedAvg, secure aggregation: ")
    from dpstudio.ui.model_panel import SHORT_LABELS
    from dpstudio.ui.model_variants import VARIANT_KEYS

    assert set(SHORT_LABELS) <= set(VARIANT_KEYS)  # a renamed key is not silently long
    cape = form.variant_item("fed-cape")
    assert cape.toolTip().startswith("FedAvg, correlated noise (CAPE): ")


def test_a_long_column_name_is_elided_in_the_middle_and_still_ticks(qtbot, long_window):
    view = _models(qtbot, long_window)
    form = view.form
    _assert_readable(form)
    item = form.item(LONG)
    shown = item.text()
    assert "…" in shown and shown.startswith("respondent_") and shown.endswith("(number)")
    assert item.toolTip() == f"{LONG} (number)"
    ticked = LONG in form._ticked()
    _tick_by_key(qtbot, form.features, item)
    assert (LONG in form._ticked()) != ticked
    assert item.text() == shown  # ticking does not change what is shown

    # Narrower (the splitter dragged left): the rows are fitted again, names still there.
    view.splitter.setSizes([160, 2000])
    qtbot.waitUntil(lambda: form.variants.viewport().width() < 160, timeout=5000)
    qtbot.wait(50)
    _assert_readable(form)
    assert len(item.text()) < len(shown)
    assert "…" in form.variant_item("objective").text()
