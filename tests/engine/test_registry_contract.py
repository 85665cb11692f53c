"""The contract every registered mechanism passes, generated from the registry.

Register a mechanism and it gets these tests: calibration against a closed form,
distribution against its exact law (with a power check that a wrong scale is rejected),
an empirical privacy audit on neighbouring inputs (with a power check that a
miscalibrated copy fails it), and refusal of bad parameters.
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import chisquare

from dpstudio.engine.audit import epsilon_lower_bound
from dpstudio.engine.calibration import analytic_gaussian_sigma, classical_gaussian_sigma
from dpstudio.engine.errors import EngineError, ParameterError
from dpstudio.engine.registry import REGISTRY, MechanismInfo, Param
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.selection import ExponentialMechanism, PermuteAndFlip

ADDITIVE = [m for m in REGISTRY if m.kind == "additive"]
SELECTION = [m for m in REGISTRY if m.kind == "selection"]
ids = lambda m: m.name  # noqa: E731


def test_registry_has_the_central_mechanisms_and_complete_metadata():
    names = set(REGISTRY.names())
    assert {"laplace", "gaussian", "discrete_laplace", "discrete_gaussian",
            "exponential", "permute_and_flip"} <= names
    for m in REGISTRY:
        d = m.to_dict()
        assert d["description"].endswith(".") and len(d["description"]) < 120
        assert d["trust_models"] and d["value_types"] and d["params"]
        for p in d["params"]:
            assert p["help"] and p["type"] in ("float", "int", "choice", "bool")
        # Defaults are valid values of their own parameter.
        assert m.resolve({}) == {p.name: p.default for p in m.params}


def _noise(info: MechanismInfo, sens=1.0, eps=1.0, delta=1e-6, coords=1, **params):
    given = {"epsilon": eps, **params} | ({"delta": delta} if info.needs_delta else {})
    fam = info.build(**info.resolve(given))
    grid = fam.grid(sens, eps, delta, coords)
    return fam.calibrate(round(sens / grid), grid, eps, delta, coords)


def _reference_scale(info, sens, eps, delta, calibration="analytic"):
    if info.build(**info.resolve({"epsilon": 1.0} | (
            {"delta": 1e-6} if info.needs_delta else {}))).family == "laplace":
        return sens / eps
    if calibration == "classical":
        return classical_gaussian_sigma(sens, eps, delta)
    return analytic_gaussian_sigma(sens, eps, delta)


# (Δ, ε, δ): sensitivities that are whole numbers so every grid represents them exactly.
CAL_TABLE = [(1.0, 1.0, 1e-6), (4.0, 0.5, 1e-5), (100.0, 0.1, 1e-8), (2.0, 3.0, 1e-7)]


@pytest.mark.parametrize("info", ADDITIVE, ids=ids)
@pytest.mark.parametrize("sens,eps,delta", CAL_TABLE)
def test_additive_calibration_matches_closed_form(info, sens, eps, delta):
    noise = _noise(info, sens, eps, delta)
    ref = _reference_scale(info, sens, eps, delta)
    assert noise.sensitivity_value == sens
    if noise.family == "laplace":
        assert noise.noise_scale == pytest.approx(ref, rel=1e-12)
        assert noise.delta == 0.0 or not info.needs_delta
    else:
        # The exact discrete δ may ask for a hair more noise, never less.
        assert ref * (1 - 1e-9) <= noise.noise_scale <= ref * (1.02 if noise.grid >= 1 else 1.001)
    assert noise.epsilon == eps


@pytest.mark.parametrize("info", [m for m in ADDITIVE if m.needs_delta], ids=ids)
def test_classical_calibration_option(info):
    noise = _noise(info, 4.0, 0.5, 1e-5, calibration="classical")
    ref = classical_gaussian_sigma(4.0, 0.5, 1e-5)
    assert ref * (1 - 1e-9) <= noise.noise_scale <= ref * 1.02
    with pytest.raises(ParameterError):
        _noise(info, 1.0, 2.0, 1e-5, calibration="classical")


def _binned_chi2(samples, pmf_fn, center_scale):
    """χ² of integer samples against a pmf, on ~40 bins of similar expected mass."""
    half = int(max(40 * center_scale, 60))
    k = np.arange(-half, half + 1)
    p = pmf_fn(k)
    cdf = np.cumsum(p)
    cuts = np.searchsorted(cdf, np.linspace(0, 1, 41)[1:-1])
    edges = np.unique(np.concatenate([[-np.inf], k[cuts] + 0.5, [np.inf]]))
    expected = np.diff(np.concatenate([[0.0], cdf[np.searchsorted(k, edges[1:-1] - 0.5)], [1.0]]))
    observed = np.histogram(samples, bins=edges)[0]
    expected = expected * samples.size / expected.sum()
    return chisquare(observed, expected).pvalue


@pytest.mark.parametrize("info", ADDITIVE, ids=ids)
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_additive_distribution_with_power_check(info, eps):
    noise = _noise(info, 1.0, eps)
    samples = noise.sample(200_000, SimulationSource(7))
    assert samples.dtype == np.int64
    assert _binned_chi2(samples, noise.pmf, noise.scale) > 1e-4
    for factor in (1.3, 0.7):
        wrong = dataclasses.replace(noise, scale=noise.scale * factor)
        assert _binned_chi2(samples, wrong.pmf, noise.scale) < 1e-6, factor
    # The variance the release reports is the sample's (5 standard errors).
    var_steps = noise.variance / noise.grid**2
    se = var_steps * math.sqrt(2.0 / samples.size) * 2  # kurtosis ≤ 6 for these laws
    assert abs(samples.astype(float).var() - var_steps) < 5 * se


@pytest.mark.parametrize("info", ADDITIVE, ids=ids)
def test_additive_empirical_audit_and_its_power(info):
    eps = 1.0
    noise = _noise(info, 1.0, eps, 1e-6)
    src = SimulationSource(11)
    n = 100_000
    d = noise.sample(n, src)
    d2 = noise.sensitivity + noise.sample(n, src)
    claimed = epsilon_lower_bound(d, d2, delta=noise.delta)
    assert claimed.epsilon_lower <= eps
    # The audit has power: a copy with a third of the noise is caught claiming ε.
    weak = dataclasses.replace(noise, scale=noise.scale / 3)
    w = epsilon_lower_bound(weak.sample(n, src), weak.sensitivity + weak.sample(n, src),
                            delta=noise.delta)
    assert w.epsilon_lower > eps


@pytest.mark.parametrize("info", ADDITIVE, ids=ids)
@pytest.mark.parametrize("given", [
    {"epsilon": 0}, {"epsilon": -1}, {"epsilon": float("nan")}, {"epsilon": float("inf")},
    {"epsilon": "x"}, {"nonsense": 1},
])
def test_additive_bad_parameters(info, given):
    with pytest.raises(ParameterError) as err:
        info.resolve(given)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("info", [m for m in ADDITIVE if m.needs_delta], ids=ids)
@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-9, 1.5])
def test_additive_bad_delta(info, delta):
    with pytest.raises(EngineError):
        fam = info.build(**info.resolve({"epsilon": 1.0}))
        fam.calibrate(1, 1.0, 1.0, delta)


@pytest.mark.parametrize("info", ADDITIVE, ids=ids)
def test_additive_zero_sensitivity_refused(info):
    fam = info.build(**info.resolve({}))
    with pytest.raises(ParameterError):
        fam.calibrate(0, 1.0, 1.0, 1e-6)


# ------------------------------------------------------------------------- selection

SCORES = np.array([0.0, -1.0, -2.0, -0.5, -3.0])


def _selector(info, eps=1.0, sens=1.0):
    return info.build(**info.resolve({"epsilon": eps}), sensitivity=sens)


@pytest.mark.parametrize("info", SELECTION, ids=ids)
def test_selection_calibration_closed_forms(info):
    mech = _selector(info, eps=1.2)
    probs = mech.probabilities(SCORES)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    if isinstance(mech, ExponentialMechanism):
        w = np.exp(1.2 * SCORES / 2)
        np.testing.assert_allclose(probs, w / w.sum(), rtol=1e-12)
    if isinstance(mech, PermuteAndFlip):
        # Two candidates with gap g: the worse one wins only when drawn first and accepted.
        two = mech.probabilities(np.array([0.0, -1.0]))
        assert two[1] == pytest.approx(math.exp(-1.2 / 2) / 2, rel=1e-12)


@pytest.mark.parametrize("info", SELECTION, ids=ids)
def test_selection_distribution_with_power_check(info):
    mech = _selector(info, eps=1.0)
    picks = mech.select(SCORES, SimulationSource(3), size=200_000)
    observed = np.bincount(picks, minlength=SCORES.size)
    assert chisquare(observed, mech.probabilities(SCORES) * picks.size).pvalue > 1e-4
    for factor in (1.3, 0.7):
        wrong = _selector(info, eps=factor).probabilities(SCORES) * picks.size
        assert chisquare(observed, wrong).pvalue < 1e-6, factor


@pytest.mark.parametrize("info", SELECTION, ids=ids)
def test_selection_empirical_audit_and_its_power(info):
    eps = 1.0
    neighbour = SCORES.copy()
    neighbour[0] -= 1.0  # one record moves the best score by Δu = 1
    mech = _selector(info, eps=eps)
    src = SimulationSource(5)
    a = mech.select(SCORES, src, size=100_000)
    b = mech.select(neighbour, src, size=100_000)
    assert epsilon_lower_bound(a, b, categorical=True).epsilon_lower <= eps
    loose = _selector(info, eps=eps * 4)  # claims ε but spends 4ε
    a = loose.select(SCORES, src, size=100_000)
    b = loose.select(neighbour, src, size=100_000)
    assert epsilon_lower_bound(a, b, categorical=True).epsilon_lower > eps


@pytest.mark.parametrize("info", SELECTION, ids=ids)
@pytest.mark.parametrize("scores", [np.array([]), np.array([0.0, np.nan]), np.ones((2, 2))])
def test_selection_bad_scores(info, scores):
    with pytest.raises(ParameterError):
        _selector(info).select(scores, SimulationSource(0))


@pytest.mark.parametrize("info", SELECTION, ids=ids)
def test_selection_bad_epsilon(info):
    with pytest.raises(ParameterError):
        info.resolve({"epsilon": 0})
    with pytest.raises(ParameterError):
        info.build(epsilon=1.0, candidates=10, sensitivity=0.0)


def test_param_validation_messages():
    p = Param("k", "int", 2, "help", low=2, high=10)
    assert p.validate("3") == 3
    for bad in (1, 11, 2.5, "x", float("nan")):
        with pytest.raises(ParameterError):
            p.validate(bad)
    c = Param("c", "choice", "a", "help", choices=("a", "b"))
    with pytest.raises(ParameterError, match="one of a, b"):
        c.validate("z")
    with pytest.raises(ParameterError, match="unknown mechanism"):
        REGISTRY.get("nope")
