"""Categorical columns are counted through codes (issue 12 item 18, issue 16's first point).

The counts, the "other or missing" split and the missing-value rules are those of a plain
count of each value's text (a ``collections.Counter``), on random columns holding None,
NaN, undeclared values, numbers and long labels; a 300-character value no longer turns
the column into a fixed-width text array (memory); a read-only column is encoded once
per set of labels, whichever query or job asks.
"""

from __future__ import annotations

import gc
import math
import threading
import tracemalloc
from collections import Counter

import numpy as np
import pytest

from dpstudio.engine.local.respond import histogram_inputs
from dpstudio.engine.queries import (
    QuerySpec,
    category_codes,
    category_counts,
    row_codes,
    run_query,
)
from dpstudio.engine.queries import codes as codes_module
from dpstudio.engine.queries.histogram import _histogram_parts
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.utility import true_value

LONG = "l" * 300
POOL = ["a", "b", "c", "d", "", " a", "A", LONG, LONG[:-1], None, float("nan"), np.nan,
        np.float64("nan"), 1, 1.0, 2.5, -0.0, 0.0, True, False, np.int64(3), np.str_("b"),
        math.inf, "1", "2.5", "True", "nan", "None", "inf", "0.0", "-0.0", "3"]
LABEL_SETS = [["a", "b", "c"], ["1", "2.5", "True", "nan", "None", "inf", "3"],
              ["0.0", "-0.0", LONG, "", "A"], ["a", "b", "a"], []]


def _reference(values, labels) -> tuple[list[int], int, int]:
    """Counts per label, undeclared, missing: one value at a time, by its text."""
    index = {label: i for i, label in enumerate(labels)}
    missing = undeclared = 0
    found: Counter[int] = Counter()
    for x in values:
        if x is None or x != x:
            missing += 1
        elif str(x) in index:
            found[index[str(x)]] += 1
        else:
            undeclared += 1
    return [found[i] for i in range(len(labels))], undeclared, missing


def _column(rng, n: int, frozen: bool) -> np.ndarray:
    v = np.empty(n, dtype=object)
    for i in range(n):
        v[i] = POOL[int(rng.integers(len(POOL)))]
    v.flags.writeable = not frozen
    return v


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_counts_are_a_plain_count_of_the_text(seed, frozen):
    rng = np.random.default_rng(seed)
    for n in (0, 1, 7, 300):
        values = _column(rng, n, frozen)
        for labels in LABEL_SETS:
            counts, undeclared, missing = _reference(values.tolist(), labels)
            got = category_counts(values, labels)
            assert (got[0].tolist(), got[1], got[2]) == (counts, undeclared, missing)
            codes, undeclared_codes = row_codes(values, labels)
            assert codes.dtype == np.int64 and undeclared_codes == undeclared
            assert np.count_nonzero(codes < 0) == undeclared + missing
            assert np.bincount(codes[codes >= 0], minlength=len(labels)).tolist() == counts
            kept, undeclared_kept = category_codes(values, labels)
            assert kept.dtype == np.int64 and undeclared_kept == undeclared
            assert np.array_equal(kept, codes[codes >= 0])  # row order kept


def test_rows_keep_their_order_and_label():
    values = np.array(["b", None, "zz", "a", float("nan"), LONG, "a", 1], dtype=object)
    codes, undeclared = row_codes(values, ["a", "b", LONG, "1"])
    assert codes.tolist() == [1, -1, -1, 0, -1, 2, 0, 3] and undeclared == 1


@pytest.mark.parametrize("values", [
    np.array([0.0, -0.0, 1.0, 2.5, np.nan, np.inf, -np.inf, 1e20, 0.1, 0.1]),
    np.array([0.0, -0.0, 2.5, np.nan], dtype=np.float32),
    np.array([3, 1, 3, 0, -2]),
    np.array([True, False, True]),
    np.array(["a", "b", "", "True", LONG]),
    np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"),
])
def test_columns_of_fixed_types_count_as_their_text(values):
    labels = ["0.0", "-0.0", "1.0", "2.5", "1e+20", "0.1", "3", "0", "True", "a", LONG,
              "2020-01-02", "inf"]
    # A numeric column's ±inf is missing too (present_mask), as numpy prints it.
    texts = [None if v.dtype.kind == "f" and not np.isfinite(v) else str(v) for v in values]
    counts, undeclared, missing = _reference(texts, labels)
    got = category_counts(values, labels)
    assert (got[0].tolist(), got[1], got[2]) == (counts, undeclared, missing)


def test_histogram_release_truth_and_local_inputs_agree_with_the_reference():
    rng = np.random.default_rng(11)
    values = _column(rng, 5000, frozen=True)
    labels = ["a", "b", "c", LONG]
    counts, undeclared, missing = _reference(values.tolist(), labels)
    spec = QuerySpec("histogram", "laplace", 1.0, categories=tuple(labels))
    true_counts, _, _, clamped = _histogram_parts(values, spec)
    assert true_counts.tolist() == counts and clamped == undeclared
    assert true_value(values, spec).tolist() == counts
    release = run_query(values, spec, SimulationSource(0))
    assert release.clamped == undeclared and list(release.value) == labels
    # The local model's "other or missing" cell: k, with the analyst-only split kept.
    inputs = histogram_inputs(values, labels, SimulationSource(0), other=True)
    assert np.bincount(inputs.values, minlength=5).tolist() == counts + [undeclared + missing]
    assert (inputs.undeclared, inputs.missing) == (undeclared, missing)
    # Writing into the codes handed out (the local inputs do) leaves the remembered ones.
    assert category_counts(values, labels)[0].tolist() == counts


def test_a_300_character_value_does_not_blow_memory():
    """Before: the column became a fixed-width text array as wide as its longest value,
    4 bytes a character (100,000 rows × 300 characters = 120 MB), and was sorted."""
    rng = np.random.default_rng(5)
    values = np.array(["yes", "no", "maybe", None], dtype=object)[rng.integers(0, 4, 100_000)]
    values[17] = LONG
    labels = ["yes", "no", "maybe"]
    expected = _reference(values.tolist(), labels)
    tracemalloc.start()
    try:
        got = category_counts(values, labels)
        release = run_query(values, QuerySpec("histogram", "laplace", 1.0,
                                              categories=tuple(labels)), SimulationSource(1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (got[0].tolist(), got[1], got[2]) == expected and release.clamped == 1
    assert peak < 4_000_000  # bytes; the codes are 100 kB, the column's pointers 800 kB


def test_a_read_only_column_is_encoded_once_per_set_of_labels(monkeypatch):
    calls: list[tuple[int, tuple[str, ...]]] = []
    encode = codes_module._encode

    def spy(v, labels):
        calls.append((v.size, tuple(labels)))
        return encode(v, labels)

    monkeypatch.setattr(codes_module, "_encode", spy)
    values = np.array(["a", "b", None, "zz"] * 250, dtype=object)
    values.flags.writeable = False
    labels = ["a", "b"]
    spec = QuerySpec("histogram", "laplace", 1.0, categories=tuple(labels))
    first = category_counts(values, labels)
    row_codes(values, labels)
    category_codes(values, labels)
    _histogram_parts(values, spec)
    true_value(values, spec)
    histogram_inputs(values, labels, SimulationSource(0), other=True)
    assert calls == [(1000, ("a", "b"))]
    category_counts(values, ["a"])  # another declaration: encoded for it
    assert len(calls) == 2
    assert category_counts(values, labels)[0].tolist() == first[0].tolist() == [250, 250]
    # A column that can still be written to is encoded each time (never a stale answer).
    writable = values.copy()
    category_counts(writable, labels)
    writable[0] = "b"
    assert category_counts(writable, labels)[0].tolist() == [249, 251]
    assert len(calls) == 4


def test_the_memo_forgets_a_column_that_is_gone():
    before = len(codes_module._MEMO)
    values = np.array(["a", "b"] * 10, dtype=object)
    values.flags.writeable = False
    category_counts(values, ["a"])
    assert len(codes_module._MEMO) == before + 1
    del values
    gc.collect()
    assert len(codes_module._MEMO) == before


def test_jobs_starting_together_share_one_encoding(monkeypatch):
    calls = []
    encode = codes_module._encode

    def slow(v, labels):
        calls.append(v.size)
        return encode(v, labels)

    monkeypatch.setattr(codes_module, "_encode", slow)
    values = np.array(["a", "b", None] * 40_000, dtype=object)
    values.flags.writeable = False
    results: list[list[int]] = []
    threads = [threading.Thread(target=lambda: results.append(
        category_counts(values, ["a", "b"])[0].tolist())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [120_000] and results == [[40_000, 40_000]] * 4
