"""``dpstudio query … --identifier COL --max-rows K`` (issue 14, bounded contributions per
person): the noise follows k, the schema's declared identifier makes a query user-level,
and what cannot be user-level is refused in one line; a project release takes the spec
keys ``identifier`` and ``max_rows`` and records them."""

import json

import numpy as np
import pytest

from dpstudio.cli import main
from dpstudio.data.schema import ColumnSpec, ColumnType, Schema, save_schema


@pytest.fixture
def visits(tmp_path):
    rng = np.random.default_rng(0)
    people = rng.integers(0, 60, 600)
    lines = ["person,amount,city"] + [
        f"p{p},{a:.2f},{c}" for p, a, c in zip(people, rng.uniform(0, 100, people.size),
                                              rng.choice(["a", "b"], people.size),
                                              strict=True)]
    path = tmp_path / "visits.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _query(capsys, data, *extra):
    code, out, err = run(capsys, "query", data, "--mechanism", "laplace", "--epsilon", "1",
                         "--simulate", "5", "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_count_sum_and_histogram_noise_follow_k(capsys, visits):
    who = ("--identifier", "person", "--max-rows", "4")
    count = _query(capsys, visits, "--column", "amount", "--query", "count", *who)
    assert count["relation"] == "add or remove one person (up to 4 rows)"
    assert count["sensitivity"] == 4.0 and count["noise_scale"] == pytest.approx(4.0)
    assert count["identifier"] == "person" and count["max_rows"] == 4
    total = _query(capsys, visits, "--column", "amount", "--query", "sum", "--bounds=-10,50",
                   *who)
    assert total["sensitivity"] == 200.0  # k · max(|lo|, |hi|)
    hist = _query(capsys, visits, "--column", "city", "--query", "histogram",
                  "--categories", "a,b", *who)
    assert hist["sensitivity"] == 4.0  # add or remove one person: ℓ₁ ≤ k
    row = _query(capsys, visits, "--column", "amount", "--query", "count")
    assert row["sensitivity"] == 1.0 and row["relation"] == "add-remove"
    assert "identifier" not in row


def test_the_schema_declared_identifier_makes_queries_user_level(capsys, visits):
    save_schema(Schema((ColumnSpec("person", ColumnType.IDENTIFIER, max_rows=2),
                        ColumnSpec("amount", ColumnType.NUMERIC, lower=0, upper=100))),
                visits.with_name(visits.name + ".schema.json"))
    mean = _query(capsys, visits, "--column", "amount", "--query", "mean")
    assert mean["relation"] == "add or remove one person (up to 2 rows)"
    assert mean["sensitivities"] == {"sum": 200.0, "count": 2.0}
    assert any("as declared in the dataset's schema" in n for n in mean["notes"])


@pytest.mark.parametrize(("extra", "match"), [
    (("--max-rows", "3", "--query", "count", "--column", "amount"), "--identifier COL"),
    (("--identifier", "person", "--query", "count", "--column", "amount"),
     "maximum number of rows per person"),
    (("--identifier", "person", "--max-rows", "3", "--query", "histogram", "--column",
      "city", "--categories", "a,b", "--trust-model", "local", "--mechanism", "krr"),
     "central model only"),
    (("--identifier", "person", "--max-rows", "3", "--query", "count", "--column", "amount",
      "--relation", "replace"), "add-remove"),
    (("--identifier", "person", "--max-rows", "0", "--query", "count", "--column", "amount"),
     "max_rows"),
    (("--identifier", "person", "--max-rows", "3", "--query", "count", "--column", "amount",
      "--engine", "dask"), "--engine pandas"),
])
def test_refusals_in_one_line(capsys, visits, extra, match):
    args = ["query", visits, "--mechanism", "laplace", "--epsilon", "1", "--simulate", "1"]
    if "--mechanism" in extra:
        args = ["query", visits, "--epsilon", "1", "--simulate", "1"]
    code, out, err = run(capsys, *args, *extra)
    assert code == 2 and match in err and err.count("\n") == 1, err


def test_a_project_release_is_user_level_and_hides_the_drops(capsys, visits, tmp_path):
    project = tmp_path / "p.dpstudio"
    assert run(capsys, "project", "init", project)[0] == 0
    spec = tmp_path / "r.toml"
    spec.write_text('schema_version = 1\ndataset = "visits.csv"\ncolumn = "amount"\n'
                    'query = "sum"\nbounds = [0, 100]\nmechanism = "laplace"\n'
                    'epsilon = 0.5\nidentifier = "person"\nmax_rows = 3\n'
                    '[budget]\nepsilon = 2.0\n', encoding="utf-8")
    code, out, err = run(capsys, "release", spec, "--project", project, "--out",
                         tmp_path / "out", "--json")
    assert code == 0, err
    code, out, err = run(capsys, "ledger", project, "--json")
    ledger = json.loads(out)
    text = json.dumps(ledger)
    assert '"identifier": "person"' in text and '"max_rows": 3' in text
    assert "add or remove one person (up to 3 rows)" in text
    people = np.unique([line.split(",")[0] for line in
                        visits.read_text().splitlines()[1:]], return_counts=True)[1]
    dropped = int(np.maximum(people - 3, 0).sum())
    for path in (tmp_path / "out").iterdir():
        body = path.read_text(encoding="utf-8", errors="replace")
        assert f"{dropped}," not in body and f": {dropped}" not in body
        assert "dropped_rows" not in body and "rows_dropped" not in body


def test_spec_keys_round_trip_and_are_checked(tmp_path):
    from dpstudio.project.errors import SpecError
    from dpstudio.project.spec import load_spec, parse_spec, save_spec

    base = {"schema_version": 1, "dataset": "v.csv", "column": "amount", "query": "sum",
            "bounds": [0, 100], "mechanism": "laplace", "epsilon": 1.0}
    spec = parse_spec({**base, "identifier": "person", "max_rows": 5})
    assert (spec.identifier, spec.max_rows) == ("person", 5)
    path = save_spec(spec, tmp_path / "s.toml")
    assert 'identifier = "person"' in path.read_text() and "max_rows = 5" in path.read_text()
    again = load_spec(path)
    assert (again.identifier, again.max_rows) == ("person", 5)
    assert parse_spec(base).identifier is None  # a version-1 spec without them still reads
    for bad in (0, 2.5, True):
        with pytest.raises(SpecError, match="max_rows"):
            parse_spec({**base, "identifier": "person", "max_rows": bad})
