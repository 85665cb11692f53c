"""Amplification by shuffling: FMT21's numerical bound is exact where it claims to be,
valid (never below a real mechanism's ε), monotone, below the 2019 closed form, and its
inverse round-trips."""

import math

import numpy as np
import pytest
from scipy import stats

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.shuffle.amplification import (
    amplify,
    fmt21_delta,
    largest_local_epsilon,
    shuffle_epsilon,
)


def _fmt21_delta_brute(eps, eps0, n):
    """FMT21's reduction summed term by term: both directions, every clone count."""
    alpha = math.exp(eps0) / (1 + math.exp(eps0))
    total = 0.0
    for c in range(n):
        pc = stats.binom.pmf(c, n - 1, math.exp(-eps0))
        b = stats.binom.pmf(np.arange(c + 1), c, 0.5)
        p, q = np.zeros(c + 2), np.zeros(c + 2)
        p[: c + 1] += alpha * b
        p[1:] += (1 - alpha) * b
        q[: c + 1] += (1 - alpha) * b
        q[1:] += alpha * b
        d1 = np.maximum(p - math.exp(eps) * q, 0).sum()
        d2 = np.maximum(q - math.exp(eps) * p, 0).sum()
        total += pc * max(d1, d2)
    return total


@pytest.mark.parametrize("eps,eps0,n", [(0.3, 1.0, 50), (0.1, 2.0, 200), (1.0, 3.0, 30),
                                        (0.5, 0.6, 2), (0.01, 0.02, 3)])
def test_fmt21_delta_is_the_full_sum_plus_a_tiny_allowance(eps, eps0, n):
    brute = _fmt21_delta_brute(eps, eps0, n)
    fast = fmt21_delta(eps, eps0, n)
    assert brute <= fast <= brute + 2e-14


def _shuffled_rr_epsilon(eps0, n, delta):
    """Exact ε of shuffled binary randomized response on one pair of neighbours (all other
    users hold 0; the differing user holds 0 or 1): a lower bound on the true ε of any
    analysis of shuffled ε₀-LDP reports."""
    r = 1.0 / (1.0 + math.exp(eps0))
    others = stats.binom.pmf(np.arange(n), n - 1, r)
    p = np.zeros(n + 1)
    q = np.zeros(n + 1)
    p[:n] += (1 - r) * others
    p[1:] += r * others
    q[:n] += r * others
    q[1:] += (1 - r) * others

    def delta_of(e):
        return max(np.maximum(p - math.exp(e) * q, 0).sum(),
                   np.maximum(q - math.exp(e) * p, 0).sum())

    lo, hi = 0.0, eps0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if delta_of(mid) <= delta else (mid, hi)
    return lo


@pytest.mark.parametrize("eps0,n", [(0.5, 1000), (2.0, 1000), (4.0, 5000), (1.0, 20)])
def test_fmt21_is_valid_never_below_a_real_mechanism(eps0, n):
    eps, _ = shuffle_epsilon(eps0, n, 1e-6)
    assert eps >= _shuffled_rr_epsilon(eps0, n, 1e-6)


def test_fmt21_returns_the_pessimistic_end_of_its_bisection():
    eps, delta = shuffle_epsilon(2.0, 10_000, 1e-6)
    assert fmt21_delta(eps, 2.0, 10_000, delta) <= delta
    assert fmt21_delta(eps * (1 - 1e-7), 2.0, 10_000, delta) > delta


@pytest.mark.parametrize("eps0", [0.1, 0.25, 0.49])
@pytest.mark.parametrize("n", [1000, 10_000, 100_000])
@pytest.mark.parametrize("delta", [1e-6, 1e-9])
def test_fmt21_below_ebh19_where_both_apply(eps0, n, delta):
    fmt = shuffle_epsilon(eps0, n, delta, "fmt21")[0]
    ebh = shuffle_epsilon(eps0, n, delta, "ebh19")[0]
    assert fmt <= ebh
    assert ebh == pytest.approx(12 * eps0 * math.sqrt(math.log(1 / delta) / n), rel=1e-12)


def test_monotone_in_n_and_in_epsilon0():
    ns = [2, 10, 100, 1000, 10_000, 100_000]
    by_n = [shuffle_epsilon(1.0, n, 1e-6)[0] for n in ns]
    assert all(a >= b for a, b in zip(by_n, by_n[1:], strict=False))
    assert by_n[-1] < 0.05 < by_n[0]
    eps0s = [0.05, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0]
    by_eps0 = [shuffle_epsilon(e, 10_000, 1e-6)[0] for e in eps0s]
    assert all(a < b for a, b in zip(by_eps0, by_eps0[1:], strict=False))
    assert all(e <= e0 for e, e0 in zip(by_eps0, eps0s, strict=True))


def test_small_n_or_large_epsilon0_leaves_epsilon_near_epsilon0():
    # Two users: the other user's report is a clone with probability e^{-ε₀} only.
    for eps0 in (0.3, 1.0, 3.0):
        eps = shuffle_epsilon(eps0, 2, 1e-6)[0]
        assert 0.99 * eps0 < eps <= eps0
    # ε₀ above ln n: almost no amplification is left.
    assert shuffle_epsilon(10.0, 1000, 1e-6)[0] > 9.0
    # Large δ can be met with ε = 0 outright: nothing to bisect.
    assert shuffle_epsilon(0.01, 100_000, 0.5)[0] == 0.0


@pytest.mark.parametrize("bound", ["fmt21", "ebh19"])
@pytest.mark.parametrize("target", [0.05, 0.3])
def test_inverse_round_trip(bound, target):
    n, delta = 50_000, 1e-7
    eps0 = largest_local_epsilon(target, n, delta, bound)
    eps = shuffle_epsilon(eps0, n, delta, bound)[0]
    assert eps <= target
    if eps0 < 0.4999:  # ebh19 caps ε₀ below 1/2 (its validity), short of the target
        assert eps == pytest.approx(target, rel=1e-6)
    if bound == "fmt21":
        assert shuffle_epsilon(eps0 * (1 + 1e-6), n, delta, bound)[0] > target * (1 - 1e-6)


def test_inverse_of_ebh19_stops_at_its_validity_limit():
    eps0 = largest_local_epsilon(5.0, 10_000, 1e-6, "ebh19")
    assert eps0 < 0.5 and eps0 == pytest.approx(0.5)


def test_inverse_fmt21_large_target():
    eps0 = largest_local_epsilon(1.0, 10_000, 1e-6)
    assert eps0 > 4.0
    assert shuffle_epsilon(eps0, 10_000, 1e-6)[0] <= 1.0


@pytest.mark.parametrize("args,match", [
    ((0.0, 100, 1e-6), "ε₀"), ((-1.0, 100, 1e-6), "ε₀"), ((math.nan, 100, 1e-6), "ε₀"),
    ((1.0, 1, 1e-6), "n = 2"), ((1.0, 2.5, 1e-6), "whole number"),
    ((1.0, 100, 0.0), "δ"), ((1.0, 100, 1.0), "δ"), ((1.0, 100, 1e-13), "1e-12"),
])
def test_bad_arguments(args, match):
    with pytest.raises(ParameterError, match=match) as err:
        shuffle_epsilon(*args)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("args,why", [
    ((0.5, 10_000, 1e-6), "ε₀ < 1/2"), ((0.3, 999, 1e-6), "n ≥ 1000"),
    ((0.3, 10_000, 0.02), "δ < 1/100"),
])
def test_ebh19_outside_its_validity_says_why(args, why):
    with pytest.raises(ParameterError, match=why):
        shuffle_epsilon(*args, bound="ebh19")


def test_unknown_bound_and_result_object():
    with pytest.raises(ParameterError, match="fmt21, ebh19"):
        shuffle_epsilon(1.0, 100, 1e-6, bound="magic")
    r = amplify(1.0, 1000, 1e-6)
    assert r.to_dict() == {"epsilon": r.epsilon, "delta": 1e-6, "epsilon0": 1.0, "n": 1000,
                           "bound": "fmt21"}
