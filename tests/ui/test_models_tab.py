"""The Models tab, driven as a person would: pick a label and features with clicks, choose
a method, watch the privacy–utility curve, cancel a run, switch to federated training.

The plotted values are checked against ``dpstudio train --simulate 1 --json`` (another
path to the same seeded training run), not against the view's own numbers.
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem
from ui_helpers import pick, type_into

from dpstudio.ui.model_jobs import EPSILON_GRID

TIMEOUT_MS = 20_000


@pytest.fixture
def models(qtbot, window):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    # View ▸ Models (Ctrl+4), as the other tabs' tests switch.
    assert window.models_tab_action.shortcut().toString() == "Ctrl+4"
    window.models_tab_action.trigger()
    assert window.tabs.currentWidget() is window.model_view
    yield window.model_view
    window.model_view.shutdown()
    window.analysis.shutdown()
    window.projects.shutdown()


def _tick(qtbot, view, name: str) -> None:
    """Click the check box of feature ``name`` in the list."""
    lst = view.form.features
    item = view.form.item(name)
    lst.scrollToItem(item)
    rect = lst.visualItemRect(item)
    opt = QStyleOptionViewItem()
    opt.rect = rect
    opt.features |= QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
    box = lst.style().subElementRect(QStyle.SubElement.SE_ItemViewItemCheckIndicator, opt, lst)
    before = item.checkState()
    qtbot.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=box.center())
    assert item.checkState() != before, f"the click did not tick {name}"


def _finished(qtbot, view, **fields) -> None:
    def done():
        r = view.result
        return (r is not None and not view.jobs.busy
                and not view._later._timer.isActive()
                and all(getattr(r.request, k) == v for k, v in fields.items()))
    try:
        qtbot.waitUntil(done, timeout=TIMEOUT_MS)
    except Exception:
        raise AssertionError(f"no result: {view.form.problem.text()!r}, "
                             f"{view.status.text()!r}, busy={view.jobs.busy}, "
                             f"{view.progress.format()!r}, {view.result.request}") from None


def _cli(*argv: str) -> dict:
    from dpstudio.commands import train

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert train.run(["sample:survey", *argv, "--simulate", "1", "--json"]) == 0
    return json.loads(out.getvalue())


def _choose(qtbot, view) -> None:
    pick(qtbot, view.form.label_box, "works")
    assert view.form.label_box.currentData() == "works_part_time"
    _tick(qtbot, view, "age")
    _tick(qtbot, view, "gpa")


def test_curve_points_baseline_and_coefficients(qtbot, models):
    view = models
    assert view.status.text() == "tick at least one feature" or view.result is None
    _choose(qtbot, view)
    _finished(qtbot, view, method="output", features=("age", "gpa"))
    x, y = view.curve.xData, view.curve.yData
    assert list(x) == list(EPSILON_GRID) and len(y) == len(EPSILON_GRID)
    assert np.all((y >= 0) & (y <= 1))
    # The ε = 1 point and the non-private line are those of the headless run.
    cli = _cli("--label", "works_part_time", "--features", "age,gpa", "--method", "output",
               "--epsilon", "1")
    assert y[list(EPSILON_GRID).index(1.0)] == pytest.approx(cli["accuracy"])
    assert view.baseline_line.isVisible()
    assert view.baseline_line.value() == pytest.approx(cli["baseline"]["accuracy"])
    assert "simulation · seed 1" in view.caption.text()
    # The released coefficients at the form's ε, one row per feature and the intercept.
    table = view.coefficients
    shown = {table.item(i, 0).text(): float(table.item(i, 1).text())
             for i in range(table.rowCount())}
    assert set(shown) == {"age", "gpa", "(intercept)"}
    for row in cli["coefficients"]:
        assert shown[row["feature"]] == pytest.approx(row["coefficient"], rel=1e-3)
    # AUC is one choice away, from the same runs.
    pick(qtbot, view.metric_box, "AUC")
    assert view.metric_box.currentData() == "auc"
    assert view.curve.yData[list(EPSILON_GRID).index(1.0)] == pytest.approx(cli["auc"])


def test_cancel_then_federated_secure_aggregation(qtbot, models):
    view = models
    _choose(qtbot, view)
    _finished(qtbot, view, method="output")
    central = np.array(view.curve.yData)
    # DP-SGD at its default 5 epochs takes seconds over six trainings: cancel it.
    pick(qtbot, view.form.method_box, "DP")
    assert view.form.method() == "dpsgd"
    qtbot.waitUntil(lambda: view.jobs.busy and view.cancel_button.isEnabled(),
                    timeout=TIMEOUT_MS)
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert not view.jobs.busy and not view.cancel_button.isEnabled()
    assert view.progress.format() == "cancelled"
    qtbot.wait(300)
    assert view.result.request.method == "output"  # the cancelled run never lands
    np.testing.assert_array_equal(view.curve.yData, central)
    # Secure aggregation over 5 random sites, 3 rounds.
    pick(qtbot, view.form.fed_box, "secure")
    assert view.form.fed_box.currentData() == "secagg"
    type_into(qtbot, view.form.rounds, "3")
    assert view.form.rounds.value() == 3
    assert not view.form.method_box.isEnabled() and view.form.method() == "dpsgd"
    _finished(qtbot, view, fed_variant="secagg", rounds=3)
    assert list(view.curve.xData) == list(EPSILON_GRID)
    cli = _cli("--label", "works_part_time", "--features", "age,gpa", "--method", "dpsgd",
               "--epsilon", "1", "--delta", "1e-6", "--sites", "5", "--fed-variant",
               "secagg", "--rounds", "3", "--local-steps", "5")
    assert view.curve.yData[list(EPSILON_GRID).index(1.0)] == pytest.approx(cli["accuracy"])
    assert len(view.result.at_epsilon["rounds"]) == 3
    assert "FedAvg secagg" in view.caption.text()


def test_refusal_in_one_sentence(qtbot, models):
    view = models
    _choose(qtbot, view)
    _finished(qtbot, view, method="output")
    pick(qtbot, view.form.model_box, "mlp")
    qtbot.waitUntil(lambda: "logistic regression only" in view.form.problem.text(),
                    timeout=TIMEOUT_MS)
    assert view.form.problem.text().count(".") <= 1
