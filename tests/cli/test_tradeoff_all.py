"""``dpstudio tradeoff --mechanism NAME`` for every mechanism the application offers: the
JSON (``exact``, ``region_only`` and its sentence), the human summary, and bad parameters
answered with one sentence."""

import json

import numpy as np
import pytest

from dpstudio.analysis.choices import VIEW_TRUST_MODELS
from dpstudio.cli import main
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.tradeoff import (
    alpha_grid,
    curve_example,
    exponential_mechanism_tradeoff,
    pair_tradeoff,
    unary_encoding_pair,
)

OFFERED = [i.name for i in REGISTRY if set(i.trust_models) & set(VIEW_TRUST_MODELS)]


def run(capsys, *argv):
    code = main(["tradeoff", *[str(a) for a in argv]])
    out, err = capsys.readouterr()
    return code, out, err


def flags(name):
    out = []
    for key, value in curve_example(name).items():
        out += ["--" + key.replace("_", "-"), value]
    return out


@pytest.mark.parametrize("name", OFFERED)
def test_every_offered_mechanism_prints_its_curve(capsys, name):
    code, out, err = run(capsys, "--mechanism", name, *flags(name), "--points", 33, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["mechanism"] == name and len(data["alpha"]) == len(data["beta"]) == 33
    assert isinstance(data["exact"], bool) and isinstance(data["region_only"], bool)
    assert data["compositions"] == 1
    bound = data["epsilon_delta_bound"]
    assert np.all(np.array(data["beta"]) >= np.array(bound["beta"]) - 1e-9)
    if data["region_only"]:
        assert data["exact"] is False
        assert data["region_note"].startswith("Only the (ε, δ) guarantee")
    else:
        assert "region_note" not in data


def test_values_and_composition(capsys):
    code, out, _ = run(capsys, "--mechanism", "sue", "--epsilon", 2, "--compose", 3,
                       "--points", 40, "--json")
    data = json.loads(out)
    from dpstudio.engine.tradeoff import compose_pair

    expected = pair_tradeoff(compose_pair(unary_encoding_pair(2.0, False), 3), alpha_grid(40))
    assert code == 0 and data["exact"] is True and data["compositions"] == 3
    np.testing.assert_allclose(data["beta"], expected.beta)
    assert data["epsilon_delta_bound"] == {**data["epsilon_delta_bound"], "epsilon": 6.0,
                                           "delta": 0.0}
    code, out, _ = run(capsys, "--mechanism", "exponential", "--epsilon", 0.5, "--json")
    data = json.loads(out)
    np.testing.assert_allclose(data["beta"],
                               exponential_mechanism_tradeoff(0.5, alpha_grid(200)).beta)
    code, out, _ = run(capsys, "--mechanism", "secagg_gaussian", "--epsilon", 1, "--delta",
                       1e-6, "--clients", 10, "--sensitivity", 4, "--json")
    data = json.loads(out)
    assert code == 0 and data["params"]["clients"] == 10 and data["params"]["sigma"] > 0
    assert data["epsilon_delta_bound"]["epsilon"] <= 1.0


def test_wide_curves_leave_their_knots_out(capsys):
    code, out, _ = run(capsys, "--mechanism", "local_gaussian", "--json", "--points", 5)
    data = json.loads(out)
    assert code == 0 and "knots" not in data and data["knots_omitted"] > 50_000


def test_region_only_summary_says_so(capsys):
    code, out, _ = run(capsys, "--mechanism", "blanket", "--epsilon", 0.5, "--delta", 1e-7)
    assert code == 0 and "region only" in out and "Only the (ε, δ) guarantee" in out
    code, out, _ = run(capsys, "--mechanism", "olh", "--g", 5)
    assert code == 0 and "g = 5" in out and "exact" in out


@pytest.mark.parametrize("argv", [
    ["--mechanism", "oue", "--epsilon", "0"],
    ["--mechanism", "olh", "--g", "1"],
    ["--mechanism", "sue", "--k", "3"],
    ["--mechanism", "sue", "--sigma", "1"],
    ["--mechanism", "discrete_gaussian", "--sigma", "2", "--epsilon", "1"],
    ["--mechanism", "skellam", "--sensitivity", "1.5"],
    ["--mechanism", "skellam", "--variance", "0"],
    ["--mechanism", "secagg_gaussian", "--clients", "0"],
    ["--mechanism", "sfp", "--fragment-share", "1"],
    ["--mechanism", "cloak", "--delta", "1"],
    ["--mechanism", "hadamard", "--compose", "0"],
    ["--mechanism", "federated_thing"],
])
def test_bad_parameter_is_one_sentence(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
