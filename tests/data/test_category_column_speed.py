"""A text column of few categories is read by its distinct values, not row by row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpstudio.data import columns
from dpstudio.data.columns import category_column


def _by_row(series: pd.Series) -> list:
    out = []
    for v in series.tolist():
        text = None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) \
            else str(v).strip()
        out.append(text or None)
    return out


@pytest.mark.parametrize("dtype", ["object", "string"])
def test_few_categories_are_factorized_with_the_same_texts(dtype: str,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    rng = np.random.default_rng(4)
    raw = rng.choice(np.array(["yes", " no", "maybe ", None, "", "  "], dtype=object), 50_000)
    frame = pd.DataFrame({"c": pd.Series(raw, dtype=dtype)})
    calls = []
    real = pd.factorize

    def spy(*args, **kwargs):
        calls.append(len(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(columns.pd, "factorize", spy)
    out = category_column(frame, "c")
    assert calls == [50_000]  # one factorization, each distinct text stripped once
    assert out.dtype == object
    assert out.tolist() == _by_row(frame["c"])
    assert set(out.tolist()) == {"yes", "no", "maybe", None}


def test_mostly_distinct_texts_keep_the_row_path(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.DataFrame({"c": [f" id{i} " for i in range(30_000)]})
    calls = []
    real = pd.factorize
    monkeypatch.setattr(columns.pd, "factorize",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    out = category_column(frame, "c")
    assert not calls
    assert out[:3].tolist() == ["id0", "id1", "id2"]
