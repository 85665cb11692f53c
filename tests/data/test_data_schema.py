"""ColumnSpec validation, Schema JSON round trips, sidecars and type guessing."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpstudio.data import (
    SCHEMA_VERSION,
    ColumnSpec,
    ColumnType,
    DataError,
    Schema,
    complete_schema,
    guess_types,
    load_schema,
    save_schema,
    schema_for,
    sidecar_path,
)


@pytest.fixture
def schema() -> Schema:
    return Schema(
        description="A test schema",
        columns=(
            ColumnSpec("age", ColumnType.NUMERIC, 18, 100, description="Age in years"),
            ColumnSpec("gpa", "numeric", 0, 4.0),
            ColumnSpec("faculty", ColumnType.CATEGORICAL, categories=("Arts", "Law")),
            ColumnSpec("smoker", ColumnType.BOOLEAN),
            ColumnSpec("comment", ColumnType.TEXT),
            ColumnSpec("weight", ColumnType.NUMERIC),  # bounds not declared yet
        ),
    )


def test_spec_normalises_its_fields():
    spec = ColumnSpec("age", "Numeric", lower=18, upper="100")
    assert spec.type is ColumnType.NUMERIC
    assert spec.bounds == (18.0, 100.0)
    assert ColumnSpec("flag", "boolean").categories == ("yes", "no")
    assert ColumnSpec("c", "categorical", categories=[" a ", "b"]).categories == ("a", "b")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lower": 100, "upper": 18}, "reversed bounds"),
        ({"lower": 5, "upper": 5}, "both 5"),
        ({"lower": 0, "upper": math.inf}, "finite"),
        ({"lower": math.nan, "upper": 1}, "finite"),
        ({"lower": 0}, "both a lower and an upper"),
        ({"lower": "abc", "upper": 1}, "must be a number"),
        ({"lower": True, "upper": 2}, "must be a number"),
    ],
)
def test_bad_bounds_are_rejected(kwargs, message):
    with pytest.raises(DataError, match=message) as info:
        ColumnSpec("age", ColumnType.NUMERIC, **kwargs)
    assert "column 'age'" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": "categorical", "lower": 0, "upper": 1}, "only apply to numeric"),
        ({"type": "numeric", "categories": ("a",)}, "only apply to categorical"),
        ({"type": "categorical", "categories": ("a", "a")}, "listed twice"),
        ({"type": "categorical", "categories": ("a", "")}, "empty"),
        ({"type": "categorical", "categories": "abc"}, "not one string"),
        ({"type": "boolean", "categories": ("yes", "maybe")}, "exactly the categories"),
        ({"type": "date"}, "unknown type 'date'"),
    ],
)
def test_inconsistent_specs_are_rejected(kwargs, message):
    with pytest.raises(DataError, match=message):
        ColumnSpec("x", **kwargs)


def test_domain_text(schema):
    assert schema["age"].domain_text() == "18 – 100"
    assert schema["gpa"].domain_text() == "0 – 4"
    assert schema["faculty"].domain_text() == "Arts, Law"
    assert schema["faculty"].domain_text(compact=True) == "2 categories"
    assert schema["smoker"].domain_text() == "yes, no"
    assert schema["weight"].domain_text() == "undeclared"
    assert not schema["weight"].is_declared
    assert ColumnSpec("income", "numeric", 0, 100_000).domain_text() == "0 – 100,000"


def test_schema_dict_round_trip(schema):
    data = schema.to_dict()
    # Version 2 added value labels; a schema without them is written as version 1.
    assert SCHEMA_VERSION == 3 and data["schema_version"] == 1
    assert Schema.from_dict(json.loads(json.dumps(data))) == schema


def test_schema_file_round_trip(tmp_path, schema):
    path = tmp_path / "people.csv.schema.json"
    assert save_schema(schema, path) == path
    assert load_schema(path) == schema
    # Overwriting replaces the file and leaves no temporary files behind.
    save_schema(schema.with_column(ColumnSpec("weight", "numeric", 30, 250)), path)
    assert load_schema(path)["weight"].bounds == (30.0, 250.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_save_schema_failure_is_a_data_error(tmp_path, schema):
    with pytest.raises(DataError, match="cannot save schema"):
        save_schema(schema, tmp_path / "missing-folder" / "x.schema.json")


@pytest.mark.parametrize(
    ("version", "message"),
    [(None, "no schema_version"), (4, "newer than this DP Studio"), ("1", "unsupported"),
     (True, "unsupported")],
)
def test_schema_version_is_checked(schema, version, message):
    data = schema.to_dict()
    if version is None:
        del data["schema_version"]
    else:
        data["schema_version"] = version
    with pytest.raises(DataError, match=message):
        Schema.from_dict(data)


def test_schema_rejects_duplicates_and_unknown_fields():
    with pytest.raises(DataError, match="twice"):
        Schema((ColumnSpec("a", "text"), ColumnSpec("a", "numeric")))
    with pytest.raises(DataError, match="unknown schema field 'min'"):
        Schema.from_dict(
            {"schema_version": 1, "columns": [{"name": "a", "type": "numeric", "min": 0}]}
        )


def test_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "bad.schema.json"
    path.write_text('{\n  "schema_version": 1,\n  "columns": [,]\n}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.schema.json: invalid JSON at line 3, column 15"):
        load_schema(path)


def test_load_schema_errors_name_the_file(tmp_path):
    path = tmp_path / "reversed.schema.json"
    path.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "columns": [{"name": "a", "type": "numeric", "lower": 9, "upper": 1}],
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(DataError, match="reversed.schema.json: column 'a': reversed bounds"):
        load_schema(path)
    with pytest.raises(DataError, match="schema file not found"):
        load_schema(tmp_path / "none.json")


def test_sidecar(tmp_path, schema):
    data = tmp_path / "people.csv"
    assert sidecar_path(data) == tmp_path / "people.csv.schema.json"
    assert schema_for(data) is None
    save_schema(schema, sidecar_path(data))
    assert schema_for(data) == schema


def test_guess_types():
    n = 200
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "bmi": rng.normal(26, 4, n),
            "flag01": rng.integers(0, 2, n),
            "answer": rng.choice(["Yes", "no"], n),
            "truth": rng.choice([True, False], n),
            "region": rng.choice(["North", "South", "East"], n),
            "numbers_as_text": [str(v) for v in rng.integers(0, 1000, n)],
            "name": [f"person {i}" for i in range(n)],
            "empty": [np.nan] * n,
        }
    )
    assert guess_types(df) == {
        "age": ColumnType.NUMERIC,
        "bmi": ColumnType.NUMERIC,
        "flag01": ColumnType.CATEGORICAL,  # 0/1 codes, shown as they are (issue 12)
        "answer": ColumnType.BOOLEAN,
        "truth": ColumnType.BOOLEAN,
        "region": ColumnType.CATEGORICAL,
        "numbers_as_text": ColumnType.NUMERIC,
        "name": ColumnType.TEXT,
        "empty": ColumnType.TEXT,
    }


def test_guessing_never_declares_bounds_or_categories():
    df = pd.DataFrame({"age": [20, 30, 40], "region": ["N", "S", "N"], "x": ["a", "b", "c"]})
    guessed = complete_schema(df)
    assert guessed.names == ("age", "region", "x")
    for spec in guessed:
        assert spec.bounds is None
        assert spec.type is ColumnType.BOOLEAN or spec.categories == ()
        assert spec.domain_text() in {"undeclared", "—"}


def test_complete_schema_keeps_declared_columns_in_frame_order(schema):
    df = pd.DataFrame({"height": [1.7, 1.8], "age": [30, 40], "unknown": ["a", "b"]})
    full = complete_schema(df, schema)
    assert full.names == ("height", "age", "unknown")
    assert full["age"] is schema["age"]
    assert full["height"].bounds is None


def test_guessing_numeric_columns_in_blocks_follows_the_per_column_rules(monkeypatch):
    """The block-wise numeric pass (fast on thousands of columns) guesses exactly what
    guess_type does column by column, whatever the block size."""
    import numpy as np
    import pandas as pd

    from dpstudio.data import schema as schema_module

    df = pd.DataFrame({
        "ints": [1, 5, 7, 9], "floats": [0.5, np.nan, 2.0, 3.0],
        "all_nan": [np.nan] * 4, "zero_one": [0.0, 1.0, np.nan, 1.0],
        "nullable": pd.array([0, 1, None, 1], dtype="Int64"),
        "nullable_big": pd.array([3, None, 10, 1], dtype="Int64"),
        "flags": [True, False, True, True], "words": ["a", "b", "a", None],
        "yes_no": ["yes", "no", "no", "yes"], "numbers_as_text": ["1.5", "2", " 3", None],
    })
    expected = {c: schema_module.guess_type(df[c]) for c in df.columns}
    for block in (1 << 24, 3, 1):
        monkeypatch.setattr(schema_module, "_GUESS_BLOCK_CELLS", block)
        assert schema_module.guess_types(df) == expected
    assert expected["all_nan"] is schema_module.ColumnType.TEXT
    assert expected["zero_one"] is schema_module.ColumnType.CATEGORICAL  # 0/1 codes
    assert expected["nullable_big"] is schema_module.ColumnType.NUMERIC
