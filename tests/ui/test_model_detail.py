"""A trained model in detail: coefficient noise bars and the held-out confusion matrix.

The bars' half-lengths are checked against the engine's noise computed independently:
the variance summed from the noise's own pmf, pushed through the map from θ to the
coefficients (its Jacobian, from ``_coefficients`` on unit vectors), and against the
empirical spread of the coefficients over many draws of that noise (tolerance from the
Laplace's kurtosis; a factor √2 off is rejected). The confusion counts are checked against
the held-out split and the reported accuracy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstudio.analysis.training import run_training
from dpstudio.analysis.training_detail import coefficients as _coefficients
from dpstudio.data import sample_path
from dpstudio.data.dataset import open_dataset
from dpstudio.engine.learning.output_perturbation import perturb
from dpstudio.engine.rng import SimulationSource
from dpstudio.execution.training_input import training_columns
from dpstudio.ui.model_audit_job import audit_spec
from dpstudio.ui.model_detail import ModelDetailView
from dpstudio.ui.model_jobs import ModelRequest


@pytest.fixture(scope="module")
def survey():
    return open_dataset(sample_path("survey"))


def _train(survey, method="output", model="logistic", features=("age", "gpa", "faculty"),
           label="works_part_time", epsilon=1.0, **params):
    req = ModelRequest(label, features, model=model, method=method, epsilon=epsilon,
                       params=params)
    analysis, notes = audit_spec(req, survey.schema, 0)
    return run_training(analysis, training_columns(survey.frame, analysis),
                        SimulationSource(1), notes=notes)


@pytest.fixture
def view(qtbot):
    v = ModelDetailView()
    qtbot.addWidget(v)
    v.resize(900, 600)
    v.show()
    return v


def _jacobian(result):
    """d coefficients / d θ, by ``_coefficients`` on unit vectors (it is affine in θ)."""
    a = result.analysis
    names = [c["feature"] for c in result.fields["coefficients"][:-1]]
    bounds = {n: tuple(a.feature_bounds.get(n, (0.0, 1.0))) for n in names}
    p = len(names) + 1

    def coefs(theta):
        return np.array([c["coefficient"] for c in _coefficients(theta, names, bounds, None)])

    zero = coefs(np.zeros(p))
    return np.column_stack([coefs(np.eye(p)[i]) - zero for i in range(p)]), coefs


def test_noise_bars_are_the_engines_noise(view, survey):
    r = _train(survey)
    view.show_result(r)
    bars = view.coefficient_bars()
    assert list(bars) == ["age", "gpa", *(f"faculty={c}" for c in survey.schema.get(
        "faculty").categories), "(intercept)"]
    for row in r.fields["coefficients"]:
        assert bars[row["feature"]][0] == pytest.approx(row["coefficient"])
    # Independent: the per-coordinate variance summed from the noise's own pmf.
    noise = r.engine.plan.noise
    k = np.arange(-int(60 * noise.scale), int(60 * noise.scale) + 1)
    var = float(np.sum(k.astype(np.float64) ** 2 * noise.pmf(k))) * noise.grid ** 2
    jac, coefs = _jacobian(r)
    expected = np.sqrt(var * np.sum(jac ** 2, axis=1))
    shown = np.array([b[1] for b in bars.values()])
    np.testing.assert_allclose(shown, expected, rtol=1e-6)
    # The error bars drawn are those numbers, both sides.
    np.testing.assert_allclose(view.errors.opts["left"], expected, rtol=1e-6)
    np.testing.assert_allclose(view.errors.opts["right"], expected, rtol=1e-6)
    # Empirical: the coefficients' spread over 4000 draws of the calibrated noise. The
    # sd's relative standard error is √((κ − 1)/(4n)) ≈ 1.8% (Laplace κ = 6); 4.5 SE.
    rng_source = SimulationSource(7)
    theta = np.zeros(jac.shape[1])
    draws = np.array([coefs(perturb(theta, r.engine.plan, rng_source)) for _ in range(4000)])
    empirical = draws.std(axis=0, ddof=1)
    tol = 4.5 * math.sqrt(5.0 / (4 * 4000))
    np.testing.assert_allclose(empirical, expected, rtol=tol)
    assert np.all(np.abs(empirical / (expected * math.sqrt(2.0)) - 1.0) > tol)  # power
    assert "calibrates" in view.note.text()


def test_confusion_counts_are_the_held_out_rows(view, survey):
    r = _train(survey)
    view.show_result(r.to_dict())  # the fields alone do as well
    counts = view.confusion_counts()
    assert sum(counts.values()) == r.fields["split"]["test"]
    assert (counts["tn"] + counts["tp"]) / sum(counts.values()) == pytest.approx(
        r.fields["accuracy"])
    assert counts == r.fields["confusion"]
    title = view.confusion_title.text()
    assert f"{r.fields['split']['test']} rows" in title


def test_dpsgd_has_no_bars_and_says_why_mlp_only_a_matrix_regression_no_matrix(view, survey):
    r = _train(survey, method="dpsgd", delta=1e-5, epochs=1)
    view.show_result(r)
    assert all(sd is None for _, sd in view.coefficient_bars().values())
    assert not view.errors.isVisible() and "every step's gradient" in view.note.text()
    r = _train(survey, method="dpsgd", model="mlp", delta=1e-5, epochs=1,
               features=("age", "gpa"))
    view.show_result(r)
    assert view.plot.isHidden() and view.coefficient_bars() == {}
    assert sum(view.confusion_counts().values()) == r.fields["split"]["test"]
    r = _train(survey, method="dpsgd", model="linear", delta=1e-5, epochs=1,
               features=("age", "gpa"), label="hours_studied_per_week")
    view.show_result(r)
    assert view.confusion_counts() is None and not view.plot.isHidden()
