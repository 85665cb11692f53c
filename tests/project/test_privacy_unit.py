"""A dataset's unit of privacy (issue 14, bounded contributions per person): its first
release fixes it — row-level, or user-level by one identifier column — and a release of
the other unit is refused in one sentence with nothing charged (a row-level ε is only k·ε
per person). User-level releases with another k share the unit; old projects read as
row-level."""

import shutil
from pathlib import Path

import pytest

from dpstudio.data.schema import ColumnSpec, ColumnType, Schema, save_schema
from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project
from dpstudio.project.errors import ProjectError
from dpstudio.project.spec import ReleaseSpec
from dpstudio.project.spec_plan import parse_plan_spec

FIXTURES = Path(__file__).parent / "fixtures"


def _visits(folder: Path) -> Path:
    path = folder / "visits.csv"
    rows = [f"p{(i * 7) % 13},{(i * 37) % 100}.5,{'ab'[i % 2]}" for i in range(120)]
    path.write_text("person,amount,city\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def _spec(data: Path, identifier=None, max_rows=None, query="count") -> ReleaseSpec:
    return ReleaseSpec(dataset=str(data), formats=("json",), identifier=identifier,
                       max_rows=max_rows, query=QuerySpec(
                           query=query, mechanism="laplace", epsilon=0.25, column="amount",
                           bounds=(0, 100) if query != "count" else None))


def _state(p: Project, tmp_path: Path):
    out = tmp_path / "out"
    files = sorted(x.name for x in out.iterdir()) if out.is_dir() else []
    return len(p.ledger()), p.remaining(1), files


@pytest.mark.parametrize("first_user_level", [False, True])
def test_mixing_units_is_refused_and_nothing_is_charged(tmp_path, first_user_level):
    data = _visits(tmp_path)
    row, person = _spec(data), _spec(data, "person", 3)
    first, second = (person, row) if first_user_level else (row, person)
    with Project.create(tmp_path / "p.dpstudio", epsilon=5) as p:
        p.release(first, tmp_path / "out")
        before = _state(p, tmp_path)
        for call in (p.check, p.release):
            with pytest.raises(ProjectError, match="one unit of privacy") as err:
                call(second, tmp_path / "out")
            msg = str(err.value)
            assert "\n" not in msg and "k·ε" in msg
            assert ("released user-level" in msg) is first_user_level
        assert _state(p, tmp_path) == before  # no release, no charge, no file
        p.release(first, tmp_path / "out")  # the dataset's own unit still releases
        assert len(p.ledger()) == 2
        (entry,) = p.to_dict()["datasets"]
        assert entry["unit_of_privacy"] == ("person:person" if first_user_level else "row")


def test_another_k_shares_the_unit_another_identifier_does_not(tmp_path):
    data = _visits(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=5) as p:
        p.release(_spec(data, "person", 3, "sum"), tmp_path / "out")
        p.release(_spec(data, "person", 5, "sum"), tmp_path / "out")  # still per person
        assert len(p.ledger()) == 2
        with pytest.raises(ProjectError, match="another column names another person"):
            p.release(_spec(data, "city", 5, "sum"), tmp_path / "out")
        assert len(p.ledger()) == 2


def _plan(data: Path, where: Path):
    return parse_plan_spec({
        "schema_version": 2, "dataset": str(data), "epsilon": 0.5, "formats": ["json"],
        "statistics": [{"column": "amount", "query": "sum", "bounds": [0, 100]},
                       {"column": "amount", "query": "count"}],
        "split": {"method": "weights", "weights": [1, 1]}}, where)


def test_a_plan_is_row_level_and_refused_on_a_person_budget(tmp_path):
    data = _visits(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=5) as p:
        p.release(_spec(data, "person", 3), tmp_path / "out")
        before = _state(p, tmp_path)
        with pytest.raises(ProjectError, match="one unit of privacy"):
            p.release(_plan(data, tmp_path), tmp_path / "out")
        assert _state(p, tmp_path) == before


def test_a_plan_on_a_dataset_declaring_an_identifier_is_user_level(tmp_path):
    data = _visits(tmp_path)
    save_schema(Schema((ColumnSpec("person", ColumnType.IDENTIFIER, max_rows=3),
                        ColumnSpec("amount", ColumnType.NUMERIC, lower=0, upper=100))),
                tmp_path / "visits.csv.schema.json")
    with Project.create(tmp_path / "p.dpstudio", epsilon=5) as p:
        p.release(_plan(data, tmp_path), tmp_path / "out")  # user-level, k = 3
        (entry,) = p.to_dict()["datasets"]
        assert entry["unit_of_privacy"] == "person:person"


def test_an_old_project_reads_as_row_level(tmp_path):
    path = tmp_path / "old.dpstudio"
    shutil.copyfile(FIXTURES / "project-v2.dpstudio", path)
    data = tmp_path / "fixture.csv"
    shutil.copyfile(FIXTURES / "fixture.csv", data)
    with Project.open(path) as p:
        spent = len(p.ledger())
        user = ReleaseSpec(dataset=str(data), formats=("json",), identifier="g", max_rows=2,
                           query=QuerySpec(query="count", mechanism="laplace", epsilon=0.25,
                                           column="x"))
        with pytest.raises(ProjectError, match="released row-level since its first"):
            p.release(user, tmp_path / "out")
        row = ReleaseSpec(dataset=str(data), formats=("json",), query=QuerySpec(
            query="count", mechanism="laplace", epsilon=0.25, column="x"))
        p.release(row, tmp_path / "out")
        assert len(p.ledger()) == spent + 1
