"""``dpstudio compare`` on the bundled samples (issue 12, item 3): each trust model's
expected error, like with like, against closed forms; for the analyst's eyes, nothing
released, no real noise drawn."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpstudio.cli import main
from dpstudio.data import sample_path

SURVEY = sample_path("survey")
HEALTH = sample_path("health")
KEYS = {"trust_model", "mechanism", "rmse", "noise", "bias", "epsilon", "delta", "relation",
        "n_known"}


def compare(capsys, *argv) -> tuple[int, dict | str, str]:
    code = main(["compare", *[str(a) for a in argv]])
    out, err = capsys.readouterr()
    if code == 0 and "--json" in argv:
        return code, json.loads(out), err
    return code, out, err


def rows(data: dict) -> dict[str, dict]:
    return {r["trust_model"]: r for r in data["models"]}


@pytest.fixture(scope="module")
def ages() -> np.ndarray:
    return pd.read_csv(SURVEY)["age"].to_numpy(dtype=float)


def test_every_model_at_the_same_footing_with_the_exact_keys(capsys, ages):
    code, data, err = compare(capsys, SURVEY, "--column", "age", "--query", "mean",
                              "--epsilon", "1", "--json")
    assert code == 0, err
    assert [r["trust_model"] for r in data["models"]] == ["central", "local", "shuffle",
                                                          "distributed"]
    for r in data["models"]:
        assert KEYS <= set(r)
        assert r["relation"] == "replace" and r["n_known"] is True
        assert r["epsilon"] == 1.0 and r["analyst_only"] is True
        assert r["rmse"] == pytest.approx(math.hypot(r["noise"], r["bias"]), rel=1e-12)
    assert rows(data)["shuffle"]["delta"] == 1e-6 and rows(data)["local"]["delta"] == 0.0
    # Like with like: the central model is the least error of all.
    assert data["models"][0]["rmse"] == min(r["rmse"] for r in data["models"])
    assert data["analyst_only"] is True and data["released"] is False
    assert "analyst's eyes" in data["note"] and "no real noise" in data["note"]


def test_laplace_mean_with_n_known_is_the_closed_form(capsys, ages):
    """√2·(U − L)/(nε): the Laplace sum over a public n (declared bounds 18–100)."""
    n, eps = ages.size, 0.7
    code, data, _ = compare(capsys, SURVEY, "--column", "age", "--query", "mean",
                            "--epsilon", eps, "--mechanism", "laplace", "--json")
    central = rows(data)["central"]
    assert code == 0 and central["mechanism"] == "laplace" and central["bias"] == 0.0
    assert central["noise"] == pytest.approx(math.sqrt(2) * (100 - 18) / (n * eps), rel=1e-9)
    # The local mean: every person adds Laplace((U − L)/ε): √2·(U − L)/(ε√n).
    local = rows(data)["local"]
    assert local["noise"] == pytest.approx(math.sqrt(2) * 82 / (eps * math.sqrt(n)), rel=1e-6)


def test_the_default_central_mechanism_is_the_best_at_epsilon_delta(capsys, ages):
    """Whole-number ages: the discrete Laplace of scale t = (U − L)/ε steps, variance
    2r/(1 − r)² with r = e^{−1/t}, just below the continuous one's."""
    n, eps = ages.size, 2.0
    code, data, _ = compare(capsys, SURVEY, "--column", "age", "--query", "mean",
                            "--epsilon", eps, "--json")
    central = rows(data)["central"]
    r = math.exp(-eps / 82)
    assert central["mechanism"] == "discrete_laplace"
    assert central["noise"] == pytest.approx(math.sqrt(2 * r) / (1 - r) / n, rel=1e-9)


def test_tight_bounds_bias_every_model_by_the_clamped_mean(capsys, ages):
    code, data, _ = compare(capsys, SURVEY, "--column", "age", "--query", "mean",
                            "--bounds", "18,30", "--epsilon", "1", "--json")
    bias = float(np.mean(np.clip(ages, 18, 30)) - np.mean(ages))
    assert code == 0
    for r in data["models"]:
        assert r["bias"] == pytest.approx(bias, rel=1e-9)
        assert r["rmse"] == pytest.approx(math.hypot(r["noise"], bias), rel=1e-12)
    clamping = data["clamping"]
    outside = np.count_nonzero(ages > 30) / ages.size
    assert clamping["fraction_outside"] == pytest.approx(outside)
    assert clamping["warning"] == (f"{100 * outside:.2g}% of values are outside 18–30: the "
                                   "mean is biased; widen the bounds")


def test_the_protocols_numbers_are_their_plans(capsys, ages):
    from dpstudio.engine.distributed import plan_secure_sum
    from dpstudio.engine.shuffle import plan_shuffle_sum

    code, data, _ = compare(capsys, SURVEY, "--column", "age", "--query", "sum",
                            "--epsilon", "0.5", "--delta", "1e-7", "--json")
    assert code == 0 and "local" not in rows(data)  # no local sum
    shuffle = plan_shuffle_sum(ages.size, (18.0, 100.0), "cloak", 0.5, 1e-7, query="sum")
    secure = plan_secure_sum(ages.size, (18.0, 100.0), "secagg_gaussian", 0.5, 1e-7,
                             query="sum")
    assert rows(data)["shuffle"]["noise"] == pytest.approx(shuffle.stderr, rel=1e-12)
    assert rows(data)["distributed"]["noise"] == pytest.approx(secure.stderr, rel=1e-12)
    assert rows(data)["central"]["rmse"] < rows(data)["shuffle"]["rmse"]


def test_a_histogram_per_cell_and_the_curator_at_large_epsilon(capsys):
    """Laplace on a replace-one histogram: two cells change by one, so 2√2/ε per cell. At
    ε = 20 randomized response is all but exact: the curator runs it itself, and says so."""
    code, data, _ = compare(capsys, HEALTH, "--column", "smoker", "--query", "histogram",
                            "--epsilon", "0.5", "--mechanism", "laplace", "--json")
    assert code == 0
    assert rows(data)["central"]["noise"] == pytest.approx(2 * math.sqrt(2) / 0.5, rel=1e-9)
    code, data, _ = compare(capsys, HEALTH, "--column", "smoker", "--query", "histogram",
                            "--epsilon", "20", "--json")
    central, local = rows(data)["central"], rows(data)["local"]
    assert central["rmse"] == local["rmse"] and central["mechanism"] == local["mechanism"]
    assert "the curator runs the local protocol itself" in central["assumptions"]


def test_add_remove_keeps_central_there_and_the_others_say_why(capsys, ages):
    """Under add-remove the central mean is a noisy sum over a noisy count, each with ε/2
    (delta method); the protocols cannot be stated there and say so."""
    n, eps = ages.size, 1.0
    code, data, _ = compare(capsys, SURVEY, "--column", "age", "--query", "mean",
                            "--epsilon", eps, "--relation", "add-remove", "--mechanism",
                            "laplace", "--json")
    central = rows(data)["central"]
    assert code == 0 and central["relation"] == "add-remove" and central["n_known"] is False
    var_sum, var_count = 2 * (100 / (eps / 2)) ** 2, 2 * (1 / (eps / 2)) ** 2
    m = ages.mean()
    assert central["noise"] == pytest.approx(math.sqrt(var_sum + m * m * var_count) / n,
                                             rel=1e-9)
    assert "n unknown (ε split: sum, count)" in central["assumptions"]
    for tm in ("local", "shuffle", "distributed"):
        r = rows(data)[tm]
        assert r["relation"] == "replace"
        assert r["assumptions"].endswith("(stated under replace-one only)")


def test_the_table_says_whose_eyes_and_releases_nothing(capsys, monkeypatch, tmp_path):
    """No real noise: the OS CSPRNG is never asked for a bit."""
    from dpstudio.engine import rng

    def refuse(self, size):
        raise AssertionError("compare drew real noise")

    monkeypatch.setattr(rng.SecureSource, "uint64", refuse)
    monkeypatch.chdir(tmp_path)
    code, out, err = compare(capsys, SURVEY, "--column", "age", "--query", "mean",
                             "--bounds", "18,30", "--epsilon", "1")
    assert code == 0, err
    assert "FOR THE ANALYST'S EYES ONLY" in out
    assert "nothing is released and no real noise is drawn" in out
    for tm in ("central", "local", "shuffle", "distributed"):
        assert f"\n  {tm} " in out
    assert "warning: 4.3% of values are outside 18–30: the mean is biased" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv,message", [
    (("--column", "income", "--query", "mean", "--epsilon", "1", "--bounds", "x"),
     "expected LOWER,UPPER"),
    (("--column", "age", "--query", "mean", "--epsilon", "0"), "ε"),
    (("--column", "age", "--query", "mean", "--epsilon", "1", "--mechanism", "sfp"),
     "sfp does not answer a mean"),
    (("--column", "nope", "--query", "mean", "--epsilon", "1", "--bounds", "0,1"), "nope"),
])
def test_bad_input_is_one_line(capsys, argv, message):
    code, out, err = compare(capsys, SURVEY, *argv)
    assert code == 2 and out == ""
    assert err.startswith("dpstudio") and err.count("\n") == 1 and message in err


def test_missing_values_are_named_as_the_cause_of_the_bias(capsys):
    """Survey gpa: no value outside 0–4, 4.5% missing sent as the middle (2): the bias is
    the missing values', the JSON splits it, and the table warns (before: no warning)."""
    gpa = pd.read_csv(SURVEY)["gpa"].to_numpy(dtype=float)
    code, data, _ = compare(capsys, SURVEY, "--column", "gpa", "--query", "mean",
                            "--epsilon", "1", "--json")
    assert code == 0
    clamping = data["clamping"]
    present = gpa[np.isfinite(gpa)]
    sent = np.where(np.isnan(gpa), 2.0, gpa)
    assert clamping["fraction_outside"] == 0.0 and clamping["clamping_bias"] == 0.0
    assert clamping["missing_bias"] == pytest.approx(sent.mean() - present.mean(), rel=1e-9)
    assert clamping["missing_fraction"] == pytest.approx(np.isnan(gpa).mean())
    assert clamping["missing_value"] == 2.0 and clamping["cause"] == "missing"
    for r in data["models"]:
        assert r["bias"] == pytest.approx(clamping["bias"], rel=1e-9)
    code, out, _ = compare(capsys, SURVEY, "--column", "gpa", "--query", "mean",
                           "--epsilon", "1")
    assert ("warning: 4.5% of values are missing and sent as the middle of the bounds (2): "
            "they bias the mean by -0.03") in out


def test_a_model_that_cannot_reach_epsilon_is_listed_with_the_reason(capsys):
    """Shuffle at ε = 20 with δ = 1e-6 on 2,000 people: no Skellam shares meet it. Before,
    the row was silently missing; now it is there with rmse null and one sentence."""
    code, data, err = compare(capsys, SURVEY, "--column", "age", "--query", "mean",
                              "--epsilon", "20", "--json")
    assert code == 0, err
    assert [r["trust_model"] for r in data["models"]] == ["central", "local", "shuffle",
                                                          "distributed"]
    shuffle = rows(data)["shuffle"]
    assert KEYS <= set(shuffle)
    assert shuffle["rmse"] is None and shuffle["noise"] is None
    assert shuffle["reason"].startswith("cannot reach ε = 20 with δ = 1e-6 for 2,000 people")
    assert shuffle["reason"].count(". ") == 0  # one sentence
    for tm in ("central", "local", "distributed"):
        assert rows(data)[tm]["rmse"] > 0 and "reason" not in rows(data)[tm]
    code, out, _ = compare(capsys, SURVEY, "--column", "age", "--query", "mean",
                           "--epsilon", "20")
    line = next(ln for ln in out.splitlines() if ln.startswith("  shuffle "))
    assert "—" in line and "cannot reach ε = 20 with δ = 1e-6 for 2,000 people" in line
