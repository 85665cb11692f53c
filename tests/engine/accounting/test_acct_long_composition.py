"""Very long compositions (issue 10, item 11): the PLD accountant stays a proven upper bound
or refuses; it never prints overflow warnings or a meaningless ε.

Before the fix, 10¹² DP-SGD steps coarsened one step's PLD again and again (each run then
adds about a grid step² of variance, so the Chernoff window never fit), down to a grid
step above 709 where the connect-the-dots split overflowed: "overflow encountered in
expm1", NaN masses, and ε = 2.2·10¹⁵ (RDP's bound is 7.0·10⁷).
"""

import json
import math
import warnings

import pytest

from dpstudio.cli import main
from dpstudio.engine.accounting import PLD, gdp_epsilon, rdp_epsilon
from dpstudio.engine.accounting.pld import MAX_SELF_COMPOSE
from dpstudio.engine.accounting.rdp import rdp_subsampled_gaussian
from dpstudio.engine.errors import ParameterError


def test_a_trillion_dpsgd_steps_give_a_bound_below_rdp_and_no_warning(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning fails the test
        code = main(["account", "--mechanism", "subsampled-gaussian", "--sigma", "1.1",
                     "--sample-rate", "0.01", "--steps", str(10**12), "--delta", "1e-5",
                     "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    eps = json.loads(out)["epsilon"]
    rdp = rdp_epsilon(rdp_subsampled_gaussian(1.1, 0.01) * 10**12, 1e-5)
    # Both are upper bounds; the PLD one is the tighter (it was 3·10⁷ times looser).
    assert math.isfinite(eps) and eps <= rdp


@pytest.mark.parametrize("sigma,k", [(1000.0, 10**10), (10000.0, 10**11)])
def test_the_two_stage_composition_bounds_the_exact_gaussian_from_above_and_closely(sigma, k):
    # k Gaussian runs are one Gaussian with σ/√k: the exact ε is known. The long
    # composition must stay above it (pessimistic) and be useful (within 15 %).
    exact = gdp_epsilon(math.sqrt(k) / sigma, 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = PLD.gaussian(sigma, tail_mass_truncation=1e-22).self_compose(k).epsilon(1e-6)
    assert exact <= got <= 1.15 * exact


def test_the_pld_refuses_more_runs_than_its_arithmetic_covers():
    with pytest.raises(ParameterError, match="--method rdp"):
        PLD.gaussian(1.0).self_compose(MAX_SELF_COMPOSE + 1)


def test_the_cli_refuses_counts_no_accountant_can_bound(capsys):
    code = main(["account", "--mechanism", "laplace", "--scale", "2", "--compose",
                 str(10**20), "--delta", "1e-6", "--method", "rdp"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "at most 2^53" in err


def test_the_pld_says_why_it_cannot_bound_a_long_gaussian_composition(capsys):
    # 10¹² runs drop up to 10¹²·10⁻¹⁵ of tail mass, more than δ: say so and point to rdp
    # (it used to say "ε is unbounded", which is false: the exact ε is 1.25·10¹¹).
    code = main(["account", "--mechanism", "gaussian", "--sigma", "2", "--compose",
                 str(10**12), "--delta", "1e-6", "--method", "pld"])
    _, err = capsys.readouterr()
    assert code == 2 and "--method rdp" in err and "unbounded" not in err
