"""Counting through codes (issue 16): a histogram of categories takes each row's code into
a dictionary of the column's texts, and a count takes only whether each row is present,
never a text per row; the numbers are those of the texts, for every kind of file.

:func:`~dpstudio.data.columns.category_codes` and
:func:`~dpstudio.data.columns.count_column` against
:func:`~dpstudio.data.columns.category_column` (the per-row texts the engine took until
now), and the engine's answers on each against its answers on the texts.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from dpstudio.analysis import run as run_analysis
from dpstudio.analysis.request import describe
from dpstudio.data import DataError, load_table
from dpstudio.data.columns import (
    category_codes,
    category_column,
    count_column,
)
from dpstudio.data.file_codes import load_category_codes
from dpstudio.engine.queries import QuerySpec, run_query
from dpstudio.engine.queries.codes import coded, dictionary_codes, dictionary_of
from dpstudio.engine.queries.columns import category_counts, present_mask
from dpstudio.engine.rng import SimulationSource


def _decoded(codes: np.ndarray, dictionary: list[str]) -> list[str | None]:
    """Each row's text (None where missing), read back from its code."""
    table = np.array([*dictionary, None], dtype=object)
    return table[np.where(np.isnan(codes), len(dictionary), codes).astype(np.intp)].tolist()


def _check_column(frame: pd.DataFrame, column: str) -> None:
    texts = category_column(frame, column)
    codes, dictionary = category_codes(frame, column)
    # The narrowest float that numbers the texts exactly (widened as they grow).
    assert codes.dtype == (np.float16 if len(dictionary) <= 2048 else np.float32)
    assert codes.size == texts.size
    assert _decoded(codes, dictionary) == texts.tolist(), column
    assert len(set(dictionary)) == len(dictionary) and None not in dictionary
    present = count_column(frame, column)
    assert present_mask(present).tolist() == [t is not None for t in texts], column
    try:
        yes_no = category_column(frame, column, yes_no=True)
    except DataError as exc:
        with pytest.raises(DataError) as lean:
            category_codes(frame, column, yes_no=True)
        assert str(lean.value) == str(exc)
    else:
        codes, dictionary = category_codes(frame, column, yes_no=True)
        assert _decoded(codes, dictionary) == yes_no.tolist()


def _awkward() -> pd.DataFrame:
    """Columns whose texts are not simply their values."""
    n = (1 << 18) + 4096  # two slices: a text first met in the second, codes across
    many = np.array([f"id{i}" for i in range(n)], dtype=object)
    many[::7] = "  id0 "  # mostly distinct texts: stripped row by row
    return pd.DataFrame({
        "floats": np.tile([1.0, 2.5, np.nan, np.inf, -np.inf, -0.0, 0.0, 3.0], n // 8),
        "ints": np.arange(n) % 5,
        "bools": np.arange(n) % 3 == 0,
        "texts": pd.array(np.tile([" a", "a ", "", "  ", None, "b", "Zürich", "a"], n // 8),
                          dtype="str"),
        "late": pd.array(["x"] * (n - 1) + ["late one"], dtype="str"),
        "objects": np.tile(np.array([1, 1.0, True, "1", None, float("nan"), "t", b"q"],
                                    dtype=object), n // 8),
        "many": pd.array(many, dtype="str"),
        "nullable": pd.array(np.tile([1, None, 3, 4], n // 4), dtype="Int64"),
        "answers": pd.array(np.tile(["Yes", "n", None, "TRUE"], n // 4), dtype="str"),
    })


@pytest.mark.parametrize("column", ["floats", "ints", "bools", "texts", "late", "objects",
                                    "many", "nullable", "answers"])
def test_codes_read_as_the_texts_across_slices(column):
    _check_column(_awkward(), column)


LABELS = ["a", "b", "Zürich", "1", "2.5", "yes", "inf", "nan", "late one", "t", "x"]


@pytest.mark.parametrize("column", ["floats", "ints", "texts", "late", "objects", "many",
                                    "answers"])
def test_the_engine_counts_codes_as_it_counts_the_texts(column):
    frame = _awkward()
    texts = category_column(frame, column)
    lean = dictionary_codes(*category_codes(frame, column))
    assert dictionary_of(lean) is not None and dictionary_of(texts) is None
    np.testing.assert_array_equal(coded(lean, LABELS), coded(texts, LABELS))
    for a, b in zip(category_counts(lean, LABELS), category_counts(texts, LABELS),
                    strict=True):
        np.testing.assert_array_equal(a, b)
    spec = QuerySpec("histogram", "laplace", 1.0, categories=tuple(LABELS))
    on_texts = run_query(texts, spec, SimulationSource(11))
    on_codes = run_query(lean, spec, SimulationSource(11))
    assert on_codes.to_dict() == on_texts.to_dict()


@pytest.mark.parametrize("column", ["floats", "texts", "objects", "nullable", "many"])
def test_a_count_through_the_analysis_is_the_count_of_the_texts(column):
    frame = _awkward()
    analysis = describe("central", "count", "laplace", 1.0, column=column)
    on_texts = run_analysis(analysis, category_column(frame, column), SimulationSource(4))
    on_presence = run_analysis(analysis, count_column(frame, column), SimulationSource(4))
    assert on_presence.fields == on_texts.fields
    assert on_presence.analyst_only == on_texts.analyst_only


def test_views_of_codes_are_codes_and_bad_codes_are_refused():
    lean = dictionary_codes(np.array([0, 1, np.nan, 1], dtype=np.float32), ["p", "q"])
    assert not lean.flags.writeable
    assert dictionary_of(np.asarray(lean).reshape(-1)[1:]) == ("p", "q")
    assert coded(lean[1:], ["q"]).tolist() == [0, -1, 0]
    assert dictionary_of(lean.copy()) is None  # a copy is read as numbers
    assert dictionary_of(lean.view(np.int32)) is None
    for bad in (np.array([0, 2], dtype=np.float32), np.array([0.5], dtype=np.float32),
                np.array([-1], dtype=np.float32), np.array([0, 1], dtype=np.int32)):
        with pytest.raises(ValueError):
            dictionary_codes(bad, ["p", "q"])
    with pytest.raises(ValueError):
        dictionary_codes(np.zeros(2, dtype=np.float32), ["p", None])
    with pytest.raises(ValueError):  # float16 numbers 2¹¹ texts exactly, not more
        dictionary_codes(np.zeros(2, dtype=np.float16), [str(i) for i in range(2049)])


def test_codes_hold_no_text_per_row():
    """10⁶ rows of an Arrow-backed column of six labels: the codes are 2 bytes a row, and
    nothing of a row's size is made beside them (one text per row costs 8 bytes a row
    and more)."""
    n = 1_000_000
    group = np.random.default_rng(2).integers(0, 6, n)
    labels = np.array(["Arts", "Law", "Science", "Medicine", "Business", "Engineering"])
    frame = pd.DataFrame({"g": pd.array(labels[group], dtype="str")})
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        codes, _ = category_codes(frame, "g")
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        count_column(frame, "g")
        count_peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert codes.nbytes == 2 * n and peak < 2 * n + 6 * 2**20
    assert count_peak < 2 * n + 6 * 2**20


_ODD = ["a", "b", "a\x1c", "\x1cb", "c\u2003", "\u00a0d", "Zürich", "yes", "n", "x" * 300]


def _text_files(tmp_path, values) -> dict[str, object]:
    frame = pd.DataFrame({"c": pd.array(values, dtype="str"), "k": np.arange(len(values))})
    out = {"csv": tmp_path / "t.csv", "parquet": tmp_path / "t.parquet"}
    frame.to_csv(out["csv"], index=False)
    frame.to_parquet(out["parquet"], row_group_size=7_000)  # batches of row groups
    return out


@pytest.mark.parametrize("kind", ["few", "distinct", "yes_no", "not_yes_no"])
def test_a_file_read_straight_into_codes_gives_the_loaded_columns_codes(tmp_path, kind):
    """Texts with whitespace Python strips and Arrow does not (and the reverse), in a
    column of few values (each stripped by Python) or of mostly distinct ones (stripped
    by pandas), over several batches; yes/no spellings, and a column that is not yes/no
    (the loaded column's message, with its row)."""
    rng = np.random.default_rng(8)
    n = 30_000
    if kind == "distinct":
        values = np.array([f"v{i}" for i in range(n)], dtype=object)
        values[rng.integers(0, n, 3000)] = rng.choice(_ODD, 3000)
    elif kind in ("yes_no", "not_yes_no"):
        values = rng.choice(["yes", "No", "TRUE", "f", None], n).astype(object)
        if kind == "not_yes_no":
            values[25_000] = "maybe"
    else:
        values = rng.choice(_ODD + [None], n).astype(object)
    yes_no = kind in ("yes_no", "not_yes_no")
    for path in _text_files(tmp_path, values).values():
        frame = load_table(path, columns=["c"])
        if kind == "not_yes_no":
            with pytest.raises(DataError, match="row 25001: 'maybe'"):
                load_category_codes(path, "c", yes_no=True)
            continue
        want_codes, want_dictionary = category_codes(frame, "c", yes_no=yes_no)
        codes, dictionary, attrs = load_category_codes(path, "c", yes_no=yes_no)
        np.testing.assert_array_equal(codes, want_codes)
        assert dictionary == want_dictionary and attrs == frame.attrs


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_text_column_is_coded_from_the_file_without_loading_it(tmp_path, suffix, monkeypatch):
    from dpstudio.data import loading

    path = _text_files(tmp_path, ["a", "b", None, "c"] * 5000)[suffix]
    want = category_codes(load_table(path, columns=["c"]), "c")

    def refuse(*args, **kwargs):
        raise AssertionError("the text column was loaded")

    monkeypatch.setattr(loading, "load_table", refuse)
    codes, dictionary, _ = load_category_codes(path, "c")
    np.testing.assert_array_equal(codes, want[0])
    assert dictionary == want[1] == ["a", "b", "c"]


_ARROW_PEAK = """
import sys, tracemalloc
import pyarrow as pa
import pyarrow.compute, pyarrow.csv, pyarrow.parquet  # imports are not the data's cost
import dpstudio.data.loading, dpstudio.data.projected
from dpstudio.data.file_codes import load_category_codes
tracemalloc.start()
codes, dictionary, _ = load_category_codes(sys.argv[1], "c")
print(pa.default_memory_pool().max_memory(), tracemalloc.get_traced_memory()[1], codes.nbytes)
"""


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_codes_from_a_file_never_hold_its_texts(tmp_path, suffix):
    """10⁶ rows of 60-character labels (~64 MB as Arrow text): Arrow holds a batch of
    them at a time (the whole column's texts, as the loaded frame holds them, cost 4×
    that bound). In Python: the codes (2 MB) and one batch's look-ups; a text file's
    encoding check reads it in 8 MB chunks first (two at once, 17 MB)."""
    import subprocess
    import sys

    labels = np.array([name + "_" * (60 - len(name))
                       for name in ("Arts", "Law", "Science", "Medicine")])
    path = _text_files(tmp_path, labels[np.random.default_rng(1).integers(0, 4, 10**6)])[suffix]
    out = subprocess.run([sys.executable, "-c", _ARROW_PEAK, str(path)], check=True,
                         capture_output=True, text=True).stdout.split()
    arrow, python, codes = (int(v) for v in out)
    assert codes == 2 * 10**6  # float16: two bytes a row
    assert arrow < 16 * 2**20
    assert python < (18 if suffix == "csv" else 6) * 2**20
