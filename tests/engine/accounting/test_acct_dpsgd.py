"""DP-SGD accounting (Poisson-subsampled Gaussian) against independent implementations.

Reference values were computed once, outside the project, with Google's ``dp-accounting``
0.6.0 (pip install dp-accounting, in a throwaway venv) and are hard-coded here:

    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant as P
    from dp_accounting.rdp import rdp_privacy_accountant as R
    event = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    acc = P.PLDAccountant(value_discretization_interval=1e-5)  # 10x finer than default
    acc.compose(event); acc.get_epsilon(1e-5)                  # -> GOOGLE_PLD
    acc = R.RdpAccountant(); acc.compose(event); acc.get_epsilon(1e-5)  # -> GOOGLE_RDP
    R._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)       # -> GOOGLE_RDP_ORDERS
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad

from dpstudio.engine.accounting import (
    DEFAULT_ORDERS,
    PLD,
    dpsgd_epsilon,
    dpsgd_sigma,
    gdp_subsampled_gaussian_clt,
    rdp_subsampled_gaussian,
)
from dpstudio.engine.errors import ParameterError

DELTA = 1e-5
# (q, σ, T) -> ε at δ = 1e-5, dp-accounting 0.6.0 PLDAccountant(value_discretization_interval
# =1e-5) (connect-the-dots discretization).
GOOGLE_PLD = {
    (0.01, 1.1, 1000): 1.5153620003329489,
    (0.01, 1.1, 10000): 5.192583822274265,
    (0.1, 2.0, 100): 2.3373996121836647,
    (0.004, 0.8, 5000): 2.4990910704163154,
    (0.05, 1.5, 500): 3.7846962303744007,
}
# Same settings, dp-accounting 0.6.0 RdpAccountant() with its default orders (ours are the
# same grid) and the same (ε, δ) conversion.
GOOGLE_RDP = {
    (0.01, 1.1, 1000): 1.7117701662429012,
    (0.01, 1.1, 10000): 5.632010670081592,
    (0.1, 2.0, 100): 2.5805709505045913,
    (0.004, 0.8, 5000): 2.925247787159458,
    (0.05, 1.5, 500): 4.143775567839857,
}
# One-step RDP at integer orders (an exact binomial sum in both implementations).
GOOGLE_RDP_ORDERS = {
    (0.01, 1.1): {2: 0.00012851008160516542, 5: 0.00034015796633296927,
                  12: 0.04138551937921605, 32: 8.469416433675926, 128: 48.251130614916136},
    (0.1, 2.0): {2: 0.0028362282662636636, 5: 0.007736968489795839,
                 12: 0.024669598870602372, 32: 1.627202301019436, 128: 13.679284315722684},
}
SETTINGS = sorted(GOOGLE_PLD)


@pytest.mark.parametrize("setting", SETTINGS)
def test_pld_epsilon_is_at_or_above_googles_fine_grid_value_within_one_percent(setting):
    q, sigma, steps = setting
    res = dpsgd_epsilon(sigma, q, steps, DELTA, method="pld")
    ref = GOOGLE_PLD[setting]
    assert ref <= res.epsilon <= 1.01 * ref
    assert res.epsilon <= ref * (1 + 1e-4)  # in fact much closer than 1%
    assert (res.method, res.approximate, res.delta) == ("pld", False, DELTA)


@pytest.mark.parametrize("setting", [(0.01, 1.1, 1000), (0.1, 2.0, 100)])
def test_pld_default_grid_is_above_our_own_five_times_finer_grid(setting):
    q, sigma, steps = setting
    coarse = dpsgd_epsilon(sigma, q, steps, DELTA).epsilon
    fine = dpsgd_epsilon(sigma, q, steps, DELTA, value_discretization_interval=2e-5).epsilon
    assert fine <= coarse <= 1.01 * fine
    assert fine == pytest.approx(GOOGLE_PLD[setting], rel=1e-5)


@pytest.mark.parametrize("setting", SETTINGS)
def test_rdp_epsilon_matches_dp_accounting_and_is_looser_than_pld(setting):
    q, sigma, steps = setting
    rdp = dpsgd_epsilon(sigma, q, steps, DELTA, method="rdp")
    ref = GOOGLE_RDP[setting]
    # dp-accounting 0.6.0 sums the *absolute values* of the fractional-order series (an
    # upper bound); we sum it with its signs (exact, checked by integration below), so
    # ours may sit up to ~1e-5 below theirs, never above.
    assert ref * (1 - 2e-5) <= rdp.epsilon <= ref * (1 + 1e-12)
    assert rdp.epsilon >= dpsgd_epsilon(sigma, q, steps, DELTA, method="pld").epsilon
    assert not rdp.approximate


@pytest.mark.parametrize("q,sigma", sorted(GOOGLE_RDP_ORDERS))
def test_rdp_integer_orders_match_dp_accounting(q, sigma):
    ref = GOOGLE_RDP_ORDERS[(q, sigma)]
    ours = rdp_subsampled_gaussian(sigma, q, orders=list(ref))
    np.testing.assert_allclose(ours, list(ref.values()), rtol=1e-11)


def _rdp_by_integration(alpha, q, sigma):
    """ln E_{z~N(0,σ²)}[(1 + r)^α] / (α − 1), r = q(e^{(2z−1)/(2σ²)} − 1), by quadrature.

    E[r] = 0, so (1 + r)^α − 1 − αr is integrated instead: same integral, no cancellation.
    """
    def f(z):
        r = q * math.expm1((2 * z - 1) / (2 * sigma**2))
        density = math.exp(-z * z / (2 * sigma**2)) / (sigma * math.sqrt(2 * math.pi))
        return density * (math.expm1(alpha * math.log1p(r)) - alpha * r)

    value = quad(f, -30 * sigma, 30 * sigma + 1, epsabs=1e-17, epsrel=1e-11, limit=400,
                 points=[0.0, 0.5, 1.0])[0]
    return math.log1p(value) / (alpha - 1)


@pytest.mark.parametrize("alpha", [1.1, 1.5, 2.5, 4.9, 7.3])
def test_rdp_fractional_orders_match_numerical_integration(alpha):
    q, sigma = 0.01, 1.1
    ours = rdp_subsampled_gaussian(sigma, q, orders=[alpha])[0]
    exact = _rdp_by_integration(alpha, q, sigma)
    assert exact * (1 - 1e-12) <= ours <= exact * (1 + 1e-7)
    # The series at an integer order agrees with the exact binomial sum.
    near = rdp_subsampled_gaussian(sigma, q, orders=[5.0, 5.0 + 1e-9])
    assert near[1] == pytest.approx(near[0], rel=1e-7)


def test_rdp_default_orders_and_full_rate():
    assert DEFAULT_ORDERS[0] == 1.1 and DEFAULT_ORDERS[-1] == 1024
    np.testing.assert_allclose(rdp_subsampled_gaussian(2.0, 1.0, orders=[2.5]), [0.3125])


def test_gdp_is_flagged_as_an_approximation():
    res = dpsgd_epsilon(1.1, 0.01, 1000, DELTA, method="gdp")
    assert res.approximate and res.method == "gdp"
    mu = 0.01 * math.sqrt(1000 * math.expm1(1 / 1.1**2))
    assert gdp_subsampled_gaussian_clt(1.1, 0.01, 1000).mu == pytest.approx(mu, rel=1e-14)
    # Here the CLT understates the PLD upper bound: it is not a guarantee.
    assert res.epsilon < dpsgd_epsilon(1.1, 0.01, 1000, DELTA).epsilon


@pytest.mark.parametrize("method", ["pld", "rdp", "gdp"])
def test_calibrated_sigma_meets_the_target_under_its_accountant(method):
    q, steps, target = 0.05, 200, 2.0
    res = dpsgd_sigma(target, DELTA, q, steps, method=method, rel_tol=1e-3)
    assert res.method == method and res.approximate == (method == "gdp")
    again = dpsgd_epsilon(res.sigma, q, steps, DELTA, method=method).epsilon
    assert again == res.epsilon <= target
    # ... and is the smallest such σ to the tolerance.
    assert dpsgd_epsilon(res.sigma * (1 - 2e-3), q, steps, DELTA, method=method).epsilon > target


def test_subsampled_pld_self_composition_matches_repeated_composition():
    one = PLD.subsampled_gaussian(1.0, 0.1)
    four = one.compose(one).compose(one.compose(one))
    eps = np.linspace(0, 1.5, 7)
    np.testing.assert_allclose(one.self_compose(4).delta(eps), four.delta(eps), rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda: dpsgd_epsilon(0.0, 0.01, 10, DELTA),
    lambda: dpsgd_epsilon(1.0, 0.0, 10, DELTA),
    lambda: dpsgd_epsilon(1.0, 1.01, 10, DELTA),
    lambda: dpsgd_epsilon(1.0, 0.01, 0, DELTA),
    lambda: dpsgd_epsilon(1.0, 0.01, 10, 0.0),
    lambda: dpsgd_epsilon(1.0, 0.01, 10, 1.0),
    lambda: dpsgd_epsilon(1.0, 0.01, 10, DELTA, method="moments"),
    lambda: dpsgd_sigma(0.0, DELTA, 0.01, 10),
    lambda: dpsgd_sigma(1.0, DELTA, 0.01, 10, rel_tol=0),
    lambda: rdp_subsampled_gaussian(1.0, 0.1, orders=[0.5]),
])
def test_bad_parameters_raise_one_line_errors(call):
    with pytest.raises(ParameterError) as err:
        call()
    assert "\n" not in str(err.value)
