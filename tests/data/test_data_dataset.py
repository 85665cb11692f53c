"""open_dataset: the table plus its declared (or guessed) schema."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from dpstudio.data import ColumnSpec, DataError, Schema, open_dataset, save_schema, sidecar_path


def test_open_dataset_merges_sidecar_and_guesses(tmp_path):
    path = tmp_path / "people.csv"
    pd.DataFrame({"age": [30, 41], "city": ["Oslo", "Lyon"]}).to_csv(path, index=False)
    save_schema(Schema((ColumnSpec("age", "numeric", 18, 100),)), sidecar_path(path))
    dataset = open_dataset(path)
    assert (dataset.name, dataset.n_rows, dataset.n_columns) == ("people.csv", 2, 2)
    assert dataset.schema.names == ("age", "city")
    assert dataset.is_declared("age") and not dataset.is_declared("city")
    assert dataset.schema["age"].bounds == (18.0, 100.0)
    assert dataset.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_broken_sidecar_is_reported(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("a\n1\n", encoding="utf-8")
    sidecar_path(path).write_text("{not json", encoding="utf-8")
    with pytest.raises(DataError, match="people.csv.schema.json: invalid JSON at line 1"):
        open_dataset(path)
