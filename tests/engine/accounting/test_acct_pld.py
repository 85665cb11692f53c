"""Privacy-loss distributions against closed forms and independent integrations.

Every PLD value must be an upper bound (≥ the exact value) and close to it.
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from dpstudio.engine.accounting.pld import MAX_COMPOSED_GRID, PLD
from dpstudio.engine.calibration import analytic_gaussian_delta
from dpstudio.engine.errors import ParameterError

EPS = [0.0, 0.25, 0.5, 1.0, 2.0, 3.0]


def _assert_upper_bound(ours, exact, rel=0.01, floor=1e-13, noise=0.0):
    """ours ≥ exact, and within ``rel`` of it (absolute ``floor`` where exact is ~0).

    ``noise`` is the rounding error of a reference computed in floats (e.g. Σ(p − e^ε q)₊
    is 1e-16 instead of 0 where the two terms cancel); closed forms use 0.
    """
    ours, exact = np.asarray(ours, float), np.asarray(exact, float)
    assert np.all(ours >= exact - noise), (ours, exact)
    assert np.all(ours <= exact * (1 + rel) + floor), (ours, exact)


# ------------------------------------------------------------------ Gaussian, composed


@pytest.mark.parametrize("sigma,sens,k", [(1.0, 1.0, 1), (0.5, 2.0, 1), (3.0, 1.0, 10),
                                          (1.5, 1.0, 10), (10.0, 1.0, 100),
                                          (6.0, 2.0, 100)])
def test_composed_gaussian_is_the_gaussian_with_sigma_over_root_k(sigma, sens, k):
    pld = PLD.gaussian(sigma, sens).self_compose(k)
    exact = [analytic_gaussian_delta(sigma / math.sqrt(k), sens, e) for e in EPS]
    _assert_upper_bound(pld.delta(np.array(EPS)), exact)
    # ε(δ) is the inverse on the private side: δ(ε̂) ≤ δ and ε̂ is not far above exact.
    for target in (1e-3, 1e-6):
        eps_hat = pld.epsilon(target)
        assert analytic_gaussian_delta(sigma / math.sqrt(k), sens, eps_hat) <= target
        assert analytic_gaussian_delta(sigma / math.sqrt(k), sens, eps_hat * 0.99) > target


def test_connect_dots_is_tighter_than_round_up_and_both_are_pessimistic():
    exact = np.array([analytic_gaussian_delta(2.0, 1.0, e) for e in EPS])
    ctd = PLD.gaussian(2.0).delta(np.array(EPS))
    rup = PLD.gaussian(2.0, discretization="round-up").delta(np.array(EPS))
    assert np.all(rup >= ctd) and np.all(ctd >= exact)
    _assert_upper_bound(ctd, exact, rel=1e-9)
    _assert_upper_bound(rup, exact, rel=1e-2)
    # Composition keeps the order, with round-up drifting up ~k·h/2 in loss.
    k = 50
    exact_k = np.array([analytic_gaussian_delta(2.0 / math.sqrt(k), 1.0, e) for e in EPS])
    ctd_k = PLD.gaussian(2.0).self_compose(k).delta(np.array(EPS))
    rup_k = PLD.gaussian(2.0, discretization="round-up").self_compose(k).delta(np.array(EPS))
    assert np.all(rup_k >= ctd_k) and np.all(ctd_k >= exact_k)


def test_self_compose_agrees_with_repeated_compose_and_mixed_grids():
    base = PLD.gaussian(2.0)
    repeated = base.compose(base).compose(base).compose(base)
    powered = base.self_compose(4)
    eps = np.linspace(-1, 3, 9)
    np.testing.assert_allclose(powered.delta(eps), repeated.delta(eps), rtol=1e-7)
    # A coarser grid on one side: composed on the coarser grid, still an upper bound.
    coarse = PLD.gaussian(2.0, value_discretization_interval=1e-3)
    mixed = base.compose(coarse)
    assert mixed.value_discretization_interval == 1e-3
    exact = [analytic_gaussian_delta(2.0 / math.sqrt(2), 1.0, e) for e in EPS]
    _assert_upper_bound(mixed.delta(np.array(EPS)), exact, rel=1e-3)


def test_delta_is_vectorized_and_shaped_like_its_input():
    pld = PLD.gaussian(1.0).self_compose(3)
    eps = np.array([[-1.0, 0.0], [1.0, 2.0]])
    out = pld.delta(eps)
    assert out.shape == (2, 2)
    assert [pld.delta(float(e)) for e in eps.ravel()] == list(out.ravel())
    assert isinstance(pld.delta(1.0), float)
    assert np.all(np.diff(pld.delta(np.linspace(-5, 10, 200))) <= 0)  # nonincreasing
    assert pld.delta(-np.inf) == 1.0
    assert pld.delta(np.inf) == pytest.approx(pld.infinity_mass)


def test_self_compose_output_is_bounded_whatever_k():
    for k in (10**3, 10**6):
        losses, probs, inf_mass = PLD.gaussian(50.0).self_compose(k).pmf()
        assert probs.size <= MAX_COMPOSED_GRID
        assert inf_mass < 1e-10  # truncation bounds, 1e-15 a time
    # k = 10⁶ runs of σ = 50 are exactly one Gaussian with σ = 0.05.
    big = PLD.gaussian(50.0).self_compose(10**6)
    for e in (100.0, 200.0):
        _assert_upper_bound(big.delta(e), analytic_gaussian_delta(0.05, 1.0, e), rel=0.01)


# ------------------------------------------------------------------ Laplace


def _laplace_delta_closed_form(eps, a):
    """δ(ε) of Lap(b) with Δ/b = a: 1 − e^{(ε−a)/2} on [−a, a), 0 above, 1 − e^ε below."""
    if eps >= a:
        return 0.0
    if eps >= -a:
        return -math.expm1((eps - a) / 2)
    return -math.expm1(eps)


def _laplace_delta_by_integration(eps, b, sens):
    """∫ max(0, p(x) − e^ε q(x)) dx with p = Lap(0, b), q = Lap(Δ, b), piece by piece."""
    def gap(x):
        p = math.exp(-abs(x) / b) / (2 * b)
        q = math.exp(-abs(x - sens) / b) / (2 * b)
        return max(0.0, p - math.exp(eps) * q)

    pieces = [(-np.inf, 0.0), (0.0, sens), (sens, np.inf)]
    return sum(quad(gap, lo, hi, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
               for lo, hi in pieces)


@pytest.mark.parametrize("b,sens", [(1.0, 1.0), (2.0, 1.0), (0.5, 2.0)])
def test_laplace_single_shot_matches_its_closed_form(b, sens):
    a = sens / b
    eps = np.linspace(-1.5 * a, 1.5 * a, 31)
    closed = np.array([_laplace_delta_closed_form(e, a) for e in eps])
    # The closed form is itself checked by direct integration.
    for e in eps[::5]:
        assert _laplace_delta_by_integration(e, b, sens) == pytest.approx(
            _laplace_delta_closed_form(e, a), abs=1e-10)
    _assert_upper_bound(PLD.laplace(b, sens).delta(eps), closed, rel=1e-6)
    assert PLD.laplace(b, sens).epsilon(0.0) == pytest.approx(a, abs=2e-4)


def test_composed_laplace_is_below_pure_dp_composition():
    pld = PLD.laplace(2.0).self_compose(8)
    assert pld.epsilon(0.0) >= 4.0  # pure ε composes to 8 × 1/2, exactly attained
    assert pld.epsilon(0.0) <= 4.0 + 8 * 1e-4
    assert pld.epsilon(1e-6) < 4.0


# ------------------------------------------------------------------ finite PLDs


def _hockey_stick(p, q, eps):
    """δ(ε) = Σ max(0, p − e^ε q) over a finite output set."""
    p, q = np.asarray(p), np.asarray(q)
    return np.array([np.maximum(p - math.exp(e) * q, 0).sum() for e in np.atleast_1d(eps)])


@pytest.mark.parametrize("eps0,k", [(1.0, 2), (0.7, 5), (3.0, 10)])
def test_randomized_response_matches_its_exact_curve(eps0, k):
    den = math.exp(eps0) + k - 1
    p = np.array([math.exp(eps0), 1.0] + [1.0] * (k - 2)) / den  # true value a
    q = np.array([1.0, math.exp(eps0)] + [1.0] * (k - 2)) / den  # true value b
    eps = np.linspace(-4, 4, 41)
    exact = _hockey_stick(p, q, eps)
    rr = PLD.randomized_response(eps0, k)
    _assert_upper_bound(rr.delta(eps), exact, rel=1e-3, noise=1e-15)
    # Off-grid ε₀ is split between neighbouring grid points: exact again on the grid.
    grid_eps = np.round(eps / 1e-4) * 1e-4
    _assert_upper_bound(rr.delta(grid_eps), _hockey_stick(p, q, grid_eps), rel=1e-9,
                        noise=1e-15)
    assert rr.epsilon(0.0) == pytest.approx(eps0, abs=1e-4)


def test_from_distributions_accounts_both_directions_and_infinite_loss():
    p = np.array([0.5, 0.3, 0.2, 0.0])
    q = np.array([0.2, 0.3, 0.4, 0.1])
    eps = np.linspace(-2, 2, 21)
    both = PLD.from_distributions(p, q)
    one = PLD.from_distributions(p, q, both_directions=False)
    forward, backward = _hockey_stick(p, q, eps), _hockey_stick(q, p, eps)
    _assert_upper_bound(one.delta(eps), forward, rel=1e-3, noise=1e-15)
    _assert_upper_bound(both.delta(eps, direction="add"), backward, rel=1e-3, noise=1e-15)
    _assert_upper_bound(both.delta(eps), np.maximum(forward, backward), rel=1e-3,
                        noise=1e-15)
    # Output 3 has q > 0 = p: infinite loss in the add direction, δ ≥ 0.1 at every ε.
    assert both.infinity_mass == pytest.approx(0.1)
    assert both.epsilon(0.05) == math.inf
    assert one.epsilon(0.05) < math.inf


def test_discrete_laplace_matches_a_direct_sum_over_outputs():
    t, sens = 1.5, 3
    x = np.arange(-200, 201)
    p = np.exp(-np.abs(x) / t)
    q = np.exp(-np.abs(x - sens) / t)
    p, q = p / p.sum(), q / q.sum()
    eps = np.linspace(-2.5, 2.5, 26)
    _assert_upper_bound(PLD.discrete_laplace(t, sens).delta(eps), _hockey_stick(p, q, eps),
                        rel=1e-3, noise=1e-15)


def test_epsilon_delta_pld_is_the_worst_pair():
    pld = PLD.from_epsilon_delta(1.0, 1e-3)
    assert pld.delta(1.0) == pytest.approx(1e-3, rel=1e-9)
    assert pld.delta(1.0) >= 1e-3
    assert pld.epsilon(1e-3) == pytest.approx(1.0, abs=1e-9)
    assert pld.delta(0.0) == pytest.approx(1e-3 + (1 - 1e-3) * math.tanh(0.5), rel=1e-9)


# ------------------------------------------------------------------ subsampled Gaussian


def _subsampled_delta(sigma, q, eps, direction):
    """∫ max(0, P(x) − e^ε Q(x)) dx, mixture M = (1−q)N(0,σ²) + qN(1,σ²) vs N(0,σ²)."""
    def mix(x):
        return (1 - q) * norm.pdf(x, 0, sigma) + q * norm.pdf(x, 1, sigma)

    def base(x):
        return norm.pdf(x, 0, sigma)

    p, r = (mix, base) if direction == "remove" else (base, mix)
    span = 14 * sigma
    return quad(lambda x: max(0.0, p(x) - math.exp(eps) * r(x)), -span, 1 + span,
                epsabs=1e-15, epsrel=1e-11, limit=400, points=[0.0, 0.5, 1.0])[0]


@pytest.mark.parametrize("sigma,q", [(1.0, 0.05), (0.7, 0.2), (2.0, 0.5)])
def test_subsampled_gaussian_directions_match_direct_integration(sigma, q):
    pld = PLD.subsampled_gaussian(sigma, q)
    for direction in ("remove", "add"):
        for eps in (-0.05, 0.0, 0.1, 0.3, 0.8):
            exact = _subsampled_delta(sigma, q, eps, direction)
            _assert_upper_bound(pld.delta(eps, direction=direction), exact, rel=1e-6,
                                floor=1e-12)
    # The two directions differ; the reported δ is their max.
    eps = np.linspace(0, 1, 11)
    assert not np.allclose(pld.delta(eps, "remove"), pld.delta(eps, "add"))
    np.testing.assert_array_equal(pld.delta(eps), np.maximum(pld.delta(eps, "remove"),
                                                              pld.delta(eps, "add")))


def test_subsampled_gaussian_at_rate_one_is_the_gaussian():
    a, b = PLD.subsampled_gaussian(1.3, 1.0), PLD.gaussian(1.3)
    assert a.symmetric
    np.testing.assert_array_equal(a.delta(np.array(EPS)), b.delta(np.array(EPS)))


def test_degenerate_plds():
    nothing = PLD.from_epsilon_delta(0.0, 0.0).self_compose(10)  # no privacy loss at all
    assert nothing.delta(0.0) == 0.0 and nothing.epsilon(0.0) == 0.0
    disjoint = PLD.from_distributions([0.0, 1.0], [1.0, 0.0])  # outputs reveal everything
    assert disjoint.delta(5.0) == 1.0 and disjoint.epsilon(0.5) == math.inf
    assert PLD.from_epsilon_delta(1.0, 0.0).epsilon(0.0) == 1.0
    # A near-point mass composed many times keeps working (wide, coarsened grid).
    skewed = PLD.from_distributions([1 - 1e-14, 1e-14], [0.5, 0.5]).self_compose(1000)
    assert math.isfinite(skewed.epsilon(1e-6))


# ------------------------------------------------------------------ bad parameters


@pytest.mark.parametrize("build", [
    lambda: PLD.gaussian(0.0),
    lambda: PLD.gaussian(-1.0),
    lambda: PLD.gaussian(float("nan")),
    lambda: PLD.gaussian(1.0, sensitivity=0),
    lambda: PLD.gaussian(1.0, value_discretization_interval=0),
    lambda: PLD.gaussian(1.0, discretization="nearest"),
    lambda: PLD.gaussian(1.0, tail_mass_truncation=0.5),
    lambda: PLD.laplace(0.0),
    lambda: PLD.discrete_laplace(1.0, sensitivity=1.5),
    lambda: PLD.randomized_response(1.0, k=1),
    lambda: PLD.randomized_response(-1.0),
    lambda: PLD.from_distributions([0.5, 0.5], [1.0]),
    lambda: PLD.from_distributions([0.5, 0.6], [0.5, 0.5]),
    lambda: PLD.from_distributions([1.5, -0.5], [0.5, 0.5]),
    lambda: PLD.from_epsilon_delta(-1.0, 0.0),
    lambda: PLD.from_epsilon_delta(1.0, 1.0),
    lambda: PLD.subsampled_gaussian(1.0, 0.0),
    lambda: PLD.subsampled_gaussian(1.0, 1.5),
    lambda: PLD.subsampled_gaussian(1.0, 0.1, relation="replace-one"),
    lambda: PLD.gaussian(1.0).self_compose(0),
    lambda: PLD.gaussian(1.0).self_compose(2.5),
    lambda: PLD.gaussian(1.0).self_compose(True),
    lambda: PLD.gaussian(1.0).compose(3),
    lambda: PLD.gaussian(1.0).epsilon(1.0),
    lambda: PLD.gaussian(1.0).epsilon(-0.1),
    lambda: PLD.gaussian(1.0).delta(float("nan")),
    lambda: PLD.gaussian(1.0).delta(0.0, direction="up"),
])
def test_bad_parameters_raise_one_line_errors(build):
    with pytest.raises(ParameterError) as err:
        build()
    assert "\n" not in str(err.value) and str(err.value)
