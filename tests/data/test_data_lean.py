"""The lean embedded path: a query reads only the columns it needs, as the full load reads
them, and the engine's bounded sums do not grow with temporaries of the whole column.

Counted, not timed: which columns a command loads, how many bytes Arrow allocates, and
how many records the rounding handles at once.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from dpstudio.data import DataError, load_table
from dpstudio.data.columns import (
    category_codes,
    category_column,
    count_column,
    require_column,
)
from dpstudio.data.file_codes import load_category_codes
from dpstudio.engine.queries.columns import present_mask


def _files(tmp_path):
    """Files whose columns the projected path must read exactly as the full load does."""
    frame = pd.DataFrame({
        "age": [34, 51, 27, 45, 60],
        "income": [52000.5, np.nan, 31000.0, 47000.25, 1e6],
        "city": ["Zürich", "Lyon", None, "Oslo", "Rome"],
        "smoker": ["yes", "no", "no", "yes", "no"],
        "when": ["2024-01-02", "2024-02-03", "2024-03-04", "2024-04-05", "2024-05-06"],
    })
    out = {}
    out["plain.csv"] = tmp_path / "plain.csv"
    frame.to_csv(out["plain.csv"], index=False)
    out["tabs.tsv"] = tmp_path / "tabs.tsv"
    frame.to_csv(out["tabs.tsv"], index=False, sep="\t")
    out["bom.csv"] = tmp_path / "bom.csv"
    out["bom.csv"].write_bytes(b"\xef\xbb\xbf" + out["plain.csv"].read_bytes())
    out["cp1252.csv"] = tmp_path / "cp1252.csv"
    out["cp1252.csv"].write_bytes(out["plain.csv"].read_text("utf-8").encode("cp1252"))
    out["semicolon.csv"] = tmp_path / "semicolon.csv"
    frame.to_csv(out["semicolon.csv"], index=False, sep=";")
    out["padded.csv"] = tmp_path / "padded.csv"  # the C parser skips the spaces
    out["padded.csv"].write_text("a,b,c\n1, 2,x\n3, 4,y\n", encoding="utf-8")
    out["hex.csv"] = tmp_path / "hex.csv"  # pyarrow would read 0x10 as 16
    out["hex.csv"].write_text("a,b\n1,0x10\n2,0x11\n", encoding="utf-8")
    out["repeats.csv"] = tmp_path / "repeats.csv"  # pandas renames the repeat a.1
    out["repeats.csv"].write_text("a,a,b\n1,2,3\n4,5,6\n", encoding="utf-8")
    out["spaced.csv"] = tmp_path / "spaced.csv"  # names with spaces are trimmed
    out["spaced.csv"].write_text(" a ,b\n1,2\n3,4\n", encoding="utf-8")
    out["numbers.csv"] = tmp_path / "numbers.csv"  # names that are numbers: a note
    out["numbers.csv"].write_text("1.5,2\n3,4\n5,6\n", encoding="utf-8")
    out["late.csv"] = tmp_path / "late.csv"  # whole numbers for 2 MB, then a fraction
    late = np.arange(200_000).astype(object)
    late[-1] = 1.5
    pd.DataFrame({"n": late, "t": [None] * 150_000 + ["x"] * 50_000}).to_csv(
        out["late.csv"], index=False)
    out["plain.parquet"] = tmp_path / "plain.parquet"
    frame.to_parquet(out["plain.parquet"])
    out["indexed.parquet"] = tmp_path / "indexed.parquet"  # a named index is no column
    frame.set_index("city").to_parquet(out["indexed.parquet"])
    out["book.xlsx"] = tmp_path / "book.xlsx"
    frame.to_excel(out["book.xlsx"], index=False)
    return out


NAMES = ["plain.csv", "tabs.tsv", "bom.csv", "cp1252.csv", "semicolon.csv", "padded.csv",
         "hex.csv", "repeats.csv", "spaced.csv", "numbers.csv", "late.csv", "plain.parquet",
         "indexed.parquet", "book.xlsx"]


@pytest.mark.parametrize("header", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_each_column_alone_reads_as_in_the_full_table(tmp_path, name, header):
    path = _files(tmp_path)[name]
    if not header and path.suffix == ".parquet":
        pytest.skip("Parquet always names its columns")
    full = load_table(path, header=header)
    for column in full.columns:
        alone = load_table(path, header=header, columns=[column])
        assert list(alone.columns) == [column]
        pd.testing.assert_series_equal(alone[column], full[column], check_names=True)
        for key in ("format", "encoding", "delimiter", "header", "load_notes", "source"):
            assert alone.attrs.get(key) == full.attrs.get(key), (key, column)


# Counting through codes: a histogram of categories takes codes into a dictionary of the
# column's texts, a count only whether each row is present; the texts are those of
# category_column (the per-row texts the engine took until now).


def _decoded(codes: np.ndarray, dictionary: list[str]) -> list[str | None]:
    """Each row's text (None where missing), read back from its code."""
    table = np.array([*dictionary, None], dtype=object)
    return table[np.where(np.isnan(codes), len(dictionary), codes).astype(np.intp)].tolist()


@pytest.mark.parametrize("header", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_codes_and_presence_read_as_the_texts_in_every_kind_of_file(tmp_path, name, header):
    path = _files(tmp_path)[name]
    if not header and path.suffix == ".parquet":
        pytest.skip("Parquet always names its columns")
    full = load_table(path, header=header)
    for column in full.columns:
        frame = load_table(path, header=header, columns=[column])
        texts = category_column(frame, column)
        codes, dictionary = category_codes(frame, column)
        assert _decoded(codes, dictionary) == texts.tolist(), column
        presence = present_mask(count_column(frame, column))
        assert presence.tolist() == [t is not None for t in texts], column
        # Straight from the file: the same codes, dictionary, attrs and errors.
        for yes_no in (False, True):
            try:
                want = category_codes(frame, column, yes_no=yes_no)
            except DataError as exc:
                with pytest.raises(DataError) as lean:
                    load_category_codes(path, column, header=header, yes_no=yes_no)
                assert str(lean.value) == str(exc)
                continue
            codes, dictionary, attrs = load_category_codes(path, column, header=header,
                                                           yes_no=yes_no)
            np.testing.assert_array_equal(codes, want[0])
            assert codes.dtype == want[0].dtype and dictionary == want[1]
            assert attrs == frame.attrs, column


def test_a_count_of_numbers_is_the_column_itself_unless_it_holds_infinities():
    frame = pd.DataFrame({"x": [1.0, np.nan, 2.0], "y": [1.0, np.inf, np.nan],
                          "n": [1, 2, 3]})
    x = count_column(frame, "x")
    assert np.shares_memory(x, frame["x"].to_numpy())  # no copy of the column
    # ±inf is a value to a count (its text is "inf"), NaN is missing: 0 or NaN per row.
    y = count_column(frame, "y")
    assert y.dtype == np.float16 and present_mask(y).tolist() == [True, True, False]
    assert present_mask(count_column(frame, "n")).all()


def test_columns_in_the_order_asked_once_each(tmp_path):
    path = _files(tmp_path)["plain.csv"]
    assert list(load_table(path, columns=["smoker", "age", "smoker"]).columns) == [
        "smoker", "age"]


@pytest.mark.parametrize("name", ["plain.csv", "cp1252.csv", "plain.parquet", "book.xlsx"])
def test_an_unknown_column_is_said_as_the_full_table_says_it(tmp_path, name):
    path = _files(tmp_path)[name]
    with pytest.raises(DataError) as full:
        require_column(load_table(path), "nope")
    with pytest.raises(DataError) as alone:
        load_table(path, columns=["nope"])
    assert str(alone.value) == str(full.value)
    assert "available: age, income" in str(alone.value)


def test_no_rows_is_said_on_the_projected_path(tmp_path):
    path = tmp_path / "header_only.csv"
    path.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(DataError, match="no data rows"):
        load_table(path, columns=["a"])


_ARROW_BYTES = textwrap.dedent("""
    import sys, tracemalloc
    import pyarrow as pa
    from dpstudio.data.loading import load_table
    columns = None if sys.argv[2] == "all" else ["x"]
    tracemalloc.start()
    frame = load_table(sys.argv[1], columns=columns)
    print(pa.default_memory_pool().max_memory(), tracemalloc.get_traced_memory()[1])
""")


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_one_column_of_a_wide_table_costs_that_column(tmp_path, suffix):
    """A 200,000-row table of one number and one 100-character text column (~21 MB of
    text): reading the number alone never holds the text, in Arrow or in Python."""
    n = 200_000
    frame = pd.DataFrame({"x": np.arange(n, dtype=np.float64),
                          "wide": [f"{'w' * 100}{i}" for i in range(n)]})
    path = tmp_path / f"wide.{suffix}"
    frame.to_parquet(path) if suffix == "parquet" else frame.to_csv(path, index=False)
    del frame

    def peaks(mode: str) -> tuple[int, int]:
        out = subprocess.run([sys.executable, "-c", _ARROW_BYTES, str(path), mode],
                             check=True, capture_output=True, text=True).stdout.split()
        return int(out[0]), int(out[1])

    arrow_one, python_one = peaks("x")
    arrow_all, python_all = peaks("all")
    mb = 2**20
    if suffix == "parquet":
        assert arrow_one < 8 * mb < 20 * mb < arrow_all  # the number is 1.6 MB
    else:
        # pyarrow parses every field of a text file, but converts one column; the file is
        # read in slices, never held whole in Python (the full load holds its ~22 MB).
        assert arrow_one < 0.75 * arrow_all
        assert python_one < 17 * mb < 20 * mb < python_all


def test_query_loads_only_its_column(monkeypatch, capsys):
    from dpstudio.cli import main
    from dpstudio.data import file_codes, loading
    from dpstudio.data.samples import sample_path

    loaded = []
    real = loading.load_table
    real_codes = file_codes.load_category_codes

    def spy(*args, **kwargs):
        frame = real(*args, **kwargs)
        loaded.append(list(frame.columns))
        return frame

    def spy_codes(path, column, **kwargs):  # a histogram of categories reads codes
        loaded.append([column])
        return real_codes(path, column, **kwargs)

    monkeypatch.setattr(loading, "load_table", spy)
    monkeypatch.setattr(file_codes, "load_category_codes", spy_codes)
    survey = sample_path("survey")
    assert main(["query", str(survey), "--column", "age", "--query", "mean", "--mechanism",
                 "laplace", "--epsilon", "1", "--bounds", "0,100", "--simulate", "1",
                 "--json"]) == 0
    assert main(["query", str(survey), "--column", "faculty", "--query", "histogram",
                 "--mechanism", "laplace", "--epsilon", "1", "--simulate", "1",
                 "--json"]) == 0
    assert main(["compare", str(survey), "--column", "age", "--query", "mean",
                 "--bounds", "0,100", "--epsilon", "1", "--json"]) == 0
    capsys.readouterr()
    # Once each (codes read from a file the fast path refuses load it: the same column).
    assert [c for i, c in enumerate(loaded) if not i or c != loaded[i - 1]] == [
        ["age"], ["faculty"], ["age"]]


def test_a_model_query_loads_its_label_and_features(monkeypatch, capsys):
    from dpstudio.cli import main
    from dpstudio.data import loading
    from dpstudio.data.samples import sample_path

    loaded = []
    real = loading.load_table

    def spy(*args, **kwargs):
        frame = real(*args, **kwargs)
        loaded.append(list(frame.columns))
        return frame

    monkeypatch.setattr(loading, "load_table", spy)
    code = main(["query", str(sample_path("survey")), "--column", "cheated_on_exam",
                 "--query", "logistic_regression", "--mechanism", "dp_erm_logistic",
                 "--features", "age,gpa", "--epsilon", "1", "--simulate", "1", "--json"])
    capsys.readouterr()
    assert code == 0
    assert loaded == [["cheated_on_exam", "age", "gpa"]]


def test_a_release_rounds_its_records_in_slices(monkeypatch):
    """The randomized rounding of a 10⁶-row mean never handles the whole column at once,
    and gives the very sum the one-pass rounding gives with the same bits."""
    from dpstudio.engine.queries import sums
    from dpstudio.engine.rng import SimulationSource

    values = np.random.default_rng(3).uniform(-10, 110, 1_000_000)
    seen = []
    real = sums._snap
    monkeypatch.setattr(sums, "_snap", lambda v, *a: seen.append(v.size) or real(v, *a))
    sliced, lo_s, hi_s = sums._rounded_sums(values, 0.0, 100.0, 2.0**-10,
                                            SimulationSource(7), 1)
    assert max(seen) <= 1 << 18 and sum(seen) == values.size
    whole, _, _ = real(values, 0.0, 100.0, 2.0**-10, SimulationSource(7))
    assert int(sliced[0]) == int(whole.sum())
    assert (lo_s, hi_s) == (0, 100 * 2**10)


def test_a_mean_makes_no_sum_of_squares_and_a_count_no_column_of_ones():
    from dpstudio.engine.queries import QuerySpec
    from dpstudio.engine.queries.sums import _plan

    values = np.arange(1000, dtype=np.float64)
    mean = _plan(values, QuerySpec("mean", "laplace", 1.0, bounds=(0.0, 100.0)).validated())
    assert [s.name for s in mean.sums] == ["sum", "count"]
    count = _plan(values, QuerySpec("count", "laplace", 1.0).validated())
    ones = count.sums[0].values
    assert ones.size == 1000 and ones.strides == (0,)  # one value, seen 1000 times
