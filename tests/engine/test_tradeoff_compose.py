"""Composition of trade-off curves and the privacy-profile ↔ curve conversions."""

import math

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import binom, norm

from dpstudio.engine.calibration import analytic_gaussian_delta
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.sampling import discrete_laplace_pmf
from dpstudio.engine.tradeoff import (
    compose_gaussian,
    compose_tradeoff,
    discrete_laplace_tradeoff,
    discrete_tradeoff,
    epsilon_delta_tradeoff,
    gaussian_tradeoff,
    krr_tradeoff,
    laplace_tradeoff,
    profile_to_tradeoff,
    tradeoff_to_profile,
)

ALPHA = np.unique(np.concatenate([np.linspace(0, 1, 1001), np.geomspace(1e-8, 1e-3, 50)]))


def _gaussian_profile(mu):
    return np.vectorize(lambda e: analytic_gaussian_delta(1.0, mu, e), otypes=[float])


def _hockey_stick(p, q, eps):
    """δ(ε) = Σ max(0, q − e^ε p): the smallest δ with Q(S) ≤ e^ε P(S) + δ for all S."""
    eps = np.atleast_1d(eps)
    return np.maximum(q[None, :] - np.exp(eps)[:, None] * p[None, :], 0).sum(axis=1)


def _krr_pmfs(eps, k):
    p, q = np.ones(k), np.ones(k)
    p[0] = q[1] = math.exp(eps)
    return p / p.sum(), q / q.sum()


def _product(pmfs):
    """pmf of independent outputs (all combinations, flattened)."""
    out = np.ones(1)
    for m in pmfs:
        out = np.outer(out, m).ravel()
    return out


# ------------------------------------------------------------------------- composition


@pytest.mark.parametrize("mu,k", [(0.5, 1), (1.0, 10), (0.2, 100)])
def test_gaussian_composition_is_mu_root_k(mu, k):
    expected = gaussian_tradeoff(mu * math.sqrt(k), ALPHA).beta
    np.testing.assert_array_equal(compose_gaussian(mu, k, ALPHA).beta, expected)
    via = compose_tradeoff("gaussian", {"sigma": 2.0, "sensitivity": 2.0 * mu}, k, ALPHA)
    np.testing.assert_allclose(via.beta, expected, atol=1e-15)
    assert via.exact


@pytest.mark.parametrize("eps,k", [(1.0, 1), (0.5, 7), (0.1, 200), (2.0, 30)])
def test_composed_randomized_response_against_the_binomial(eps, k):
    """k runs of binary RR: the number J of reports favouring D′ is sufficient, and is
    Binomial(k, 1/(1+e^ε)) under D and Binomial(k, e^ε/(1+e^ε)) under D′."""
    j = np.arange(k + 1)
    p = binom.pmf(j, k, 1 / (1 + math.exp(eps)))
    q = binom.pmf(j, k, math.exp(eps) / (1 + math.exp(eps)))
    expected = discrete_tradeoff(p / p.sum(), q / q.sum(), ALPHA).beta
    got = compose_tradeoff("rr", {"epsilon": eps}, k, ALPHA)
    np.testing.assert_allclose(got.beta, expected, atol=1e-12)
    assert got.exact and got.knots is not None


def test_composed_krr_and_discrete_laplace_against_brute_force_products():
    p, q = _krr_pmfs(0.8, 3)
    expected = discrete_tradeoff(_product([p] * 3), _product([q] * 3), ALPHA).beta
    got = compose_tradeoff("krr", {"epsilon": 0.8, "k": 3}, 3, ALPHA).beta
    np.testing.assert_allclose(got, expected, atol=1e-13)
    # Discrete Laplace, scale 1.5, Δ = 2, two runs: explicit pmfs on a wide window.
    kk = np.arange(-60, 63)
    p, q = discrete_laplace_pmf(kk, 1.5), discrete_laplace_pmf(kk - 2, 1.5)
    p, q = p / p.sum(), q / q.sum()
    expected = discrete_tradeoff(_product([p, p]), _product([q, q]), ALPHA).beta
    got = compose_tradeoff("discrete_laplace", {"scale": 1.5, "sensitivity": 2}, 2, ALPHA)
    np.testing.assert_allclose(got.beta, expected, atol=1e-12)


@pytest.mark.parametrize("mechanism,params,eps", [
    ("rr", {"epsilon": 0.7}, 0.7),
    ("krr", {"epsilon": 1.2, "k": 5}, 1.2),
    ("discrete_laplace", {"scale": 2.0, "sensitivity": 3}, 1.5),
])
def test_composed_curves_lie_between_single_run_and_basic_composition(mechanism, params, eps):
    single = compose_tradeoff(mechanism, params, 1, ALPHA).beta
    for k in (2, 5, 20):
        composed = compose_tradeoff(mechanism, params, k, ALPHA).beta
        assert np.all(composed <= single + 1e-14)
        assert np.max(single - composed) > 0.01  # composing really loses privacy
        assert np.all(composed >= epsilon_delta_tradeoff(k * eps, 0.0, ALPHA).beta - 1e-14)


def test_compose_tradeoff_argument_errors():
    with pytest.raises(ParameterError):
        compose_tradeoff("exponential", {}, 2)
    with pytest.raises(ParameterError):
        compose_tradeoff("rr", {"epsilon": 1.0}, 0)
    with pytest.raises(ParameterError):
        compose_tradeoff("rr", {"epsilon": -1.0}, 2)
    with pytest.raises(ParameterError):
        compose_tradeoff("laplace", {"scale": 1.0}, 2, method="exact")
    with pytest.raises(ParameterError):
        compose_tradeoff("rr", {"epsilon": 1.0}, 2, method="fast")


# ------------------------------------------------------------ profile ↔ trade-off curve


@pytest.mark.parametrize("eps,k", [(1.0, 2), (0.5, 4), (2.0, 10)])
def test_profile_of_piecewise_linear_curves_is_exact(eps, k):
    grid = np.linspace(-1, 4, 41)
    p, q = _krr_pmfs(eps, k)
    got = tradeoff_to_profile(krr_tradeoff(eps, k), grid)
    np.testing.assert_allclose(got, np.minimum(_hockey_stick(p, q, grid), 1), atol=1e-14)
    if k == 2:  # binary RR: (e^ε − e^ε′)/(1 + e^ε) for ε′ ≤ ε
        closed = np.maximum(0, (math.exp(eps) - np.exp(grid)) / (1 + math.exp(eps)))
        np.testing.assert_allclose(got, closed, atol=1e-15)
    # Discrete Laplace, scale 2, Δ = 3, against its explicit pmfs.
    kk = np.arange(-90, 94)
    p, q = discrete_laplace_pmf(kk, 2.0), discrete_laplace_pmf(kk - 3, 2.0)
    np.testing.assert_allclose(tradeoff_to_profile(discrete_laplace_tradeoff(2.0, 3), grid),
                               np.minimum(_hockey_stick(p, q, grid), 1), atol=1e-13)


@pytest.mark.parametrize("mu", [0.5, 1.0, 3.0])
def test_profile_of_the_gaussian_curve_matches_balle_wang(mu):
    """On a grid the maximum of 1 − e^ε α − f(α) misses the true one by at most
    (h/2)(f′(α₊) − f′(α₋)) on the grid step [α₋, α₊] holding the maximizer (the objective is
    concave: from either end it rises at most h times its slope there). G_μ′(α) =
    −exp(μz − μ²/2), z = Φ⁻¹(1−α); the maximizer is Φ(−ε/μ − μ/2). Never above the truth."""
    a = np.unique(np.concatenate([np.linspace(0, 1, 4001), np.geomspace(1e-12, 1e-2, 3000)]))
    curve = gaussian_tradeoff(mu, a)
    for eps in (0.0, 0.3, 1.0, 2.5, 5.0):
        truth = analytic_gaussian_delta(1.0, mu, eps)
        got = tradeoff_to_profile(curve, [eps])[0]
        star = norm.cdf(-eps / mu - mu / 2)
        i = np.searchsorted(a, star)
        lo, hi = a[i - 1], a[i]

        def slope(x):
            return -np.exp(-mu * ndtri(x) - mu * mu / 2)

        tol = (hi - lo) / 2 * (slope(hi) - slope(lo))
        assert got <= truth + 1e-15
        assert truth - got <= tol + 1e-15
        assert truth - got <= 1e-5 * truth + 1e-15  # and this grid is fine enough


def _tangent_gap_bound(mu, eps):
    """Largest gap between G_μ and the envelope of its tangents at the points where its
    slopes are −e^{±ε_i}: between two tangent points α_j < α_{j+1} with slopes s_j < s_{j+1}
    the gap is at most (α_{j+1} − α_j)(s_{j+1} − s_j)/4; outside the outermost ones it is at
    most δ(ε_max) (the gap at α = 0)."""
    pts = norm.cdf(-eps / mu - mu / 2)
    alphas = np.concatenate([pts, gaussian_tradeoff(mu, pts).beta])  # mirrored tangents
    slopes = np.concatenate([-np.exp(eps), -np.exp(-eps)])
    order = np.argsort(alphas)
    da, ds = np.diff(alphas[order]), np.diff(slopes[order])
    return max(np.max(da * ds) / 4, analytic_gaussian_delta(1.0, mu, eps.max()))


@pytest.mark.parametrize("mu", [0.5, 1.0, 4.0])
def test_gaussian_curve_from_its_profile_is_pessimistic_and_close(mu):
    profile = _gaussian_profile(mu)
    env = profile_to_tradeoff(profile, ALPHA)
    exact = gaussian_tradeoff(mu, ALPHA).beta
    assert not env.exact
    assert np.all(env.beta <= exact + 1e-13)
    top = 1.0
    while analytic_gaussian_delta(1.0, mu, top) > 1e-15:
        top *= 2
    bound = _tangent_gap_bound(mu, np.linspace(0, top, 2001))  # the default grid
    assert np.max(exact - env.beta) <= bound + 1e-13
    assert bound < 1e-3
    # A coarse grid: still below, and the gap grows.
    coarse = profile_to_tradeoff(profile, ALPHA, np.linspace(0, top, 15)).beta
    assert np.all(coarse <= exact + 1e-13)
    assert np.max(exact - coarse) > np.max(exact - env.beta)
    assert np.max(exact - coarse) <= _tangent_gap_bound(mu, np.linspace(0, top, 15)) + 1e-13
    # The evaluator reproduces the envelope anywhere.
    np.testing.assert_allclose(env.at(ALPHA[::7]), env.beta[::7], atol=0)


@pytest.mark.parametrize("eps,k", [(1.0, 2), (0.6, 3), (2.0, 7)])
def test_round_trip_of_piecewise_linear_curves_is_exact(eps, k):
    """The lines at ε and 0 (and their mirrors) are the segments of K-RR: curve → profile →
    curve gives the curve back."""
    curve = krr_tradeoff(eps, k, ALPHA)
    back = profile_to_tradeoff(lambda e: tradeoff_to_profile(curve, e), ALPHA, [0.0, eps])
    np.testing.assert_allclose(back.beta, curve.beta, atol=1e-14)


def test_one_directional_profiles_with_negative_epsilon():
    """An asymmetric pair: direct lines over ±ε recover T(P, Q) from the one-directional
    hockey-stick profile; every line is valid, so never above."""
    p = np.array([0.6, 0.3, 0.1, 0.0])
    q = np.array([0.1, 0.2, 0.4, 0.3])
    exact = discrete_tradeoff(p, q, ALPHA).beta
    grid = np.linspace(-6, 6, 1201)
    env = profile_to_tradeoff(lambda e: _hockey_stick(p, q, e), ALPHA, grid, symmetric=False)
    assert np.all(env.beta <= exact + 1e-14)
    assert np.max(exact - env.beta) < 1e-3


def test_profile_to_tradeoff_argument_errors():
    with pytest.raises(ParameterError):
        profile_to_tradeoff(lambda e: np.zeros_like(e), ALPHA, [np.inf])
    with pytest.raises(ParameterError):
        profile_to_tradeoff(lambda e: np.full_like(e, np.nan), ALPHA, [1.0])


# ---------------------------------------------- through privacy-loss distributions


def test_laplace_composition_without_pld_module_says_so(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "dpstudio.engine.accounting.pld", None)
    with pytest.raises(NotImplementedError, match="accounting.pld"):
        compose_tradeoff("laplace", {"scale": 1.0}, 2, ALPHA)


@pytest.fixture
def pld_class():
    return pytest.importorskip("dpstudio.engine.accounting.pld").PLD


def test_gaussian_from_its_pld_is_pessimistic_and_close(pld_class):
    env = profile_to_tradeoff(pld_class.gaussian(1.0, 1.0).delta, ALPHA)
    exact = gaussian_tradeoff(1.0, ALPHA).beta
    assert np.all(env.beta <= exact + 1e-9)
    assert np.max(exact - env.beta) < 1e-4


@pytest.mark.parametrize("mechanism,params,k", [
    ("rr", {"epsilon": 1.0}, 5),
    ("krr", {"epsilon": 0.7, "k": 4}, 8),
    ("discrete_laplace", {"scale": 2.0, "sensitivity": 2}, 6),
])
def test_pld_route_against_the_exact_lattice(pld_class, mechanism, params, k):
    exact = compose_tradeoff(mechanism, params, k, ALPHA, method="exact").beta
    via = compose_tradeoff(mechanism, params, k, ALPHA, method="pld")
    assert not via.exact
    assert np.all(via.beta <= exact + 1e-9)
    assert np.max(exact - via.beta) < 1e-4


def test_composed_laplace_through_pld(pld_class):
    eps = 0.5
    single = laplace_tradeoff(eps, ALPHA).beta
    one = compose_tradeoff("laplace", {"scale": 2.0, "sensitivity": 1.0}, 1, ALPHA)
    assert np.all(one.beta <= single + 1e-9) and np.max(single - one.beta) < 1e-4
    composed = compose_tradeoff("laplace", {"scale": 2.0, "sensitivity": 1.0}, 10, ALPHA).beta
    assert np.all(composed <= single + 1e-9) and np.max(single - composed) > 0.05
    assert np.all(composed >= epsilon_delta_tradeoff(10 * eps, 0.0, ALPHA).beta - 1e-9)
    # Ten runs at ε are more private than one run at 10ε (the Laplace curve is above
    # the pure bound everywhere but at the ends), and than ten RR runs at ε.
    assert np.all(composed >= laplace_tradeoff(10 * eps, ALPHA).beta - 1e-9)
    rr10 = compose_tradeoff("rr", {"epsilon": eps}, 10, ALPHA).beta
    assert np.all(composed >= rr10 - 1e-9)
    # Independent check: discrete Laplace on a grid 1/G fine (scale 2G, Δ = G) is less
    # private than the continuous one and converges to it like 1/G² (G = 50, 200, 1000
    # give gaps 2e-5, 1e-6, 5e-8 in one run); its ten runs compose exactly on the lattice.
    fine = compose_tradeoff("discrete_laplace", {"scale": 2000.0, "sensitivity": 1000}, 10,
                            ALPHA, method="exact").beta
    assert np.max(np.abs(composed - fine)) < 1e-5


def test_all_combinations_of_small_products_are_consistent():
    """Composition is associative: 2 runs then 3 runs of the 2-fold product = 6 runs."""
    p, q = _krr_pmfs(0.9, 2)
    p2, q2 = _product([p, p]), _product([q, q])
    six = discrete_tradeoff(_product([p2] * 3), _product([q2] * 3), ALPHA).beta
    np.testing.assert_allclose(compose_tradeoff("rr", {"epsilon": 0.9}, 6, ALPHA).beta, six,
                               atol=1e-13)


class _StubPLD:
    """Exact stand-in for the PLD interface on finite pairs (for the plumbing only)."""

    def __init__(self, p, q):
        self.p, self.q = p, q

    @classmethod
    def randomized_response(cls, epsilon, k):
        return cls(*_krr_pmfs(epsilon, k))

    @classmethod
    def discrete_laplace(cls, scale, sensitivity):
        kk = np.arange(-int(40 * scale) - 1, int(40 * scale) + sensitivity + 2)
        p, q = discrete_laplace_pmf(kk, scale), discrete_laplace_pmf(kk - sensitivity, scale)
        return cls(p / p.sum(), q / q.sum())

    def self_compose(self, k):
        return _StubPLD(_product([self.p] * k), _product([self.q] * k))

    def delta(self, eps):
        return np.maximum(_hockey_stick(self.p, self.q, eps), _hockey_stick(self.q, self.p, eps))


@pytest.mark.parametrize("mechanism,params,k", [
    ("rr", {"epsilon": 1.0}, 6),
    ("krr", {"epsilon": 0.7, "k": 3}, 4),
    ("discrete_laplace", {"scale": 0.5, "sensitivity": 2}, 2),
])
def test_pld_plumbing_with_an_exact_stub(monkeypatch, mechanism, params, k):
    import types

    stub = types.ModuleType("dpstudio.engine.accounting.pld")
    stub.PLD = _StubPLD
    monkeypatch.setitem(__import__("sys").modules, "dpstudio.engine.accounting.pld", stub)
    exact = compose_tradeoff(mechanism, params, k, ALPHA, method="exact").beta
    via = compose_tradeoff(mechanism, params, k, ALPHA, method="pld")
    assert not via.exact and "PLD" in via.label
    assert np.all(via.beta <= exact + 1e-12)
    assert np.max(exact - via.beta) < 1e-3
