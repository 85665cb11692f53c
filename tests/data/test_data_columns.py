"""Column extraction: numeric arrays with NaN, category strings with None, yes/no spellings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpstudio.data import (
    ColumnSpec,
    DataError,
    category_column,
    column_values,
    normalize_yes_no,
    numeric_column,
    yes_no_column,
)


def test_numeric_column_keeps_missing_values_as_nan():
    df = pd.DataFrame({"x": [1, None, 3.5]})
    out = numeric_column(df, "x")
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [1.0, np.nan, 3.5])


def test_numeric_column_from_nullable_ints_bools_and_text():
    df = pd.DataFrame(
        {
            "n": pd.array([1, None, 3], dtype="Int64"),
            "b": [True, False, True],
            "t": [" 12", "", "7.5 "],
        }
    )
    np.testing.assert_array_equal(numeric_column(df, "n"), [1.0, np.nan, 3.0])
    np.testing.assert_array_equal(numeric_column(df, "b"), [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(numeric_column(df, "t"), [12.0, np.nan, 7.5])


def test_non_numeric_column_names_the_first_bad_row():
    df = pd.DataFrame({"x": ["1", None, "abc", "zzz"]})
    with pytest.raises(DataError) as info:
        numeric_column(df, "x")
    assert str(info.value) == "column 'x' is not numeric (e.g. row 3: 'abc')"


def test_unknown_column_lists_the_available_ones():
    df = pd.DataFrame({"age": [1], "bmi": [2]})
    with pytest.raises(DataError, match=r"no column 'agee' \(available: age, bmi\)"):
        numeric_column(df, "agee")
    with pytest.raises(DataError, match="no column"):
        category_column(df, "nope")


def test_category_column_gives_strings_and_none():
    df = pd.DataFrame({"year": [1.0, 2.0, np.nan], "city": [" Oslo", None, "Lyon"]})
    assert category_column(df, "year").tolist() == ["1", "2", None]
    assert category_column(df, "city").tolist() == ["Oslo", None, "Lyon"]
    assert category_column(df, "city").dtype == object


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["yes", "No", " YES ", None], ["yes", "no", "yes", None]),
        (["y", "n", "Y", "N"], ["yes", "no", "yes", "no"]),
        (["true", "False", "T", "f"], ["yes", "no", "yes", "no"]),
        ([1, 0, 1, None], ["yes", "no", "yes", None]),
        ([True, False, True, False], ["yes", "no", "yes", "no"]),
        (["1", "0", "1.0", "0.0"], ["yes", "no", "yes", "no"]),
    ],
)
def test_yes_no_spellings(values, expected):
    df = pd.DataFrame({"answer": values})
    assert yes_no_column(df, "answer").tolist() == expected


def test_yes_no_rejects_other_values():
    df = pd.DataFrame({"answer": ["yes", "no", "maybe"]})
    with pytest.raises(DataError, match=r"column 'answer' is not yes/no \(e.g. row 3: 'maybe'\)"):
        yes_no_column(df, "answer")
    assert normalize_yes_no("perhaps") is None


def test_column_values_follows_the_declared_type():
    df = pd.DataFrame({"age": ["30", "41"], "smoker": ["Y", "N"], "region": ["N", "S"]})
    np.testing.assert_array_equal(column_values(df, ColumnSpec("age", "numeric")), [30, 41])
    assert column_values(df, ColumnSpec("smoker", "boolean")).tolist() == ["yes", "no"]
    assert column_values(df, ColumnSpec("region", "categorical")).tolist() == ["N", "S"]
