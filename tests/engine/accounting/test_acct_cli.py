"""``dpstudio account``: the JSON contract, summaries, and one-line errors with exit 2."""

import json
import math
from fractions import Fraction

import pytest

from dpstudio.cli import main
from dpstudio.engine.accounting import PLD, dpsgd_epsilon, gdp_epsilon

CONTRACT = {"epsilon", "delta", "method"}
DPSGD = ["account", "--mechanism", "subsampled-gaussian", "--sigma", "1.1",
         "--sample-rate", "0.01", "--steps", "1000", "--delta", "1e-5"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("method", [None, "pld", "rdp", "gdp"])
def test_dpsgd_json_contract(capsys, method):
    extra = [] if method is None else ["--method", method]
    code, out, err = run(capsys, *DPSGD, *extra, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert CONTRACT <= set(data)
    expected = dpsgd_epsilon(1.1, 0.01, 1000, 1e-5, method or "pld")
    assert data["epsilon"] == expected.epsilon
    assert data["delta"] == 1e-5 and data["method"] == (method or "pld")
    assert data["approximate"] is (method == "gdp")
    assert (data["mechanism"], data["sigma"], data["sample_rate"], data["steps"]) == (
        "subsampled-gaussian", 1.1, 0.01, 1000)


def test_gaussian_compose_is_exact_by_default_and_pld_bounds_it(capsys):
    base = ["account", "--mechanism", "gaussian", "--sigma", "2", "--sensitivity", "1.5",
            "--compose", "10", "--delta", "1e-6", "--json"]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    exact = json.loads(out)
    assert exact["method"] == "exact" and not exact["approximate"]
    assert exact["epsilon"] == gdp_epsilon(math.sqrt(10) * 1.5 / 2, 1e-6)
    code, out, _ = run(capsys, *base, "--method", "pld")
    pld = json.loads(out)["epsilon"]
    assert exact["epsilon"] <= pld <= exact["epsilon"] * (1 + 1e-4)
    code, out, _ = run(capsys, *base, "--method", "rdp")
    assert json.loads(out)["epsilon"] > pld


def test_laplace_pure_epsilon_is_k_delta_over_b_rounded_up(capsys):
    code, out, err = run(capsys, "account", "--mechanism", "laplace", "--scale", "3",
                         "--compose", "7", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["delta"] == 0 and data["method"] == "exact"
    assert Fraction(data["epsilon"]) >= Fraction(7, 3)
    assert data["epsilon"] == pytest.approx(7 / 3, rel=1e-15)
    code, out, err = run(capsys, "account", "--mechanism", "laplace", "--scale", "3",
                         "--compose", "7", "--delta", "1e-6", "--json")
    data = json.loads(out)
    assert data["method"] == "pld"
    assert data["epsilon"] == PLD.laplace(3.0).self_compose(7).epsilon(1e-6) < 7 / 3


def test_dpsgd_sensitivity_scales_the_noise_multiplier(capsys):
    code, out, err = run(capsys, *DPSGD[:4], "2.2", *DPSGD[5:], "--sensitivity", "2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["epsilon"] == dpsgd_epsilon(1.1, 0.01, 1000, 1e-5).epsilon
    assert (data["sigma"], data["sensitivity"]) == (2.2, 2.0)


def test_human_summary(capsys):
    code, out, err = run(capsys, *DPSGD)
    assert code == 0 and err == ""
    assert "ε = 1.5153" in out and "upper bound" in out
    code, out, _ = run(capsys, *DPSGD, "--method", "gdp")
    assert "APPROXIMATION" in out


@pytest.mark.parametrize("argv", [
    ["--mechanism", "gaussian", "--sigma", "0", "--delta", "1e-5"],
    ["--mechanism", "gaussian", "--sigma", "-1", "--delta", "1e-5"],
    ["--mechanism", "gaussian", "--sigma", "nan", "--delta", "1e-5"],
    ["--mechanism", "gaussian", "--sigma", "1"],
    ["--mechanism", "gaussian", "--sigma", "1", "--delta", "0"],
    ["--mechanism", "gaussian", "--sigma", "1", "--delta", "1"],
    ["--mechanism", "gaussian", "--sigma", "1", "--delta", "1e-5", "--compose", "0"],
    ["--mechanism", "subsampled-gaussian", "--sigma", "1", "--sample-rate", "0",
     "--steps", "10", "--delta", "1e-5"],
    ["--mechanism", "subsampled-gaussian", "--sigma", "1", "--sample-rate", "1.5",
     "--steps", "10", "--delta", "1e-5"],
    ["--mechanism", "subsampled-gaussian", "--sigma", "1", "--sample-rate", "0.1",
     "--steps", "0", "--delta", "1e-5"],
    ["--mechanism", "subsampled-gaussian", "--sigma", "1", "--sample-rate", "0.1",
     "--delta", "1e-5"],
    ["--mechanism", "subsampled-gaussian", "--sigma", "1", "--sample-rate", "0.1",
     "--steps", "10", "--delta", "1e-5", "--method", "exact"],
    ["--mechanism", "laplace", "--compose", "3"],
    ["--mechanism", "laplace", "--scale", "1", "--method", "rdp"],
    ["--mechanism", "laplace", "--scale", "1", "--delta", "1e-6", "--method", "gdp"],
    ["--mechanism", "laplace", "--scale", "1", "--delta", "-0.5"],
    ["--mechanism", "exponential", "--scale", "1"],
    ["--mechanism", "gaussian", "--sigma", "one", "--delta", "1e-5"],
    ["--mechanism", "gaussian", "--sigma", "1", "--delta", "1e-5", "--steps", "2.5"],
    # Flags of another mechanism are refused, never ignored (--compose would understate ε).
    [*DPSGD[1:], "--compose", "10"],
    ["--mechanism", "gaussian", "--sigma", "1", "--delta", "1e-5", "--sample-rate", "0.1"],
    ["--mechanism", "laplace", "--scale", "1", "--sigma", "1"],
])
def test_bad_arguments_exit_2_with_one_line(capsys, argv):
    code, out, err = run(capsys, "account", *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and "error" in err and "Traceback" not in err
