"""Apple's sequence-fragment puzzle (SFP): discovering frequent words without a dictionary.

Sequence-fragment puzzle (SFP; Apple Differential Privacy Team 2017, "Learning with
Privacy at Scale", Algorithms 9–10): to discover frequent *unknown* words, each user
reports its word through a word-level CMS and, through a second CMS,
``h(s) ‖ s[ℓ:ℓ+2]`` for a random position ``ℓ`` (``h`` a 256-valued hash of the whole
word): the server finds the frequent (hash, fragment) pairs at every position, assembles
candidate words per hash value, and keeps the candidates the word-level CMS confirms.

Each user sends both reports, through two count-mean sketches
(:mod:`~dpstudio.engine.local.cms`) with ε split between them: sequential composition
gives ε.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.local._coins import uniform_below32
from dpstudio.engine.local.base import LocalRandomizer, validate_local_epsilon
from dpstudio.engine.local.bits import bit_strings, get_bits, pattern_keys
from dpstudio.engine.local.cms import _P61, _P61_U, CMSReports, CountMeanSketch, _mulmod61
from dpstudio.engine.special import ndtri
from dpstudio.jobs import State, check, scaled

__all__ = ["Discovery", "SFPReports", "SequenceFragmentPuzzle", "word_codes",
           "word_fingerprints"]


def word_codes(words) -> tuple[np.ndarray, list[str]]:
    """Each word's code into the list of distinct words, found by hashing.

    No fixed-width string array (as wide as the longest word, four bytes a character) is
    built and nothing is sorted: each word costs one dictionary look-up in C, so the cost
    of a column is that of a pass over it, whatever the words' lengths.

    Parameters
    ----------
    words : array_like
        The words (flattened to 1-D); values that are not ``str`` are read as their text,
        as ``astype(str)`` reads them.

    Returns
    -------
    codes : numpy.ndarray of int64, shape (n,)
        Per word, its index into ``texts``.
    texts : list of str
        The distinct words' texts, each once, in order of first appearance.
    """
    w = np.asarray(words, dtype=object).reshape(-1)
    listed = w.tolist()
    index: dict = {}
    numbered = index.setdefault  # a word met first gets the next code: len(index)
    try:
        codes = [numbered(word, len(index)) for word in listed]
        texts_only = all(type(k) is str for k in index)
    except TypeError:  # an unhashable value (a list inside the column)
        texts_only = False
    if not texts_only:
        # Values that hash alike may print differently (1 == 1.0 == True): numbered by
        # their texts, as ``astype(str)`` writes them (rare: the words are text).
        index = {}
        numbered = index.setdefault
        codes = [numbered(word, len(index)) for word in w.astype(str).tolist()]
    return np.fromiter(codes, dtype=np.int64, count=len(codes)), list(index)


def word_fingerprints(words, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per word: a 61-bit key (< 2^61 − 1) for the word sketch and its 8-bit hash ``h``.

    BLAKE2b of the UTF-8 word, salted with the public seed; computed once per distinct
    word.

    Parameters
    ----------
    words : array_like of str
        The words.
    seed : int
        The public hash seed (a signed 64-bit integer).

    Returns
    -------
    keys : numpy.ndarray of uint64
        Per word, its key for the word sketch.
    h8 : numpy.ndarray of int64
        Per word, its 8-bit hash (0…255).
    """
    inv, texts = word_codes(words)
    key = np.empty(len(texts), dtype=np.uint64)
    h8 = np.empty(len(texts), dtype=np.int64)
    salt = seed.to_bytes(8, "little", signed=True)
    for i, w in enumerate(texts):
        d = hashlib.blake2b(w.encode("utf-8"), digest_size=16, salt=salt).digest()
        key[i] = int.from_bytes(d[:8], "little") % _P61
        h8[i] = d[8]
    return key[inv], h8[inv]


class SFPReports(NamedTuple):
    """Per user: fragment position index, the fragment CMS report and the word CMS report.

    Attributes
    ----------
    position : numpy.ndarray of int64, shape (n,)
        Each user's fragment index ℓ (characters ``2ℓ, 2ℓ+1`` of the word).
    fragment : CMSReports
        The fragment sketch's reports.
    word : CMSReports
        The word sketch's reports.
    """

    position: np.ndarray
    fragment: CMSReports
    word: CMSReports

    def __len__(self) -> int:
        return int(self.position.shape[0])


@dataclass(frozen=True)
class Discovery:
    """A word found by the puzzle: its estimated count and standard error.

    Attributes
    ----------
    word : str
        The word (lower-cased when the puzzle lower-cases).
    count : float
        The word sketch's estimate of how many users hold it.
    stderr : float
        Its standard error: the coins plus the hash family's collisions (a plug-in).
    """

    word: str
    count: float
    stderr: float


class SequenceFragmentPuzzle(LocalRandomizer):
    """Apple's sequence-fragment puzzle: discover frequent words without a dictionary.

    ε is split: ``fragment_share·ε`` on the fragment sketch, the rest on the word sketch
    (each user sends both: sequential composition gives ε). Words are lower-cased (if
    ``lowercase``) and seen through their first ``max_length`` characters; characters
    outside ``alphabet`` cannot be reconstructed. The empty word (what a user with a
    missing value sends, :mod:`~dpstudio.engine.local.respond`) is never discovered.

    Parameters
    ----------
    epsilon : float
        The per-user ε, in (0, 700].
    hashes, buckets : int
        Each count-mean sketch's number of hash functions and of buckets.
    fragment_share : float
        Share of ε spent on the fragment sketch, in (0, 1).
    max_length : int
        Characters of a word that are seen, even and ≥ 2.
    alphabet : str
        Distinct characters words are reconstructed from (no space).
    lowercase : bool
        Lower-case the words first.
    hash_seed : int
        Selects the public hash families (the word sketch uses ``hash_seed + 1``).

    Attributes
    ----------
    positions : int
        ``max_length / 2``: the fragment positions.
    eps_fragment, eps_word : float
        ε of the two sketches (summing to ε).
    fragment_cms, word_cms : CountMeanSketch
        The two open-domain sketches (apple debiasing).

    Raises
    ------
    ParameterError
        For a bad ε, ``fragment_share``, ``max_length`` or ``alphabet``.
    """

    name = "sfp"
    label = "Sequence-fragment puzzle (Apple)"
    output_kind = "categorical"
    delta = 0.0
    PAD, OTHER = " ", "\x00"

    def __init__(self, epsilon: float, hashes: int = 64, buckets: int = 1024,
                 fragment_share: float = 0.5, max_length: int = 10,
                 alphabet: str = "abcdefghijklmnopqrstuvwxyz0123456789",
                 lowercase: bool = True, hash_seed: int = 0) -> None:
        self.epsilon = validate_local_epsilon(epsilon)
        if not 0.0 < float(fragment_share) < 1.0:
            raise ParameterError(f"fragment_share must lie in (0, 1); got {fragment_share!r}")
        if max_length < 2 or max_length % 2:
            raise ParameterError("max_length must be an even number ≥ 2")
        if len(set(alphabet)) != len(alphabet) or not alphabet or self.PAD in alphabet:
            raise ParameterError("alphabet must be distinct characters, without a space")
        self.max_length = int(max_length)
        self.positions = self.max_length // 2
        self.symbols = self.PAD + alphabet + self.OTHER
        self.A = len(self.symbols)
        self.lowercase = bool(lowercase)
        self.hash_seed = int(hash_seed)
        self.eps_fragment = self.epsilon * float(fragment_share)
        self.eps_word = self.epsilon - self.eps_fragment
        self.fragment_cms = CountMeanSketch(self.eps_fragment, None, hashes, buckets,
                                            "apple", hash_seed)
        self.word_cms = CountMeanSketch(self.eps_word, None, hashes, buckets, "apple",
                                        hash_seed + 1)
        self.messages_bits = (self.fragment_cms.messages_bits + self.word_cms.messages_bits
                              + math.ceil(math.log2(self.positions)))

    def _symbol_table(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), max_length)`` symbol codes of distinct words (pad = 0, unknown =
        A − 1): a row per distinct word, never per user."""
        index = {c: i for i, c in enumerate(self.symbols)}
        table = np.zeros((len(texts), self.max_length), dtype=np.int64)
        for u, w in enumerate(texts):
            for i, ch in enumerate(w[: self.max_length]):
                table[u, i] = index.get(ch, self.A - 1) if ch != self.PAD else self.A - 1
        return table

    def prepare(self, words) -> np.ndarray:
        """The words as an object array of (lower-cased) ``str``; QueryError otherwise.

        Parameters
        ----------
        words : array_like
            The words (flattened to 1-D).

        Returns
        -------
        numpy.ndarray of object

        Raises
        ------
        QueryError
            If any value is not a ``str``.
        """
        w = np.asarray(words, dtype=object).reshape(-1)
        if w.size == 0:
            return w
        # The distinct types in one pass in C, not a Python loop over the words.
        if not all(issubclass(t, str) for t in set(map(type, w.tolist()))):
            raise QueryError("the sequence-fragment puzzle needs a text column of words")
        if not self.lowercase:
            return w
        inv, texts = word_codes(w)
        return np.array([x.lower() for x in texts], dtype=object)[inv]

    def fragment_keys(self, words, position: np.ndarray, h8=None) -> np.ndarray:
        """Per user: the fragment sketch's key ``h(word)·A² + word[2ℓ:2ℓ+2]`` at position ℓ.

        Parameters
        ----------
        words : array_like of str, shape (n,)
            Prepared words (:meth:`prepare`).
        position : numpy.ndarray of int64, shape (n,)
            Each user's fragment index ℓ.
        h8 : numpy.ndarray of int64, optional
            The words' 8-bit hashes, if already computed (:func:`word_fingerprints`).

        Returns
        -------
        numpy.ndarray of uint64, shape (n,)
        """
        w = np.asarray(words, dtype=object)
        if h8 is None:
            _, h8 = word_fingerprints(w, self.hash_seed)
        inv, texts = word_codes(w)
        table = self._symbol_table(texts)
        if not len(texts):
            return np.zeros(0, dtype=np.uint64)
        pos = np.asarray(position, dtype=np.int64)
        # Per user two look-ups in the distinct words' table, not an (n, length) table.
        frag = table[inv, 2 * pos] * self.A + table[inv, 2 * pos + 1]
        return (h8 * self.A * self.A + frag).astype(np.uint64)

    def randomize(self, words, source) -> SFPReports:
        """Each user's two reports: a random fragment of their word, and the word itself.

        Parameters
        ----------
        words : array_like of str, shape (n,)
            One word per user (``""`` for a missing value).
        source : Source
            The random source.

        Returns
        -------
        SFPReports

        Raises
        ------
        QueryError
            If any value is not a ``str``.
        """
        w = self.prepare(words)
        n = w.size
        key, h8 = word_fingerprints(w, self.hash_seed)
        pos = uniform_below32(self.positions, source.uint32(n), source).astype(np.int64)
        fkey = self.fragment_keys(w, pos, h8)
        return SFPReports(pos, self.fragment_cms.randomize_keys(fkey, source),
                          self.word_cms.randomize_keys(key, source))

    def estimate_words(self, reports: SFPReports, words, n: int | None = None) -> np.ndarray:
        """The word sketch's (apple-debiased) count estimates of given words.

        Parameters
        ----------
        reports : SFPReports
            The users' reports.
        words : array_like of str
            The words to estimate.
        n : int, optional
            The number of users; by default the number of reports.

        Returns
        -------
        numpy.ndarray of float64, shape (len(words),)
        """
        keys, _ = word_fingerprints(self.prepare(words), self.hash_seed)
        return self.word_cms.estimate_keys(reports.word, keys,
                                           len(reports) if n is None else n)

    def variance(self, n: int, counts=None) -> np.ndarray:
        """The word estimates' variance over the users' coins (data-free leading term).

        Parameters
        ----------
        n : int
            The number of users.
        counts : ignored
            For the frequency oracles' signature.

        Returns
        -------
        numpy.ndarray of float64, shape (1,)
        """
        return self.word_cms.variance(n)

    def report_keys(self, reports: SFPReports, against=None) -> np.ndarray:
        """A key per report; with ``against`` (words), 2 bits per word: whether the word
        sketch's bit and the fragment sketch's bit at that word's buckets are set."""
        if against is None:
            head = np.stack([np.asarray(reports.position, dtype="<i8"),
                             np.asarray(reports.fragment.j, dtype="<i8"),
                             np.asarray(reports.word.j, dtype="<i8")], axis=1)
            rec = np.concatenate([head.view(np.uint8).reshape(len(reports), -1),
                                  reports.fragment.bits, reports.word.bits], axis=1)
            rec = np.ascontiguousarray(rec)
            return rec.view(f"V{rec.shape[1]}").reshape(-1)
        pos = np.asarray(reports.position, dtype=np.int64)
        wj = np.asarray(reports.word.j, dtype=np.int64)
        fj = np.asarray(reports.fragment.j, dtype=np.int64)
        supports = []
        for word in self.prepare(against).tolist():
            same = np.full(pos.size, word, dtype=object)
            key, _ = word_fingerprints(same[:1], self.hash_seed)
            wb = self.word_cms.bucket(wj, np.full(pos.size, key[0], dtype=np.uint64))
            fb = self.fragment_cms.bucket(fj, self.fragment_keys(same, pos))
            supports += [get_bits(reports.word.bits, wb) == 1,
                         get_bits(reports.fragment.bits, fb) == 1]
        return pattern_keys(supports)

    def _threshold(self, cms: CountMeanSketch, n: int, tests: int, alpha: float) -> float:
        z = float(-ndtri(alpha / max(tests, 1)))
        return z * math.sqrt(cms.variance(n)[0])

    def _fragment_raw(self, sketches: list[np.ndarray], state: State | None = None
                      ) -> np.ndarray:
        """``r(key)`` of every fragment key ``h·A² + f`` in every position's sketch.

        The keys form a grid, and ``a·(h·A² + f) + b ≡ (a·h·A² + b) + a·f (mod P)``: one
        modular product per hash value and per fragment, then one addition per grid cell
        and hash function, shared by all positions. ``state`` is checked and told the
        progress once per hash function.
        """
        cms = self.fragment_cms
        A2 = self.A * self.A
        hA2 = np.arange(256, dtype=np.uint64) * np.uint64(A2)
        frags = np.arange(A2, dtype=np.uint64)
        out = np.zeros((len(sketches), 256, A2))
        m = np.uint64(cms.buckets)
        for ell in range(cms.hashes):
            check(state)
            a = np.full(1, cms._a[ell])
            base = _mulmod61(a, hA2) + cms._b[ell]
            base = np.where(base >= _P61_U, base - _P61_U, base)
            t = base[:, None] + _mulmod61(a, frags)[None, :]
            t = np.where(t >= _P61_U, t - _P61_U, t)
            bucket = ((t >> np.uint64(29)) * m) >> np.uint64(32)
            for p, M in enumerate(sketches):
                out[p] += M[ell][bucket]
            if state is not None:
                state.progress((ell + 1) / cms.hashes, "fragment sketches")
        return out / cms.hashes

    def discover(self, reports: SFPReports, alpha: float = 0.05,
                 max_candidates: int = 1000, state: State | None = None
                 ) -> list[Discovery]:
        """Frequent words, most frequent first.

        A (hash, fragment) pair is frequent when its estimate exceeds ``z·stderr`` with a
        Bonferroni ``z`` over all pairs and positions (``alpha`` false alarms in all); a
        candidate word is kept when the word sketch's estimate exceeds the same kind of
        threshold over all candidates.

        Parameters
        ----------
        reports : SFPReports
            Every user's reports.
        alpha : float
            Bound on the probability of any false discovery (Bonferroni).
        max_candidates : int
            Most candidate words assembled per hash value.
        state : State, optional
            The job's state: progress once per hash function of the fragment sketch,
            cancellation checked there and before confirming the candidates.

        Returns
        -------
        list of Discovery
            The words found, with their estimated counts and standard errors.

        Raises
        ------
        Cancelled
            If ``state`` is cancelled.
        """
        pos = np.asarray(reports.position)
        cms = self.fragment_cms
        users = [np.flatnonzero(pos == p) for p in range(self.positions)]
        sketches = [cms.sketch(CMSReports(reports.fragment.j[u], reports.fragment.bits[u]))
                    for u in users]
        raw = self._fragment_raw(sketches, scaled(state, 0.0, 0.9))  # (positions, 256, A²)
        m = cms.buckets
        tests = raw[0].size * self.positions
        heavy: list[dict[int, list[tuple[float, int]]]] = []
        for p, u in enumerate(users):
            est = m / (m - 1.0) * (raw[p] - u.size / m)
            cut = self._threshold(cms, u.size, tests, alpha)
            found: dict[int, list[tuple[float, int]]] = {}
            for h, f in zip(*np.nonzero(est > cut), strict=True):
                found.setdefault(int(h), []).append((float(est[h, f]), int(f)))
            heavy.append(found)
        cands: dict[str, int] = {}  # candidate word → the hash value it was built for
        alphabet = set(self.symbols[1:-1])
        for h in set.intersection(*(set(f) for f in heavy)):
            words = [""]
            for p in range(self.positions):
                frags = sorted(heavy[p][h], reverse=True)
                words = [w + self.symbols[f // self.A] + self.symbols[f % self.A]
                         for w in words for _, f in frags][:max_candidates]
            for w in words:
                core = w.rstrip(self.PAD)
                if core and set(core) <= alphabet:
                    cands[core] = h
        check(state)
        if not cands:
            if state is not None:
                state.progress(1.0, "no candidate words")
            return []
        names = sorted(cands)
        keys, h8 = word_fingerprints(np.array(names, dtype=object), self.hash_seed)
        n = len(reports)
        est = self.word_cms.estimate_keys(reports.word, keys, n)
        cut = self._threshold(self.word_cms, n, len(names), alpha)
        kept = [(w, float(e)) for w, e, hv in zip(names, est.tolist(), h8.tolist(),
                                                  strict=True)
                if e > cut and hv == cands[w]]  # the word must hash to its group
        var = self._discovery_variance(reports, np.array([e for _, e in kept]), cut)
        out = [Discovery(w, e, math.sqrt(v))
               for (w, e), v in zip(kept, var.tolist(), strict=True)]
        if state is not None:
            state.progress(1.0, "words confirmed")
        return sorted(out, key=lambda d: -d.count)

    def _discovery_variance(self, reports: SFPReports, counts: np.ndarray,
                            cut: float) -> np.ndarray:
        """Variance of each discovered word's estimate: the users' coins plus, the hash
        family being drawn per release, its collisions with the other words.

        ``Σ_{d'≠d} f(d')²`` is a plug-in: the other discoveries' estimates, the empty
        word's (users with a missing value) and, for the remaining users, words of at
        most ``cut`` users each (the discovery threshold; an approximation, since a word
        can also be missed when its fragments were).
        """
        n = len(reports)
        f = np.clip(counts, 0.0, n)
        empty = float(np.clip(self.estimate_words(reports, [""], n)[0], 0.0, n))
        rest = max(n - float(f.sum()) - empty, 0.0)
        total_sq = float(np.sum(f * f)) + empty * empty + min(cut, rest) * rest
        coins = self.word_cms.variance(n)[0]
        return coins + self.word_cms.collision_variance(total_sq - f * f)

    def to_records(self, reports: SFPReports) -> dict[str, np.ndarray]:
        return {"fragment_position": 2 * np.asarray(reports.position) + 1,
                "fragment_hash_index": np.asarray(reports.fragment.j),
                "fragment_bits": bit_strings(reports.fragment.bits, self.fragment_cms.buckets),
                "word_hash_index": np.asarray(reports.word.j),
                "word_bits": bit_strings(reports.word.bits, self.word_cms.buckets)}

    def n_reports(self, reports) -> int:
        return len(reports)

    def describe(self):
        return {"mechanism": self.name, "epsilon": self.epsilon, "delta": 0.0,
                "epsilon_fragment": self.eps_fragment, "epsilon_word": self.eps_word,
                "max_length": self.max_length, "alphabet": self.symbols[1:-1],
                "hashes": self.word_cms.hashes, "buckets": self.word_cms.buckets,
                "hash_seed": self.hash_seed, "messages_bits": self.messages_bits}
