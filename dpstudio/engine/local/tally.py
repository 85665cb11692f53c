"""Simulating a local mean without randomizing every record: values grouped, sums drawn.

A local mean's estimate is a sum over the users of independent randomized reports. For
a simulation (never a release) that sum can be drawn from its own law: records holding
the same value report independently with the same probabilities, so a count of
Bernoulli successes among them is one binomial draw, and a sum of n noise draws is one
draw of the sum's law (:meth:`dpstudio.engine.local.mean.LocalLaplace.sample_estimates`).
The cost is then in distinct values, not in records.

:func:`tally_values` groups a column once (a bincount for integers in a modest range, a
sort otherwise); :func:`bernoulli_totals` draws the number of successes of every record's
coin at once; :func:`simulation_generator` seeds numpy's samplers from a source.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstudio.engine.rng import Source

__all__ = ["ValueTally", "bernoulli_totals", "simulation_generator", "tally_values"]

# Integers spanning at most this many values are counted with a bincount (no sort).
_BINCOUNT_SPAN = 1 << 22
# Past this share of distinct values, grouping saves nothing: every record stands alone.
_GROUPED_SHARE = 0.5


@dataclass(frozen=True)
class ValueTally:
    """A column's values grouped: each distinct value and how many records hold it.

    Attributes
    ----------
    values : numpy.ndarray of float64
        The distinct values (or every record's value, when most are distinct).
    counts : numpy.ndarray of int64
        Records per entry of ``values`` (all ones when not grouped).
    n : int
        The number of records (``counts.sum()``).
    """

    values: np.ndarray
    counts: np.ndarray
    n: int

    @property
    def grouped(self) -> bool:
        """Whether records share entries (False: one entry per record)."""
        return self.values.size < self.n


def tally_values(values) -> ValueTally:
    """Group finite numbers by value.

    Parameters
    ----------
    values : array_like of float
        Finite numbers (e.g. a local mean's inputs, missing values already filled).

    Returns
    -------
    ValueTally
        Grouped when fewer than half of the values are distinct, else one entry per
        record.
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    n = int(x.size)
    if n == 0:
        return ValueTally(x, np.zeros(0, dtype=np.int64), 0)
    lo, hi = float(x.min()), float(x.max())
    if hi - lo < _BINCOUNT_SPAN and np.array_equal(x, np.floor(x)):
        counts = np.bincount((x - lo).astype(np.int64))
        cells = np.flatnonzero(counts)
        uniq, counts = cells.astype(np.float64) + lo, counts[cells].astype(np.int64)
    else:
        uniq, counts = np.unique(x, return_counts=True)
    if uniq.size > _GROUPED_SHARE * n:
        return ValueTally(x, np.ones(n, dtype=np.int64), n)
    return ValueTally(uniq, counts.astype(np.int64), n)


def simulation_generator(source: Source) -> np.random.Generator:
    """A numpy generator seeded from four words of ``source`` (reproducible for a seeded
    source; for simulations only).

    Parameters
    ----------
    source : Source
        The simulation's random source.

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.Generator(np.random.PCG64(source.uint64(4).tolist()))


def bernoulli_totals(probs: np.ndarray, counts: np.ndarray, reps: int,
                     gen: np.random.Generator) -> np.ndarray:
    """``reps`` draws of the number of successes of independent coins: ``counts[i]`` coins
    of probability ``probs[i]`` each (a binomial per entry, summed).

    Parameters
    ----------
    probs : numpy.ndarray of float
        Each entry's success probability, in [0, 1].
    counts : numpy.ndarray of int
        Coins per entry.
    reps : int
        Number of draws.
    gen : numpy.random.Generator
        The simulation's generator.

    Returns
    -------
    numpy.ndarray of int64, shape (reps,)
    """
    p = np.clip(np.asarray(probs, dtype=np.float64), 0.0, 1.0)
    c = np.asarray(counts, dtype=np.int64)
    out = np.empty(int(reps), dtype=np.int64)
    ones = bool(c.size) and int(c.max()) == 1
    # A block of repetitions at a time: memory stays near 8 MB whatever the entries.
    block = max(1, (1 << 20) // max(c.size, 1))
    for start in range(0, out.size, block):
        stop = min(out.size, start + block)
        if ones:  # one coin per entry: a uniform each (cheaper than a binomial)
            hits = gen.random((stop - start, c.size)) < p
        else:
            hits = gen.binomial(c, p, size=(stop - start, c.size))
        out[start:stop] = hits.sum(axis=1, dtype=np.int64)
    return out
