"""The Data tab's table fits a column's width when it first scrolls into view, at once."""

from __future__ import annotations

import pandas as pd
import pytest

from dpstudio.ui.data_table import ColumnFitter, make_table_view
from dpstudio.ui.table_model import DataFrameModel

COLUMNS = 3000
FAR = 2000  # a column far to the right, reached by one scroll


@pytest.fixture
def table(qtbot):
    # Every cell is 80 characters: a fitted column is capped at 260 px, far from Qt's default.
    frame = pd.DataFrame({f"c{i}": ["x" * 80] * 5 for i in range(COLUMNS)})
    model = DataFrameModel()
    model.set_frame(frame)
    view = make_table_view(model, None)
    qtbot.addWidget(view)
    view.resize(800, 300)
    fitter = ColumnFitter(view, model, view)
    view.show()
    qtbot.waitExposed(view)
    fitter.reset()
    return view, fitter


def test_only_the_columns_in_view_are_fitted(table):
    view, fitter = table
    header = view.horizontalHeader()
    default = header.defaultSectionSize()
    assert default != 260
    assert header.sectionSize(0) == fitter.column_width(0) == 260
    assert header.sectionSize(FAR) == default  # not in view, not measured


def test_a_column_scrolled_into_view_is_fitted_on_the_next_event_loop_turn(table, qtbot):
    """Before: the scroll bar's valueChanged(int) went straight to QTimer.start, which took
    the scroll value as a delay in milliseconds: column 2,000 was fitted two seconds later."""
    view, _fitter = table
    header = view.horizontalHeader()
    default = header.defaultSectionSize()
    view.horizontalScrollBar().setValue(FAR)  # one step per column: the value is FAR
    assert header.logicalIndexAt(0) == FAR
    assert header.sectionSize(FAR) == default
    qtbot.waitUntil(lambda: header.sectionSize(FAR) == 260, timeout=500)
