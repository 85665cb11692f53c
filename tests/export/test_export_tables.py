"""Exports: every format round-trips, holds only public fields, and is safe to open in a
spreadsheet (text cells that would start a formula are neutralized)."""

import csv
import io
import json

import numpy as np
import openpyxl
import pandas as pd
import pyarrow.parquet as pq
import pytest

from dpstudio.engine.queries import QuerySpec, release, run_query
from dpstudio.engine.rng import SecureSource, SimulationSource
from dpstudio.export import (
    ExportTable,
    coefficients_table,
    neutralize,
    public_result,
    records_table,
    release_table,
    render_table,
)
from dpstudio.export.writers import FORMULA_PREFIXES

DANGEROUS = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tTAB", "\rCR", "=HYPERLINK(\"x\")"]


def _mean_release():
    values = np.linspace(0, 100, 500)
    spec = QuerySpec(query="mean", mechanism="laplace", epsilon=1.0, bounds=(0, 100),
                     column="score")
    return public_result(release(values, spec, SecureSource()))


def _histogram_release(categories):
    values = np.array([categories[i % len(categories)] for i in range(300)] + ["other"] * 7,
                      dtype=object)
    spec = QuerySpec(query="histogram", mechanism="gaussian", epsilon=1.0, delta=1e-6,
                     categories=tuple(categories), column="=cmd|' /C calc'!A0")
    return public_result(release(values, spec, SecureSource()))


def read_back(data: bytes, fmt: str) -> tuple[list[str], list[list]]:
    """(column names, rows) of an export, read with the usual libraries."""
    if fmt == "csv":
        frame = pd.read_csv(io.BytesIO(data), keep_default_na=False, dtype=str)
        return list(frame.columns), frame.to_numpy().tolist()
    if fmt == "parquet":
        table = pq.read_table(io.BytesIO(data))
        return table.column_names, [list(r.values()) for r in table.to_pylist()]
    if fmt == "json":
        doc = json.loads(data)
        names = [c["name"] for c in doc["columns"]]
        return names, [[row[n] for n in names] for row in doc["rows"]]
    wb = openpyxl.load_workbook(io.BytesIO(data))
    rows = [list(r) for r in wb["release"].iter_rows(values_only=True)]
    return rows[0], rows[1:]


def _as_number(v):
    return None if v in (None, "") else float(v)


def same(fmt, got, want):
    """Exact, except Excel: openpyxl writes 16 significant digits (Excel shows 15)."""
    got = _as_number(got)
    return got == want if fmt != "xlsx" else got == pytest.approx(want, rel=2e-16, abs=0)


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "xlsx"])
def test_a_statistic_round_trips(fmt):
    pub = _mean_release()
    names, rows = read_back(render_table(release_table(pub), fmt, {"epsilon": 1.0}), fmt)
    assert names == ["statistic", "column", "value", "ci_low", "ci_high", "confidence",
                     "std_error"]
    (row,) = rows
    assert row[:2] == ["mean", "score"]
    assert same(fmt, row[2], pub["value"])
    assert same(fmt, row[3], pub["ci_low"]) and same(fmt, row[4], pub["ci_high"])
    assert same(fmt, row[5], 0.95)
    assert same(fmt, row[6], pub["variance"] ** 0.5)


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "xlsx"])
def test_a_histogram_round_trips(fmt):
    pub = _histogram_release(["a", "b", "c"])
    names, rows = read_back(render_table(release_table(pub), fmt), fmt)
    assert names[:4] == ["statistic", "column", "cell", "value"]
    assert [r[2] for r in rows] == ["a", "b", "c"]
    for r in rows:
        label = r[2]
        assert same(fmt, r[3], pub["value"][label])
        assert same(fmt, r[4], pub["ci_low"][label])
        assert same(fmt, r[5], pub["ci_high"][label])


def test_only_public_fields_leave():
    values = np.array([-50.0, 1.0, 2.0, 500.0])  # two values outside the bounds
    spec = QuerySpec(query="sum", mechanism="laplace", epsilon=1.0, bounds=(0, 10),
                     column="x")
    result = release(values, spec, SecureSource())
    assert result.clamped == 2
    pub = public_result(result)
    assert "clamped" not in pub
    for fmt in ("csv", "json", "parquet", "xlsx"):
        assert b"clamped" not in render_table(release_table(pub), fmt, pub)
    with pytest.raises(ValueError, match="simulation"):
        public_result(run_query(values, spec, SimulationSource(1)))


def test_neutralize():
    for text in DANGEROUS:
        assert neutralize(text) == "'" + text
    for text in ("safe", "", "'already", " =spaced", "12", "[-5, 0)"):
        assert neutralize(text) == text
    # OWASP's list, and more (see test_export_formula.py).
    assert set(FORMULA_PREFIXES) >= {"=", "+", "-", "@", "\t", "\r"}


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "xlsx"])
def test_formula_injection_is_neutralized(fmt):
    pub = _histogram_release(DANGEROUS + ["plain"])
    data = render_table(release_table(pub), fmt, {"column": pub["column"], "note": "-x"})
    _, rows = read_back(data, fmt)
    for row, label in zip(rows, DANGEROUS + ["plain"], strict=True):
        expected = label if label == "plain" else "'" + label
        if fmt == "xlsx":  # XML reads every line break as LF
            expected = expected.replace("\r", "\n")
        assert row[2] == expected, (fmt, row[2])
        assert row[1] == "'=cmd|' /C calc'!A0"
        assert isinstance(_as_number(row[3]), float)  # numbers stay numbers
    if fmt == "csv":  # no raw cell of the file starts a formula
        for cells in csv.reader(io.StringIO(data.decode())):
            assert not any(c.startswith(FORMULA_PREFIXES) for c in cells)
    if fmt == "xlsx":
        wb = openpyxl.load_workbook(io.BytesIO(data))
        for ws in wb.worksheets:
            for row in ws.iter_rows():
                for cell in row:
                    assert cell.data_type != "f"
                    if isinstance(cell.value, str):
                        assert not cell.value.startswith(FORMULA_PREFIXES)
    if fmt == "json":
        doc = json.loads(data)
        assert doc["meta"] == {"column": "'=cmd|' /C calc'!A0", "note": "'-x"}
    if fmt == "parquet":
        meta = json.loads(pq.read_schema(io.BytesIO(data)).metadata[b"dpstudio"])
        assert meta["note"] == "'-x"


def test_negative_numbers_are_not_touched():
    table = ExportTable("coefficients", (("term", "text"), ("estimate", "number")),
                        (("-intercept", -3.5),))
    for fmt in ("csv", "json", "parquet", "xlsx"):
        _, rows = read_back(render_table(table, fmt), fmt)
        assert rows[0][0] == "'-intercept" and _as_number(rows[0][1]) == -3.5


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "xlsx"])
def test_hooks_for_records_and_coefficients(fmt):
    recs = records_table({"answer": ["yes", "no", None, "=evil"], "noisy_age": [21.5, 30.0,
                                                                                19.25, 44.0],
                          "bucket": [1, 2, 3, 4]})
    assert recs.columns == (("answer", "text"), ("noisy_age", "number"), ("bucket", "integer"))
    names, rows = read_back(render_table(recs, fmt), fmt)
    assert names == ["answer", "noisy_age", "bucket"]
    assert [r[0] for r in rows] == ["yes", "no", None if fmt not in ("csv",) else "", "'=evil"]
    assert [_as_number(r[1]) for r in rows] == [21.5, 30.0, 19.25, 44.0]
    coef = coefficients_table(["(intercept)", "age"], [0.5, -0.01], std_errors=[0.1, 0.002])
    names, rows = read_back(render_table(coef, fmt), fmt)
    assert names == ["term", "estimate", "std_error", "ci_low", "ci_high"]
    assert [_as_number(r[1]) for r in rows] == [0.5, -0.01]
    assert _as_number(rows[1][2]) == 0.002 and rows[1][3] in (None, "")


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="kind"):
        ExportTable("raw data", (), ())
    with pytest.raises(ValueError, match="cells"):
        ExportTable("records", (("a", "text"),), (("x", "y"),))
    with pytest.raises(ValueError, match="lengths"):
        records_table({"a": [1, 2], "b": [1]})
