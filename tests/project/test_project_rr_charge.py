"""Item 5 of issue 10: a release charges, writes and shows the ε of the engine object that
drew the noise, never the spec's. Randomized response with a chosen p is ln(p/(1−p))-DP:
version 1 charged the spec's ε (ε = 1 for p = 0.75, ln 3 ≈ 1.0986 true)."""

import json
import math
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest
from dps_project_helpers import folder_state, run, write_spec

from dpstudio.engine import queries as engine_queries
from dpstudio.engine.local.frequency import RandomizedResponse
from dpstudio.engine.queries import QuerySpec
from dpstudio.project import BudgetExceededError, Project, ReleaseSpec, load_spec

FIXTURES = Path(__file__).parent / "fixtures"
#: The randomizer's own ε for p = 3/4: ln 3 rounded up to a float (engine).
LN3 = RandomizedResponse(1.0, 0.75).epsilon


@pytest.fixture
def env(tmp_path, capsys):
    data = tmp_path / "smokers.csv"
    data.write_text("smoker\n" + "".join(f"{int(i % 3 == 0)}\n" for i in range(300)))
    project = tmp_path / "p.dpstudio"
    code, _, err = run(capsys, "project", "init", project, "--epsilon", "3", "--relation",
                       "replace")
    assert code == 0, err
    return tmp_path, data, project, tmp_path / "out"


def _rr_spec(tmp, data, name="rr.toml", **fields):
    base = {"column": "smoker", "query": "histogram", "categories": ["0", "1"],
            "mechanism": "rr", "trust_model": "local", "params": {"p": 0.75}}
    base.update(fields)
    spec = write_spec(tmp / name, data.name, **base)
    if "epsilon" not in fields:  # write_spec's default ε = 0.1: the p alone says ε
        spec.write_text("\n".join(line for line in spec.read_text().splitlines()
                                  if not line.startswith("epsilon")) + "\n")
    return spec


def test_ln3_is_what_the_engine_claims():
    assert LN3 >= math.log(3) and LN3 - math.log(3) < 1e-15


def test_rr_with_p_is_charged_and_written_at_ln3(qapp, env, capsys):
    """Ledger charge, manifest, JSON export, report, CLI line and budget: all ln 3."""
    tmp, data, project, out = env
    spec = _rr_spec(tmp, data, report=True)
    assert load_spec(spec).query.epsilon == LN3  # ε left out: p implies it
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 0, err
    assert "(rr, ε = 1.09861, δ = 0)" in text
    with Project.open(project) as p:
        (rec,) = p.ledger()
        assert rec.epsilon == Decimal(repr(LN3))
        assert p.budget(rec.dataset_id).spent_epsilon == Decimal(repr(LN3))
    manifest = json.loads(next(out.glob("*.manifest.json")).read_text())
    assert manifest["privacy"]["epsilon"] == LN3
    assert Decimal(manifest["privacy"]["epsilon_exact"]) == Decimal(repr(LN3))
    assert "1.09861" in manifest["local"]["guarantee"]
    export = json.loads((out / "r0001-histogram-smoker.json").read_text())
    assert export["meta"]["epsilon"] == LN3
    report = (out / "r0001-histogram-smoker.report.html").read_text(encoding="utf-8")
    assert "1.0986" in report


def test_rr_with_agreeing_epsilon_is_charged_the_randomizers_epsilon(env):
    """ε = 1.098612 (ln 3 to 7 digits) agrees with p = 0.75; the charge is still the
    randomizer's own ε, not the spec's rounded one."""
    tmp, data, project, out = env
    with Project.open(project) as p:
        rec = p.release(load_spec(_rr_spec(tmp, data, epsilon=1.098612)), out)
    assert rec.epsilon == Decimal(repr(LN3)) != Decimal("1.098612")


def test_disagreeing_epsilon_and_p_are_refused_in_one_line(env, capsys):
    """The issue's spec (ε = 1 with p = 0.75): refused, nothing charged, nothing written."""
    tmp, data, project, out = env
    spec = _rr_spec(tmp, data, epsilon=1.0)
    before = project.read_bytes()
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 2 and text == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "epsilon = 1 disagrees with p = 0.75" in err and "1.09861228867" in err
    assert folder_state(out) == {}
    with Project.open(project) as p:
        assert p.ledger() == [] and p.datasets() == []
    assert project.read_bytes()[:100] == before[:100]
    # The same through the Python API (the GUI's path).
    with Project.open(project) as p, pytest.raises(Exception, match="disagrees with p"):
        p.check(ReleaseSpec(dataset=str(data), trust_model="local", query=QuerySpec(
            query="histogram", mechanism="rr", epsilon=1.0, categories=("0", "1"),
            params={"p": 0.75}, relation="replace", column="smoker")), out)


def test_the_charge_comes_from_the_engine_result_object(env, monkeypatch):
    """If the engine object that drew the noise spends more than was planned, that is what
    is charged and written; if it no longer fits, nothing is charged or written."""
    tmp, data, project, out = env
    real = engine_queries.release

    def spends_more(values, query, source):
        result = real(values, query, source)
        result.epsilon = 2.5  # e.g. a mechanism whose claim differs from the spec's ε
        return result

    monkeypatch.setattr(engine_queries, "release", spends_more)
    central = ReleaseSpec(dataset=str(data), report=True, script=True, query=QuerySpec(
        query="count", mechanism="laplace", epsilon=0.5, relation="replace", column="smoker"))
    with Project.open(project) as p:
        rec = p.release(central, out)
        assert rec.epsilon == Decimal("2.5")
        manifest = json.loads(next(out.glob("*.manifest.json")).read_text())
        assert manifest["privacy"]["epsilon"] == 2.5
        # The report and the script say the engine's ε too, never the spec's 0.5.
        script = next(p for p in out.glob("r0001-*.py")).read_text(encoding="utf-8")
        assert "spends epsilon = 2.5 " in script and "epsilon=2.5," in script
        assert "epsilon = 0.5 " not in script and "epsilon=0.5," not in script
        report = next(out.glob("*.report.html")).read_text(encoding="utf-8")
        assert "ε = 2.5 (δ" in report and "ε = 0.5 (δ" not in report
        state = folder_state(out)
        with pytest.raises(BudgetExceededError):  # 0.5 fits the 0.5 left, 2.5 does not
            p.release(central, out)
        assert len(p.ledger()) == 1 and folder_state(out) == state


def test_migration_recharges_version_1_rr_releases_at_ln3(tmp_path):
    """The version-1 fixture holds an rr release with p = 0.75 charged ε = 1.0 (as version 1
    did); opening it migrates and re-charges it at ln 3, pessimistically, and seals it."""
    path = tmp_path / "old.dpstudio"
    shutil.copyfile(FIXTURES / "project-v1-current.dpstudio", path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT epsilon FROM releases WHERE mechanism = 'rr'").fetchone() == (
        "1.0",)
    conn.close()
    with Project.open(path) as p:
        assert p.schema_version == 3 and p.integrity() == []
        rr = next(r for r in p.ledger() if r.mechanism == "rr")
        assert rr.epsilon == Decimal(repr(LN3)) and "re-charged" in rr.note
        assert p.budget(rr.dataset_id).spent_epsilon == Decimal(repr(LN3))
        central = [r for r in p.ledger() if r.mechanism == "laplace"]
        assert [r.epsilon for r in central] == [Decimal("0.25")] * 2


def test_audit_rr_on_the_worst_pair_against_the_old_and_new_charge(env):
    """An empirical audit of the randomizer the project releases with, on the neighbouring
    pair that breaks version 1's claim (one person answering 0 vs 1). Power check: the
    audit's 95 % lower bound on ε exceeds the ε = 1 version 1 charged (it detects the bug);
    it stays below the ε now charged (ln 3), as it must."""
    import numpy as np

    from dpstudio.engine.audit import epsilon_lower_bound
    from dpstudio.engine.registry import REGISTRY
    from dpstudio.engine.rng import SimulationSource

    tmp, data, project, out = env
    with Project.open(project) as p:
        charged = float(p.release(load_spec(_rr_spec(tmp, data)), out).epsilon)
    old_charge = 1.0  # the spec's ε, what version 1 charged and wrote
    info = REGISTRY.get("rr")
    oracle = info.build(**info.resolve({"epsilon": 1.0, "p": 0.75}), k=2)
    n = 200_000  # each report is one person's answer: n independent draws of the pair
    source = SimulationSource(2024)
    on_0 = oracle.randomize(np.zeros(n, dtype=np.int64), source)
    on_1 = oracle.randomize(np.ones(n, dtype=np.int64), source)
    found = epsilon_lower_bound(on_0, on_1, confidence=0.95, categorical=True)
    assert found.epsilon_lower > old_charge + 0.05  # measured ≈ 1.08 > 1: detected
    assert found.epsilon_lower <= charged  # ≈ 1.08 ≤ ln 3 ≈ 1.0986
    assert abs(found.epsilon_lower - math.log(3)) < 0.04  # the audit is tight here
