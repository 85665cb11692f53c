"""The sequence-fragment puzzle recovers the frequent words of a text column."""

import numpy as np
import pytest

from dpstudio.engine.local import SequenceFragmentPuzzle, run_local
from dpstudio.engine.local.sketch import word_fingerprints
from dpstudio.engine.rng import SimulationSource

PLANTED = {"privacy": 0.10, "hello": 0.07, "sketch": 0.05, "apple": 0.04, "zebra42": 0.03}


def _text_column(n, seed):
    rng = np.random.default_rng(seed)
    words = list(PLANTED)
    p = list(PLANTED.values())
    pick = rng.choice(len(words) + 1, size=n, p=p + [1 - sum(p)])
    # The long tail: random lower-case strings of 3 to 9 letters (mostly unique).
    chars = rng.integers(ord("a"), ord("z") + 1, size=(n, 9), dtype=np.uint8)
    chars[np.arange(9)[None, :] >= rng.integers(3, 10, size=n)[:, None]] = 0
    tail = chars.view("S9").reshape(-1).astype(str).tolist()
    return np.array([words[i] if i < len(words) else tail[j]
                     for j, i in enumerate(pick.tolist())], dtype=object)


def test_sfp_recovers_planted_words():
    n = 60_000
    column = _text_column(n, 1)
    sfp = SequenceFragmentPuzzle(8.0, hashes=32, buckets=512)
    found = sfp.discover(sfp.randomize(column, SimulationSource(2)))
    words = {d.word: d for d in found}
    assert set(words) == set(PLANTED)  # all planted words, and nothing else
    for w in PLANTED:
        true = int(np.sum(column == w))
        assert abs(words[w].count - true) < 5 * words[w].stderr, (w, words[w], true)
    assert [d.word for d in found] == sorted(PLANTED, key=PLANTED.get, reverse=True)


def test_run_local_cms_on_text_discovers_words_and_exports_records():
    column = _text_column(40_000, 3)
    column[::97] = None  # missing values send the empty word: every row reports
    res = run_local(column, "cms", {"epsilon": 8.0, "hashes": 32, "buckets": 512},
                    source=SimulationSource(4))
    assert res.query == "heavy_hitters" and res.trust_model == "local"
    assert res.mechanism == "cms"
    assert {"privacy", "hello", "sketch"} <= set(res.estimate) and "" not in res.estimate
    assert res.n == 40_000 and res.missing == len(column[::97])
    rec = res.records()
    assert set(rec) == {"fragment_position", "fragment_hash_index", "fragment_bits",
                        "word_hash_index", "word_bits"}
    assert all(len(c) == res.n for c in rec.values())
    assert set(np.unique(rec["fragment_position"]).tolist()) <= {1, 3, 5, 7, 9}
    assert len(rec["word_bits"][0]) == 512


def test_fingerprints_are_per_word_and_seeded():
    k1, h1 = word_fingerprints(np.array(["a", "b", "a"], dtype=object))
    assert k1[0] == k1[2] != k1[1] and h1[0] == h1[2]
    k2, _ = word_fingerprints(np.array(["a"], dtype=object), seed=7)
    assert k2[0] != k1[0]
    assert int(k1.max()) < 2**61 - 1


def test_sfp_refuses_non_text():
    sfp = SequenceFragmentPuzzle(4.0)
    with pytest.raises(Exception, match="text column"):
        sfp.randomize(np.array([1, 2, 3], dtype=object), SimulationSource(0))
