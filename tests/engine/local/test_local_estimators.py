"""Every local estimator is unbiased and its variance is the stated formula.

Simulations run T independent repetitions of n users (one randomize call over T·n users,
then one estimate per repetition) at fixed seeds, and compare with the closed forms
within 5 standard errors. The data-free variances are also checked against Wang, Blocki,
Li & Jha (2017), "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security, Table 1 (Var* per method, in units of n):

    DE (K-RR)  (d − 2 + e^ε)/(e^ε − 1)²      SUE  e^{ε/2}/(e^{ε/2} − 1)²
    OUE        4e^ε/(e^ε − 1)²                OLH  4e^ε/(e^ε − 1)²  (g = e^ε + 1)
    BLH        (e^ε + 1)²/(e^ε − 1)²         (Hadamard response has BLH's p = e^ε/(e^ε+1), q = 1/2)

and general-g OLH (their Eq. for Var with p = e^ε/(e^ε+g−1), q = 1/g):
(e^ε − 1 + g)²/((e^ε − 1)²(g − 1)).
"""

import math
import zlib

import numpy as np
import pytest

from dpstudio.engine.local import (
    CountMeanSketch,
    DuchiMean,
    HadamardResponse,
    KaryRR,
    LocalGaussian,
    LocalLaplace,
    OptimalLocalHashing,
    RandomizedResponse,
    UnaryEncoding,
)
from dpstudio.engine.rng import SimulationSource


def _slice(reports, s, e):
    if isinstance(reports, tuple):  # NamedTuple reports (OLH, CMS)
        return type(reports)(*(f[s:e] for f in reports))
    return reports[s:e]


def _repeat(oracle, values, trials, seed):
    """Estimates of ``trials`` independent runs on the same column: shape (trials, k)."""
    n = values.size
    reports = oracle.randomize(np.tile(values, trials), SimulationSource(seed))
    return np.array([oracle.estimate(_slice(reports, t * n, (t + 1) * n))
                     for t in range(trials)])


def _check(est, truth, var):
    """Unbiased within 5 SE, and E[(est − truth)²] = var within 5 (empirical) SE."""
    trials = est.shape[0]
    err = est - truth
    bias_z = err.mean(axis=0) / np.sqrt(var / trials)
    assert np.all(np.abs(bias_z) < 5), bias_z
    sq = err**2 / var
    ratio = sq.mean(axis=0)
    se = sq.std(axis=0, ddof=1) / math.sqrt(trials)
    assert np.all(np.abs(ratio - 1.0) < 5 * se), (ratio, se)
    return ratio, se


def _column(k, n, rng):
    """A skewed column: one heavy value, some rare ones, and (for k ≥ 4) a value nobody holds."""
    w = np.r_[6.0, np.linspace(2.0, 0.5, k - 1)]
    if k >= 4:
        w[-1] = 0.0
    return rng.choice(k, size=n, p=w / w.sum())


PURE = {
    "krr": lambda eps, k: KaryRR(eps, k),
    "sue": lambda eps, k: UnaryEncoding(eps, k, False),
    "oue": lambda eps, k: UnaryEncoding(eps, k, True),
    "olh": lambda eps, k: OptimalLocalHashing(eps, k),
    "olh_g2": lambda eps, k: OptimalLocalHashing(eps, k, 2),
    "hadamard": lambda eps, k: HadamardResponse(eps, k),
}
CONFIGS = [(0.5, 4, 1000), (1.0, 10, 400), (3.0, 6, 600)]


@pytest.mark.parametrize("name", list(PURE))
@pytest.mark.parametrize("eps,k,n", CONFIGS)
def test_pure_oracles_unbiased_with_exact_variance(name, eps, k, n):
    rng = np.random.default_rng(zlib.crc32(f"{name}/{eps}/{k}".encode()))  # fixed seed
    values = _column(k, n, rng)
    truth = np.bincount(values, minlength=k)
    oracle = PURE[name](eps, k)
    est = _repeat(oracle, values, 1000, seed=int(rng.integers(2**31)))
    _check(est, truth, oracle.variance(n, truth))


def test_krr_bellet_formula_is_exact_only_for_rare_values():
    # Bellet's (k − 2 + e^ε)/(n(e^ε − 1)²) for frequencies is Var* (a value nobody holds);
    # a frequent value's estimate varies more by c(1 − p − q)/(p − q) when k > 2.
    eps, k, n = 1.0, 10, 400
    values = np.r_[np.zeros(300, dtype=int), np.arange(100) % (k - 1) + 1]
    oracle = KaryRR(eps, k)
    truth = np.bincount(values, minlength=k)
    est = _repeat(oracle, values, 1500, seed=3)
    bellet = (k - 2 + math.e**eps) / (n * (math.e**eps - 1) ** 2) * n**2  # in counts²
    np.testing.assert_allclose(oracle.variance(n), bellet, rtol=1e-12)
    mse0 = ((est[:, 0] - truth[0]) ** 2).mean()
    assert mse0 > 1.5 * bellet  # the exact variance is 2.4 × Var* here
    _check(est, truth, oracle.variance(n, truth))


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.5])
def test_warner_randomized_response(eps):
    rr = RandomizedResponse(eps)
    assert rr.p == pytest.approx(math.exp(eps) / (1 + math.exp(eps)), rel=1e-15)
    values = np.r_[np.ones(700, dtype=int), np.zeros(300, dtype=int)]
    est = _repeat(rr, values, 1000, seed=5)
    _check(est, np.array([300, 700]), rr.variance(1000, [300, 700]))
    # Warner's estimator of the proportion is the count estimator divided by n.
    reports = rr.randomize(values, SimulationSource(1))
    assert rr.proportion(reports) == pytest.approx(rr.estimate(reports)[1] / 1000, rel=1e-12)


def test_randomized_response_with_given_p():
    rr = RandomizedResponse(p=0.75)
    assert rr.epsilon >= math.log(3) and rr.epsilon == pytest.approx(math.log(3), rel=1e-15)
    values = np.r_[np.ones(200, dtype=int), np.zeros(800, dtype=int)]
    est = _repeat(rr, values, 1000, seed=8)
    _check(est, np.array([800, 200]), rr.variance(1000, [800, 200]))


def _wang_var_star(name, eps, k, g=None):
    e = math.exp(eps)
    if name == "krr":
        return (k - 2 + e) / (e - 1) ** 2
    if name == "sue":
        h = math.exp(eps / 2)
        return h / (h - 1) ** 2
    if name == "oue":
        return 4 * e / (e - 1) ** 2
    if name == "olh":
        return (e - 1 + g) ** 2 / ((e - 1) ** 2 * (g - 1))
    if name == "hadamard":
        return (e + 1) ** 2 / (e - 1) ** 2
    raise KeyError(name)


@pytest.mark.parametrize("eps", [0.25, 1.0, math.log(3), 4.0])
@pytest.mark.parametrize("k", [2, 7, 100])
def test_var_star_matches_wang_et_al_table_1(eps, k):
    n = 12345
    for name in ("krr", "sue", "oue", "hadamard"):
        oracle = PURE[name](eps, k)
        np.testing.assert_allclose(oracle.variance(n), n * _wang_var_star(name, eps, k),
                                   rtol=1e-10, err_msg=name)
    olh = OptimalLocalHashing(eps, k)
    assert olh.g == round(math.exp(eps)) + 1
    # The family's collision probability differs from 1/g by < 2^-30: Var* agrees to 1e-6.
    np.testing.assert_allclose(olh.variance(n), n * _wang_var_star("olh", eps, k, olh.g),
                               rtol=1e-6)
    assert abs(olh.collision - 1 / olh.g) < 2**-30


def test_wang_table_spot_values():
    # Exact rational values at e^ε = 3 (ε = ln 3) and e^{ε/2} = 3.
    n = 1
    ln3 = math.log(3)
    assert OptimalLocalHashing(ln3, 10).g == 4
    assert UnaryEncoding(ln3, 5, True).variance(n)[0] == pytest.approx(3.0, rel=1e-12)
    assert OptimalLocalHashing(ln3, 10).variance(n)[0] == pytest.approx(3.0, rel=1e-6)
    assert UnaryEncoding(2 * ln3, 5, False).variance(n)[0] == pytest.approx(0.75, rel=1e-12)
    assert KaryRR(ln3, 2).variance(n)[0] == pytest.approx(0.75, rel=1e-12)
    assert KaryRR(ln3, 4).variance(n)[0] == pytest.approx(1.25, rel=1e-12)
    assert HadamardResponse(ln3, 5).variance(n)[0] == pytest.approx(4.0, rel=1e-12)
    # OUE = OLH at the optimum, and both beat K-RR once k > 3e^ε + 2 (Wang et al. §5).
    assert KaryRR(ln3, 12).variance(n)[0] > UnaryEncoding(ln3, 12, True).variance(n)[0]


# --------------------------------------------------------------------- count-mean sketch


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_cms_exact_debias_unbiased_with_exact_variance(eps):
    # Few buckets: collisions are frequent, so the exact debiasing matters.
    rng = np.random.default_rng(11)
    k, n = 8, 800
    values = _column(k, n, rng)
    truth = np.bincount(values, minlength=k)
    cms = CountMeanSketch(eps, k, hashes=4, buckets=16, debias="exact", hash_seed=2)
    assert (cms.collisions() > 0.0).sum() > k  # some pairs do collide
    est = _repeat(cms, values, 1000, seed=12)
    _check(est, truth, cms.variance(n, truth))


def test_cms_apple_debias_bias_and_variance_for_a_fixed_family():
    rng = np.random.default_rng(13)
    k, n = 8, 800
    values = _column(k, n, rng)
    truth = np.bincount(values, minlength=k)
    cms = CountMeanSketch(2.0, k, hashes=4, buckets=16, debias="apple", hash_seed=3)
    est = _repeat(cms, values, 1000, seed=14)
    bias = cms.bias(truth)
    assert np.abs(bias).max() > 20  # a fixed family is biased ...
    _check(est, truth + bias, cms.variance(n, truth))  # ... by exactly this


def test_cms_apple_debias_unbiased_over_hash_families():
    # Apple's m/(m − 1)(r − n/m) inverts E_family[A]: averaged over hash families the
    # bias vanishes.
    rng = np.random.default_rng(15)
    k, n = 6, 500
    values = _column(k, n, rng)
    truth = np.bincount(values, minlength=k)
    biases = np.array([CountMeanSketch(2.0, k, hashes=4, buckets=16, debias="apple",
                                       hash_seed=s).bias(truth) for s in range(3000)])
    se = biases.std(axis=0, ddof=1) / math.sqrt(biases.shape[0])
    assert np.all(np.abs(biases.mean(axis=0)) < 5 * se)


def test_cms_variance_leading_term_is_sue():
    # (c_ε² − 1)/4 = e^{ε/2}/(e^{ε/2} − 1)²: the sketch's per-user noise is SUE's.
    for eps in (0.5, 2.0, 6.0):
        cms = CountMeanSketch(eps, 4, hashes=8, buckets=1 << 16, debias="apple")
        m = cms.buckets
        sue = UnaryEncoding(eps, 4, False).variance(1)[0]
        assert cms.variance(1)[0] == pytest.approx(sue * (m / (m - 1)) ** 2, rel=1e-12)


# ----------------------------------------------------------------------------- means


def _repeat_mean(oracle, values, trials, seed):
    n = values.size
    reports = oracle.randomize(np.tile(values, trials), SimulationSource(seed))
    return np.array([oracle.estimate(reports[t * n:(t + 1) * n]) for t in range(trials)])


@pytest.mark.parametrize("make", [
    lambda eps, b: LocalLaplace(eps, b),
    lambda eps, b: LocalGaussian(eps, b, 1e-5),
    lambda eps, b: DuchiMean(eps, b),
], ids=["local_laplace", "local_gaussian", "duchi"])
@pytest.mark.parametrize("eps,bounds", [(0.5, (0.0, 1.0)), (2.0, (-3.0, 7.0))])
def test_mean_randomizers_unbiased_with_exact_variance(make, eps, bounds):
    rng = np.random.default_rng(17)
    lo, hi = bounds
    values = rng.uniform(lo - 1.0, hi, size=300)  # some below the bounds: clamped
    oracle = make(eps, bounds)
    truth = np.clip(values, lo, hi).mean()
    est = _repeat_mean(oracle, values, 2000, seed=18)
    if isinstance(oracle, DuchiMean):
        var = oracle.variance(values.size, np.mean(oracle.scaled(values) ** 2))
        assert oracle.variance(values.size) >= var  # the data-free form is a bound
    else:
        var = oracle.variance(values.size)
    _check(est[:, None], truth, np.array([var]))
