"""User-level release plans (issue 14): on a dataset with an identifier column (declared
in the schema, or the spec's ``identifier`` and ``max_rows``) each person's rows are
bounded to k ONCE for the whole plan, every statistic's noise is k × the row-level one,
the manifest states the person relation and a ``contributions`` section, the unit of
privacy is checked, and the number of rows dropped is in no file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from dpstudio.engine.queries import QuerySpec
from dpstudio.export.manifest_contributions import contributions_problems
from dpstudio.project import Project, ProjectError
from dpstudio.project import release_plan as rp
from dpstudio.project.spec import ReleaseSpec
from dpstudio.project.spec_plan import parse_plan_spec

PEOPLE, PER_PERSON, K = 89, 91, 2
DROPPED = PEOPLE * (PER_PERSON - K)  # 7921: must appear nowhere


def _dataset(folder: Path, identifier: bool = True, max_rows: int | None = K) -> Path:
    """89 people with 91 rows each: an amount in [0, 10] and a region of declared keys."""
    folder.mkdir(parents=True, exist_ok=True)
    g = np.random.default_rng(3)
    person = np.repeat([f"p{i}" for i in range(PEOPLE)], PER_PERSON)
    amount = g.integers(0, 11, person.size)
    region = np.array(["north", "south", "east"])[g.integers(0, 3, person.size)]
    path = folder / "visits.csv"
    path.write_text("person,amount,region\n" + "".join(
        f"{p},{a},{r}\n" for p, a, r in zip(person, amount, region, strict=True)),
        encoding="utf-8")
    who = {"name": "person", "type": "identifier" if identifier else "categorical"}
    if identifier and max_rows is not None:
        who["max_rows"] = max_rows
    if not identifier:
        who["categories"] = [f"p{i}" for i in range(PEOPLE)]
    schema = {"schema_version": 3, "columns": [
        who, {"name": "amount", "type": "numeric", "lower": 0, "upper": 10},
        {"name": "region", "type": "categorical", "categories": ["north", "south", "east"]}]}
    (folder / "visits.csv.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return path


STATS = [{"column": "amount", "query": "count"},
         {"column": "amount", "query": "sum"},
         {"column": "amount", "query": "mean"},
         {"column": "region", "query": "histogram"},
         {"column": "amount", "query": "count", "by": ["region"]},
         {"column": "amount", "query": "sum", "by": ["region"]},
         {"column": "amount", "query": "mean", "by": ["region"]}]


def _plan(data: Path, **top):
    return parse_plan_spec({"schema_version": 2, "dataset": str(data), "epsilon": 2.0,
                            "rows": 200, "formats": ["csv", "json"], "report": True,
                            "script": True, "statistics": STATS, **top}, "plan.toml")


def _spy(monkeypatch) -> tuple[list, list]:
    """Record every statistic's result and every bounding of the plan's rows."""
    results, bounds = [], []

    def wrap(name, into):
        real = getattr(rp, name)

        def spy(*args, **kwargs):
            out = real(*args, **kwargs)
            into.append((args, out))
            return out
        monkeypatch.setattr(rp, name, spy)
    for name in ("grouped_release", "run_bounded_statistic", "run_analysis"):
        wrap(name, results)
    wrap("bound_plan_rows", bounds)
    return results, bounds


def _scales(results) -> list[list[float]]:
    out = []
    for _, r in results:
        if hasattr(r, "noises"):  # grouped
            out.append([n.noise_scale for n in r.noises.values()])
        else:
            out.append([c["noise_scale"] for c in r.engine.components]
                       if r.engine.components else [r.engine.noise_scale])
    return out


def test_every_noise_is_k_times_the_row_level_plans(tmp_path, monkeypatch):
    results, bounds = _spy(monkeypatch)
    user = _dataset(tmp_path / "u")
    with Project.create(tmp_path / "u.dpstudio", epsilon=10) as p:
        p.release(_plan(user), tmp_path / "u" / "out")
    person_scales = _scales(results)
    person_planned = [s["planned_half_width"] for s in json.loads(
        next((tmp_path / "u" / "out").glob("*.manifest.json")).read_text())["statistics"]]
    assert len(bounds) == 1  # the rows are bounded ONCE, for every statistic
    results.clear()
    row = _dataset(tmp_path / "r", identifier=False)
    with Project.create(tmp_path / "r.dpstudio", epsilon=10) as p:
        p.release(_plan(row), tmp_path / "r" / "out")
    row_scales = _scales(results)
    row_planned = [s["planned_half_width"] for s in json.loads(
        next((tmp_path / "r" / "out").glob("*.manifest.json")).read_text())["statistics"]]
    assert len(person_scales) == len(row_scales) == len(STATS)
    for i, (a, b) in enumerate(zip(person_scales, row_scales, strict=True)):
        assert len(a) == len(b) >= 1
        for x, y in zip(a, b, strict=True):  # to the integer grid's resolution
            assert x == pytest.approx(K * y, rel=2e-4), STATS[i]
    # Expected errors use the scaled sensitivities (Laplace: linear in the sensitivity).
    for i, (a, b) in enumerate(zip(person_planned, row_planned, strict=True)):
        assert a == pytest.approx(K * b, rel=1e-9), STATS[i]


def test_each_person_keeps_at_most_k_rows_and_every_statistic_reads_the_same_rows(
        tmp_path, monkeypatch):
    results, bounds = _spy(monkeypatch)
    data = _dataset(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=10) as p:
        p.release(_plan(data), tmp_path / "out")
    ((args, keep),) = bounds
    ids, k = args[0], args[1]
    assert k == K
    kept = np.unique(np.asarray(ids)[keep], return_counts=True)[1]
    assert kept.size == PEOPLE and kept.max() == K  # every person, at most k rows each
    for a, _ in results:  # every statistic got the kept rows, no other
        assert np.asarray(a[1] if isinstance(a[0], QuerySpec) else a[0]).size == keep.sum()


def test_the_manifest_states_the_person_and_the_dropped_count_is_nowhere(tmp_path):
    data = _dataset(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=10) as p:
        p.release(_plan(data), tmp_path / "out")
        stored = [json.dumps([r.spec, r.result, r.noise], default=str) for r in p.ledger()]
        assert len(stored) == 1
    manifest = json.loads(next((tmp_path / "out").glob("*.manifest.json")).read_text())
    relation = "add or remove one person (up to 2 rows)"
    assert manifest["contributions"] == {"identifier": "person", "max_rows": K}
    assert manifest["query"]["relation"] == manifest["privacy"]["relation"] == relation
    assert contributions_problems(manifest) == []
    assert all(s["relation"] == relation for s in manifest["statistics"])
    files = sorted((tmp_path / "out").iterdir())
    assert {f.suffix for f in files} == {".csv", ".json", ".html", ".py"}
    report = next(f for f in files if f.suffix == ".html").read_text()
    assert "at most 2 rows" in report and "not released" in report
    for text in [f.read_text() for f in files] + stored:
        assert not re.search(rf"(?<![\d.]){DROPPED}(?!\d)", text)
        assert "dropped_count" not in text and '"n":' not in text


def test_spec_keys_make_a_plan_user_level_and_a_mismatch_is_refused(tmp_path):
    data = _dataset(tmp_path, max_rows=None)  # the schema names the person, not k
    with Project.create(tmp_path / "p.dpstudio", epsilon=10) as p:
        with pytest.raises(ProjectError, match="never read off the data"):
            p.release(_plan(data), tmp_path / "out")
        with pytest.raises(ProjectError) as err:
            p.release(_plan(data, identifier="region", max_rows=3), tmp_path / "out")
        msg = str(err.value)
        assert "\n" not in msg and "'region'" in msg and "'person'" in msg
        assert p.ledger() == []
        p.release(_plan(data, identifier="person", max_rows=3), tmp_path / "out")
        manifest = json.loads(next((tmp_path / "out").glob("*.manifest.json")).read_text())
        assert manifest["contributions"] == {"identifier": "person", "max_rows": 3}
    plain = _dataset(tmp_path / "plain", identifier=False)
    with Project.create(tmp_path / "q.dpstudio", epsilon=10) as p:
        p.release(_plan(plain, identifier="person", max_rows=3), tmp_path / "plain" / "o")
        assert p.to_dict()["datasets"][0]["unit_of_privacy"] == "person:person"
        with pytest.raises(ProjectError, match="needs an identifier"):
            p.check(_plan(plain, max_rows=3), tmp_path / "plain" / "o")


@pytest.mark.parametrize("plan_first", [True, False])
def test_mixing_units_is_refused(tmp_path, plan_first):
    data = _dataset(tmp_path, identifier=False)
    row = ReleaseSpec(dataset=str(data), formats=("json",), query=QuerySpec(
        query="count", mechanism="laplace", epsilon=0.25, column="amount"))
    plan = _plan(data, identifier="person", max_rows=K)
    first, second = (plan, row) if plan_first else (row, plan)
    with Project.create(tmp_path / "p.dpstudio", epsilon=10) as p:
        p.release(first, tmp_path / "out")
        for call in (p.check, p.release):
            with pytest.raises(ProjectError, match="one unit of privacy") as err:
                call(second, tmp_path / "out")
            assert "\n" not in str(err.value)
        assert len(p.ledger()) == 1


def test_a_declared_identifier_plans_errors_and_targets_at_k_times(tmp_path):
    # The plan table (GUI) and an accuracy split use the scaled sensitivities too.
    from dpstudio.analysis.plan_resolve import plan_from_rows
    from dpstudio.data.schema import load_schema

    person = load_schema(_dataset(tmp_path / "u").with_name("visits.csv.schema.json"))
    row = load_schema(_dataset(tmp_path / "r", identifier=False)
                      .with_name("visits.csv.schema.json"))
    rows = [{"column": "amount", "query": q, "target": 5.0} for q in ("count", "sum")]
    plans = [plan_from_rows(rows, 100.0, method="accuracy", declared=d) for d in (person, row)]
    assert [p.max_rows for p in plans] == [K, None]
    (pa, pb), (ra, rb) = (p.shares() for p in plans)
    assert pa[0] == pytest.approx(K * ra[0], rel=1e-9)  # Laplace: ε ∝ sensitivity
    assert pb[0] == pytest.approx(K * rb[0], rel=1e-9)
    weights = [plan_from_rows(rows, 1.0, declared=d).expected_errors() for d in (person, row)]
    for a, b in zip(*weights, strict=True):
        assert a.half_width == pytest.approx(K * b.half_width, rel=1e-9)
