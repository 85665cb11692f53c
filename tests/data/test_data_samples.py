"""The bundled samples: reproducible from their script, and consistent with their sidecars."""

from __future__ import annotations

import importlib.util
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpstudio.data import (
    SAMPLES,
    ColumnType,
    DataError,
    column_values,
    numeric_column,
    open_dataset,
    sample_path,
    sidecar_path,
)

SAMPLES_DIR = Path(str(files("dpstudio.resources") / "samples"))


@pytest.fixture(scope="module")
def make_samples():
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES_DIR / "make_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generation_is_deterministic(make_samples):
    first, second = make_samples.generate(), make_samples.generate()
    assert first.keys() == second.keys() == SAMPLES.keys()
    for name in first:
        pd.testing.assert_frame_equal(first[name][0], second[name][0])
    other = make_samples.generate(seed=make_samples.SEED + 1)
    assert not other["survey"][0].equals(first["survey"][0])


def test_committed_files_are_what_the_script_writes(make_samples, tmp_path):
    written = make_samples.write(tmp_path)
    assert len(written) == 2 * len(SAMPLES)
    for path in written:
        committed = SAMPLES_DIR / path.name
        assert committed.read_bytes() == path.read_bytes(), f"re-run make_samples.py: {path.name}"


def test_sample_paths():
    for name in SAMPLES:
        assert sample_path(name) == SAMPLES_DIR / f"{name}.csv"
        assert sidecar_path(sample_path(name)).is_file()
    assert sample_path("survey.csv") == sample_path("survey")
    with pytest.raises(DataError, match="no sample dataset 'nope'"):
        sample_path("nope")


@pytest.mark.parametrize(("name", "rows"), [("survey", 2000), ("health", 3000)])
def test_samples_match_their_declared_schema(name, rows):
    dataset = open_dataset(sample_path(name))
    frame, declared = dataset.frame, dataset.declared
    assert declared is not None and len(frame) == rows
    assert declared.names == tuple(frame.columns), "every column declared, in file order"
    assert frame.isna().any().sum() >= 1, "some missing values to show off"
    sensitive = [s for s in declared if s.type is ColumnType.BOOLEAN]
    assert sensitive, "at least one yes/no attribute"
    for spec in declared:
        assert spec.description, spec.name
        values = column_values(frame, spec)  # raises if a yes/no or numeric column is not
        if spec.type is ColumnType.TEXT:
            continue
        assert spec.is_declared, spec.name
        if spec.type is ColumnType.NUMERIC:
            present = values[~np.isnan(values)]
            outside = (present < spec.lower) | (present > spec.upper)
            assert outside.mean() <= 0.005, f"{spec.name}: too many values out of bounds"
            # Bounds are declared from domain knowledge, not read off the data.
            assert (spec.lower, spec.upper) != (present.min(), present.max()), spec.name
        else:
            observed = {v for v in values if v is not None}
            assert observed <= set(spec.categories), f"{spec.name}: undeclared categories"


def test_samples_have_plausible_correlations():
    survey = open_dataset(sample_path("survey")).frame
    hours = numeric_column(survey, "hours_studied_per_week")
    cheated = survey["cheated_on_exam"].to_numpy() == "yes"
    assert 0.1 < cheated.mean() < 0.35
    assert hours[cheated].mean() < hours[~cheated].mean() - 2

    health = open_dataset(sample_path("health")).frame
    age = numeric_column(health, "age")
    diabetes = health["diabetes"].to_numpy() == "yes"
    assert 0.05 < diabetes.mean() < 0.2
    assert diabetes[age >= 60].mean() > 2 * diabetes[age < 40].mean()
    assert np.corrcoef(age, numeric_column(health, "systolic_bp"))[0, 1] > 0.3
