"""Distribution tests of the exact samplers, their exact fallbacks and analytic helpers.

Every goodness-of-fit test is a chi-square test against the exact pmf with a fixed seed,
and is paired with a power check: the same samples must be rejected (p < 1e-6) against
the pmf at 1.3x and 0.7x the scale, so a test that cannot fail does not pass silently.
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import special, stats

from dpstudio.engine import _exact, sampling
from dpstudio.engine.rng import SecureSource, SimulationSource

ACCEPT_P = 1e-6  # accept a sampler when p > ACCEPT_P ...
REJECT_P = 1e-6  # ... and require p < REJECT_P against a wrong scale
N = 200_000


# --------------------------------------------------------------------------------------
# Reference distributions, computed independently of the module under test
# --------------------------------------------------------------------------------------


def laplace_cdf(scale: float):
    """``P(Z <= k)`` in closed form: ``q^|k| / (1 + q)`` below 0, ``1 - q^(k+1)/(1+q)``."""
    q = math.exp(-1.0 / scale)

    def cdf(k):
        k = np.asarray(k, dtype=np.float64)
        return np.where(k < 0, np.exp(-np.abs(k) / scale) / (1 + q),
                        1 - np.exp(-(k + 1) / scale) / (1 + q))

    return cdf


def gauss_weights(sigma: float, lo: int, hi: int) -> np.ndarray:
    """Normalised ``exp(-k^2/(2 sigma^2))`` for ``k = lo..hi`` (normaliser summed directly;
    the mass beyond 13 sigma is below 1e-37)."""
    big = math.ceil(13 * sigma) + 10
    ks = np.arange(-big, big + 1, dtype=np.float64)
    total = np.sum(np.exp(-(ks**2) / (2 * sigma**2)))
    k = np.arange(lo, hi + 1, dtype=np.float64)
    return np.exp(-(k**2) / (2 * sigma**2)) / total


def gauss_cdf(sigma: float):
    """``P(Z <= k)`` by direct summation over ``|k| <= 12 sigma + 10``."""
    J = math.ceil(12 * sigma) + 10
    F = np.cumsum(gauss_weights(sigma, -J, J))

    def cdf(k):
        return F[np.clip(np.asarray(k) + J, -1, 2 * J)] * (np.asarray(k) >= -J)

    return cdf


def gauss_cdf_em(sigma: float):
    """``P(Z <= k)`` for large sigma by Euler-Maclaurin: ``sum_{j<=k} f(j) = int_{-inf}^k f
    + f(k)/2 + f'(k)/12 + O(sigma^-3)`` with ``f(x) = exp(-x^2/(2 sigma^2))`` and the
    normaliser ``sigma sqrt(2 pi)`` (exact to ~1e-800); error ~sigma^-4 (1e-24 at 1e6)."""

    def cdf(k):
        z = np.asarray(k, dtype=np.float64) / sigma
        phi = np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
        return special.ndtr(z) + phi / (2 * sigma) - z * phi / (12 * sigma**2)

    return cdf


def gauss_cdf_any(sigma: float):
    """Direct summation up to sigma 1e5, Euler-Maclaurin above (too many terms to sum)."""
    return gauss_cdf(sigma) if sigma <= 1e5 else gauss_cdf_em(sigma)


def quantile_edges(cdf, lo: int, hi: int, bins: int = 60) -> np.ndarray:
    """Integer bin edges at equal-probability quantiles of ``cdf`` on ``[lo, hi]``: one
    past the smallest ``k`` with ``cdf(k) >= i / bins`` (``hi`` if none), by bisection."""
    targets = np.arange(1, bins) / bins
    a = np.full(targets.size, lo, dtype=np.int64)
    b = np.full(targets.size, hi, dtype=np.int64)
    while np.any(a < b):
        mid = (a + b) // 2
        ge = cdf(mid) >= targets
        b, a = np.where(ge, mid, b), np.where(ge, a, mid + 1)
    return np.unique(a + 1)


def chi2_p(samples: np.ndarray, cdf, edges: np.ndarray) -> float:
    """Chi-square p-value of ``samples`` binned at ``edges`` (end bins open) against ``cdf``."""
    counts = np.bincount(np.searchsorted(edges, samples, side="right"), minlength=edges.size + 1)
    probs = np.diff(np.concatenate([[0.0], cdf(edges - 1), [1.0]]))
    expected = np.maximum(probs * samples.size, 1e-300)
    stat = float(np.sum((counts - expected) ** 2 / expected))
    return float(stats.chi2.sf(stat, counts.size - 1))


def check_fit(samples: np.ndarray, cdf_of_scale, scale: float, span: float,
              power: bool = True) -> None:
    """Accept against the true scale; with ``power``, reject 1.3x and 0.7x the scale."""
    lo, hi = -math.ceil(span * scale) - 2, math.ceil(span * scale) + 2
    edges = quantile_edges(cdf_of_scale(scale), lo, hi)
    p = chi2_p(samples, cdf_of_scale(scale), edges)
    assert p > ACCEPT_P, f"rejected the true distribution at scale {scale}: p = {p:.3g}"
    if power:
        for factor in (1.3, 0.7):
            p_wrong = chi2_p(samples, cdf_of_scale(factor * scale), edges)
            assert p_wrong < REJECT_P, f"no power against {factor}x scale: p = {p_wrong:.3g}"


@functools.cache
def draws(kind: str, scale: float, seed: int) -> np.ndarray:
    """Samples shared by the distribution and variance tests (drawn once)."""
    source = SimulationSource(seed)
    if kind == "laplace":
        out = sampling.discrete_laplace(scale, N, source)
    else:
        out = sampling.discrete_gaussian(scale, N, source)
    out.flags.writeable = False
    return out


def z_score(successes: int, n: int, p: float) -> float:
    return (successes - n * p) / math.sqrt(max(n * p * (1 - p), 1e-300))


# --------------------------------------------------------------------------------------
# Discrete Laplace and discrete Gaussian
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.5, 2.0, 300.0, 1e5])
def test_discrete_laplace_distribution(scale):
    x = draws("laplace", scale, 11)
    assert x.dtype == np.int64 and x.shape == (N,)
    check_fit(x, laplace_cdf, scale, span=15)


@pytest.mark.parametrize("sigma", [0.5, 2.0, 300.0, 1e5])
def test_discrete_gaussian_distribution(sigma):
    x = draws("gauss", sigma, 12)
    assert x.dtype == np.int64 and x.shape == (N,)
    check_fit(x, gauss_cdf, sigma, span=8)


@pytest.mark.parametrize("scale", [0.5, 3.0, 300.0])
def test_log_based_laplace_path(scale):
    # Used publicly above scale 512 and inside CKS; here at small scales too.
    x = sampling._laplace(scale, N, SimulationSource(13))
    check_fit(x, laplace_cdf, scale, span=15)


@pytest.mark.parametrize("sigma", [3000.0, 2**15 + 123.4, 1e6])
def test_block_gaussian_distribution(sigma):
    # Block proposals + exact rejection: sigma > 2048, including the release range
    # [2**15, 2**16) grid steps and a large scale.
    x = sampling.discrete_gaussian(sigma, N, SimulationSource(14))
    check_fit(x, gauss_cdf_any, sigma, span=8)


def test_block_gaussian_narrow_blocks():
    # The smallest block width, B = 2 (sigma / B in [512, 1024)), below the public range.
    assert sampling._block_params(1500.0) == (1, 750.0)
    x = sampling._gaussian_blocks(1500.0, N, SimulationSource(16))
    check_fit(x, gauss_cdf, 1500.0, span=8)


def tilted_cdf(j: int, sigma_table: float, sigma: float):
    """CDF of the block sampler with an acceptance sigma that does not match its table:
    ``P(k) ∝ exp(-Y^2 / (2 sigma_table^2) - R (2 B Y + R) / (2 sigma^2))``, ``|k| = B Y + R``."""
    B = 2**j
    m = np.arange(B * math.ceil(12 * sigma_table + 10), dtype=np.float64)
    y, r = np.floor(m / B), m % B
    w = np.exp(-(y**2) / (2 * sigma_table**2) - r * (2 * B * y + r) / (2 * sigma**2))
    pmf = np.concatenate([w[:0:-1], w])  # k = -M .. M
    F = np.cumsum(pmf / pmf.sum())
    M = m.size - 1

    def cdf(k):
        k = np.asarray(k)
        return np.where(k < -M, 0.0, F[np.clip(k + M, 0, F.size - 1)])

    return cdf


@pytest.mark.parametrize("forced", [False, True])
def test_block_acceptance_step(monkeypatch, forced):
    # A table for sigma 64 * 40 with the acceptance step of sigma 300: most proposals are
    # rejected, so the law depends on the acceptance step (checked with power against
    # 1.3x and 0.7x its sigma). Forced: a huge slack and margin send most draws down the
    # edge path and many on to the exact fallback.
    n = N // 4
    if forced:
        monkeypatch.setattr(sampling, "_BLOCK_SLACK", 2.0**31)
        monkeypatch.setattr(sampling, "_REL_MARGIN", 0.25)
        n = 12_000
    calls = counting(monkeypatch, "bernoulli_exp_exact")
    plan = sampling._block_plan(6, 40.0, 300.0)
    x = sampling._sample_blocks(plan, n, SimulationSource(17))
    if forced:
        assert calls[0] > n // 4
    edges = quantile_edges(tilted_cdf(6, 40.0, 300.0), -64 * 500, 64 * 500)
    assert chi2_p(x, tilted_cdf(6, 40.0, 300.0), edges) > ACCEPT_P
    for factor in (1.3, 0.7):
        assert chi2_p(x, tilted_cdf(6, 40.0, factor * 300.0), edges) < REJECT_P


@pytest.mark.parametrize("sigma, a", [(2.0, 1), (3.0, 5), (0.6, 2)])
def test_gaussian_tail_sampler(sigma, a):
    # The table hands |Z| >= K+1 (probability ~2**-40) to this sampler; test it directly.
    x = sampling._gauss_tail(sigma, a, 50_000, SimulationSource(15))
    assert x.min() >= a
    top = a + math.ceil(8 * sigma) + 5
    w = gauss_weights(sigma, a, top)
    F = np.cumsum(w / w.sum())

    def cdf(k):
        k = np.asarray(k)
        return np.where(k < a, 0.0, F[np.clip(k - a, 0, F.size - 1)])

    edges = np.arange(a + 1, a + 1 + max(2, int(np.searchsorted(F, 1 - 1e-3))))
    assert chi2_p(x, cdf, edges) > ACCEPT_P


@pytest.mark.parametrize("kind, scale", [("laplace", 40000.0), ("gauss", 40000.0),
                                         ("laplace", 383.5), ("gauss", 383.5)])
def test_secure_source(kind, scale):
    # The production path: OS CSPRNG, at a release scale (releases use 2**15 <= scale <
    # 2**16 grid steps) and inside the table ranges (discrete_* mechanisms use any scale).
    source = SecureSource()
    if kind == "laplace":
        x, cdf = sampling.discrete_laplace(scale, N, source), laplace_cdf
    else:
        x, cdf = sampling.discrete_gaussian(scale, N, source), gauss_cdf
    check_fit(x, cdf, scale, span=15 if kind == "laplace" else 8, power=False)


def test_seeded_draws_are_reproducible():
    for f in (sampling.discrete_laplace, sampling.discrete_gaussian):
        for scale in (2.0, 300.0, 3e4):
            a = f(scale, 1000, SimulationSource(5))
            b = f(scale, 1000, SimulationSource(5))
            np.testing.assert_array_equal(a, b)
    assert sampling.discrete_gaussian(3.0, 0, SimulationSource(0)).shape == (0,)
    assert sampling.discrete_laplace(3e4, 0, SimulationSource(0)).dtype == np.int64


# --------------------------------------------------------------------------------------
# Exact fallbacks, forced
# --------------------------------------------------------------------------------------


def counting(monkeypatch, name: str) -> list[int]:
    """Count calls of ``_exact.<name>`` (the samplers look it up at call time)."""
    calls = [0]
    real = getattr(_exact, name)

    def wrapper(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(_exact, name, wrapper)
    return calls


@pytest.mark.parametrize("scale", [3.0, 1e5])
def test_forced_fallback_laplace(monkeypatch, scale):
    # A huge margin sends most draws to the exact fallback; the law must not change.
    monkeypatch.setattr(sampling, "_REL_MARGIN", 0.25)
    calls = counting(monkeypatch, "geometric_exact")
    n = 15_000
    x = sampling._laplace(scale, n, SimulationSource(21))
    assert calls[0] > n // 2
    check_fit(x, laplace_cdf, scale, span=15)


def test_forced_fallback_block_gaussian(monkeypatch):
    # Quick acceptance only below U = 1/2, then floating point with a 25% margin: about a
    # quarter of the draws take the exact acceptance test.
    monkeypatch.setattr(sampling, "_BLOCK_SLACK", 2.0**31)
    monkeypatch.setattr(sampling, "_REL_MARGIN", 0.25)
    calls = counting(monkeypatch, "bernoulli_exp_exact")
    n = 12_000
    x = sampling.discrete_gaussian(3000.0, n, SimulationSource(22))
    assert calls[0] > n // 5
    check_fit(x, gauss_cdf, 3000.0, span=8)


def test_forced_fallback_bernoulli_and_categorical(monkeypatch):
    monkeypatch.setattr(sampling, "_REL_MARGIN", 0.25)
    calls = counting(monkeypatch, "bernoulli_exp_exact")
    n = 20_000
    hits = sampling.bernoulli_exp(np.full(n, 0.7), SimulationSource(23)).sum()
    assert calls[0] > n // 5
    assert abs(z_score(int(hits), n, math.exp(-0.7))) < 5

    logw = np.array([0.0, -0.5, -1.0, -2.0, -np.inf, 0.25])
    probs = np.exp(logw) / np.exp(logw).sum()
    idx = sampling.categorical_log(logw, n, SimulationSource(24))
    counts = np.bincount(idx, minlength=logw.size)
    assert counts[4] == 0
    keep = probs > 0
    assert stats.chisquare(counts[keep], probs[keep] * n).pvalue > ACCEPT_P


def half_gauss_cdf(sigma: float):
    """``P(Y <= y)`` for ``P(y) ∝ exp(-y^2 / (2 sigma^2))`` on ``y >= 0``."""
    w = np.exp(-(np.arange(math.ceil(13 * sigma) + 10, dtype=np.float64) ** 2) / (2 * sigma**2))
    F = np.cumsum(w / w.sum())

    def cdf(k):
        k = np.asarray(k)
        return np.where(k < 0, 0.0, F[np.clip(k, 0, F.size - 1)])

    return cdf


@pytest.mark.parametrize("kind, scale", [("gauss", 2.0), ("laplace", 1.5), ("half", 2.5)])
def test_table_exact_search_from_no_bits(kind, scale):
    # The table's exact fallback, started with no bits known, is a complete exact sampler.
    tab = {"gauss": sampling._gauss_table, "laplace": sampling._laplace_table,
           "half": sampling._half_gauss_table}[kind](scale)
    source = SimulationSource(25)
    cells = np.array([_exact.table_cell_exact(tab.T64, tab.bound, _exact.LazyUniform(0, 0, source))
                      for _ in range(8_000)])
    values = cells - tab.offset
    assert np.all(np.abs(values) <= tab.K)  # tails have probability ~2**-40
    cdf, edges = {"gauss": (gauss_cdf(scale), np.arange(-4, 6)),
                  "laplace": (laplace_cdf(scale), np.arange(-3, 5)),
                  "half": (half_gauss_cdf(scale), np.arange(1, 7))}[kind]
    assert chi2_p(values, cdf, edges) > ACCEPT_P
    if kind == "half":  # power: the folded symmetric law |Z| has half the mass at 0
        folded = gauss_cdf(scale)
        assert chi2_p(values, lambda k: 2 * folded(k) - 1, edges) < REJECT_P


def boundary_fraction(tab, c: int, bits: int) -> float:
    """``frac(2**bits beta_c)``: the chance that a uniform with ``bits`` bits equal to
    ``floor(2**bits beta_c)`` lies below ``beta_c``."""
    lo, hi = tab.bound(c, 60)
    return float((lo * 2**bits) % 1 + (hi - lo) * 2**bits / 2)


def test_table_refinement_on_a_boundary():
    # 32-bit words that equal a boundary's head are undecided: 32 more bits, then exact.
    tab = sampling._gauss_table(2.0)
    c = tab.K + 1  # upper edge of the cell of value 0
    words = np.full(20_000, tab.T32[c], dtype=np.uint32)
    out = sampling._table_from_words(tab, words, SimulationSource(26))
    assert set(np.unique(out)) <= {0, 1}
    p0 = boundary_fraction(tab, c, 32)
    assert abs(z_score(int(np.sum(out == 0)), out.size, p0)) < 5

    # 64-bit prefixes equal to floor(2**64 beta_c): the exact comparison draws more bits.
    source = SimulationSource(27)
    n = 4_000
    cells = [_exact.table_cell_exact(tab.T64, tab.bound,
                                     _exact.LazyUniform(int(tab.T64[c]), 64, source))
             for _ in range(n)]
    assert set(cells) <= {c, c + 1}
    p0 = boundary_fraction(tab, c, 64)
    assert abs(z_score(cells.count(c), n, p0)) < 5


def test_exact_geometric_and_bernoulli_match_closed_forms():
    source = SimulationSource(28)
    t = Fraction(7, 3)
    g = np.array([_exact.geometric_exact(_exact.LazyUniform(0, 0, source), t)
                  for _ in range(6_000)])
    q = math.exp(-3 / 7)
    for k in range(4):  # P(G >= k) = q^k
        assert abs(z_score(int(np.sum(g >= k)), g.size, q**k)) < 5
    hits = sum(_exact.bernoulli_exp_exact(_exact.LazyUniform(0, 0, source), Fraction(1, 3))
               for _ in range(6_000))
    assert abs(z_score(hits, 6_000, math.exp(-1 / 3))) < 5
    assert _exact.bernoulli_exp_exact(_exact.LazyUniform(0, 0, source), 0)
    assert not _exact.bernoulli_exp_exact(_exact.LazyUniform(0, 0, source), math.inf)


def test_exp_bounds_enclose_and_tighten():
    for x in (Fraction(1, 3), Fraction(50), Fraction(10**-30)):
        lo, hi = _exact.exp_neg_bounds(x, 40)
        assert lo < hi and float(lo) == pytest.approx(math.exp(-float(x)), rel=1e-15)
        lo2, hi2 = _exact.exp_neg_bounds(x, 80)
        assert lo <= lo2 < hi2 <= hi and hi2 - lo2 < (hi - lo) / 10**30


# --------------------------------------------------------------------------------------
# Bernoulli(exp(-gamma)), categorical, uniform integers, permutations
# --------------------------------------------------------------------------------------


def test_bernoulli_exp():
    gammas = np.array([0.0, 1e-3, 0.1, 0.5, 1.0, 3.0, 10.0, 750.0, np.inf])
    reps = 100_000
    out = sampling.bernoulli_exp(np.repeat(gammas, reps).reshape(-1, reps), SimulationSource(31))
    assert out.dtype == bool and out.shape == (gammas.size, reps)
    hits = out.sum(axis=1)
    assert hits[0] == reps and hits[-1] == 0 and hits[-2] == 0
    for g, h in zip(gammas, hits, strict=True):
        assert abs(z_score(int(h), reps, math.exp(-g))) < 5, g
    for g, h in zip(gammas[2:5], hits[2:5], strict=True):  # power: a 30% rate error shows
        assert abs(z_score(int(h), reps, math.exp(-1.3 * g))) > 5
        assert abs(z_score(int(h), reps, math.exp(-0.7 * g))) > 5


def test_categorical_log_small():
    logw = np.array([0.0, -0.5, -1.0, -2.0, -np.inf, -3.0, -700.5, -1000.0, 2.5e-3, 1e-300])
    x = sampling.categorical_log(logw, N, SimulationSource(32))
    counts = np.bincount(x, minlength=logw.size)
    assert counts[4] == 0 and counts[6] == 0 and counts[7] == 0

    def p_value(lw):
        with np.errstate(under="ignore"):
            w = np.exp(lw - np.max(lw))
        keep = w > 1e-12
        probs = w[keep] / w[keep].sum()
        return stats.chisquare(counts[keep], probs * N).pvalue

    assert p_value(logw) > ACCEPT_P
    assert p_value(1.3 * logw) < REJECT_P and p_value(0.7 * logw) < REJECT_P


def test_categorical_log_many_candidates():
    n = 100_000
    logw = -np.linspace(0.0, 8.0, n) + 1e6  # large offsets must not matter
    x = sampling.categorical_log(logw, N, SimulationSource(33))
    groups = 50
    counts = np.bincount(x * groups // n, minlength=groups)

    def p_value(lw):
        w = np.exp(lw - lw.max())
        probs = np.add.reduceat(w, np.arange(0, n, n // groups)) / w.sum()
        return stats.chisquare(counts, probs * N).pvalue

    assert p_value(logw) > ACCEPT_P
    base = logw - 1e6
    assert p_value(1.3 * base) < REJECT_P and p_value(0.7 * base) < REJECT_P


def test_uniform_int():
    x = sampling.uniform_int(7, 70_000, SimulationSource(34))
    assert x.dtype == np.int64 and x.min() >= 0 and x.max() <= 6
    assert stats.chisquare(np.bincount(x, minlength=7)).pvalue > ACCEPT_P
    # Power: the same test catches the modulo bias of "8 values mod 7".
    biased = sampling.uniform_int(8, 70_000, SimulationSource(35)) % 7
    assert stats.chisquare(np.bincount(biased, minlength=7)).pvalue < REJECT_P

    big = 3 * 2**61
    y = sampling.uniform_int(big, 20_000, SimulationSource(36))
    assert y.min() >= 0 and y.max() < big
    assert abs((y.astype(np.float64).mean() - big / 2) / (big / math.sqrt(12 * 20_000))) < 5
    assert np.all(sampling.uniform_int(1, 5, SimulationSource(0)) == 0)
    assert sampling.uniform_int(2**63, 3, SimulationSource(0)).dtype == np.int64


def perm_counts(perms) -> np.ndarray:
    """Counts of each of the 24 permutations of 4 among the rows of ``perms``."""
    codes = np.asarray(perms) @ np.array([64, 16, 4, 1])
    lookup = np.full(256, -1)
    for i, p in enumerate(itertools.permutations(range(4))):
        lookup[np.dot(p, [64, 16, 4, 1])] = i
    index = lookup[codes]
    assert np.all(index >= 0), "not a permutation"
    return np.bincount(index, minlength=24)


def test_permutation_uniform_and_power():
    source = SimulationSource(37)
    counts = perm_counts([sampling.permutation(4, source) for _ in range(24_000)])
    assert stats.chisquare(counts).pvalue > ACCEPT_P
    # Power: the classic biased shuffle (swap each position with ANY position).
    n = 240_000
    perms = np.tile(np.arange(4), (n, 1))
    rows = np.arange(n)
    for i in range(4):
        j = sampling.uniform_int(4, n, source)
        a, b = perms[rows, i].copy(), perms[rows, j].copy()
        perms[rows, i], perms[rows, j] = b, a
    assert stats.chisquare(perm_counts(perms)).pvalue < REJECT_P

    p = sampling.permutation(100_000, source)
    np.testing.assert_array_equal(np.sort(p), np.arange(100_000))
    assert sampling.permutation(0, source).shape == (0,)


class TwoBitSource(SimulationSource):
    """Keys of 2 bits: almost every key ties, exercising the exact tie handling."""

    def uint64(self, size):
        return super().uint64(size) >> np.uint64(62)


def test_permutation_ties_are_resolved_uniformly():
    source = TwoBitSource(38)
    counts = perm_counts([sampling.permutation(4, source) for _ in range(12_000)])
    assert stats.chisquare(counts).pvalue > ACCEPT_P


# --------------------------------------------------------------------------------------
# Analytic helpers
# --------------------------------------------------------------------------------------


def direct_laplace_pmf(scale: float, J: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(-J, J + 1)
    w = np.exp(-np.abs(k) / scale)
    return k, w / w.sum()


@pytest.mark.parametrize("scale", [0.1, 0.5, 2.0, 300.0, 3e4])
def test_laplace_helpers_against_direct_summation(scale):
    k, pmf = direct_laplace_pmf(scale, math.ceil(60 * scale) + 5)
    np.testing.assert_allclose(sampling.discrete_laplace_pmf(k, scale), pmf, rtol=1e-9,
                               atol=1e-300)
    assert sampling.discrete_laplace_variance(scale) == pytest.approx(np.sum(k**2 * pmf),
                                                                      rel=1e-9)
    absk = np.abs(k)
    for j in (0, 1, 3, int(scale), int(5 * scale)):
        direct = np.sum(pmf[absk > j])
        assert sampling.discrete_laplace_tail(j, scale) == pytest.approx(direct, rel=1e-8)
    cum = np.cumsum(np.bincount(absk, weights=pmf))
    for p in (0.0, 0.3, 0.5, 0.9, 0.95, 0.99, 0.999999):
        assert sampling.discrete_laplace_quantile_abs(p, scale) == int(np.argmax(cum >= p))


@pytest.mark.parametrize("sigma", [0.2, 0.5, 2.0, 9.5, 10.5, 300.0])
def test_gaussian_helpers_against_direct_summation(sigma):
    J = math.ceil(40 * sigma) + 2
    k = np.arange(-J, J + 1)
    pmf = gauss_weights(sigma, -J, J)
    np.testing.assert_allclose(sampling.discrete_gaussian_pmf(k, sigma), pmf, rtol=1e-9,
                               atol=1e-300)
    assert sampling.discrete_gaussian_variance(sigma) == pytest.approx(np.sum(k**2 * pmf),
                                                                       rel=1e-9)
    absk = np.abs(k)
    for j in (0, 1, 3, int(sigma), int(3 * sigma)):
        direct = np.sum(pmf[absk > j])
        assert sampling.discrete_gaussian_tail(j, sigma) == pytest.approx(direct, rel=1e-8)
    cum = np.cumsum(np.bincount(absk, weights=pmf))
    for p in (0.0, 0.3, 0.5, 0.9, 0.95, 0.99, 0.999999):
        assert sampling.discrete_gaussian_quantile_abs(p, sigma) == int(np.argmax(cum >= p))


@pytest.mark.parametrize("sigma", [5000.0, 1e5])
def test_gaussian_large_sigma_bounds_are_conservative_and_tight(sigma):
    J = math.ceil(13 * sigma)
    pmf = gauss_weights(sigma, 0, J)
    pmf[1:] *= 2  # P(|Z| = j)
    suffix = np.cumsum(pmf[::-1])[::-1]
    ks = np.array([0, 1, int(sigma), int(2 * sigma), int(4.5 * sigma), int(8 * sigma)])
    exact = suffix[ks + 1]
    bound = sampling.discrete_gaussian_tail(ks, sigma)
    assert np.all(bound >= exact * (1 - 1e-12))
    assert np.all(bound - exact <= 1e-7 + 1e-3 * exact)
    cum = np.cumsum(pmf)
    for p in (0.5, 0.9, 0.95, 0.99, 0.999999):
        q = sampling.discrete_gaussian_quantile_abs(p, sigma)
        assert 0 <= q - int(np.argmax(cum >= p)) <= 1
    assert sampling.discrete_gaussian_variance(sigma) == sigma**2


@pytest.mark.parametrize("kind, scale", [("laplace", 2.0), ("laplace", 300.0),
                                         ("laplace", 1e5), ("gauss", 2.0), ("gauss", 300.0),
                                         ("gauss", 1e5)])
def test_variance_against_empirical(kind, scale):
    x = draws(kind, scale, 11 if kind == "laplace" else 12).astype(np.float64)
    var = (sampling.discrete_laplace_variance(scale) if kind == "laplace"
           else sampling.discrete_gaussian_variance(scale))
    centred = x - x.mean()
    m2, m4 = np.mean(centred**2), np.mean(centred**4)
    se = math.sqrt((m4 - m2**2) / x.size)
    assert abs(m2 - var) < 5 * se


def test_scalar_and_array_returns():
    assert isinstance(sampling.discrete_laplace_pmf(3, 2.0), float)
    assert isinstance(sampling.discrete_gaussian_quantile_abs(0.95, 2.0), int)
    assert isinstance(sampling.discrete_gaussian_quantile_abs(0.95, 1e5), int)
    assert sampling.discrete_laplace_quantile_abs([0.5, 0.9], 2.0).shape == (2,)
    assert sampling.discrete_gaussian_tail(np.array([0, 10**12]), 3.0)[1] == 0.0


# --------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------

SRC = SimulationSource(0)
BAD_SCALES = [0.0, -1.0, math.nan, math.inf, -math.inf, "abc", None, 1e13]


@pytest.mark.parametrize("bad", BAD_SCALES)
@pytest.mark.parametrize("call", [
    lambda s: sampling.discrete_laplace(s, 3, SRC),
    lambda s: sampling.discrete_gaussian(s, 3, SRC),
    lambda s: sampling.discrete_laplace_pmf(0, s),
    lambda s: sampling.discrete_laplace_variance(s),
    lambda s: sampling.discrete_laplace_tail(0, s),
    lambda s: sampling.discrete_laplace_quantile_abs(0.5, s),
    lambda s: sampling.discrete_gaussian_pmf(0, s),
    lambda s: sampling.discrete_gaussian_variance(s),
    lambda s: sampling.discrete_gaussian_tail(0, s),
    lambda s: sampling.discrete_gaussian_quantile_abs(0.5, s),
])
def test_bad_scale_raises(call, bad):
    with pytest.raises(ValueError):
        call(bad)


@pytest.mark.parametrize("bad", [-1, 2.5, "3", None, True])
def test_bad_size_raises(bad):
    for call in (lambda: sampling.discrete_laplace(1.0, bad, SRC),
                 lambda: sampling.discrete_gaussian(1.0, bad, SRC),
                 lambda: sampling.categorical_log([0.0], bad, SRC),
                 lambda: sampling.uniform_int(3, bad, SRC),
                 lambda: sampling.permutation(bad, SRC)):
        with pytest.raises(ValueError):
            call()


def test_other_bad_inputs_raise():
    cases = [
        lambda: sampling.bernoulli_exp([0.5, -0.1], SRC),
        lambda: sampling.bernoulli_exp([np.nan], SRC),
        lambda: sampling.categorical_log([], 1, SRC),
        lambda: sampling.categorical_log([[0.0]], 1, SRC),
        lambda: sampling.categorical_log([-np.inf, -np.inf], 1, SRC),
        lambda: sampling.categorical_log([0.0, np.inf], 1, SRC),
        lambda: sampling.categorical_log([0.0, np.nan], 1, SRC),
        lambda: sampling.uniform_int(0, 1, SRC),
        lambda: sampling.uniform_int(2**63 + 1, 1, SRC),
        lambda: sampling.discrete_laplace_tail(-1, 2.0),
        lambda: sampling.discrete_gaussian_tail(1.5, 2.0),
        lambda: sampling.discrete_laplace_quantile_abs(1.0, 2.0),
        lambda: sampling.discrete_gaussian_quantile_abs(-0.1, 2.0),
        lambda: sampling.discrete_gaussian_quantile_abs(math.nan, 2.0),
    ]
    for call in cases:
        with pytest.raises(ValueError):
            call()
