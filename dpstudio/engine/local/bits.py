"""Packed bit matrices and support-pattern keys, shared by the local protocols.

The unary encodings (:mod:`~dpstudio.engine.local.frequency`) and the count-mean sketch
(:mod:`~dpstudio.engine.local.cms`, and the sequence-fragment puzzle over it) send one
row of bits per user. Rows stay packed, ``ceil(width/8)`` uint8 per row in
``np.packbits`` order (bit ``v`` of a row is bit ``7 − (v & 7)`` of byte ``v >> 3``):
a million users with ``k = 1024`` hold 128 MB, not 1 GB. This module draws such
matrices from an exact coin, reads and writes one bit per row, counts the set bits of
each column, and turns rows (or which of a few values each row supports) into keys
that the collector's view and the empirical audit compare.
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.local._coins import ExactCoin

__all__ = [
    "bit_strings",
    "column_counts",
    "get_bits",
    "pattern_keys",
    "random_bit_matrix",
    "row_keys",
    "set_bits",
]

# Rows of a bit matrix randomized per chunk (keeps the coin's working set ~16 MB).
_CHUNK_BYTES = 1 << 24


def random_bit_matrix(rows: int, width: int, coin: ExactCoin, source) -> np.ndarray:
    """A packed matrix of i.i.d. exact coins, one row per user.

    Parameters
    ----------
    rows : int
        Number of rows (users).
    width : int
        Bits per row.
    coin : ExactCoin
        The probability that each bit is 1.
    source : Source
        The randomness; rows are drawn in chunks of about 16 MB.

    Returns
    -------
    numpy.ndarray of uint8, shape (rows, ceil(width/8))
        In ``np.packbits`` order; padding bits past ``width`` are 0.
    """
    nb = (width + 7) // 8
    out = np.empty((rows, nb), dtype=np.uint8)
    step = max(1, _CHUNK_BYTES // nb)
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        nbytes = (stop - start) * nb
        words = coin.lanes((nbytes + 7) // 8, source)
        out[start:stop] = words.view(np.uint8)[:nbytes].reshape(stop - start, nb)
    if width % 8:
        out[:, -1] &= np.uint8((0xFF << (8 - width % 8)) & 0xFF)
    return out


def set_bits(matrix: np.ndarray, cols: np.ndarray, bits: np.ndarray) -> None:
    """Set bit ``cols[i]`` of row ``i`` of a packed matrix to ``bits[i]``, in place.

    Parameters
    ----------
    matrix : numpy.ndarray of uint8, shape (n, nb)
        The packed matrix, modified.
    cols : numpy.ndarray of int, shape (n,)
        One bit index per row, in ``0..8·nb−1``.
    bits : numpy.ndarray of bool or 0/1 int, shape (n,)
        The value each of those bits takes.
    """
    rows = np.arange(matrix.shape[0])
    byte = cols >> 3
    mask = (np.uint8(0x80) >> (cols & 7).astype(np.uint8)).astype(np.uint8)
    cur = matrix[rows, byte]
    matrix[rows, byte] = (cur & ~mask) | (mask * bits.astype(np.uint8))


def get_bits(matrix: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Bit ``cols[i]`` of row ``i`` of a packed matrix.

    Parameters
    ----------
    matrix : numpy.ndarray of uint8, shape (n, nb)
        The packed matrix.
    cols : numpy.ndarray of int, shape (n,)
        One bit index per row, in ``0..8·nb−1``.

    Returns
    -------
    numpy.ndarray of uint8, shape (n,)
        0 or 1.
    """
    rows = np.arange(matrix.shape[0])
    return (matrix[rows, cols >> 3] >> (7 - (cols & 7)).astype(np.uint8)) & np.uint8(1)


def column_counts(matrix: np.ndarray, width: int, groups: np.ndarray | None = None,
                  n_groups: int = 1) -> np.ndarray:
    """Number of rows with each bit ``0..width−1`` set, from a packed matrix.

    Rows are unpacked a few thousand at a time and summed in uint16 (no overflow below
    65,536 rows), so the unpacked matrix never exists whole.

    Parameters
    ----------
    matrix : numpy.ndarray of uint8, shape (n, ceil(width/8))
        The packed matrix.
    width : int
        Bits per row.
    groups : numpy.ndarray of int, shape (n,), optional
        A group per row in ``0..n_groups−1``: the counts are then per group (rows are
        first sorted by group).
    n_groups : int
        Number of groups, with ``groups``.

    Returns
    -------
    numpy.ndarray of int64
        Shape ``(width,)``, or ``(n_groups, width)`` with ``groups``.
    """
    rows = matrix.shape[0]
    if groups is not None:
        g = np.asarray(groups, dtype=np.int64)
        order = np.argsort(g, kind="stable")
        matrix = matrix[order]
        bounds = np.searchsorted(g[order], np.arange(n_groups + 1))
    else:
        bounds = np.array([0, rows])
    out = np.zeros((n_groups, width), dtype=np.int64)
    step = int(min(65535, max(1, (1 << 22) // max(width, 1))))
    for grp in range(n_groups):
        for start in range(int(bounds[grp]), int(bounds[grp + 1]), step):
            stop = min(int(bounds[grp + 1]), start + step)
            bits = np.unpackbits(matrix[start:stop], axis=1, count=width)
            out[grp] += bits.sum(axis=0, dtype=np.uint16)
    return out if groups is not None else out[0]


def bit_strings(matrix: np.ndarray, width: int) -> np.ndarray:
    """Each row of a packed matrix as a '0'/'1' string (the collector's view).

    Parameters
    ----------
    matrix : numpy.ndarray of uint8, shape (n, ceil(width/8))
        The packed matrix.
    width : int
        Bits per row (padding bits are left out).

    Returns
    -------
    numpy.ndarray of str, shape (n,)
        Strings of ``width`` characters, bit 0 first.
    """
    bits = np.unpackbits(matrix, axis=1, count=width) + np.uint8(ord("0"))
    return np.ascontiguousarray(bits).view(f"S{width}").reshape(-1).astype(str)


def row_keys(matrix: np.ndarray) -> np.ndarray:
    """One comparable key per row of a packed matrix: equal rows, equal keys.

    Parameters
    ----------
    matrix : numpy.ndarray of uint8, shape (n, nb)
        The packed matrix.

    Returns
    -------
    numpy.ndarray, shape (n,)
        int64 when a row fits 63 bits (``nb ≤ 7``), else opaque ``V{nb}`` records.
    """
    nb = matrix.shape[1]
    if nb <= 7:
        key = np.zeros(matrix.shape[0], dtype=np.int64)
        for j in range(nb):
            key = (key << 8) | matrix[:, j].astype(np.int64)
        return key
    return np.ascontiguousarray(matrix).view(f"V{nb}").reshape(-1)


def pattern_keys(supports: list[np.ndarray]) -> np.ndarray:
    """Which of a few values each report supports, as one int per report.

    Parameters
    ----------
    supports : list of numpy.ndarray of bool
        ``supports[i]`` tells, per report, whether it supports the ``i``-th value
        (at most 63 of them).

    Returns
    -------
    numpy.ndarray of int64
        Bit ``i`` of the key set where ``supports[i]`` is true.
    """
    key = np.zeros(supports[0].shape, dtype=np.int64)
    for i, s in enumerate(supports):
        key |= s.astype(np.int64) << i
    return key
