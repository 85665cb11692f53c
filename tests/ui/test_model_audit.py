"""The model's trade-off plot with a membership audit, driven by clicks.

The plotted points and boxes are checked against ``dpstudio train --audit N --simulate 1
--json`` (another path to the same seeded audit), the claimed curves against the engine's
closed form (the (ε, δ) region) and an independent PLD of the DP-SGD run, and the
stakeholder's number against (1 + δ(0))/2, the best accuracy any attacker at even odds
reaches under a privacy profile δ(ε) (total variation δ(0)).
"""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

from dpstudio.data import sample_path
from dpstudio.data.dataset import open_dataset
from dpstudio.engine.tradeoff import epsilon_delta_tradeoff
from dpstudio.ui.model_audit import ModelAuditView
from dpstudio.ui.model_jobs import ModelRequest

TIMEOUT_MS = 20_000
FEATURES = ("age", "gpa")


@pytest.fixture(scope="module")
def survey():
    return open_dataset(sample_path("survey"))


@pytest.fixture
def view(qtbot):
    v = ModelAuditView()
    qtbot.addWidget(v)
    v.resize(900, 600)
    v.show()
    yield v
    v.shutdown()


def _request(method="output", epsilon=4.0, **params):
    return ModelRequest("works_part_time", FEATURES, method=method, epsilon=epsilon,
                        params=params)


def _claimed(qtbot, v, req, survey):
    v.set_request(req, survey.frame, survey.schema)
    qtbot.waitUntil(lambda: v.claim is not None, timeout=TIMEOUT_MS)


def _audit(qtbot, v, runs):
    v.runs_box.setValue(runs)
    before = v.outcome
    qtbot.mouseClick(v.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: v.outcome is not None and v.outcome is not before and not v.busy,
                    timeout=TIMEOUT_MS)
    return v.outcome


def _cli(*argv: str) -> dict:
    from dpstudio.commands import train

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert train.run(["sample:survey", "--label", "works_part_time", "--features",
                          ",".join(FEATURES), *argv, "--simulate", "1", "--json"]) == 0
    return json.loads(out.getvalue())


def test_audit_points_are_the_audits_and_sit_above_the_claimed_curve(qtbot, view, survey):
    _claimed(qtbot, view, _request(), survey)
    # Output perturbation with δ = 0: only the (ε, δ) region is known, and said so.
    region = epsilon_delta_tradeoff(4.0, 0.0)
    alpha, beta = view.plot.curves()["bound"]
    np.testing.assert_allclose(beta, region.at(alpha), atol=1e-12)
    assert "mechanism" not in view.plot.curves()
    assert "(ε, δ) region" in view.plot.caption_text()
    assert view.plot.attack() is None
    # The stakeholder's number at ε = 4, δ = 0: (e^ε)/(1 + e^ε), printed as a percentage.
    assert f"{math.exp(4) / (1 + math.exp(4)):.1%}" in view.words.text()

    outcome = _audit(qtbot, view, 60)
    cli = _cli("--method", "output", "--epsilon", "4", "--audit", "60")["audit"]
    shown = view.plot.attack()
    pts = cli["points"]
    np.testing.assert_allclose(shown["alpha"], [p["fpr"] for p in pts], rtol=1e-12)
    np.testing.assert_allclose(shown["beta"], [1 - p["tpr"] for p in pts], rtol=1e-12)
    np.testing.assert_allclose(shown["alpha_low"], [p["fpr_low"] for p in pts], rtol=1e-12)
    np.testing.assert_allclose(shown["alpha_high"], [p["fpr_high"] for p in pts], rtol=1e-12)
    np.testing.assert_allclose(shown["beta_low"], [1 - p["tpr_high"] for p in pts],
                               rtol=1e-12)
    np.testing.assert_allclose(shown["beta_high"], [1 - p["tpr_low"] for p in pts],
                               rtol=1e-12)
    assert outcome.audit["epsilon_lower"] == pytest.approx(cli["epsilon_lower"])
    assert "membership audit" in " ".join(view.plot.legend_texts())
    # An honest method: every box reaches the region above the claimed curve (its best
    # corner, largest α and β, is not below f), and the certified ε is below the claim.
    assert np.all(shown["beta_high"] >= region.at(shown["alpha_high"]) - 1e-12)
    assert cli["epsilon_lower"] <= 4.0
    assert "within the claimed ε = 4" in view.words.text()
    assert "Simulated" in view.simulated.text() and "seed 1" in view.simulated.text()
    assert view.progress.format() == "done"


def test_cancel_mid_audit_keeps_the_plot_and_says_cancelled(qtbot, view, survey):
    _claimed(qtbot, view, _request(), survey)
    first = _audit(qtbot, view, 12)
    shown = view.plot.attack()
    words = view.words.text()
    view.runs_box.setValue(2000)  # thousands of trainings: seconds, time to cancel
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.busy and view.progress.value() > 0, timeout=TIMEOUT_MS)
    assert view.cancel_button.isEnabled()
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert view.progress.format() == "cancelled" and "cancelled" in view.status.text()
    assert not view.busy and not view.cancel_button.isEnabled()
    view.runner.wait("model-audit", timeout=60)
    qtbot.wait(100)
    assert view.outcome is first
    for key, value in shown.items():
        np.testing.assert_array_equal(view.plot.attack()[key], value)
    assert view.words.text() == words


def test_dpsgd_curve_is_its_accountants_and_the_number_follows_it(qtbot, view, survey):
    from dpstudio.engine.accounting.pld import PLD

    _claimed(qtbot, view, _request("dpsgd", delta=1e-5, epochs=1), survey)
    claim = view.claim
    alpha, beta = view.plot.curves()["mechanism"]
    region = epsilon_delta_tradeoff(claim.epsilon, 1e-5)
    # Between the guarantee's region and random guessing.
    assert np.all(beta >= region.at(alpha) - 1e-9)
    assert np.all(beta <= 1.0 - alpha + 1e-9)
    # The best attacker at even odds: (1 + δ(0))/2 of an independent PLD for the run's
    # (q, σ, T), never below it (the view's number is an upper bound) and within the grid.
    sgd = _cli("--method", "dpsgd", "--epsilon", "4", "--delta", "1e-5",
               "--epochs", "1")["dpsgd"]
    pld = PLD.subsampled_gaussian(sgd["noise_multiplier"],
                                  sgd["sample_rate"]).self_compose(sgd["steps"])
    best = (1.0 + float(pld.delta(np.array([0.0]))[0])) / 2.0
    assert best - 1e-9 <= claim.accuracy <= best + 2e-3
    # Far below what the (ε, δ) region alone would allow: the curve is the method's own.
    assert claim.accuracy < (math.exp(claim.epsilon) + 1e-5) / (1 + math.exp(claim.epsilon)) - 0.1
    assert f"{claim.accuracy:.1%}" in view.words.text()
    assert view.plot.caption_text().count("(ε, δ) region") == 0


def test_a_non_private_model_has_no_curve(qtbot, view, survey):
    _claimed(qtbot, view, _request("nonprivate", epsilon=1.0), survey)
    assert view.plot.curves() == {}
    assert "without privacy" in view.words.text()
    # The power check: a learner with no noise is caught (each dataset gives one model).
    outcome = _audit(qtbot, view, 20)
    # Perfectly separated: the most these trainings can certify (more runs, more ε).
    assert outcome.audit["epsilon_lower"] == pytest.approx(outcome.audit["max_certifiable"])
    assert outcome.audit["epsilon_lower"] > 0.5
    assert view.plot.attack() is not None
    assert f"certifies ε ≥ {outcome.audit['epsilon_lower']:.2f}" in view.words.text()


def test_an_audit_above_the_claim_is_called_wrong():
    from dpstudio.ui.model_audit import audit_words
    from dpstudio.ui.model_audit_job import AuditOutcome, claimed_curve

    claim = claimed_curve({"method": "output", "epsilon": 1.0, "delta": 0.0})
    audit = {"epsilon_lower": 2.5, "confidence": 0.95, "trials": 500, "max_certifiable": 5.0}
    assert "ABOVE the claimed ε = 1: the claim is wrong" in audit_words(
        AuditOutcome(1000, claim, audit, {}))
    audit["epsilon_lower"] = 0.7
    assert "within the claimed ε = 1" in audit_words(AuditOutcome(1000, claim, audit, {}))


def test_boxes_only_on_the_attacks_best_points(qtbot, view, survey):
    """Few trainings: many thresholds share a point and most are beaten; a box for each
    covered the plot. Every point stays a dot; boxes go on the distinct unbeaten ones."""
    from dpstudio.ui.tradeoff_plot import frontier

    _claimed(qtbot, view, _request(), survey)
    _audit(qtbot, view, 12)
    shown = view.plot.attack()
    a, b = shown["alpha"], shown["beta"]
    best = frontier(a, b)
    drawn = view.plot._boxes.path().elementCount() // 5  # a rectangle: move + 4 lines
    assert drawn == len(best) < len(a)
    for i in range(len(a)):  # each point not boxed is repeated or beaten by a boxed one
        if i not in best:
            assert np.any((a[best] <= a[i]) & (b[best] <= b[i]))
    for i in best:  # and no boxed point is beaten by any point
        assert not np.any((a <= a[i]) & (b <= b[i]) & ((a < a[i]) | (b < b[i])))
    assert list(frontier([0.1, 0.1, 0.2, 0.3], [0.5, 0.5, 0.6, 0.2])) == [0, 3]
