"""The heavy-hitters preview counts each discovered word's truth through the words' codes
(one hashing pass), not by sorting a fixed-width string array of the column: fails on
the old path by counting its sorts; the truths are the words' counts as before."""

from __future__ import annotations

import numpy as np
import pytest

from dpstudio.analysis.choices import Choices, registry_value_types
from dpstudio.analysis.preview import preview

N = 6000


def _words(n: int = N, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pool = ["Apple", "banana", "cherry", "durian", "elderberry-long-word", "fig", "Ü"]
    words = rng.choice(pool, n, p=[0.3, 0.25, 0.2, 0.1, 0.08, 0.05, 0.02]).tolist()
    return np.array(words, dtype=object)


@pytest.fixture
def sorts(monkeypatch):
    """Every ``np.unique`` call over a column-sized array (the old path's sorts)."""
    calls: list[int] = []
    real = np.unique

    def spy(a, *args, **kwargs):
        if np.size(a) >= N:
            calls.append(int(np.size(a)))
        return real(a, *args, **kwargs)

    monkeypatch.setattr(np, "unique", spy)
    return calls


def test_the_heavy_hitters_preview_counts_the_truth_through_codes(sorts):
    words = _words()
    s = Choices(column="fruit", column_type="text",
                value_types=registry_value_types("text", words), trust_model="local",
                query="heavy_hitters", mechanism="sfp", epsilon=8.0)
    shown = preview(s, words, seed=3)
    assert sorts == []
    assert shown.labels  # the frequent words are found at ε = 8 on 6,000 rows
    distinct, counts = np.unique(np.char.lower(words.astype(str)), return_counts=True)
    expected = dict(zip(distinct.tolist(), counts.tolist(), strict=True))
    assert shown.truth.tolist() == [float(expected.get(w, 0)) for w in shown.labels]
