"""Heavy hitters count words through codes found by hashing, not a sorted string array.

The old path built ``words.astype(str)`` (a fixed-width array as wide as the longest word)
and sorted it with ``np.unique`` several times per release: these tests fail on it by
counting those sorts, and check that every number is the one the old path gave (the
reference implementations below are the old code's).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from dpstudio.engine.local import SequenceFragmentPuzzle
from dpstudio.engine.local.cms import _P61
from dpstudio.engine.local.sfp import word_codes, word_fingerprints
from dpstudio.engine.rng import SimulationSource

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


def _old_fingerprints(words, seed: int = 0):
    uniq, inv = np.unique(np.asarray(words, dtype=object).astype(str), return_inverse=True)
    key = np.empty(uniq.size, dtype=np.uint64)
    h8 = np.empty(uniq.size, dtype=np.int64)
    salt = seed.to_bytes(8, "little", signed=True)
    for i, w in enumerate(uniq.tolist()):
        d = hashlib.blake2b(w.encode("utf-8"), digest_size=16, salt=salt).digest()
        key[i] = int.from_bytes(d[:8], "little") % _P61
        h8[i] = d[8]
    return key[inv], h8[inv]


def _old_fragment_keys(oracle, words, position, h8):
    index = {c: i for i, c in enumerate(oracle.symbols)}
    uniq, inv = np.unique(np.asarray(words, dtype=object).astype(str), return_inverse=True)
    table = np.zeros((uniq.size, oracle.max_length), dtype=np.int64)
    for u, w in enumerate(uniq.tolist()):
        for i, ch in enumerate(w[: oracle.max_length]):
            table[u, i] = index.get(ch, oracle.A - 1) if ch != oracle.PAD else oracle.A - 1
    codes = table[inv]
    rows = np.arange(len(words))
    frag = codes[rows, 2 * position] * oracle.A + codes[rows, 2 * position + 1]
    return (h8 * oracle.A * oracle.A + frag).astype(np.uint64)


def test_word_codes_give_back_every_word_and_read_other_values_as_text():
    words = _words()
    codes, texts = word_codes(words)
    assert len(texts) == len(set(texts)) == 7
    assert np.array(texts, dtype=object)[codes].tolist() == words.tolist()
    mixed = np.array([1, "1", 1.0, True, None, "x"], dtype=object)
    codes, texts = word_codes(mixed)
    assert np.array(texts, dtype=object)[codes].tolist() == mixed.astype(str).tolist()


def test_a_release_sorts_no_column_and_its_reports_are_unchanged(sorts):
    words = _words()
    oracle = SequenceFragmentPuzzle(2.0)
    prepared = oracle.prepare(words)
    key, h8 = word_fingerprints(prepared, oracle.hash_seed)
    position = np.random.default_rng(1).integers(0, oracle.positions, N)
    fkey = oracle.fragment_keys(prepared, position, h8)
    reports = oracle.randomize(words, SimulationSource(11))
    assert sorts == []  # the old path sorted the column 4 times (prepare, hashes, …)
    assert prepared.tolist() == [w.lower() for w in words.tolist()]
    old_key, old_h8 = _old_fingerprints(prepared, oracle.hash_seed)
    np.testing.assert_array_equal(key, old_key)
    np.testing.assert_array_equal(h8, old_h8)
    np.testing.assert_array_equal(fkey, _old_fragment_keys(oracle, prepared, position, h8))
    # Same seed, same reports: the randomization reads the same keys in the same order.
    again = oracle.randomize(words, SimulationSource(11))
    np.testing.assert_array_equal(reports.word.j, again.word.j)
    np.testing.assert_array_equal(reports.fragment.bits, again.fragment.bits)
