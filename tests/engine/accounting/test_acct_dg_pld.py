"""The discrete Gaussian's PLD built in slices (engine/accounting/discrete_gaussian_pld):
the same PLD as from the two output distributions, and wide enough for the σ of a central
sum (tens of thousands of grid steps), where the one-piece build gave up."""

import math

import numpy as np
import pytest

from dpstudio.engine.accounting import discrete_gaussian_pld as dg
from dpstudio.engine.accounting.pld import PLD
from dpstudio.engine.errors import ParameterError


def _direct(sigma: float, sens: int) -> PLD:
    half = int(math.ceil(38 * sigma))
    x = np.arange(-half, half + 1, dtype=np.float64)
    pmf = np.exp(-(x * x) / (2 * sigma * sigma))
    pmf /= math.fsum(pmf)
    p = np.concatenate([pmf, np.zeros(sens)])
    q = np.concatenate([np.zeros(sens), pmf])
    return PLD.from_distributions(p, q, both_directions=False)


@pytest.mark.parametrize(("sigma", "sens"), [(0.7, 1), (3.0, 2), (40.0, 7)])
def test_slices_give_the_pld_of_the_two_distributions(sigma, sens, monkeypatch):
    monkeypatch.setattr(dg, "_SLICE", 37)  # many slices, odd boundaries
    sliced = dg.discrete_gaussian_pld(sigma, sens)
    direct = _direct(sigma, sens)
    for eps in (0.0, 0.1, 0.5, 1.0, 3.0):
        a, b = sliced.delta(eps), direct.delta(eps)
        assert a == pytest.approx(b, rel=1e-9, abs=1e-300)


def test_a_wide_discrete_gaussian_is_the_continuous_one_and_not_below_it():
    """σ = 60,000 steps (the one-piece build refused above ~55,000): twenty-fold, ε at
    δ = 2·10⁻⁵ matches the continuous Gaussian's exact ε (Balle & Wang) to 10⁻³, above."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    sigma, sens, k, delta = 60_000.0, 7_000, 20, 2e-5
    pld = dg.discrete_gaussian_pld(sigma, sens).self_compose(k)
    mu = math.sqrt(k) * sens / sigma
    exact = brentq(lambda e: norm.cdf(-e / mu + mu / 2)
                   - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta, 1e-9, 50, xtol=1e-13)
    assert exact - 1e-9 <= pld.epsilon(delta) <= exact + 1e-3
    # Power: half the shift is a different mechanism, far below.
    assert dg.discrete_gaussian_pld(sigma, sens // 2).self_compose(k).epsilon(delta) < exact - 0.3


def test_too_wide_or_bad_input():
    assert dg.discrete_gaussian_pld(dg.MAX_OUTPUTS, 1) is None
    with pytest.raises(ParameterError):
        dg.discrete_gaussian_pld(10.0, 0)
    with pytest.raises(ParameterError):
        dg.discrete_gaussian_pld(-1.0, 1)
