"""``dpstudio train --expected-batch B``: DP-SGD's step divisor is declared, never read off
the data. A simulation without B divides by q·n and says so; a release without B is
refused in one sentence, before anything is drawn; the notes say which divisor ran."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpstudio.analysis.expected_batch import REFUSAL
from dpstudio.cli import main
from dpstudio.engine.learning import dpsgd

SCHEMA = {"schema_version": 1, "columns": [
    {"name": "a", "type": "numeric", "lower": 0, "upper": 10},
    {"name": "b", "type": "numeric", "lower": -5, "upper": 5},
    {"name": "region", "type": "categorical", "categories": ["north", "south", "east"]},
    {"name": "outcome", "type": "boolean"}]}
BASE = ("--label", "outcome", "--features", "a,b", "--method", "dpsgd", "--epsilon", "2",
        "--delta", "1e-5", "--epochs", "1", "--batch-rate", "0.1")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 400
    a, b = rng.uniform(0, 10, n), rng.uniform(-5, 5, n)
    g = rng.choice(["north", "south", "east"], n)
    y = np.where((a - 5) + b + rng.logistic(size=n) > 0, "yes", "no")
    path = tmp_path_factory.mktemp("batch") / "small.csv"
    path.write_text("a,b,region,outcome\n" + "\n".join(
        f"{x:.4f},{z:.4f},{r},{o}" for x, z, r, o in zip(a, b, g, y, strict=True)) + "\n",
        encoding="utf-8")
    path.with_name("small.csv.schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    return path


def _train(capsys, *argv):
    code = main(["train", *[str(a) for a in argv], "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else out), err


def test_a_simulation_with_b_divides_by_it_and_says_so(capsys, small):
    code, d, err = _train(capsys, small, *BASE, "--expected-batch", "30", "--simulate", "1")
    assert code == 0, err
    assert d["dpsgd"]["expected_batch"] == 30.0
    assert any("declared expected batch B = 30" in n for n in d["notes"])
    assert not any("read from the data" in n for n in d["notes"])


def test_a_simulation_without_b_divides_by_q_n_and_says_so(capsys, small):
    code, d, err = _train(capsys, small, *BASE, "--simulate", "1")
    assert code == 0, err
    assert d["dpsgd"]["expected_batch"] is None
    # 300 training rows (a quarter held out), q = 0.1: the divisor read is 30.
    note, = (n for n in d["notes"] if "read from the data" in n)
    assert "q·n = 30" in note and "declare expected_batch for a release" in note


def test_a_release_without_b_is_refused_in_one_line_before_any_draw(capsys, small,
                                                                    monkeypatch):
    drawn = []
    monkeypatch.setattr(dpsgd, "poisson_batch", lambda *a, **k: drawn.append(1))
    code, out, err = _train(capsys, small, *BASE)
    assert code == 2 and out == "" and drawn == []
    assert err.count("\n") == 1 and REFUSAL in err and "Traceback" not in err
    code, out, err = _train(capsys, small, *BASE[:-4], "--sites", "3", "--fed-variant",
                            "secagg", "--rounds", "1", "--local-steps", "1")
    assert code == 2 and REFUSAL in err and drawn == []


def test_a_release_with_b_runs_from_the_os_csprng(capsys, small):
    code, d, err = _train(capsys, small, *BASE, "--expected-batch", "30")
    assert code == 0, err
    assert d["simulated"] is False and "CSPRNG" in d["source"] and d["charged"] is False
    assert d["dpsgd"]["expected_batch"] == 30.0


def test_federated_b_is_per_site_and_noted(capsys, small):
    code, d, err = _train(capsys, small, *BASE[:-4], "--batch-rate", "0.1", "--sites", "3",
                          "--fed-variant", "secagg", "--rounds", "2", "--local-steps", "1",
                          "--expected-batch", "10", "--simulate", "2")
    assert code == 0, err
    assert d["federated"]["batch_size"] == 10.0
    assert any("B = 10 per site" in n for n in d["notes"])
    code, d, err = _train(capsys, small, *BASE[:-4], "--batch-rate", "0.1", "--sites", "3",
                          "--fed-variant", "local", "--rounds", "2", "--local-steps", "1",
                          "--simulate", "2")
    assert code == 0, err
    assert any("q·n/S = 10, read from the data" in n for n in d["notes"])


def test_expected_batch_belongs_to_dpsgd(capsys, small):
    code, out, err = _train(capsys, small, "--label", "outcome", "--features", "a,b",
                            "--method", "output", "--epsilon", "1", "--expected-batch", "5")
    assert code == 2 and err.count("\n") == 1 and "use --method dpsgd" in err
    code, out, err = _train(capsys, small, *BASE, "--expected-batch", "-3", "--simulate", "1")
    assert code == 2 and err.count("\n") == 1 and "expected_batch" in err
