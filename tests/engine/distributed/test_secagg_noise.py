"""Distributed noise: exact Skellam accounting, KLS21's bound for discrete Gaussian
shares, and the shares' sums have the central mechanism's variance."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.stats import chisquare

from dpstudio.engine import sampling
from dpstudio.engine.calibration import discrete_gaussian_delta
from dpstudio.engine.distributed import noise
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import SimulationSource


def test_skellam_pmf_and_delta_against_scipy():
    v = 37.5
    k = np.arange(-60, 61)
    ref = stats.skellam.pmf(k, v / 2, v / 2)
    np.testing.assert_allclose(noise.skellam_pmf(k, v), ref, rtol=1e-9)
    for sens, eps in [(1, 0.5), (4, 1.0), (10, 3.0)]:
        kk = np.arange(-400, 401)
        p, q = stats.skellam.pmf(kk, v / 2, v / 2), stats.skellam.pmf(kk - sens, v / 2, v / 2)
        brute = np.maximum(p - math.exp(eps) * q, 0).sum()
        got = noise.skellam_delta(v, sens, eps)
        assert brute <= got <= brute * (1 + 1e-9) + 1e-30


@pytest.mark.parametrize("sens,eps,delta", [(1, 1.0, 1e-6), (64, 0.5, 1e-8), (256, 3.0, 1e-5)])
def test_skellam_calibration_is_tight_and_close_to_the_gaussian(sens, eps, delta):
    v = noise.skellam_variance(sens, eps, delta)
    assert noise.skellam_delta(v, sens, eps) <= delta
    assert noise.skellam_delta(v * (1 - 1e-6), sens, eps) > delta
    if sens >= 64:  # a wide Skellam is nearly Gaussian: nearly the central σ
        from dpstudio.engine.calibration import analytic_gaussian_sigma
        assert math.sqrt(v) == pytest.approx(analytic_gaussian_sigma(sens, eps, delta), rel=1e-3)


def test_poisson_sampler_follows_the_law():
    src = SimulationSource(1)
    for lam in (0.05, 2.5, 40.0):
        x = noise.poisson(lam, 100_000, src)
        hi = int(stats.poisson.ppf(1 - 1e-4, lam)) + 1
        observed = np.bincount(np.minimum(x, hi), minlength=hi + 1)
        expected = stats.poisson.pmf(np.arange(hi + 1), lam)
        expected[-1] = stats.poisson.sf(hi - 1, lam)
        keep = expected * x.size > 5
        obs = np.append(observed[keep], observed[~keep].sum())
        exp = np.append(expected[keep], expected[~keep].sum()) * x.size
        if exp[-1] == 0:
            obs, exp = obs[:-1], exp[:-1]
        assert chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-4, lam


def test_skellam_shares_sum_to_a_skellam():
    n, reps = 50, 4000
    dn = noise.calibrate_noise("skellam", 16, 1.0, 1e-6, n)
    src = SimulationSource(2)
    sums = np.array([dn.shares(n, src).sum() for _ in range(reps)])
    v = dn.total_variance(n)
    assert abs(sums.var() - v) < 5 * v * math.sqrt(2 / reps)
    # And against the Skellam law itself (binned χ²).
    edges = np.quantile(sums, np.linspace(0, 1, 21)[1:-1]).round() + 0.5
    edges = np.unique(edges)
    cdf = stats.skellam.cdf(edges - 0.5, v / 2, v / 2)
    expected = np.diff(np.concatenate([[0.0], cdf, [1.0]])) * reps
    observed = np.histogram(sums, bins=np.concatenate([[-np.inf], edges, [np.inf]]))[0]
    assert chisquare(observed, expected).pvalue > 1e-4


def test_distributed_gaussian_error_variance_matches_the_central_discrete_gaussian():
    n, reps = 100, 5000
    dn = noise.calibrate_noise("gaussian", 64, 1.0, 1e-6, n)
    src = SimulationSource(3)
    draws = sampling.discrete_gaussian(dn.per_client, n * reps, src).reshape(reps, n)
    sums = draws.sum(axis=1).astype(float)
    central_var = sampling.discrete_gaussian_variance(math.sqrt(n) * dn.per_client)
    se = central_var * math.sqrt(2 / reps)
    assert abs(sums.var() - central_var) < 5 * se
    assert dn.total_variance(n) == pytest.approx(central_var, rel=1e-9)


def test_kls21_guarantee_is_never_better_than_the_central_discrete_gaussian():
    for n, sens in [(10, 8), (100, 64), (1000, 1)]:
        dn = noise.calibrate_noise("gaussian", sens, 1.0, 1e-6, n)
        eps, delta = dn.guarantee(n)
        assert eps <= 1.0
        sigma_total = math.sqrt(n) * dn.per_client
        # The sum is close to N_Z(0, nσ_c²); that law's exact δ at the claimed ε is below δ.
        assert discrete_gaussian_delta(sigma_total, sens, eps) <= delta
        assert dn.per_client >= 1.0


def test_zcdp_conversion_matches_the_classical_form_loosely():
    rho, delta = 0.05, 1e-6
    eps = noise.zcdp_epsilon(rho, delta)
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta))  # never worse
    assert eps > rho + math.sqrt(rho * math.log(1 / delta))


def test_dropouts_weaken_the_guarantee_of_planned_noise():
    for family in noise.FAMILIES:
        dn = noise.calibrate_noise(family, 32, 1.0, 1e-6, 100)
        assert dn.guarantee(100) == (1.0, 1e-6)
        e90, _ = dn.guarantee(90)
        e50, _ = dn.guarantee(50)
        assert 1.0 < e90 < e50


def test_tail_bounds_are_valid():
    src = SimulationSource(4)
    for family in noise.FAMILIES:
        dn = noise.calibrate_noise(family, 8, 1.0, 1e-6, 20)
        h = dn.tail_bound(20, 0.05)
        sums = np.array([dn.shares(20, src).sum() for _ in range(4000)])
        assert np.mean(np.abs(sums) > h) <= 0.05 + 5 * math.sqrt(0.05 * 0.95 / 4000)
        assert dn.tail_probability(20, 10 * h) < 1e-10


def test_bad_noise_parameters():
    with pytest.raises(ParameterError):
        noise.calibrate_noise("laplace", 1, 1.0, 1e-6, 10)
    with pytest.raises(ParameterError):
        noise.calibrate_noise("skellam", 1, 1.0, 0.0, 10)
    with pytest.raises(ParameterError):
        noise.calibrate_noise("skellam", 1, 0.0, 1e-6, 10)
    with pytest.raises(ParameterError, match="beyond"):
        noise.skellam_delta(1e10, 1, 1.0)
