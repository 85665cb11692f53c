"""Trade-off curves: closed forms against independent computations, and the properties
every trade-off function must have (convex, non-increasing, f(1) = 0, symmetric, above
its mechanism's (ε, δ) guarantee and *not* above a stronger one)."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import laplace, norm

from dpstudio.engine.calibration import analytic_gaussian_delta
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.sampling import discrete_laplace_pmf
from dpstudio.engine.tradeoff import (
    alpha_grid,
    discrete_laplace_tradeoff,
    discrete_tradeoff,
    epsilon_delta_tradeoff,
    gaussian_tradeoff,
    krr_tradeoff,
    laplace_tradeoff,
    neyman_pearson_knots,
    randomized_response_tradeoff,
)

# A grid with the endpoints, very small α (steep region) and a uniform middle.
ALPHA = np.unique(np.concatenate([alpha_grid(400), np.geomspace(1e-9, 1e-2, 60),
                                  np.linspace(0, 1, 101)]))


def _eps_delta_closed(eps, delta, a):
    return np.maximum.reduce([np.zeros_like(a), 1 - delta - math.exp(eps) * a,
                              math.exp(-eps) * (1 - delta - a)])


# ------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0, 8.0])
def test_gaussian_against_scipy_and_the_threshold_tests(mu):
    a = np.linspace(1e-6, 1 - 1e-6, 501)
    got = gaussian_tradeoff(mu, a).beta
    np.testing.assert_allclose(got, norm.cdf(norm.ppf(1 - a) - mu), rtol=1e-9, atol=1e-15)
    # Neyman–Pearson for N(0,1) vs N(μ,1): reject for x > t, α = 1−Φ(t), β = Φ(t−μ).
    t = np.linspace(-6, 6 + mu, 200)
    np.testing.assert_allclose(gaussian_tradeoff(mu, norm.sf(t)).beta, norm.cdf(t - mu),
                               rtol=1e-9, atol=1e-15)
    # Symmetric point: f(Φ(−μ/2)) = Φ(−μ/2); and the endpoints are exact.
    fixed = norm.cdf(-mu / 2)
    assert gaussian_tradeoff(mu, [fixed]).beta[0] == pytest.approx(fixed, rel=1e-12)
    assert gaussian_tradeoff(mu, [0.0, 1.0]).beta.tolist() == [1.0, 0.0]


def test_gaussian_with_mu_zero_is_perfect_privacy():
    np.testing.assert_allclose(gaussian_tradeoff(0.0, ALPHA).beta, 1 - ALPHA, atol=1e-15)


@pytest.mark.parametrize("b,sens", [(1.0, 1.0), (0.5, 2.0), (3.0, 0.7)])
def test_laplace_closed_form_against_the_threshold_tests(b, sens):
    eps = sens / b
    # Deterministic tests x > t of Laplace(0,b) against Laplace(Δ,b) are Neyman–Pearson.
    t = np.linspace(-15 * b, sens + 15 * b, 801)
    a, beta = laplace.sf(t, 0, b), laplace.cdf(t, sens, b)
    np.testing.assert_allclose(laplace_tradeoff(eps, a).beta, beta, rtol=1e-10, atol=1e-15)
    # The explicit three pieces, including the randomized straight ones.
    x = np.linspace(0, 1, 1001)
    pieces = np.where(x < math.exp(-eps) / 2, 1 - math.exp(eps) * x,
                      np.where(x <= 0.5, math.exp(-eps) / (4 * np.maximum(x, 1e-300)),
                               math.exp(-eps) * (1 - x)))
    np.testing.assert_allclose(laplace_tradeoff(eps, x).beta, pieces, rtol=1e-12, atol=1e-15)


def _binned_laplace(b, sens, per_unit):
    """Laplace(0,b) and Laplace(Δ,b) binned (edges at 0 and Δ), tails lumped into end bins."""
    width = 40 * b
    n = max(int(per_unit * sens), 1)
    edges = np.concatenate([np.linspace(-width, 0, 4 * n + 1)[:-1],
                            np.linspace(0, sens, n + 1)[:-1],
                            np.linspace(sens, sens + width, 4 * n + 1)])
    pmfs = []
    for loc in (0.0, sens):
        cdf = laplace.cdf(edges, loc, b)
        m = np.diff(cdf)
        m[0] += cdf[0]
        m[-1] += laplace.sf(edges[-1], loc, b)
        pmfs.append(m / m.sum())
    return pmfs


@pytest.mark.parametrize("b,sens", [(1.0, 1.0), (0.5, 2.0)])
def test_laplace_closed_form_against_numerical_neyman_pearson(b, sens):
    """Binning the outputs is post-processing, so the binned curve can only be higher; the
    excess is the loss inside (0, Δ), where the likelihood ratio varies by e^{2h/b} within a
    bin of width h, and it shrinks like h² (midpoint-rule error), so 10× finer bins must
    cut it by about 100×."""
    a = np.linspace(0, 1, 2001)
    exact = laplace_tradeoff(sens / b, a).beta
    errors = []
    for per_unit in (100, 1000):
        curve = discrete_tradeoff(*_binned_laplace(b, sens, per_unit), a).beta
        assert np.all(curve >= exact - 1e-11)
        errors.append(np.max(curve - exact))
    assert errors[1] < 1e-6
    assert errors[0] / errors[1] > 50


def _krr_pmfs(eps, k):
    p = np.ones(k)
    p[0] = math.exp(eps)
    q = np.ones(k)
    q[1] = math.exp(eps)
    return p / p.sum(), q / q.sum()


@pytest.mark.parametrize("eps,k", [(0.5, 2), (1.0, 3), (2.0, 5), (0.1, 50), (5.0, 4)])
def test_krr_against_its_output_pmfs_and_its_lines(eps, k):
    curve = krr_tradeoff(eps, k, ALPHA)
    np.testing.assert_allclose(curve.beta, discrete_tradeoff(*_krr_pmfs(eps, k), ALPHA).beta,
                               atol=1e-14)
    z = math.exp(eps) + k - 1
    lines = np.maximum.reduce([1 - math.exp(eps) * ALPHA,
                               1 - (math.exp(eps) - 1) / z - ALPHA,
                               math.exp(-eps) * (1 - ALPHA)])
    np.testing.assert_allclose(curve.beta, lines, atol=1e-14)
    assert curve.exact and curve.knots is not None


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_binary_rr_is_the_pure_dp_bound(eps):
    rr = randomized_response_tradeoff(eps, ALPHA).beta
    np.testing.assert_allclose(rr, _eps_delta_closed(eps, 0.0, ALPHA), atol=1e-15)
    np.testing.assert_allclose(rr, epsilon_delta_tradeoff(eps, 0.0, ALPHA).beta, atol=1e-15)
    np.testing.assert_allclose(rr, krr_tradeoff(eps, 2, ALPHA).beta, atol=0)


@pytest.mark.parametrize("scale,sens", [(1.0, 1), (2.0, 3), (0.7, 5), (10.0, 2)])
def test_discrete_laplace_against_the_sampler_pmf(scale, sens):
    """Explicit pmfs from the sampling module on a window whose outside mass is below
    e^{−W/scale} ≈ 1e-17, against the construction on loss classes (no truncation)."""
    w = int(40 * scale) + 1
    k = np.arange(-w, w + sens + 1)
    p = discrete_laplace_pmf(k, scale)
    q = discrete_laplace_pmf(k - sens, scale)
    expected = discrete_tradeoff(p / p.sum(), q / q.sum(), ALPHA).beta
    np.testing.assert_allclose(discrete_laplace_tradeoff(scale, sens, ALPHA).beta, expected,
                               atol=1e-13)


@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0])
def test_discrete_laplace_with_unit_sensitivity_is_randomized_response(scale):
    np.testing.assert_allclose(discrete_laplace_tradeoff(scale, 1, ALPHA).beta,
                               randomized_response_tradeoff(1 / scale, ALPHA).beta, atol=1e-15)


def test_discrete_laplace_on_a_fine_grid_approaches_the_laplace_curve_from_below():
    """Scale bG and sensitivity ΔG on the integers is Laplace(Δ/b) seen on a grid 1/G fine:
    a little less private, and the gap shrinks like 1/G²."""
    exact = laplace_tradeoff(0.5, ALPHA).beta
    gaps = []
    for g in (10, 100):
        fine = discrete_laplace_tradeoff(2.0 * g, g, ALPHA).beta
        assert np.all(fine <= exact + 1e-15)
        gaps.append(np.max(exact - fine))
    assert gaps[1] < 5e-6 and gaps[0] / gaps[1] > 50


@pytest.mark.parametrize("eps,delta", [(0.0, 0.1), (1.0, 0.0), (1.0, 1e-3), (3.0, 0.2)])
def test_epsilon_delta_bound_and_its_knots(eps, delta):
    curve = epsilon_delta_tradeoff(eps, delta, ALPHA)
    np.testing.assert_allclose(curve.beta, _eps_delta_closed(eps, delta, ALPHA), atol=1e-15)
    np.testing.assert_allclose(np.interp(ALPHA, *curve.knots), curve.beta, atol=1e-15)
    corner = (1 - delta) / (1 + math.exp(eps))
    assert curve.at([corner])[0] == pytest.approx(corner, rel=1e-12)


# ------------------------------------------------------------ the generic construction


def test_discrete_tradeoff_handles_zero_probability_outputs():
    # Output 2 never occurs under D: rejecting on it is free (α = 0) and halves β.
    ka, kb = neyman_pearson_knots([0.5, 0.5, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_allclose(ka, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(kb, [0.5, 0.0, 0.0])
    # Identical distributions: no test beats guessing. Disjoint supports: f ≡ 0.
    same = discrete_tradeoff([0.2, 0.3, 0.5], [0.2, 0.3, 0.5], ALPHA).beta
    np.testing.assert_allclose(same, 1 - ALPHA, atol=1e-15)
    disjoint = discrete_tradeoff([0.4, 0.6, 0.0], [0.0, 0.0, 1.0], ALPHA).beta
    assert np.all(disjoint == 0.0)


def test_discrete_tradeoff_is_the_best_of_all_rejection_regions():
    """Brute force Neyman–Pearson: every deterministic test (rejection region S) lies on or
    above the curve, and every knot is reached by some S."""
    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(2, 8))
        p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        if trial % 4 == 0:  # zero-probability outputs
            p[rng.integers(n)] = 0.0
            q[rng.integers(n)] = 0.0
            if p.sum() == 0 or q.sum() == 0:
                continue
            p, q = p / p.sum(), q / q.sum()
        ka, kb = neyman_pearson_knots(p, q)
        curve = discrete_tradeoff(p, q, ALPHA)
        regions = [s for r in range(n + 1) for s in itertools.combinations(range(n), r)]
        alpha_s = np.clip([p[list(s)].sum() for s in regions], 0, 1)
        beta_s = np.clip([1 - q[list(s)].sum() for s in regions], 0, 1)
        assert np.all(beta_s >= curve.at(alpha_s) - 1e-12)
        for a, b in zip(ka, kb, strict=True):
            assert np.min(np.abs(alpha_s - a) + np.abs(beta_s - b)) < 1e-12
        # The order of the outputs does not matter.
        perm = rng.permutation(n)
        np.testing.assert_allclose(discrete_tradeoff(p[perm], q[perm], ALPHA).beta,
                                   curve.beta, atol=1e-14)


@pytest.mark.parametrize("p,q", [([0.5, 0.6], [0.5, 0.5]), ([-0.1, 1.1], [0.5, 0.5]),
                                 ([0.5, 0.5], [1.0]), ([np.nan, 1.0], [0.5, 0.5]),
                                 ([], [])])
def test_discrete_tradeoff_rejects_bad_pmfs(p, q):
    with pytest.raises(ParameterError):
        discrete_tradeoff(p, q)


# --------------------------------------------------------------------------- properties

# (name, α ↦ curve, Gaussian profile ε ↦ δ(ε) or None, pure ε or None)
def _gauss(mu):
    return (f"gaussian-{mu}", lambda a: gaussian_tradeoff(mu, a),
            lambda e: analytic_gaussian_delta(1.0, mu, e), None)


def _pure(name, make, eps):
    return (name, make, None, eps)


CURVES = [
    _gauss(0.5), _gauss(1.0), _gauss(4.0), _gauss(12.0),
    _pure("laplace-0.3", lambda a: laplace_tradeoff(0.3, a), 0.3),
    _pure("laplace-2", lambda a: laplace_tradeoff(2.0, a), 2.0),
    _pure("rr-1", lambda a: randomized_response_tradeoff(1.0, a), 1.0),
    _pure("krr-1.5-6", lambda a: krr_tradeoff(1.5, 6, a), 1.5),
    _pure("dlap-2-3", lambda a: discrete_laplace_tradeoff(2.0, 3, a), 1.5),
]


@pytest.mark.parametrize("name,make,profile,pure_eps", CURVES, ids=[c[0] for c in CURVES])
def test_trade_off_function_properties(name, make, profile, pure_eps):
    curve = make(ALPHA)
    f = curve.beta
    assert np.all(np.diff(f) <= 1e-15), "non-increasing"
    # Convex: each value at most the chord of its neighbours (an absolute tolerance in β;
    # slopes would amplify rounding on the tiny steps near α = 0).
    w = (ALPHA[2:] - ALPHA[1:-1]) / (ALPHA[2:] - ALPHA[:-2])
    assert np.all(f[1:-1] <= w * f[:-2] + (1 - w) * f[2:] + 1e-14), "convex"
    assert f[0] <= 1.0 and f[-1] == 0.0
    assert np.all(f <= 1 - ALPHA + 1e-15), "no test is worse than guessing"
    # Symmetric (f = f⁻¹): f is strictly decreasing here, so f(f(α)) = α.
    np.testing.assert_allclose(make(f).beta, ALPHA, atol=1e-9)
    # Above its own guarantee, below a stronger one somewhere (so this test can fail).
    if pure_eps is not None:
        assert np.all(f >= _eps_delta_closed(pure_eps, 0.0, ALPHA) - 1e-14)
        assert np.min(f - _eps_delta_closed(0.9 * pure_eps, 0.0, ALPHA)) < -1e-3
    else:
        mu = float(name.split("-")[1])
        for eps in (0.25, 1.0, 3.0):
            delta = profile(eps)
            # The bound's steep line touches G_μ where G_μ′ = −e^ε: α = Φ(−ε/μ − μ/2).
            a = np.append(ALPHA, norm.cdf(-eps / mu - mu / 2))
            f = make(a).beta
            assert np.all(f >= _eps_delta_closed(eps, delta, a) - 1e-14)
            assert np.min(f - _eps_delta_closed(eps, 0.9 * delta, a)) < -0.05 * delta
            assert np.min(f - _eps_delta_closed(0.9 * eps, delta, a)) < 0


def test_exact_evaluation_between_grid_points():
    coarse = gaussian_tradeoff(1.0, alpha_grid(5))
    x = np.linspace(0, 1, 77)
    np.testing.assert_allclose(coarse.at(x), gaussian_tradeoff(1.0, x).beta, atol=0)
    rr = krr_tradeoff(1.0, 3, alpha_grid(3))
    np.testing.assert_allclose(rr.at(x), krr_tradeoff(1.0, 3, x).beta, atol=1e-15)


def test_alpha_grid():
    g = alpha_grid(200)
    assert g.size == 200 and g[0] == 0.0 and g[-1] == 1.0
    assert np.all(np.diff(g) > 0)
    assert np.sum(g < 0.125) >= 99  # denser near 0
    with pytest.raises(ParameterError):
        alpha_grid(1)


@pytest.mark.parametrize("call", [
    lambda: gaussian_tradeoff(-1.0),
    lambda: gaussian_tradeoff(float("nan")),
    lambda: laplace_tradeoff(0.0),
    lambda: krr_tradeoff(1.0, 1),
    lambda: krr_tradeoff(1.0, 2.5),
    lambda: discrete_laplace_tradeoff(1.0, 1.5),
    lambda: discrete_laplace_tradeoff(0.0, 1),
    lambda: epsilon_delta_tradeoff(1.0, 1.0),
    lambda: gaussian_tradeoff(1.0, [0.5, 1.5]),
])
def test_bad_parameters_raise_parameter_error(call):
    with pytest.raises(ParameterError):
        call()
