"""``dpstudio release PLAN.toml`` (schema_version = 2): a plan released from the command
line, its exit codes, and version-1 specs beside it (issue 14)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpstudio.cli import main

PLAN = """schema_version = 2
dataset = "d.csv"
epsilon = {epsilon}
delta = 1e-6
rows = 400

[[statistics]]
column = "age"
query = "mean"
target = 2.0

[[statistics]]
column = "age"
query = "count"
by = ["sex"]
mechanism = "gaussian"
target = 8.0

[[statistics]]
column = "sex"
query = "histogram"
target = 8.0

[split]
method = "{method}"
"""


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def env(tmp_path, capsys):
    g = np.random.default_rng(4)
    ages = g.integers(18, 90, 400)
    sexes = g.choice(["f", "m", "x"], 400)  # "x" is not declared
    (tmp_path / "d.csv").write_text("age,sex\n" + "".join(
        f"{a},{s}\n" for a, s in zip(ages, sexes, strict=True)), encoding="utf-8")
    (tmp_path / "d.csv.schema.json").write_text(json.dumps({"schema_version": 1, "columns": [
        {"name": "age", "type": "numeric", "lower": 18, "upper": 90},
        {"name": "sex", "type": "categorical", "categories": ["f", "m", "n"]}]}),
        encoding="utf-8")
    project = tmp_path / "p.dpstudio"
    code, _, err = run(capsys, "project", "init", project, "--epsilon", "4", "--delta", "1e-5")
    assert code == 0, err
    return tmp_path, project


def _write(folder, epsilon=3.0, method="accuracy"):
    path = folder / "plan.toml"
    path.write_text(PLAN.format(epsilon=epsilon, method=method), encoding="utf-8")
    return path


def test_release_a_plan(env, capsys):
    folder, project = env
    code, out, err = run(capsys, "release", _write(folder), "--project", project, "--out",
                         folder / "out", "--json")
    assert code == 0, err
    entry = json.loads(out)
    assert entry["query"] == "plan" and entry["status"] == "done"
    stats = entry["result"]["statistics"]
    assert [s["label"] for s in stats] == ["mean of age", "count of age by sex",
                                           "histogram of sex"]
    assert list(stats[1]["value"]) == ["f", "m", "n"]  # declared; "x" never shown
    assert "x" not in stats[2]["value"]
    assert sum(s["epsilon"] for s in stats) == pytest.approx(entry["epsilon"], rel=1e-12)
    assert entry["budget"]["spent_epsilon"] == pytest.approx(entry["epsilon"])
    assert sum(1 for f in entry["files"] if f["role"] == "manifest") == 1


def test_plain_output_and_exit_codes(env, capsys):
    folder, project = env
    code, out, err = run(capsys, "release", _write(folder, method="weights"), "--project",
                         project, "--out", folder / "out")
    assert code == 0, err
    assert "plan of 3 statistics (ε = 3, δ = 1e-06, one charge)" in out
    # 3 of 4 spent: the same plan again is over the budget (exit 3, nothing written).
    code, _, err = run(capsys, "release", _write(folder, method="weights"), "--project",
                       project, "--out", folder / "again")
    assert code == 3 and "budget exceeded" in err and not (folder / "again").exists()
    # Targets the plan's ε cannot buy: one line, exit 2.
    code, _, err = run(capsys, "release", _write(folder, epsilon=0.05), "--project", project,
                       "--out", folder / "out")
    assert code == 2 and err.count("\n") == 1 and "the targets need ε = " in err


def test_a_version_1_spec_still_releases(env, capsys):
    folder, project = env
    (folder / "one.toml").write_text(
        'schema_version = 1\ndataset = "d.csv"\ncolumn = "age"\nquery = "mean"\n'
        'mechanism = "laplace"\nepsilon = 0.5\n', encoding="utf-8")
    code, out, err = run(capsys, "release", folder / "one.toml", "--project", project,
                         "--out", folder / "out")
    assert code == 0, err
    assert out.startswith("release #1 done: mean of 'age'")


def test_bad_plan_specs_are_one_line(env, capsys):
    folder, project = env
    text = PLAN.format(epsilon=3, method="weights") + "weights = [1, 2]\n"
    (folder / "bad.toml").write_text(text, encoding="utf-8")
    code, _, err = run(capsys, "release", folder / "bad.toml", "--project", project, "--out",
                       folder / "out")
    assert code == 2 and err.count("\n") == 1
    assert "weights must be 3 positive numbers" in err
