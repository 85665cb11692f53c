"""Hadamard response (Acharya, Sun & Zhang 2019), a frequency oracle, and the fast
Walsh–Hadamard transform its server runs.

Each report is one column of a Sylvester–Hadamard matrix, ``log2 K`` bits; the server's
support counts for all ``k`` values are one transform of the report histogram,
``O(K log K)`` whatever the number of users. It is a pure protocol like those of
:mod:`~dpstudio.engine.local.frequency` (which re-exports it), with ``q = 1/2``. All
coins are exact (:mod:`dpstudio.engine.local._coins`).
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.local._coins import rr_keep_coin
from dpstudio.engine.local.base import (
    PureFrequencyOracle,
    check_domain_size,
    check_values,
    validate_local_epsilon,
)
from dpstudio.engine.local.bits import pattern_keys

__all__ = ["HadamardResponse", "fwht"]

_S32 = np.uint64(32)


def fwht(a: np.ndarray) -> np.ndarray:
    """Fast Walsh–Hadamard transform (Sylvester order): ``T[r] = Σ_y a[y] (−1)^{|r∧y|}``.

    Parameters
    ----------
    a : numpy.ndarray, shape (K,)
        ``K`` a power of two. Integers (and booleans) are transformed exactly in int64,
        anything else in float64; ``a`` itself is not modified.

    Returns
    -------
    numpy.ndarray of int64 or float64, shape (K,)
        The transform.
    """
    a = np.array(a, dtype=np.int64 if a.dtype.kind in "iub" else np.float64)
    size = a.size
    h = 1
    while h < size:
        v = a.reshape(-1, 2, h)
        a = np.stack((v[:, 0] + v[:, 1], v[:, 0] - v[:, 1]), axis=1).reshape(size)
        h *= 2
    return a


class HadamardResponse(PureFrequencyOracle):
    """Hadamard response (Acharya, Sun & Zhang 2019), single-block form.

    With ``K`` the smallest power of two above ``k``, value ``x`` owns the set ``C_x``
    of columns ``y`` where row ``x+1`` of the Sylvester–Hadamard matrix ``H_K`` is +1
    (``|C_x| = K/2``; row 0 is skipped). A user reports ``y`` uniform on ``C_x`` with
    probability ``e^ε/(e^ε+1)`` and uniform on its complement otherwise: each ``y`` has
    probability ``2e^ε/(K(e^ε+1))`` or ``2/(K(e^ε+1))``, so ε-LDP. Distinct rows agree on
    exactly half the columns, so ``q = 1/2``; the server's support counts are one fast
    Walsh–Hadamard transform of the report histogram. ``log2 K`` bits per report.

    Parameters
    ----------
    epsilon : float
        The per-user ε, in (0, 700].
    k : int
        The domain size, ≥ 2.

    Attributes
    ----------
    K : int
        The Hadamard matrix's order, the smallest power of two above ``k``.
    log2K : int
        ``log2 K``.
    p, q : float
        ``e^ε/(e^ε + 1)`` and 1/2.

    Raises
    ------
    ParameterError
        For a bad ε or ``k``.
    """

    name = "hadamard"
    label = "Hadamard response"

    def __init__(self, epsilon: float, k: int) -> None:
        self.epsilon = validate_local_epsilon(epsilon)
        self.k = check_domain_size(k)
        self.K = 1 << self.k.bit_length()  # > k, so rows 1..k exist
        self.log2K = self.K.bit_length() - 1
        self._in = rr_keep_coin(self.epsilon, 1)
        self.p, self.q = self._in.value, 0.5
        self.messages_bits = self.log2K

    def randomize(self, values, source) -> np.ndarray:
        """Each user's reported column.

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Codes in ``0..k−1`` (QueryError otherwise).
        source : Source

        Returns
        -------
        numpy.ndarray of int64, shape (n,)
            Columns in ``0..K−1``.
        """
        x = check_values(values, self.k)
        words = source.uint64(x.size)
        inside = self._in.from_words32((words >> _S32).astype(np.uint32), source)
        y = (words & np.uint64(self.K - 1)).astype(np.int64)  # uniform on [0, K)
        row = x + 1
        parity = np.bitwise_count(row & y) & 1  # 0: H[row, y] = +1
        wrong = parity != (~inside).astype(np.int64)
        # Flipping a bit of y that is set in row flips the parity: a bijection between
        # C_x and its complement, so y stays uniform within the chosen side.
        y[wrong] ^= (row & -row)[wrong]
        return y

    def support_counts(self, reports) -> np.ndarray:
        r = np.asarray(reports, dtype=np.int64)
        hist = np.bincount(r, minlength=self.K)
        t = fwht(hist)
        return (r.size + t[1:self.k + 1]) // 2

    def report_keys(self, reports, against=None) -> np.ndarray:
        r = np.asarray(reports, dtype=np.int64)
        if against is None:
            return r
        return pattern_keys([(np.bitwise_count((v + 1) & r) & 1) == 0
                             for v in check_values(np.asarray(against), self.k).tolist()])

    def to_records(self, reports) -> dict[str, np.ndarray]:
        return {"report": np.asarray(reports, dtype=np.int64)}

    def describe(self):
        return super().describe() | {"k": self.k, "K": self.K, "p": self.p, "q": self.q}
