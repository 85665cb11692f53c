"""Numeric columns streamed into numpy arrays, Parquet texts into Arrow chunks
(:mod:`dpstudio.data.numeric_stream`): the very values, dtypes and index of the full load,
in the cases the stream takes and in those it leaves to pandas; and the stream, not a
whole Arrow table, is what reads them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpstudio.data import DataError, load_table, projected


def _same_as_full(path, columns=None):
    full = load_table(path)
    for column in columns or full.columns:
        alone = load_table(path, columns=[column])
        pd.testing.assert_series_equal(alone[column], full[column], check_names=True)
        assert alone.attrs["load_notes"] == full.attrs["load_notes"]


def _parquet_cases(tmp_path):
    n = 3000
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "f64": rng.normal(size=n),
        "f32": rng.normal(size=n).astype(np.float32),
        "i64": np.arange(n, dtype=np.int64) * 7 - 10_000,
        "u8": (np.arange(n) % 250).astype(np.uint8),
        "flag": np.arange(n) % 3 == 0,
        "nullable": pd.array([None if i % 97 == 5 else i for i in range(n)], dtype="Int64"),
        "text": [None if i % 89 == 3 else f" t{i % 7} " * (1 + i % 3) for i in range(n)],
    })
    frame.loc[::101, "f64"] = np.nan
    frame.loc[7, "f64"] = np.inf
    out = {"pandas": tmp_path / "pandas.parquet", "groups": tmp_path / "groups.parquet",
           "plain": tmp_path / "plain.parquet", "sliced": tmp_path / "sliced.parquet"}
    frame.to_parquet(out["pandas"])  # pandas metadata: "nullable" comes back as Int64
    frame.to_parquet(out["groups"], row_group_size=256)  # many row groups, batches across
    table = pa.table({  # written by Arrow alone: no pandas metadata, integers with nulls
        "ints": pa.array([None if i % 13 == 0 else i for i in range(n)], pa.int64()),
        "bools": pa.array([None if i == 9 else i % 2 == 0 for i in range(n)]),
        "x": pa.array(np.linspace(0, 1, n)),
    })
    pq.write_table(table, out["plain"], row_group_size=1000)
    frame.iloc[10:].to_parquet(out["sliced"])  # its index starts at 10
    return out


@pytest.mark.parametrize("case", ["pandas", "groups", "plain", "sliced"])
def test_parquet_numbers_read_as_the_full_load_reads_them(tmp_path, case):
    _same_as_full(_parquet_cases(tmp_path)[case])


def test_parquet_numbers_never_go_through_pandas_read_parquet(tmp_path, monkeypatch):
    path = _parquet_cases(tmp_path)["groups"]
    full = load_table(path)

    def refuse(*args, **kwargs):
        raise AssertionError("read whole by pandas")

    monkeypatch.setattr(pd, "read_parquet", refuse)
    for column in ("f64", "f32", "i64", "u8", "flag", "text"):
        pd.testing.assert_series_equal(load_table(path, columns=[column])[column],
                                       full[column])
    with pytest.raises(DataError, match="read whole by pandas"):
        load_table(path, columns=["nullable"])  # an extension dtype: pandas reads it


def _text_cases(tmp_path):
    n = 120_000
    out = {}
    # A missing integer only far past the first block: the column turns float64 there.
    late_gap = pd.DataFrame({"k": np.arange(n, dtype=np.float64), "v": np.arange(n) / 4})
    late_gap.loc[n - 3, "k"] = np.nan
    out["late_gap"] = tmp_path / "late_gap.csv"
    late_gap.to_csv(out["late_gap"], index=False, float_format="%.17g")
    text = out["late_gap"].read_text().replace(".0,", ",")  # whole numbers print as ints
    out["late_gap"].write_text(text)
    # Long lines first, short ones after: more rows than the first megabyte predicts.
    pad = ["p" * 300] * 5000 + [""] * (n - 5000)
    out["short_tail"] = tmp_path / "short_tail.csv"
    pd.DataFrame({"x": np.arange(n) * 0.5, "pad": pad}).to_csv(out["short_tail"], index=False)
    # A whole number beyond int64 in a later block: pandas keeps it exact, so no stream.
    huge = np.arange(n, dtype=np.float64)
    huge[-1] = 2.0**70
    out["huge"] = tmp_path / "huge.csv"
    pd.DataFrame({"h": huge}).to_csv(out["huge"], index=False, float_format="%.0f")
    return out


@pytest.mark.parametrize("case", ["late_gap", "short_tail", "huge"])
def test_text_numbers_read_as_the_full_load_reads_them(tmp_path, case):
    path = _text_cases(tmp_path)[case]
    _same_as_full(path, [c for c in load_table(path).columns if c != "pad"])


def test_text_numbers_are_streamed_not_read_as_a_table(tmp_path, monkeypatch):
    cases = _text_cases(tmp_path)
    full = {name: load_table(cases[name]) for name in ("short_tail", "late_gap")}
    assert full["late_gap"]["k"].dtype == np.float64 and full["late_gap"]["k"].isna().sum() == 1

    def refuse(*args, **kwargs):
        raise AssertionError("read as a whole Arrow table")

    monkeypatch.setattr(projected, "_arrow_table", refuse)
    for name, column in (("short_tail", "x"), ("late_gap", "k"), ("late_gap", "v")):
        pd.testing.assert_series_equal(load_table(cases[name], columns=[column])[column],
                                       full[name][column])
    with pytest.raises(AssertionError, match="whole Arrow"):
        load_table(cases["short_tail"], columns=["pad"])  # text: the table path
