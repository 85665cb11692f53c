"""The model card of a released trained model and its report's privacy–utility curve
(issue 13): written from public fields only; the curve is the method's own calibration."""

from __future__ import annotations

import math

import numpy as np

from dpstudio.export.model_card import METRICS_SENTENCE, model_card, model_card_html
from dpstudio.export.train_report import train_utility_series


def _public(**over):
    pub = {
        "query": "train", "label": "diabetes", "column": "diabetes", "model": "logistic",
        "method": "output", "mechanism": "dp_erm_logistic", "fed_variant": "none",
        "trusts": "Trusts the curator that trains the model.", "epsilon": 1.0,
        "delta": 0.0, "relation": "replace", "accountant": "pure-dp (discrete Laplace)",
        "lambda": 0.05, "features": ["age", "smoker", "works"],
        "design": ["age", "smoker=never", "smoker=current", "works"],
        "feature_bounds": {"age": [18.0, 100.0], "smoker=never": [0.0, 1.0],
                           "smoker=current": [0.0, 1.0], "works": [0.0, 1.0]},
        "feature_categories": {"smoker": ["never", "current"]},
        "yes_no_features": ["works"], "n": 300,
        "plan": {"noise_family": "laplace", "noise_scale": 0.01},
        "split": {"test_fraction": 0.25, "split_seed": 0}, "source": "OS CSPRNG",
    }
    return pub | over


def _card(pub):
    return model_card(pub, release_id=4, created_at="2026-01-01T00:00:00Z", version="0.1",
                      dataset_name="h.csv", fingerprint="ab" * 32, files=["x.csv"])


def test_card_states_data_bounds_method_trust_privacy_and_no_metrics():
    card = _card(_public())
    assert "| age | [18, 100] |" in card
    assert "categories: never, current" in card and "| works | yes/no |" in card
    assert "300 rows trained on" in card
    assert "ε = 1, δ = 0" in card and "factor of at most 2.72" in card
    assert "replacing one record" in card
    assert METRICS_SENTENCE in card
    assert "Trusts the curator" in card and "output perturbation" in card


def test_card_of_an_add_remove_release_keeps_n_private_and_names_the_variant():
    pub = _public(method="dpsgd", relation="add-remove", delta=1e-6, fed_variant="secagg",
                  trusts="Trusts the secure-aggregation protocol.", plan={
                      "rounds": 5, "local_steps": 2, "per_round": [0.3, 1e-7]})
    del pub["n"]
    card = _card(pub)
    assert "number of rows is not published" in card
    assert "secagg variant" in card and "rounds R: 5" in card
    assert "one round: ε = 0.3" in card and "except with probability δ = 1e-06" in card


def test_card_html_escapes_and_keeps_tables():
    text = model_card_html(_card(_public(label="<b>x</b>")))
    assert "<b>x</b>" not in text and "&lt;b&gt;x&lt;/b&gt;" in text
    assert "<table>" in text and "<h3>Accuracy</h3>" in text


def test_output_curve_passes_through_the_released_noise_and_falls_with_epsilon():
    from dpstudio.engine.learning import calibrate_output_perturbation

    pub = _public()
    plan = calibrate_output_perturbation(5, 300, 0.05, 1.0, 0.0)
    eps, noise, eps0, _, caption = train_utility_series(pub | {"plan": {
        "noise_family": "laplace", "noise_scale": plan.noise_scale}})
    assert noise[list(eps).index(eps0)] == plan.noise_scale
    assert np.all(np.diff(noise) < 0) and "without data" in caption
    # A wrong n would move the curve: the power of the check above.
    other = calibrate_output_perturbation(5, 150, 0.05, 1.0, 0.0).noise_scale
    assert not math.isclose(other, plan.noise_scale, rel_tol=0.1)


def test_dpsgd_curve_is_the_runs_calibration():
    from dpstudio.engine.learning.dpsgd import plan_dpsgd

    run = plan_dpsgd(6, 0.1, 10, 1.0, 1e-6, epsilon=1.0)
    pub = _public(method="dpsgd", relation="add-remove", delta=1e-6,
                  plan={k: getattr(run, k) for k in ("dimension", "sample_rate", "steps",
                                                      "clip", "noise_multiplier")})
    eps, sigma, eps0, label, _ = train_utility_series(pub)
    assert label == "noise multiplier σ"
    assert sigma[list(eps).index(eps0)] == run.noise_multiplier
    assert np.all(np.diff(eps) > 0) and np.all(np.diff(sigma) < 0)
    # Each point is the accountant's: ε of twice the noise, recomputed.
    from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon

    assert math.isclose(eps[0], dpsgd_epsilon(2 * run.noise_multiplier, 0.1, 10, 1e-6,
                                              "pld").epsilon, rel_tol=1e-12)
    assert eps[0] < 0.7 * eps0
