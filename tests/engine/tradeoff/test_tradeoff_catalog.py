"""Every registry mechanism the application offers has a trade-off curve: a valid trade-off
function, above the (ε, δ) it reports, flagged exact or region-only; the engine's own
calibrations checked against the exact curves."""

import math

import numpy as np
import pytest

from dpstudio.analysis.choices import VIEW_TRUST_MODELS
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.tradeoff import (
    alpha_grid,
    curve_example,
    curve_mechanisms,
    epsilon_delta_tradeoff,
    gaussian_tradeoff,
    krr_tradeoff,
    laplace_tradeoff,
    mechanism_curve,
)

A = alpha_grid(301)
OFFERED = [i.name for i in REGISTRY if set(i.trust_models) & set(VIEW_TRUST_MODELS)]
REGION_ONLY = {"cloak", "blanket", "permute_and_flip", "dp_erm_logistic",
               "dp_objective_logistic", "dp_sgd"}


def test_every_offered_mechanism_has_a_curve():
    assert set(OFFERED) <= set(curve_mechanisms())


@pytest.mark.parametrize("name", OFFERED)
@pytest.mark.parametrize("k", [1, 2])
def test_curve_is_a_trade_off_function_above_its_bound(name, k):
    mc = mechanism_curve(name, curve_example(name), k, A)
    f = mc.curve.beta
    assert f[0] <= 1 and f[-1] == pytest.approx(0, abs=1e-12)
    slopes = np.diff(f) / np.diff(A)
    assert np.all(slopes <= 1e-9)  # non-increasing
    assert np.all(np.diff(slopes) >= -1e-6 * np.maximum(1, np.abs(slopes[1:])))  # convex
    assert np.all(f <= 1 - A + 1e-12)
    bound = epsilon_delta_tradeoff(mc.bound_epsilon, mc.bound_delta, A).beta
    assert np.all(f >= bound - 1e-9)
    assert mc.region_only == (name in REGION_ONLY)
    if mc.region_only:
        assert not mc.exact and mc.region_note.endswith(".")
        assert "Only the (ε, δ) guarantee" in mc.region_note
        assert mc.region_note.count(". ") == 0  # one sentence
    else:
        assert mc.region_note == ""


def test_exact_flags():
    exact = {n for n in OFFERED if mechanism_curve(n, curve_example(n), 1, A).exact}
    assert exact == set(OFFERED) - REGION_ONLY


def test_engine_calibrations_against_the_exact_curves():
    # The discrete Gaussian and the Skellam are calibrated exactly: the curve gives back ε.
    for name in ("discrete_gaussian", "skellam"):
        mc = mechanism_curve(name, {"epsilon": 0.7, "delta": 1e-7, "sensitivity": 3}, 1, A)
        assert mc.bound_epsilon == pytest.approx(0.7, rel=1e-5)
        assert mc.bound_epsilon <= 0.7 * (1 + 1e-5)
    # Secure aggregation's discrete Gaussian rests on a bound (KLS21): the exact curve
    # needs no more ε than it claims.
    mc = mechanism_curve("secagg_gaussian", {"epsilon": 1.0, "delta": 1e-6, "clients": 20},
                         1, A)
    assert 0.5 < mc.bound_epsilon <= 1.0
    # A wrong noise is told apart (power): the curve at 10% less σ.
    sigma = mc.params["sigma"]
    other = mechanism_curve("secagg_gaussian", {"sigma": 0.9 * sigma, "clients": 20,
                                                "delta": 1e-6}, 1, A)
    assert np.max(np.abs(other.curve.beta - mc.curve.beta)) > 1e-3


def test_local_mean_randomizers_match_their_continuous_curves():
    lap = mechanism_curve("local_laplace", {"epsilon": 1.0}, 1, A)
    np.testing.assert_allclose(lap.curve.beta, laplace_tradeoff(1.0, A).beta, atol=1e-4)
    gau = mechanism_curve("local_gaussian", {"epsilon": 1.0, "delta": 1e-6}, 1, A)
    mu = gau.params["sensitivity_steps"] / gau.params["sigma_steps"]
    np.testing.assert_allclose(gau.curve.beta, gaussian_tradeoff(mu, A).beta, atol=1e-6)
    duchi = mechanism_curve("duchi", {"epsilon": 0.5}, 1, A)
    np.testing.assert_allclose(duchi.curve.beta, krr_tradeoff(0.5, 2, A).beta, atol=1e-15)


def test_olh_default_g_is_the_engines():
    from dpstudio.engine.local.frequency import olh_default_g

    mc = mechanism_curve("olh", {"epsilon": 2.0}, 1, A)
    assert mc.params["g"] == olh_default_g(2.0)
    assert mc.params["collision"] == pytest.approx(1 / mc.params["g"], rel=1e-6)


def test_region_curves_compose_optimally():
    one = mechanism_curve("cloak", {"epsilon": 0.5, "delta": 1e-6}, 1, A)
    ten = mechanism_curve("cloak", {"epsilon": 0.5, "delta": 1e-6}, 10, A)
    basic = epsilon_delta_tradeoff(5.0, 1e-5, A).beta
    assert np.all(ten.curve.beta >= basic - 1e-12) and np.max(ten.curve.beta - basic) > 1e-3
    assert np.all(ten.curve.beta <= one.curve.beta + 1e-12)
    assert "composed 10 times" in ten.region_note


@pytest.mark.parametrize("name, params, match", [
    ("nonexistent", {}, "no trade-off curve"),
    ("sue", {"k": 3}, "does not apply"),
    ("sue", {"epsilon": 0}, "epsilon"),
    ("olh", {"g": 1}, "g"),
    ("discrete_gaussian", {"sigma": 2.0, "epsilon": 1.0}, "not both"),
    ("discrete_gaussian", {"sensitivity": 1.5}, "whole number"),
    ("skellam", {"variance": -1.0}, "variance"),
    ("gaussian", {}, "needs sigma"),
    ("sfp", {"fragment_share": 1.0}, "fragment_share"),
])
def test_bad_parameters_one_sentence(name, params, match):
    with pytest.raises(ParameterError, match=match) as err:
        mechanism_curve(name, params)
    assert "\n" not in str(err.value)


def test_composition_needs_a_whole_number():
    with pytest.raises(ParameterError, match="compositions"):
        mechanism_curve("oue", {}, 0)
    assert math.isfinite(mechanism_curve("oue", {}, 50, A).bound_epsilon)


def test_curve_of_a_built_randomizer():
    # What the application builds for a local release: the curve from the object's own
    # parameters (OLH's g and collision, the puzzle's split, the grid noise).
    from dpstudio.engine.tradeoff import curve_for_object

    for name in ("rr", "krr", "sue", "oue", "olh", "hadamard", "cms", "duchi", "sfp",
                 "local_laplace", "local_gaussian"):
        info = REGISTRY.get(name)
        kw = {"k": 2 if name == "rr" else 5}
        if name in ("duchi", "local_laplace", "local_gaussian"):
            kw = {"bounds": (0.0, 10.0)}
        if name == "sfp":
            kw = {}
        obj = info.build(**{**info.resolve({"epsilon": 1.5}), **kw})
        mc = curve_for_object(obj, 2, A)
        assert mc is not None and mc.mechanism == name and mc.compositions == 2
        by_name = mechanism_curve(name, {"epsilon": 1.5, **({"k": 5} if name == "krr" else {})},
                                  2, A)
        np.testing.assert_allclose(mc.curve.beta, by_name.curve.beta, atol=1e-4)
    assert curve_for_object(object()) is None
