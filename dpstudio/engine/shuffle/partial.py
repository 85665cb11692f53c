"""The shuffle model's summation protocols run where the data is: partitions' sums.

Both analyzers of :mod:`~dpstudio.engine.shuffle.summation` read the shuffled messages
through their sum alone — the cloak's sum modulo q (:func:`~.cloak.cloak_analyze`), the
blanket's plain sum (:func:`~.blanket.blanket_analyze`) — and a sum does not depend on
the order the shuffler gives. So a partition (a file on a Dask worker) can encode its
own rows as users — rounding, noise shares and messages drawn from the partition's own
random source — and return the sum of their messages (:func:`shuffle_partial`); the
client adds the sums and runs the analyzer once (:func:`finish_shuffle`), giving
``run_shuffle_sum``'s result. The shuffle itself is not simulated (it changes no sum).

The protocols' parameters (the cloak's messages per user and modulus, the blanket's γ,
the noise shares) depend on the number of users, so :func:`plan_shuffle_partial` is
given it before any draw: the caller counts the rows first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstudio.engine.distributed import encoding
from dpstudio.engine.distributed.noise import DistributedNoise
from dpstudio.engine.distributed.partial import SumPartial
from dpstudio.engine.errors import QueryError
from dpstudio.engine.rng import Source
from dpstudio.engine.shuffle import blanket, cloak
from dpstudio.engine.shuffle.summation import (
    BlanketProtocol,
    CloakProtocol,
    ShuffleResult,
    _check_query,
    _finish,
    _protocol,
)

__all__ = ["ShufflePlan", "finish_shuffle", "plan_shuffle_partial", "shuffle_partial"]

# Users encoded at a time by the cloak: their messages (m of 8 bytes each, m ≈ 100–140)
# stay near 16 MB, whatever the partition's size.
_CLOAK_ROWS = 1 << 14

SHUFFLE_NOTE = ("computed where the data is: each partition encoded its rows as users "
                "(rounding, noise shares and messages drawn there) and returned only the sum "
                "of their messages; the shuffle, which changes no sum, was not simulated")


@dataclass(frozen=True)
class ShufflePlan:
    """What every partition needs, decided from the number of users before any draw.

    Attributes
    ----------
    protocol : CloakProtocol or BlanketProtocol
        The protocol.
    parameters : CloakParameters or BlanketParameters
        Its parameters for ``n`` users.
    noise : DistributedNoise or None
        The cloak's noise shares (None for the blanket).
    n : int
        Users: every row of every partition.
    lower, upper : float
        The declared bounds.
    query : str
        ``"sum"`` or ``"mean"``.
    """

    protocol: Any
    parameters: Any
    noise: DistributedNoise | None
    n: int
    lower: float
    upper: float
    query: str = "sum"

    @property
    def modulus(self) -> int:
        """The cloak's q; 0 for the blanket's exact sum."""
        return self.parameters.modulus if isinstance(self.protocol, CloakProtocol) else 0


def plan_shuffle_partial(n: int, bounds, mechanism: str, epsilon: float, delta: float,
                         query: str = "sum", **params: Any) -> ShufflePlan:
    """The protocol's parameters for ``n`` users (the rows of every partition).

    Parameters
    ----------
    n : int
        Users.
    bounds : tuple of float
        Declared (lower, upper).
    mechanism : {"cloak", "blanket"}
        The protocol.
    epsilon, delta : float
        The central guarantee.
    query : {"sum", "mean"}
        What is released.
    **params
        The entry's parameters and ``confidence`` (as for ``run_shuffle_sum``).

    Returns
    -------
    ShufflePlan

    Raises
    ------
    QueryError, ParameterError
        For a bad query, bounds or parameter, or parameters that cannot be met.
    """
    _check_query(query)
    lo, hi = encoding.check_bounds(bounds)
    proto = _protocol(mechanism, epsilon, delta, params)
    if isinstance(proto, CloakProtocol):
        parameters, noise = proto.parameters(int(n))
    else:
        parameters, noise = proto.parameters(int(n)), None
    return ShufflePlan(proto, parameters, noise, int(n), lo, hi, query)


def shuffle_partial(values, plan: ShufflePlan, source: Source) -> SumPartial:
    """One partition's users encoded and their messages summed (mod q for the cloak).

    The draws are those of ``run_shuffle_sum`` on the partition, in the same order (the
    cloak encodes 16,384 users at a time): rounding, noise shares, messages.

    Parameters
    ----------
    values : array_like
        The partition's column (missing values are sent as the middle of the bounds).
    plan : ShufflePlan
        From :func:`plan_shuffle_partial`.
    source : Source
        The partition's own random source.

    Returns
    -------
    SumPartial
        Zero for an empty partition.

    Raises
    ------
    QueryError
        For a non-numeric column.
    """
    name, q = plan.protocol.name, plan.modulus
    v = np.asarray(values).reshape(-1)
    if v.size == 0:
        return SumPartial(name, 0, q)
    bounds = (plan.lower, plan.upper)
    if isinstance(plan.protocol, BlanketProtocol):
        u, _, _, clamped, missing = encoding.unit_values(v, bounds)
        messages = blanket.blanket_randomize(u, plan.parameters, source)
        return SumPartial(name, int(messages.sum(dtype=np.int64)), 0, int(u.size),
                          int(u.size), clamped, missing)
    enc = encoding.encode_values(v, bounds, plan.protocol.precision, source)
    z = enc.steps if plan.noise is None else enc.steps + plan.noise.shares(enc.n, source)
    total = 0
    for start in range(0, z.size, _CLOAK_ROWS):
        messages = cloak.cloak_encode(z[start:start + _CLOAK_ROWS], plan.parameters, source)
        total = (total + cloak.residue_sum(messages, q)) % q
    return SumPartial(name, int(total), q, enc.n, enc.n, enc.clamped, enc.missing)


def finish_shuffle(total: SumPartial, plan: ShufflePlan, source: Source,
                   notes: Iterable[str] = ()) -> ShuffleResult:
    """The analyzer on the added sums: ``run_shuffle_sum``'s result.

    Parameters
    ----------
    total : SumPartial
        :func:`~dpstudio.engine.distributed.partial.add_sum_partials` of every partition.
    plan : ShufflePlan
        The plan they ran.
    source : Source
        The source the client stands for (a seeded one marks the result simulated).
    notes : iterable of str
        Added after the protocol's notes.

    Returns
    -------
    ShuffleResult

    Raises
    ------
    QueryError
        When the partitions' users are not the planned ones (the files changed).
    """
    if total.n != plan.n or total.modulus != plan.modulus:
        raise QueryError(f"the partitions held {total.n} users, not the {plan.n} the "
                         "protocol was planned for (did the files change?); nothing released")
    n, lo, hi = plan.n, plan.lower, plan.upper
    proto = plan.protocol
    if isinstance(proto, CloakProtocol):
        integer_sum = cloak.cloak_analyze(np.array([total.total], dtype=np.uint64),
                                          plan.parameters)
        value = encoding.Encoded(np.zeros(0), lo, hi, proto.precision,
                                 0).decode_sum(integer_sum, n)
    else:
        estimate = blanket.blanket_debias(total.total, n, plan.parameters)
        value = n * lo + (hi - lo) * estimate
    out = _finish(proto.plan(n, plan.query), value, hi - lo, n, total.clamped, source,
                  plan.query, total.missing)
    out.notes.append(SHUFFLE_NOTE)
    out.notes.extend(notes)
    return out
