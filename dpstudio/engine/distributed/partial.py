"""Secure aggregation with distributed noise, run where the data is: partitions' sums.

The server of :mod:`~dpstudio.engine.distributed.secure_sum` learns one number, the sum
modulo q = 2^b of the surviving clients' noisy integers (rounded value plus noise share):
the pairwise masks cancel in that sum by construction. So a partition (a file on a Dask
worker) can encode its own rows as clients — randomized rounding and a noise share each,
from the partition's own random source — drop its share of the dropouts, and return that
sum modulo q with its counts (:func:`secure_partial`); the client adds the residues and
decodes once (:func:`finish_secure`), exactly as the protocol's server does. The masking
round itself is not simulated on partitions (its output is that sum; its cost is the
in-process simulation's subject).

The noise is planned for the number of clients before any share is drawn
(:func:`plan_secure_partial`): the caller counts the rows first. :class:`SumPartial` and
:func:`add_sum_partials` also carry the shuffle protocols' sums
(:mod:`dpstudio.engine.shuffle.partial`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.distributed import encoding
from dpstudio.engine.distributed.notes import dropout_note
from dpstudio.engine.distributed.secure_sum import (
    QUERIES,
    NoisePlan,
    SecureSumMechanism,
    SecureSumResult,
    _mechanism,
)
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import Source

__all__ = ["SecurePlan", "SumPartial", "add_sum_partials", "finish_secure",
           "plan_secure_partial", "secure_partial", "split_dropouts"]

MASKS_NOTE = ("computed where the data is: each partition encoded its rows as clients "
              "(rounding and noise share drawn there) and returned only their sum modulo q; "
              "the pairwise masks, which cancel in that sum, were not simulated")


@dataclass(frozen=True)
class SumPartial:
    """One partition's sum of its clients' messages (or several partitions', added).

    Only integers: the protocol's sum over the partition's clients, never a client's
    message.

    Attributes
    ----------
    mechanism : str
        The protocol.
    total : int
        The sum of the messages, modulo ``modulus`` when it is not 0.
    modulus : int
        q for a modular sum, 0 for an exact one.
    n : int
        Clients (rows).
    survivors : int
        Clients whose message entered the sum (n minus the dropouts).
    clamped, missing : int
        Analyst only: values outside the bounds, and missing ones.
    """

    mechanism: str
    total: int
    modulus: int = 0
    n: int = 0
    survivors: int = 0
    clamped: int = 0
    missing: int = 0

    def integers(self) -> list[int]:
        """Every number this aggregate holds (to check that all are integers).

        Returns
        -------
        list of int
        """
        return [self.total, self.modulus, self.n, self.survivors, self.clamped, self.missing]


def add_sum_partials(parts: Iterable[SumPartial]) -> SumPartial:
    """The partitions' sums added (modulo q for a modular sum).

    Parameters
    ----------
    parts : iterable of SumPartial
        Sums of one plan.

    Returns
    -------
    SumPartial

    Raises
    ------
    QueryError
        For no sums, or sums of different protocols or moduli.
    """
    parts = list(parts)
    if not parts:
        raise QueryError("no partitions to add")
    first = parts[0]
    if any((p.mechanism, p.modulus) != (first.mechanism, first.modulus) for p in parts):
        raise QueryError("the partitions' sums are of different protocols")
    total = sum(p.total for p in parts)
    if first.modulus:
        total %= first.modulus
    return SumPartial(first.mechanism, int(total), first.modulus,
                      *(sum(getattr(p, f) for p in parts)
                        for f in ("n", "survivors", "clamped", "missing")))


@dataclass(frozen=True)
class SecurePlan:
    """What every partition needs, decided from the number of clients before any draw.

    Attributes
    ----------
    mechanism : SecureSumMechanism
        The protocol (ε, δ, precision, colluders, …).
    noise : NoisePlan
        The shares' calibration and the modulus, for ``n`` clients.
    n : int
        Clients: every row of every partition.
    lower, upper : float
        The declared bounds.
    query : str
        ``"sum"`` or ``"mean"``.
    dropouts : int
        Clients dropping out after masking (at most the declared ``max_dropouts``).
    """

    mechanism: SecureSumMechanism
    noise: NoisePlan
    n: int
    lower: float
    upper: float
    query: str = "sum"
    dropouts: int = 0

    @property
    def modulus(self) -> int:
        """q = 2^b."""
        return 1 << self.noise.modulus_bits


def plan_secure_partial(n: int, bounds, mechanism: str, epsilon: float, delta: float,
                        dropouts: int = 0, query: str = "sum", **params: Any) -> SecurePlan:
    """Plan the noise for ``n`` clients (the rows of every partition) before any draw.

    Parameters
    ----------
    n : int
        Clients.
    bounds : tuple of float
        Declared (lower, upper).
    mechanism : str
        ``secagg_gaussian`` or ``skellam``.
    epsilon, delta : float
        The guarantee.
    dropouts : int
        Clients that drop out after masking; more than ``max_dropouts`` is refused here,
        before anything is drawn.
    query : str
        ``"sum"`` or ``"mean"``.
    **params
        The entry's parameters and ``confidence`` (as for ``run_secure_sum``).

    Returns
    -------
    SecurePlan

    Raises
    ------
    QueryError, ParameterError
        For a bad query, bounds, parameter, too few clients or too many dropouts.
    """
    if query not in QUERIES:
        raise QueryError(f"secure aggregation answers {', '.join(QUERIES)}; got {query!r}")
    lo, hi = encoding.check_bounds(bounds)
    mech = _mechanism(mechanism, epsilon, delta, params)
    d = int(dropouts)
    if d < 0:
        raise ParameterError(f"dropouts must be ≥ 0, got {dropouts}")
    noise = mech.plan_noise(int(n))
    mech.check_dropouts(noise, d)
    return SecurePlan(mech, noise, int(n), lo, hi, query, d)


def split_dropouts(rows: Sequence[int], dropouts: int, source: Source) -> list[int]:
    """How many of ``dropouts`` clients, drawn uniformly among all, fall in each partition.

    The multivariate hypergeometric law: the same as drawing the dropouts among every
    client at once. Who drops out is the simulation's choice, not a privacy step.

    Parameters
    ----------
    rows : sequence of int
        Clients per partition.
    dropouts : int
        Clients dropping out in all.
    source : Source
        Seeds the draw.

    Returns
    -------
    list of int
        Dropouts per partition.
    """
    d = int(dropouts)
    if d == 0 or not rows:
        return [0] * len(rows)
    gen = np.random.Generator(np.random.PCG64(source.uint64(4).tolist()))
    return [int(x) for x in gen.multivariate_hypergeometric(
        np.asarray(rows, dtype=np.int64), d)]


def secure_partial(values, plan: SecurePlan, source: Source, dropouts: int = 0
                   ) -> SumPartial:
    """One partition's clients: encoded, noised, ``dropouts`` of them dropped, summed mod q.

    Parameters
    ----------
    values : array_like
        The partition's column (missing values are sent as the middle of the bounds).
    plan : SecurePlan
        From :func:`plan_secure_partial`.
    source : Source
        The partition's own random source (rounding, shares, who drops out).
    dropouts : int
        This partition's dropouts (:func:`split_dropouts`).

    Returns
    -------
    SumPartial
        Zero for an empty partition.

    Raises
    ------
    QueryError
        For a non-numeric column or more dropouts than rows.
    """
    q = plan.modulus
    v = np.asarray(values).reshape(-1)
    if v.size == 0:
        return SumPartial(plan.mechanism.name, 0, q)
    d = int(dropouts)
    if not 0 <= d <= v.size:
        raise QueryError(f"{d} dropouts in a partition of {v.size} clients")
    enc = encoding.encode_values(v, (plan.lower, plan.upper), plan.mechanism.precision,
                                 source)
    noisy = enc.steps.astype(np.int64) + plan.noise.noise.shares(enc.n, source)
    order = sampling.permutation(enc.n, source)
    survivors = np.sort(order[d:])
    total = int(noisy[survivors].sum(dtype=np.int64)) % q
    return SumPartial(plan.mechanism.name, total, q, enc.n, int(survivors.size),
                      enc.clamped, enc.missing)


def finish_secure(total: SumPartial, plan: SecurePlan, source: Source,
                  notes: Iterable[str] = ()) -> SecureSumResult:
    """The server's decoding of the added residues: ``run_secure_sum``'s result.

    Parameters
    ----------
    total : SumPartial
        :func:`add_sum_partials` of every partition.
    plan : SecurePlan
        The plan they ran.
    source : Source
        The source the client stands for (a seeded one marks the result simulated).
    notes : iterable of str
        Added after the protocol's notes.

    Returns
    -------
    SecureSumResult

    Raises
    ------
    QueryError
        When the partitions' clients are not the planned ones (the files changed).
    """
    mech = plan.mechanism
    if total.n != plan.n or total.survivors != plan.n - plan.dropouts or (
            total.modulus != plan.modulus):
        raise QueryError(f"the partitions held {total.n} clients, not the {plan.n} the "
                         "noise was planned for (did the files change?); nothing released")
    s = total.survivors
    grid = encoding.Encoded(np.zeros(0), plan.lower, plan.upper, mech.precision,
                            total.clamped, total.missing)
    out = mech.decoded(plan.noise, total.total, s, grid, plan.query, source)
    out.notes.append(MASKS_NOTE)
    if plan.dropouts:
        out.notes.append(dropout_note(plan.dropouts, plan.noise.max_dropouts, s))
    out.notes.extend(notes)
    return out
