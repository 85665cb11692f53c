"""What reading one column costs, counted in bytes (never timed), in a fresh process.

A 2,000,000-row table: a float column ``x`` (16 MB as float64), a four-label column ``g``
and a text column. Reading ``x`` alone holds ``x`` once, in numpy, plus small Arrow
buffers (a whole-column Arrow table and its pandas copy cost 2.5–3× it); the labels of
``g`` as texts cost their object array plus one slice's codes (the whole column's codes
would add as much again).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

ROWS = 2_000_000
COLUMN = 8 * ROWS  # bytes of x as float64, and of g's object array (one pointer a row)

_PROBE = textwrap.dedent("""
    import sys, tracemalloc
    import pyarrow as pa
    from dpstudio.data.columns import category_column
    from dpstudio.data.loading import load_table
    tracemalloc.start()
    frame = load_table(sys.argv[1], columns=["x"])
    numpy_peak = tracemalloc.get_traced_memory()[1]
    arrow_peak = pa.default_memory_pool().max_memory()
    labels = load_table(sys.argv[1], columns=["g"])
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    texts = category_column(labels, "g")
    print(numpy_peak, arrow_peak, tracemalloc.get_traced_memory()[1] - base)
""")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lean_memory")
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"x": rng.normal(size=ROWS),
                          "g": np.array(["Arts", "Law", "Science", "Medicine"])[
                              rng.integers(0, 4, ROWS)],
                          "w": "w" * 20})
    out = {"parquet": folder / "t.parquet", "csv": folder / "t.csv"}
    frame.to_parquet(out["parquet"])
    frame.to_csv(out["csv"], index=False)
    return out


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_one_numeric_column_is_held_once(files, fmt):
    out = subprocess.run([sys.executable, "-c", _PROBE, str(files[fmt])], check=True,
                         capture_output=True, text=True).stdout.split()
    numpy_peak, arrow_peak, labels_peak = (int(v) for v in out)
    # The column once in numpy (a text file's array is sized from an estimate, ~2% over).
    assert numpy_peak < 1.1 * COLUMN + 2**20
    # Arrow holds a few pages or parser blocks at a time, never the column (16 MB).
    assert arrow_peak < 12 * 2**20
    # The texts (one pointer a row) and one slice's codes; not the whole column's codes.
    assert COLUMN < labels_peak < 1.35 * COLUMN
