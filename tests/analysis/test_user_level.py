"""User-level analyses (issue 14, bounded contributions per person): the identifier column
declared in the schema (version 3; old sidecars still read), resolution and its one-line
refusals, and a result in which the number of dropped rows appears nowhere."""

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from dpstudio.analysis import resolve, run
from dpstudio.analysis.contribution import (
    declared_identifier,
    user_level_text,
    with_identifier,
)
from dpstudio.analysis.request import describe
from dpstudio.data.errors import DataError
from dpstudio.data.schema import (
    ColumnSpec,
    ColumnType,
    Schema,
    load_schema,
    save_schema,
    schema_for,
)
from dpstudio.engine.errors import QueryError
from dpstudio.engine.rng import SecureSource, SimulationSource

FIXTURES = Path(__file__).parent / "fixtures"


def _describe(query, **kwargs):
    return describe("central", query, "laplace", 1.0, bounds=(0, 100), column="amount",
                    **kwargs)


def _schema(max_rows=3):
    return Schema((ColumnSpec("person", ColumnType.IDENTIFIER, max_rows=max_rows),
                   ColumnSpec("amount", ColumnType.NUMERIC, lower=0, upper=100),
                   ColumnSpec("city", ColumnType.CATEGORICAL, categories=("a", "b"))))


def test_old_sidecar_without_identifier_still_reads(tmp_path):
    data = tmp_path / "visits.csv"
    data.write_text("person,amount,city\np1,3,a\n", encoding="utf-8")
    shutil.copy(FIXTURES / "visits_v2.csv.schema.json", tmp_path / "visits.csv.schema.json")
    schema = schema_for(data)
    assert schema["amount"].bounds == (0, 100) and schema["city"].label_of("a") == "Arles"
    assert declared_identifier(schema) is None
    analysis = with_identifier(_describe("sum"),
                               None, None, schema)
    assert analysis.identifier is None  # no identifier: a row-level release as before


def test_identifier_round_trips_as_schema_version_3(tmp_path):
    path = save_schema(_schema(4), tmp_path / "v.csv.schema.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["schema_version"] == 3
    assert raw["columns"][0] == {"name": "person", "type": "identifier", "max_rows": 4}
    back = load_schema(path)
    assert back == _schema(4) and back["person"].domain_text() == "up to 4 rows per person"
    # A schema without identifiers keeps the oldest format that holds it.
    plain = Schema((ColumnSpec("amount", ColumnType.NUMERIC, lower=0, upper=1),))
    assert plain.to_dict()["schema_version"] == 1


def test_max_rows_is_checked_in_the_schema():
    with pytest.raises(DataError, match="only applies to an identifier"):
        ColumnSpec("amount", ColumnType.NUMERIC, max_rows=3)
    with pytest.raises(DataError, match="whole number"):
        ColumnSpec("person", ColumnType.IDENTIFIER, max_rows=0)
    with pytest.raises(DataError, match="unknown schema field 'max_rows'"):
        Schema.from_dict({"schema_version": 2, "columns": [
            {"name": "person", "type": "identifier", "max_rows": 2}]})
    assert not ColumnSpec("person", ColumnType.IDENTIFIER).is_declared


def test_resolution_takes_max_rows_from_the_declaration():
    schema = _schema(3)
    a = with_identifier(_describe("mean"),
                        None, None, schema)
    assert a.identifier == "person"  # declared in the schema: user-level by default
    resolved, notes = resolve(a, schema)
    assert resolved.max_rows == 3
    assert any("at most 3 rows per person" in n for n in notes)
    named = with_identifier(describe("central", "count", "laplace", 1.0, column="city"),
                            "person", 7, schema)
    assert resolve(named, schema)[0].max_rows == 7  # the analysis's own declaration wins
    assert user_level_text(3) == "user-level: up to 3 rows per person"


@pytest.mark.parametrize(("trust", "query", "mechanism", "kwargs", "match"), [
    ("local", "histogram", "krr", {"categories": ("a", "b")}, "central model only"),
    ("shuffle", "sum", "cloak", {"bounds": (0, 100)}, "central model only"),
    ("central", "median", "exponential", {"bounds": (0, 100)}, "not a median"),
    ("central", "sum", "laplace", {"bounds": (0, 100), "relation": "replace"}, "add-remove"),
])
def test_refusals_in_one_sentence(trust, query, mechanism, kwargs, match):
    schema = _schema(3)
    a = describe(trust, query, mechanism, 1.0, column="amount", identifier="person",
                 **kwargs)
    with pytest.raises(QueryError, match=match) as err:
        resolve(a, schema)
    assert "\n" not in str(err.value)


def test_max_rows_must_be_declared_somewhere():
    schema = Schema((ColumnSpec("person", ColumnType.IDENTIFIER),
                     ColumnSpec("amount", ColumnType.NUMERIC, lower=0, upper=100)))
    a = _describe("sum", identifier="person")
    with pytest.raises(QueryError, match="never read off the data"):
        resolve(a, schema)
    with pytest.raises(QueryError, match="needs an identifier"):
        with_identifier(_describe("sum"),
                        None, 3, None)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    people = rng.integers(0, 40, 400)
    ids = np.array([f"p{i}" for i in people], dtype=object)
    return ids, rng.uniform(0, 100, ids.size)


def test_a_user_level_mean_scales_both_noisy_sums():
    ids, values = _data()
    schema = _schema(3)
    a, notes = resolve(_describe("mean",
                                identifier="person"), schema)
    result = run(a, values, SimulationSource(1), notes=notes, ids=ids)
    r = result.engine
    assert r.sensitivities == {"sum": 300.0, "count": 3.0}  # k·max|bound| and k
    assert result.fields["relation"] == "add or remove one person (up to 3 rows)"
    assert result.fields["identifier"] == "person" and result.fields["max_rows"] == 3
    with pytest.raises(QueryError, match="identifier column"):
        run(a, values, SimulationSource(1))


def test_the_number_of_dropped_rows_appears_nowhere():
    ids, values = _data(2)
    # 40 people with about ten rows each, k = 3: about 280 of 400 rows dropped.
    _, counts = np.unique(ids, return_counts=True)
    dropped = int(np.maximum(counts - 3, 0).sum())
    kept = ids.size - dropped
    a, notes = resolve(_describe("sum",
                                identifier="person"), _schema(3))
    result = run(a, values, SecureSource(), notes=notes, ids=ids)
    public = result.public(rows=ids.size)
    everything = json.dumps([public, result.to_dict(analyst=True),
                             result.noise_description(public)], default=str)
    assert not re.search(r"drop(ped)?_?(rows|count)|rows_dropped|kept", everything)
    numbers = {int(x) for x in re.findall(r"(?<![\d.])\d+(?![\d.])", everything)}
    assert dropped not in numbers and kept not in numbers
    assert "n" not in public  # the rows read stay private too
