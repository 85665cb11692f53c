"""Project files: creating, opening, refusing non-projects, datasets, budgets, the ledger."""

import json
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest
from dps_project_helpers import assert_consistent, folder_state, make_dataset

from dpstudio.data import Schema
from dpstudio.engine.queries import QuerySpec
from dpstudio.project import (
    SCHEMA_VERSION,
    BudgetExceededError,
    DatasetChangedError,
    NotAProjectError,
    Project,
    ProjectError,
    ReleaseSpec,
)

FIXTURES = Path(__file__).parent / "fixtures"


def spec_for(data, **kw):
    q = dict(query="sum", mechanism="laplace", epsilon=0.1, column="x")
    q.update(kw.pop("q", {}))
    return ReleaseSpec(dataset=str(data), query=QuerySpec(**q), **kw)


@pytest.fixture
def env(tmp_path):
    data = make_dataset(tmp_path)
    project = Project.create(tmp_path / "p.dpstudio", epsilon=1.0, delta=1e-5)
    yield project, data, tmp_path / "out"
    project.close()


def test_create_open_and_defaults(tmp_path):
    path = tmp_path / "study.dpstudio"
    with Project.create(path, epsilon=3, delta=1e-5, relation="replace") as p:
        assert p.schema_version == SCHEMA_VERSION == 3
        d = p.defaults()
        assert d["epsilon"] == Decimal("3") and d["delta"] == Decimal("0.00001")
        assert d["relation"] == "replace" and d["accountant"] == "basic"
        assert p.datasets() == [] and p.ledger() == []
    with Project.open(path) as p:
        assert p.integrity_check() == "ok"
        assert p.to_dict()["datasets"] == []
    with pytest.raises(ProjectError, match="already exists"):
        Project.create(path, epsilon=1)
    assert [f.name for f in tmp_path.iterdir() if "creating" in f.name] == []


@pytest.mark.parametrize("content", [b"", b"hello, I am a CSV\n1,2\n", b"SQLite format 2\x00xx"])
def test_a_file_that_is_not_a_project_is_refused(tmp_path, content):
    path = tmp_path / "x.dpstudio"
    path.write_bytes(content)
    with pytest.raises(NotAProjectError, match="not a DP Studio project"):
        Project.open(path)
    assert path.read_bytes() == content


def test_other_sqlite_databases_and_folders_are_refused(tmp_path):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(NotAProjectError, match="another application"):
        Project.open(other)
    with pytest.raises(NotAProjectError, match="folder"):
        Project.open(tmp_path)
    with pytest.raises(ProjectError, match="no project file"):
        Project.open(tmp_path / "missing.dpstudio")


def test_a_newer_project_is_refused_without_change(tmp_path):
    path = tmp_path / "new.dpstudio"
    Project.create(path, epsilon=1).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(NotAProjectError, match="newer DP Studio"):
        Project.open(path)
    assert path.read_bytes() == before


def _fixture_copy(tmp_path):
    dst = tmp_path / "old.dpstudio"
    shutil.copyfile(FIXTURES / "project-v1.dpstudio", dst)
    return dst


def test_the_version_1_fixture_opens_and_reads(tmp_path):
    path = _fixture_copy(tmp_path)
    with Project.open(path) as p:
        assert p.schema_version == SCHEMA_VERSION and p.integrity_check() == "ok"  # migrated
        assert p.integrity() == []  # the migration sealed the ledger as it was
        (ds,) = p.datasets()
        assert ds.name == "fixture.csv" and ds.budget_epsilon == Decimal("2")
        statuses = [r.status for r in p.ledger()]
        assert statuses == ["done", "done", "aborted"]
        budget = p.budget(ds)
        assert budget.spent_epsilon == Decimal("0.75")  # aborted releases stay charged
        assert budget.remaining_epsilon == Decimal("1.25")
        assert p.ledger()[2].files == ()


def test_migration_runs_in_one_transaction(tmp_path, monkeypatch):
    """The migration machinery on the v1 fixture: v1 → v2 → v3, then a (test-only)
    version 4."""
    from dpstudio.project import _db

    path = _fixture_copy(tmp_path)

    def to_v4(conn):
        conn.execute("ALTER TABLE releases ADD COLUMN reviewed_by TEXT")

    monkeypatch.setattr(_db, "SCHEMA_VERSION", 4)
    monkeypatch.setitem(_db.MIGRATIONS, 3, to_v4)
    with Project.open(path) as p:
        assert p.schema_version == 4
        assert len(p.ledger()) == 3
    conn = sqlite3.connect(path)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(releases)")]
    conn.close()
    assert "reviewed_by" in cols

    (tmp_path / "b").mkdir()
    broken = _fixture_copy(tmp_path / "b")
    before = broken.read_bytes()

    def fails(conn):
        conn.execute("ALTER TABLE releases ADD COLUMN half_done TEXT")
        raise sqlite3.OperationalError("disk on fire")

    monkeypatch.setitem(_db.MIGRATIONS, 3, fails)
    with pytest.raises(ProjectError, match="cannot upgrade"):
        Project.open(broken)
    conn = sqlite3.connect(broken)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert "half_done" not in [r[1] for r in conn.execute("PRAGMA table_info(releases)")]
    conn.close()
    assert len(before) == len(broken.read_bytes())


def test_release_records_everything(env):
    project, data, out = env
    rec = project.release(spec_for(data, formats=("csv", "json", "parquet", "xlsx")), out)
    assert rec.status == "done" and rec.id == 1
    assert rec.epsilon == Decimal("0.1") and rec.delta == 0 and rec.accountant == "basic"
    assert rec.spec["bounds"] == [0.0, 12.0]  # from the declared schema
    assert rec.spec["fingerprint"] == rec.dataset_fingerprint
    assert rec.noise["noise_scale"] > 0 and rec.noise["params"]["epsilon"] == 0.1
    assert "clamped" not in json.dumps(rec.to_dict())
    assert sorted(f.name for f in rec.files) == sorted(
        ["r0001-sum-x.csv", "r0001-sum-x.json", "r0001-sum-x.parquet", "r0001-sum-x.xlsx",
         "r0001-sum-x.manifest.json"])
    assert folder_state(out) == {f.name: f.sha256 for f in rec.files}
    (ds,) = project.datasets()
    assert ds.path == str(data.resolve()) and ds.relation == "add-remove"
    assert ds.schema["columns"][0] == {"name": "x", "type": "numeric", "lower": 0, "upper": 12}
    assert project.remaining(ds) == (Decimal("0.9"), Decimal("0.00001"))
    assert project.dataset(ds.fingerprint) == project.dataset(str(data)) == ds
    assert_consistent(project.path, out)


def test_ledger_dict_and_cumulative_series(env):
    project, data, out = env
    project.release(spec_for(data), out)
    project.release(spec_for(data, q=dict(query="histogram", column="g", mechanism="gaussian",
                                          epsilon=0.25, delta=1e-6)), out)
    doc = project.to_dict()
    (ds,) = doc["datasets"]
    for key in ("fingerprint", "path", "budget_epsilon", "budget_delta", "spent_epsilon",
                "spent_delta", "remaining_epsilon", "remaining_delta", "releases"):
        assert key in ds
    assert ds["spent_epsilon"] == 0.35 and ds["remaining_epsilon"] == 0.65
    assert ds["exact"]["remaining_delta"] == "0.000009"
    for r in ds["releases"]:
        for key in ("id", "time", "query", "column", "mechanism", "epsilon", "delta",
                    "accountant", "status", "files"):
            assert key in r
    series = project.cumulative_epsilon(ds["fingerprint"])
    assert [p.cumulative_epsilon for p in series] == [0.1, 0.35]
    assert [p.cumulative_delta for p in series] == [0.0, 1e-6]
    json.dumps(doc, allow_nan=False)


def test_budget_exceeded_charges_and_writes_nothing(env):
    project, data, out = env
    for _ in range(10):
        project.release(spec_for(data), out)
    state = folder_state(out)
    with pytest.raises(BudgetExceededError, match=r"only ε = 0, δ = 0.00001 is left") as info:
        project.release(spec_for(data), out)
    assert info.value.remaining_epsilon == 0
    assert folder_state(out) == state and len(project.ledger()) == 10


def test_changed_dataset_is_refused(env):
    project, data, out = env
    project.release(spec_for(data), out)
    data.write_text(data.read_text() + "3.5,a,SECRET-999\n", encoding="utf-8")
    state = folder_state(out)
    with pytest.raises(DatasetChangedError, match="has changed since it was registered"):
        project.release(spec_for(data), out)
    assert folder_state(out) == state and len(project.ledger()) == 1
    with pytest.raises(DatasetChangedError, match="not the dataset the spec names"):
        project.release(spec_for(data, fingerprint="0" * 64), out)


def test_a_moved_dataset_is_found_by_its_fingerprint(env, tmp_path):
    project, data, out = env
    project.release(spec_for(data), out)
    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.copy(data, moved / "renamed.csv")
    rec = project.release(spec_for(moved / "renamed.csv"), out)
    assert len(project.datasets()) == 1 and rec.epsilon == Decimal("0.1")
    assert project.budget(rec.dataset_id).spent_epsilon == Decimal("0.2")


def test_relation_and_registration_rules(tmp_path):
    data = make_dataset(tmp_path)
    out = tmp_path / "out"
    with Project.create(tmp_path / "nodefault.dpstudio") as project:
        with pytest.raises(ProjectError, match="no budget"):
            project.release(spec_for(data), out)
        assert not out.exists() and project.datasets() == []
        rec = project.release(spec_for(data, budget_epsilon=0.5, budget_delta=0.0), out)
        assert project.dataset(rec.dataset_id).budget_epsilon == Decimal("0.5")
        with pytest.raises(ProjectError, match="budgeted under the add-remove relation"):
            project.release(spec_for(data, q=dict(relation="replace")), out)
        with pytest.raises(ProjectError, match="unknown accountant"):
            project.release(spec_for(data, accountant="magic"), out)
        assert len(project.ledger()) == 1


def test_register_dataset_explicitly(tmp_path):
    data = make_dataset(tmp_path)
    with Project.create(tmp_path / "p.dpstudio") as project:
        schema = Schema.from_dict(json.loads((tmp_path / "data.csv.schema.json").read_text()))
        ds = project.register_dataset(data, schema, budget_epsilon=2, budget_delta=1e-6,
                                      relation="replace")
        assert ds.relation == "replace" and ds.budget_delta == Decimal("0.000001")
        assert ds.schema == schema.to_dict()
        with pytest.raises(ProjectError, match="already registered"):
            project.register_dataset(data, budget_epsilon=1)
        other = tmp_path / "other.csv"
        other.write_text("x\n1\n2\n", encoding="utf-8")
        with pytest.raises(ProjectError, match="must be positive"):
            project.register_dataset(other, budget_epsilon=0)


def test_pure_mechanisms_are_charged_no_delta(env):
    project, data, out = env
    rec = project.release(spec_for(data, q=dict(delta=1e-6)), out)
    assert rec.delta == 0 and "δ set to 0" in " ".join(rec.result["notes"])


def test_check_draws_nothing(env):
    project, data, out = env
    plan = project.check(spec_for(data), out)
    assert plan["registers_dataset"] and plan["epsilon"] == Decimal("0.1")
    assert plan["remaining"] == (Decimal("1.0"), Decimal("0.00001"))
    assert project.datasets() == [] and not out.exists()


def test_threads_share_one_project(env):
    from concurrent.futures import ThreadPoolExecutor

    project, data, out = env
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: _try(project, data, out), range(12)))
    assert results.count("done") == 10 and results.count("refused") == 2
    assert_consistent(project.path, out)


def _try(project, data, out):
    try:
        return project.release(spec_for(data), out).status
    except BudgetExceededError:
        return "refused"
