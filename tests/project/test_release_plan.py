"""Releasing a plan through a project (issue 14): one ledger transaction, one charge of
the plan's total, one manifest listing every statistic, grouped statistics over declared
keys, and version-1 specs untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from dpstudio.export.manifest import verify_manifest
from dpstudio.project import BudgetExceededError, Project, ProjectError
from dpstudio.project.spec import load_spec

ROWS = 600


def _dataset(folder: Path) -> Path:
    """score in [0, 10], a region among declared keys (east and west absent from the data,
    and an undeclared key "moon" on 30 rows)."""
    g = np.random.default_rng(11)
    score = g.integers(0, 11, ROWS)
    region = np.where(np.arange(ROWS) < 30, "moon", np.where(np.arange(ROWS) % 2, "north",
                                                              "south"))
    path = folder / "survey.csv"
    path.write_text("score,region\n" + "".join(f"{s},{r}\n" for s, r in zip(
        score, region, strict=True)), encoding="utf-8")
    schema = {"schema_version": 1, "columns": [
        {"name": "score", "type": "numeric", "lower": 0, "upper": 10},
        {"name": "region", "type": "categorical",
         "categories": ["north", "south", "east", "west"]}]}
    (folder / "survey.csv.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return path


PLAN = """schema_version = 2
dataset = "survey.csv"
epsilon = {epsilon}
confidence = 0.95
rows = {rows}
report = true
script = true

[[statistics]]
column = "score"
query = "count"
target = 6.0

[[statistics]]
column = "score"
query = "sum"
target = 120.0

[[statistics]]
column = "score"
query = "mean"
by = ["region"]
target = 0.6

[split]
method = "accuracy"
"""


@pytest.fixture
def env(tmp_path):
    data = _dataset(tmp_path)
    project = tmp_path / "study.dpstudio"
    Project.create(project, epsilon="5", delta="1e-5").close()
    return tmp_path, data, project


def _plan(folder: Path, epsilon: float = 4.0, name: str = "plan.toml") -> Path:
    path = folder / name
    path.write_text(PLAN.format(epsilon=epsilon, rows=ROWS), encoding="utf-8")
    return path


def test_a_plan_is_one_charge_and_one_manifest(env):
    folder, _, project = env
    spec = load_spec(_plan(folder))
    out = folder / "out"
    with Project.open(project) as p:
        check = p.check(spec, out)
        record = p.release(spec, out)
        ledger = p.ledger()
        budget = p.budget(record.dataset_id)
        assert p.integrity() == []
    shares = check["shares"]
    total = sum(Decimal(repr(e)) for e, _ in shares)
    assert len(ledger) == 1 and record.query == "plan" and record.status == "done"
    # Charged once, its total: never below the exact sum of the shares.
    assert record.epsilon == budget.spent_epsilon == check["epsilon"]
    assert total <= record.epsilon <= total * (1 + Decimal("1e-15"))
    manifests = [f for f in record.files if f.role == "manifest"]
    assert len(manifests) == 1
    doc = json.loads(manifests[0].path.read_text(encoding="utf-8"))
    assert [s["label"] for s in doc["statistics"]] == [
        "count of score", "sum of score", "mean of score by region"]
    assert [s["epsilon"] for s in doc["statistics"]] == pytest.approx([e for e, _ in shares])
    assert Decimal(doc["privacy"]["epsilon_exact"]) == record.epsilon
    assert verify_manifest(manifests[0].path).ok
    roles = sorted(f.role for f in record.files)
    assert roles == ["manifest", "report", "script", "table", "table"]
    # The one script re-runs the whole plan (fresh noise) on the dataset it names.
    script = next(f.path for f in record.files if f.role == "script")
    ran = subprocess.run([sys.executable, str(script), str(folder / "survey.csv")],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count("\n") == 3 and "mean score by ('region',)" in ran.stdout
    # With no argument it reads the dataset at its path, from any working folder.
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=script.parent)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count("\n") == 3
    # The ledger keeps what was drawn: the composed description of the three parts.
    assert record.loss["mechanism"] == "composed" and len(record.loss["parts"]) == 3


def test_grouped_means_show_declared_keys_only(env):
    folder, _, project = env
    with Project.open(project) as p:
        record = p.release(load_spec(_plan(folder)), folder / "out")
    grouped = record.result["statistics"][2]
    assert list(grouped["value"]) == ["north", "south", "east", "west"]  # absent ones too
    assert all(isinstance(v, float) for v in grouped["value"].values())
    for f in record.files:  # the undeclared key is in no file
        assert b"moon" not in f.path.read_bytes(), f.name


def test_budget_that_cannot_buy_the_targets_is_refused(env):
    folder, _, project = env
    out = folder / "out"
    with Project.open(project) as p, pytest.raises(ProjectError,
                                                   match="the targets need ε = "):
        p.release(load_spec(_plan(folder, epsilon=0.2)), out)
    assert not out.exists()
    # A plan over the dataset's budget: BudgetExceededError, nothing charged or written.
    spec = load_spec(_plan(folder))
    small = folder / "small.dpstudio"
    Project.create(small, epsilon="2", delta="1e-5").close()
    with Project.open(small) as p:
        p.release(spec, out)  # ε ≈ 1.66 of 2
        with pytest.raises(BudgetExceededError):
            p.release(spec, out)
        assert len(p.ledger()) == 1


def test_weights_plan_charges_its_stated_total_and_a_v1_spec_still_releases(env):
    folder, data, project = env
    text = PLAN.format(epsilon=1.5, rows=ROWS).replace(
        'method = "accuracy"', 'method = "weights"\nweights = [1, 1, 1]')
    (folder / "w.toml").write_text(text, encoding="utf-8")
    (folder / "v1.toml").write_text(
        'schema_version = 1\ndataset = "survey.csv"\ncolumn = "score"\nquery = "mean"\n'
        'mechanism = "laplace"\nepsilon = 0.5\n', encoding="utf-8")
    with Project.open(project) as p:
        plan = p.release(load_spec(folder / "w.toml"), folder / "out")
        one = p.release(load_spec(folder / "v1.toml"), folder / "out")
        spent = p.budget(plan.dataset_id).spent_epsilon
    assert plan.epsilon == Decimal("1.5")
    assert one.query == "mean" and one.epsilon == Decimal("0.5")
    assert spent == Decimal("2.0")


def test_undeclared_group_keys_are_refused_in_one_sentence(env):
    folder, _, project = env
    text = PLAN.format(epsilon=4, rows=ROWS).replace('by = ["region"]', 'by = ["score"]')
    (folder / "bad.toml").write_text(text, encoding="utf-8")
    with Project.open(project) as p, pytest.raises(ProjectError,
                                                   match="keys of 'score' are not declared"):
        p.release(load_spec(folder / "bad.toml"), folder / "out")


def test_the_documented_sample_plan_parses():
    sample = Path(__file__).resolve().parents[2] / "docs" / "release-plan.toml"
    spec = load_spec(sample)
    assert [s.query for s in spec.plan.statistics] == ["mean", "mean", "histogram"]
    assert spec.plan.method == "accuracy" and spec.plan.rows == 2000
    assert spec.plan.statistics[1].by == ("faculty",)
    assert Path(spec.dataset).is_file()  # the bundled sample survey


def test_a_tight_ledger_composes_the_plan_parts(tmp_path):
    data = _dataset(tmp_path)
    text = PLAN.format(epsilon=1.0, rows=ROWS).replace(
        'method = "accuracy"', 'method = "weights"').replace(
        "confidence = 0.95", 'confidence = 0.95\ndelta = 1e-6\nmechanism = "gaussian"')
    (tmp_path / "g.toml").write_text(text, encoding="utf-8")
    project = tmp_path / "pld.dpstudio"
    Project.create(project, epsilon="5", delta="1e-5", accountant="pld").close()
    with Project.open(project) as p:
        record = p.release(load_spec(tmp_path / "g.toml"), tmp_path / "out")
        spent = p.spent_by_accountant(record.dataset_id)
    assert data.exists() and record.epsilon == Decimal("1.0")
    # Three Gaussian parts composed as privacy-loss distributions: well under their sum.
    assert spent["pld"][0] < spent["basic"][0] == Decimal("1.0")


def test_a_plan_checks_its_file_and_accountant_as_a_release_does(env):
    # The same refusals (release._read_file, release._budget_root) as a one-statistic
    # release: another file than the spec names, then an accountant the dataset is not under.
    folder, _, project = env
    text = PLAN.format(epsilon=4.0, rows=ROWS)
    (folder / "named.toml").write_text(f'fingerprint = "{"0" * 64}"\n' + text,
                                       encoding="utf-8")
    out = folder / "out"
    with Project.open(project) as p:
        with pytest.raises(ProjectError, match="is not the dataset the spec names"):
            p.check(load_spec(folder / "named.toml"), out)
        p.release(load_spec(_plan(folder)), out)
        (folder / "zcdp.toml").write_text('accountant = "zcdp"\n' + text, encoding="utf-8")
        with pytest.raises(ProjectError, match="accounted with the basic accountant; the "
                                               "spec asks for zcdp"):
            p.check(load_spec(folder / "zcdp.toml"), out)
        assert len(p.ledger()) == 1
