"""``dpstudio train --runs R`` reports each metric's spread over repeated simulated runs,
and ``--sites-alone`` trains each site alone at the same ε: with small sites, alone is
visibly worse than federated averaging (the value of collaborating)."""

import json

import numpy as np
import pytest

from dpstudio.cli import main


@pytest.fixture(scope="module")
def small_sites(tmp_path_factory):
    """1,200 rows, 4 features in [-1, 1], a logistic truth (accuracy ≈ 0.87 at best)."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (1200, 4))
    y = np.where(X @ np.array([4.0, -3.0, 2.0, 1.0]) + rng.logistic(size=1200) > 0,
                 "yes", "no")
    path = tmp_path_factory.mktemp("spread") / "small.csv"
    path.write_text("a,b,c,d,y\n" + "\n".join(
        ",".join(f"{v:.5f}" for v in row) + f",{label}" for row, label in zip(X, y, strict=True))
        + "\n", encoding="utf-8")
    path.with_name("small.csv.schema.json").write_text(json.dumps({
        "schema_version": 1, "columns": [
            *({"name": c, "type": "numeric", "lower": -1, "upper": 1} for c in "abcd"),
            {"name": "y", "type": "boolean"}]}), encoding="utf-8")
    return path


def _train(capsys, path, *extra):
    code = main(["train", str(path), "--label", "y", "--features", "a,b,c,d",
                 "--method", "dpsgd", "--epsilon", "1", "--delta", "1e-5", *extra, "--json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code == 0 else out.err)


def test_runs_give_each_metrics_spread_and_the_first_run_is_the_single_run(capsys,
                                                                           small_sites):
    code, single = _train(capsys, small_sites, "--epochs", "2", "--simulate", "3")
    assert code == 0 and "spread" not in single
    code, many = _train(capsys, small_sites, "--epochs", "2", "--simulate", "3",
                        "--runs", "6")
    assert code == 0
    assert many["accuracy"] == single["accuracy"]  # run 1 is the seed's own run
    for key in ("accuracy", "auc"):
        sp = many["spread"][key]
        assert sp["runs"] == 6 and sp["min"] <= many[key] <= sp["max"]
        assert sp["min"] <= sp["mean"] <= sp["max"]
        # Power: each run draws its own noise (a shared stream would give sd = 0).
        assert sp["sd"] > 0 and sp["max"] > sp["min"]


def test_each_site_alone_is_worse_than_training_together(capsys, small_sites):
    code, out = _train(capsys, small_sites, "--sites", "20", "--fed-variant", "secagg",
                       "--rounds", "20", "--sites-alone", "--simulate", "1")
    assert code == 0
    alone = out["sites_alone"]
    assert len(alone) == 20 and sum(s["rows"] for s in alone) == out["split"]["train"]
    measured = [s["accuracy"] for s in alone if "accuracy" in s]
    assert len(measured) >= 15
    # ~45 rows a site at ε = 1: alone ≈ 0.62 on average, together ≈ 0.85.
    assert np.mean(measured) < out["accuracy"] - 0.1
    assert out["accuracy"] > 0.8


@pytest.mark.parametrize("extra, message", [
    # B declared: a DP-SGD release without it is refused first (its divisor is never q·n)
    (("--runs", "3", "--expected-batch", "5"), "is a simulation"),
    (("--sites", "4", "--fed-variant", "secagg", "--sites-alone", "--expected-batch", "5"),
     "is a simulation"),
    (("--sites-alone", "--simulate", "1"), "needs sites"),
    (("--runs", "0", "--simulate", "1"), "between 1 and"),
])
def test_runs_and_sites_alone_are_refused_in_one_sentence(capsys, small_sites, extra,
                                                          message):
    code, err = _train(capsys, small_sites, *extra)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_secagg_is_near_central_dpsgd_and_local_is_visibly_worse(capsys, small_sites):
    # The lecture's point on numbers, at equal (ε, δ) = (0.3, 1e-5), mean of 5 runs:
    # measured secagg 0.847, central DP-SGD 0.819, local 0.585 (sd 0.10).
    def mean(*extra):
        code, out = _train(capsys, small_sites, "--runs", "5", "--simulate", "1", *extra)
        assert code == 0 and out["epsilon"] <= 0.3 + 1e-9
        return out["spread"]["accuracy"]["mean"]

    args = ("--epsilon", "0.3")
    central = mean("--epochs", "2", *args)
    secagg = mean("--sites", "20", "--fed-variant", "secagg", "--rounds", "20", *args)
    local = mean("--sites", "20", "--fed-variant", "local", "--rounds", "20", *args)
    assert abs(secagg - central) <= 0.06
    assert local < min(secagg, central) - 0.15
