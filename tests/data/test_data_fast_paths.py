"""The fast paths read exactly what the slow ones do.

pyarrow's CSV reader against pandas' C parser; vectorized column extraction against the
row-by-row reference; type guessing on distinct values against the all-rows reference;
progress and cancellation of a load.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from dpstudio.data import columns as columns_module
from dpstudio.data import loading
from dpstudio.data.dataset import open_dataset
from dpstudio.data.schema import NO_SPELLINGS, YES_SPELLINGS, ColumnType, guess_type
from dpstudio.jobs import Cancelled, NullState

TRICKY = {
    "ints": b"a,b\n1,2\n3,4\n",
    "missing": b"a,b\n1.5,\n,NA\n3,None\n",
    "inf": b"a\n1\ninf\n-inf\n",
    "exponents": b"a\n1e5\n.5\n5.\n+3\n",
    "beyond_int64": b"a\n99999999999999999999\n1\n",
    "uint64": b"a\n18446744073709551615\n1\n",
    "dates": b"a,b\n2024-01-01,1\n2024-02-03,2\n",
    "times": b"a,b\n12:00:00,1\n13:00,2\n",
    "timestamps": b"a,b\n2024-01-01 12:00:00,1\n2024-02-03T01:02:03,2\n",
    "booleans": b"a,b\nTrue,x\nfalse,y\n",
    "booleans_missing": b"a,b\nTrue,x\n,y\n",
    "empty_column": b"a,b\n1,\n2,\n",
    "quoted": b'a,b\n"x,1",2\n"y""q",3\n',
    "quoted_numbers": b'a,b\n"1",2\n"3",4\n',
    "trailing_delimiter": b"a,b,\n1,2,\n",
    "crlf": b"a,b\r\n1,2\r\n3,4\r\n",
    "padded": b"a,b\n1, 2\nx , y\n",
    "unicode": "name,x\nJosé,1\nZürich,2\n".encode(),
    "bom": "\ufeffname,x\nJosé,1\n".encode(),
    "blank_lines": b"\na,b\n\n1,2\n\n3,4\n",
    "mixed": b"a\n1\nx\n",
    "hex": b"a\n0x10\n1\n",
    "repeated_names": b"a,a\n1,2\n",
    "leading_zeros": b"a\n007\n8\n",
    "one_and_true": b"a\n1\ntrue\n",
    "short_row": b"a,b\n1,2\n3\n",
    "no_final_newline": b"a,b\n1,2",
    "quoted_newline": b'a,b\n"two\nlines",1\n',
}


def _c_parser(raw: bytes, ext: str) -> pd.DataFrame | Exception:
    text, _ = loading.decode_bytes(raw)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(io.StringIO(text), sep=loading._delimiter(ext, text),
                             skipinitialspace=True, index_col=False)
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        return exc
    return loading._drop_empty_unnamed(df)


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_fast_csv_reads_what_the_c_parser_reads_or_steps_aside(name):
    raw = TRICKY[name]
    fast = loading._load_utf8_fast(raw, ".csv", None)
    slow = _c_parser(raw, ".csv")
    if fast is None:
        return  # left to the C parser: same result by construction
    assert not isinstance(slow, Exception), f"fast path accepted what pandas rejects: {slow}"
    fast.columns = [c.strip() for c in fast.columns]
    slow.columns = [c.strip() for c in slow.columns]
    pd.testing.assert_frame_equal(fast, slow)


def test_fast_path_takes_the_common_case(tmp_path):
    path = tmp_path / "plain.csv"
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "id": [f"R{i}" for i in range(500)],
        "age": rng.integers(18, 90, 500),
        "income": np.where(rng.random(500) < 0.1, np.nan, rng.random(500) * 1e5),
        "region": rng.choice(["N", "S", "E"], 500),
    })
    frame.to_csv(path, index=False)
    assert loading._load_utf8_fast(path.read_bytes(), ".csv", None) is not None
    loaded = loading.load_table(path)
    np.testing.assert_allclose(loaded["income"].to_numpy(float), frame["income"].to_numpy())
    assert loaded["region"].tolist() == frame["region"].tolist()
    assert loaded.attrs["encoding"] == "utf-8" and loaded.attrs["delimiter"] == ","


def _old_category_column(series: pd.Series, name: str, yes_no: bool) -> list | str:
    try:
        return columns_module._category_column_by_row(series, name, yes_no=yes_no).tolist()
    except Exception as exc:
        return str(exc)


@pytest.mark.parametrize("yes_no", [False, True])
def test_vectorized_category_column_matches_row_by_row(yes_no):
    n = 70
    frame = pd.DataFrame({
        "floats": np.where(np.arange(n) % 3 == 0, np.nan, np.arange(n) % 2 * 1.0),
        "odd_floats": pd.Series([1e16, 2.0, -0.0, np.inf, 1.5, 3.0, np.nan] * 10),
        "nullable": pd.array(np.where(np.arange(n) % 4 == 0, None, np.arange(n) % 2),
                             dtype="Int64"),
        "bools": np.arange(n) % 2 == 0,
        "category": pd.Series(["a", "b", None, "c "] * 17 + ["a", "b"]).astype("category"),
        "objects": pd.Series(["yes", "No", " Y", "n", None] * 14).astype(object),
        "strings": pd.Series(["yes", "No", " Y", "n", None, "  "] * 11 + ["y"] * 4).astype("str"),
        "mixed": pd.Series([1, 1.0, True, "x", None, 2.5, np.nan] * 10, dtype=object),
        "dates": pd.to_datetime(pd.Series(["2024-01-01", None] * 35)),
    })
    for name in frame.columns:
        try:
            fast = columns_module.category_column(frame, name, yes_no=yes_no).tolist()
        except Exception as exc:
            fast = str(exc)
        assert fast == _old_category_column(frame[name], name, yes_no), name


def _old_guess_type(series: pd.Series) -> ColumnType:
    """The type guess on every row, no shortcuts (0/1 codes categorical since issue 12)."""
    values = series.dropna()
    if len(values) == 0:
        return ColumnType.TEXT
    if pd.api.types.is_bool_dtype(values.dtype):
        return ColumnType.BOOLEAN
    if pd.api.types.is_numeric_dtype(values.dtype):
        return ColumnType.CATEGORICAL if set(pd.unique(values)) <= {0, 1} else ColumnType.NUMERIC
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        return ColumnType.TEXT
    text = values.astype(str).str.strip()
    distinct = pd.unique(text.str.lower())
    if set(distinct) <= {"0", "1"}:
        return ColumnType.CATEGORICAL
    words = (YES_SPELLINGS | NO_SPELLINGS) - {"0", "1", "0.0", "1.0"}
    if len(distinct) <= 2 and set(distinct) <= words:
        return ColumnType.BOOLEAN
    if pd.to_numeric(text, errors="coerce").notna().all():
        return ColumnType.NUMERIC
    n_distinct = len(pd.unique(text))
    if n_distinct <= 50 and n_distinct <= max(2, len(text) // 2):
        return ColumnType.CATEGORICAL
    return ColumnType.TEXT


def test_guessing_on_distinct_values_matches_guessing_on_every_row():
    rng = np.random.default_rng(3)
    n = 12_000  # above the shortcut's sample
    ids = pd.Series([f"R{i}" for i in range(n)])
    cases = {
        "ids": ids,
        "ids_then_numbers": pd.concat([pd.Series([str(i) for i in range(6000)]), ids[:6000]]),
        "numbers_as_text": pd.Series([f" {i} " for i in rng.integers(0, 10**6, n)]),
        "few_categories": pd.Series(rng.choice(["North", "South ", " East"], n)),
        "yes_no_spellings": pd.Series(rng.choice(["Yes", "no", " YES"], n)),
        "ones_and_zeros": pd.Series(rng.choice([0.0, 1.0, np.nan], n)),
        "mixed_objects": pd.Series(rng.choice(np.array([1, True, "x", 2.5], dtype=object), n)),
        "many_then_few": pd.concat([pd.Series([f"v{i}" for i in range(60)]),
                                    pd.Series(["a"] * (n - 60))]),
        "integers": pd.Series(rng.integers(0, 5, n)),
    }
    for name, series in cases.items():
        assert guess_type(series) == _old_guess_type(series), name


class _Recorder(NullState):
    def __init__(self, cancel_after: int | None = None) -> None:
        super().__init__()
        self.messages: list[str] = []
        self._cancel_after = cancel_after

    def progress(self, fraction: float, message: str = "") -> None:
        super().progress(fraction, message)
        self.messages.append(message)

    def cancelled(self) -> bool:
        return self._cancel_after is not None and len(self.fractions) >= self._cancel_after


def test_open_dataset_reports_rising_progress_and_can_be_cancelled(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"x": range(100), "y": ["a", "b"] * 50}).to_csv(path, index=False)
    state = _Recorder()
    dataset = open_dataset(path, state=state)
    assert dataset.n_rows == 100
    assert state.fractions == sorted(state.fractions)
    assert state.fractions[0] == 0.0 and state.fractions[-1] == 1.0
    with pytest.raises(Cancelled):
        open_dataset(path, state=_Recorder(cancel_after=1))
