"""Schema format 2: value labels (an explicit step, never a silent relabelling), 0/1 codes
guessed as they are, old (version 1) schema files still read, and where each column's
declaration comes from."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpstudio.data import (
    ColumnSpec,
    ColumnType,
    DataError,
    Schema,
    column_values,
    complete_schema,
    load_schema,
    open_dataset,
    save_schema,
)
from dpstudio.data.schema import SCHEMA_VERSION, Source

FIXTURES = Path(__file__).parent / "fixtures"


def test_an_old_version_1_schema_file_still_loads():
    """The survey sample's sidecar as DP Studio wrote it before value labels."""
    path = FIXTURES / "survey_schema_v1.json"
    assert json.loads(path.read_text(encoding="utf-8"))["schema_version"] == 1
    schema = load_schema(path)
    assert schema["age"].bounds == (18.0, 100.0)
    assert schema["cheated_on_exam"].type is ColumnType.BOOLEAN
    assert schema["cheated_on_exam"].categories == ("yes", "no")
    assert schema["faculty"].categories[0] == "Arts" and schema["faculty"].labels == ()
    assert all(schema.source(name) is Source.SAVED for name in schema.names)
    # Written back unchanged: no labels, so still version 1 (older DP Studios read it).
    assert schema.to_dict() == json.loads(path.read_text(encoding="utf-8"))


def test_labels_round_trip_in_version_2(tmp_path):
    spec = ColumnSpec("children", "categorical", categories=("0", "1"),
                      labels={"1": "yes", "0": "no"})
    assert spec.labels == (("0", "no"), ("1", "yes"))  # in the categories' order
    assert spec.label_of("1") == "yes" and spec.label_of("2") == "2"
    schema = Schema((spec, ColumnSpec("age", "numeric", 0, 120)))
    data = schema.to_dict()
    assert data["schema_version"] == 2 and SCHEMA_VERSION == 3  # 3 only with an identifier
    assert data["columns"][0]["labels"] == {"0": "no", "1": "yes"}
    path = save_schema(schema, tmp_path / "x.schema.json")
    assert load_schema(path) == schema


def test_a_version_1_file_cannot_carry_labels():
    data = {"schema_version": 1, "columns": [
        {"name": "c", "type": "categorical", "categories": ["0", "1"],
         "labels": {"0": "no"}}]}
    with pytest.raises(DataError, match="unknown schema field 'labels'"):
        Schema.from_dict(data)
    data["schema_version"] = 2
    assert Schema.from_dict(data)["c"].label_of("0") == "no"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": "numeric", "labels": {"0": "no"}}, "only apply to categorical"),
        ({"type": "categorical", "categories": ("0", "1"), "labels": {"2": "x"}},
         "'2', which is not a declared category"),
        ({"type": "categorical", "categories": ("0", "1"), "labels": {"0": "1"}},
         "two categories would both read '1'"),
        ({"type": "categorical", "categories": ("0", "1"), "labels": {"0": "a", "1": "a"}},
         "two categories would both read 'a'"),
        ({"type": "categorical", "categories": ("0", "1"), "labels": "no"},
         "must map each category"),
    ],
)
def test_bad_labels_are_refused_naming_the_column(kwargs, message):
    with pytest.raises(DataError, match=message) as info:
        ColumnSpec("c", **kwargs)
    assert "column 'c'" in str(info.value)


def test_an_empty_label_leaves_the_code_as_it_is():
    spec = ColumnSpec("c", "categorical", categories=("0", "1"), labels={"0": "", "1": "yes"})
    assert spec.labels == (("1", "yes"),)


def test_zero_one_columns_are_guessed_as_their_codes_never_yes_no(tmp_path):
    rng = np.random.default_rng(7)
    n = 50
    frame = pd.DataFrame({
        "flag": rng.integers(0, 2, n),
        "flag_with_gaps": np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 2, n)),
        "all_zero": np.zeros(n, dtype=int),
        "codes_as_text": rng.choice(["0", "1"], n),
        "answer": rng.choice(["yes", "no"], n),
        "truth": rng.choice([True, False], n),
    })
    schema = complete_schema(frame)
    for name in ("flag", "flag_with_gaps", "all_zero", "codes_as_text"):
        spec = schema[name]
        # The categories come from the 0/1 convention, not from the values present.
        assert (spec.type, spec.categories) == (ColumnType.CATEGORICAL, ("0", "1")), name
        assert set(column_values(frame, spec)) <= {"0", "1", None}, name
        assert schema.source(name) is Source.GUESSED
    assert schema["answer"].type is ColumnType.BOOLEAN  # words stay yes/no
    assert schema["truth"].type is ColumnType.BOOLEAN


def test_a_column_declared_yes_no_by_the_analyst_still_reads_as_yes_no(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"flag": [0, 1, 1], "x": [1.5, 2.5, 3.5]}).to_csv(path, index=False)
    path.with_name("d.csv.schema.json").write_text(json.dumps(
        {"schema_version": 1, "columns": [{"name": "flag", "type": "boolean"}]}),
        encoding="utf-8")
    data = open_dataset(path)
    assert data.schema.source("flag") is Source.SAVED and data.schema.source("x") is Source.GUESSED
    assert column_values(data.frame, data.schema["flag"]).tolist() == ["no", "yes", "yes"]


def test_notes_on_sources_and_pending_are_not_part_of_equality():
    a = Schema((ColumnSpec("age", "numeric"),), sources={"age": Source.SAVED},
               pending={"age": "upper bound missing"})
    b = Schema((ColumnSpec("age", "numeric"),))
    assert a == b and "sources" not in a.to_dict()
    assert a.missing("age") == "upper bound missing" and b.missing("age") is None
    assert b.source("age") is Source.GUESSED
    assert Source.DECLARED.label == "declared by you, unsaved"
    assert Source.SAVED.label == "saved in the schema file"
