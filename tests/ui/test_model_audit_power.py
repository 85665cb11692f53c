"""The membership audit says, before it runs, the most its trainings can certify.

Even a perfect attack on N trainings per dataset certifies at most ln((1 − δ − c)/c),
c = 1 − ((1 − conf)/2)^(1/m) the Clopper–Pearson bound of 0 errors in the m = N − ⌊N/2⌋
counted models; below 11 trainings (95%, δ = 0) that is 0, so "Run audit" is disabled
and says how many it takes. The bound shown is checked against the engine's own
``max_certifiable`` of an audit that ran, and against the closed form above.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

from dpstudio.data import sample_path
from dpstudio.data.dataset import open_dataset
from dpstudio.engine.learning.membership import max_certifiable
from dpstudio.ui.model_audit import ModelAuditView
from dpstudio.ui.model_audit_job import runs_to_certify
from dpstudio.ui.model_jobs import ModelRequest


def _closed_form(runs: int, delta: float, confidence: float = 0.95) -> float:
    m = runs - runs // 2
    c = 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / m)  # CP upper bound of 0 in m
    return math.log((1.0 - delta - c) / c) if 1.0 - delta - c > c else 0.0


def _engine_max_certifiable(runs: int, delta: float) -> float:
    """The engine's ``max_certifiable`` of an audit that ran (a learner with no noise)."""
    from dpstudio.engine.learning.membership import audit_membership
    from dpstudio.engine.rng import SimulationSource

    X, y = np.zeros((6, 2)), np.zeros(6)
    a = audit_membership(lambda Xs, ys, src: float(ys.size), lambda fit, x, yy: fit, X, y,
                         (np.ones(2), 1.0), runs, SimulationSource(1), relation="add",
                         delta=delta)
    return a.max_certifiable


@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.2])
def test_the_bound_before_a_run_is_the_engines_after_it(delta):
    for runs in (4, 10, 11, 12, 40, 61, 500):
        want = _engine_max_certifiable(runs, delta)
        assert max_certifiable(runs, delta=delta) == pytest.approx(want, rel=1e-12, abs=0)
        assert want == pytest.approx(_closed_form(runs, delta), rel=1e-9, abs=1e-12)
    # The fewest that certify anything: c < (1 − δ)/2, i.e. m > ln(tail)/ln((1 + δ)/2).
    m = math.floor(math.log(0.025) / math.log((1.0 + delta) / 2.0)) + 1
    assert runs_to_certify(delta) == 2 * m - 1
    assert (max_certifiable(2 * m - 2, delta=delta) == 0.0
            < max_certifiable(2 * m - 1, delta=delta))


@pytest.fixture
def view(qtbot):
    v = ModelAuditView()
    qtbot.addWidget(v)
    v.resize(900, 600)
    v.show()
    yield v
    v.shutdown()


def test_too_few_trainings_cannot_run_and_say_how_many_it_takes(qtbot, view):
    survey = open_dataset(sample_path("survey"))
    req = ModelRequest("works_part_time", ("age", "gpa"), method="output", epsilon=4.0)
    view.set_request(req, survey.frame, survey.schema)  # the bound needs no training
    button = view.run_button

    view.runs_box.setFocus()
    view.runs_box.selectAll()
    qtbot.keyClicks(view.runs_box, "4")
    qtbot.keyClick(view.runs_box, Qt.Key.Key_Return)
    assert view.runs_box.value() == 4
    assert not button.isEnabled()
    tip = button.toolTip()
    assert "11 trainings per dataset" in tip and tip.count(". ") == 0 and tip.endswith(".")
    assert "cannot certify any ε > 0" in view.power.text() and "11" in view.power.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)  # disabled: nothing starts
    qtbot.wait(50)
    assert not view.busy and view.outcome is None

    view.runs_box.selectAll()
    qtbot.keyClicks(view.runs_box, "40")
    qtbot.keyClick(view.runs_box, Qt.Key.Key_Return)
    assert view.runs_box.value() == 40
    assert button.isEnabled() and "11" not in button.toolTip()
    bound = _engine_max_certifiable(40, 0.0)
    assert bound > 1.0
    assert f"at most ε = {bound:.2f} at 95% confidence" in view.power.text()
    # Below the claimed ε = 4: the audit could never show the claim wrong, and says so.
    assert "cannot show the claim wrong" in view.power.text()
    view.runs_box.setValue(2000)
    assert "claim" not in view.power.text()  # 2000 trainings reach above ε = 4


def test_dpsgds_delta_enters_the_bound(qtbot, view):
    survey = open_dataset(sample_path("survey"))
    req = ModelRequest("works_part_time", ("age", "gpa"), method="dpsgd", epsilon=1.0,
                       params={"delta": 0.2, "epochs": 1})
    view.set_request(req, survey.frame, survey.schema)  # the bound needs no training
    view.runs_box.setValue(20)
    want = _engine_max_certifiable(20, 0.2)
    assert want < _engine_max_certifiable(20, 0.0)
    assert f"at most ε = {want:.2f}" in view.power.text()
    view.runs_box.setValue(14)  # enough at δ = 0 (11), not at δ = 0.2 (15)
    assert max_certifiable(14, delta=0.0) > 0.0 and runs_to_certify(0.2) == 15
    assert not view.run_button.isEnabled()
    assert f"at least {runs_to_certify(0.2)} trainings" in view.run_button.toolTip()
