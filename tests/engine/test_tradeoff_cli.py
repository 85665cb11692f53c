"""``dpstudio tradeoff``: the JSON contract, the human summary, and bad input answered with
one line on stderr and exit code 2."""

import json
import math

import numpy as np
import pytest

from dpstudio.cli import main
from dpstudio.engine.tradeoff import gaussian_epsilon, gaussian_tradeoff, laplace_tradeoff

KEYS = {"alpha", "beta", "mechanism", "epsilon_delta_bound"}


def run(capsys, *argv):
    code = main(["tradeoff", *[str(a) for a in argv]])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [
    ["--mechanism", "gaussian", "--sigma", "1"],
    ["--mechanism", "gaussian", "--sigma", "2", "--sensitivity", "3", "--compose", "10",
     "--delta", "1e-6"],
    ["--mechanism", "laplace", "--scale", "2"],
    ["--mechanism", "rr", "--epsilon", "1", "--compose", "5"],
    ["--mechanism", "krr", "--epsilon", "0.5", "--k", "4", "--compose", "3"],
])
@pytest.mark.parametrize("points", [2, 57])
def test_json_contract(capsys, argv, points):
    code, out, err = run(capsys, *argv, "--points", points, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert KEYS <= set(data) and data["mechanism"] == argv[1]
    assert len(data["alpha"]) == len(data["beta"]) == points
    assert data["alpha"][0] == 0.0 and data["alpha"][-1] == 1.0
    bound = data["epsilon_delta_bound"]
    assert {"epsilon", "delta", "alpha", "beta"} <= set(bound)
    assert len(bound["alpha"]) == len(bound["beta"]) == points
    # The curve lies above the bound it reports.
    assert np.all(np.array(data["beta"]) >= np.array(bound["beta"]) - 1e-12)
    assert data["exact"] is True


def test_gaussian_values(capsys):
    code, out, _ = run(capsys, "--mechanism", "gaussian", "--sigma", "2", "--sensitivity", "1",
                       "--compose", "16", "--json")
    data = json.loads(out)
    assert code == 0 and data["mu"] == pytest.approx(2.0) and data["compositions"] == 16
    np.testing.assert_allclose(data["beta"], gaussian_tradeoff(2.0, data["alpha"]).beta)
    bound = data["epsilon_delta_bound"]
    assert bound["delta"] == 1e-5 and bound["epsilon"] == gaussian_epsilon(2.0, 1e-5)


def test_pure_dp_values(capsys):
    code, out, _ = run(capsys, "--mechanism", "laplace", "--scale", "4", "--sensitivity", "2",
                       "--json")
    data = json.loads(out)
    assert code == 0
    np.testing.assert_allclose(data["beta"], laplace_tradeoff(0.5, data["alpha"]).beta)
    assert data["epsilon_delta_bound"]["epsilon"] == 0.5
    assert data["epsilon_delta_bound"]["delta"] == 0.0
    code, out, _ = run(capsys, "--mechanism", "krr", "--epsilon", "0.5", "--k", "3",
                       "--compose", "4", "--json")
    assert code == 0 and json.loads(out)["epsilon_delta_bound"]["epsilon"] == 2.0


def test_composed_laplace_is_marked_approximate(capsys):
    code, out, err = run(capsys, "--mechanism", "laplace", "--scale", "2", "--compose", "10",
                         "--points", "50", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["exact"] is False and data["compositions"] == 10
    assert data["epsilon_delta_bound"]["epsilon"] == pytest.approx(5.0)
    single = laplace_tradeoff(0.5, data["alpha"]).beta
    assert np.all(np.array(data["beta"]) <= single + 1e-9)


def test_human_summary(capsys):
    code, out, _ = run(capsys, "--mechanism", "gaussian", "--sigma", "1", "--compose", "4")
    assert code == 0
    assert "μ = 2" in out and "δ = 1e-05" in out and "0.5" in out
    code, out, _ = run(capsys, "--mechanism", "rr", "--epsilon", "1")
    assert code == 0 and "ε = 1" in out and "randomized response" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("  0.1 ")]
    assert float(rows[0][1]) == pytest.approx(1 - math.e * 0.1)


@pytest.mark.parametrize("argv", [
    ["--mechanism", "gaussian", "--sigma", "0"],
    ["--mechanism", "gaussian", "--sigma", "-1"],
    ["--mechanism", "gaussian", "--sigma", "nan"],
    ["--mechanism", "gaussian"],
    ["--mechanism", "gaussian", "--sigma", "1", "--delta", "0"],
    ["--mechanism", "gaussian", "--sigma", "1", "--sensitivity", "0"],
    ["--mechanism", "laplace", "--scale", "0"],
    ["--mechanism", "laplace"],
    ["--mechanism", "rr", "--epsilon", "0"],
    ["--mechanism", "rr", "--epsilon", "-2"],
    ["--mechanism", "rr"],
    ["--mechanism", "krr", "--epsilon", "1"],
    ["--mechanism", "krr", "--epsilon", "1", "--k", "1"],
    ["--mechanism", "rr", "--epsilon", "1", "--compose", "0"],
    ["--mechanism", "rr", "--epsilon", "1", "--points", "1"],
    ["--mechanism", "rr", "--epsilon", "1", "--sigma", "1"],
    ["--mechanism", "nonexistent", "--epsilon", "1"],
    ["--mechanism", "rr", "--epsilon", "one"],
    [],
])
def test_bad_input_exits_2_with_one_line(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
