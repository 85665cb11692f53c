"""Differentially private sums by secure aggregation with distributed noise.

The protocol, for n clients with values in declared bounds:

1. each client encodes its value as an integer in {0, …, p} (randomized rounding,
   :mod:`~dpstudio.engine.distributed.encoding`) and adds its noise share
   (:mod:`~dpstudio.engine.distributed.noise`: Skellam or discrete Gaussian, planned so
   that the shares of the *honest* clients sure to survive carry the central mechanism's
   noise — see "Threat model" below);
2. the clients mask their noisy integers modulo q = 2^b and the server sums them
   (:mod:`~dpstudio.engine.distributed.secagg`: pairwise masks over all pairs up to 512
   clients, over a random O(log n)-regular graph above), recovering from dropouts;
3. the server reads the sum modulo q as the integer nearest the middle of the feasible
   range and rescales it.

The server sees only masked messages and the noisy sum, so the guarantee is that of the
noisy sum: replace-one neighbours, sensitivity p grid steps. The modulus is chosen so the
noisy sum wraps around with probability below 2⁻⁴⁰ (reported as ``overflow_probability``).

Threat model. The server may collude with up to c = ⌊γn⌋ clients (γ =
``corrupt_fraction``): they hand it their values *and their noise shares*, which it
subtracts, so only the honest clients' shares protect anyone. And the clients draw their
shares before anyone drops out, so the noise must be planned for the declared dropout
tolerance K (``max_dropouts``), never for the dropouts that then happen; the server may
choose whom to drop, so at worst all K are honest. The noise is therefore calibrated so
that the shares of H = n − c − K honest survivors *alone* give (ε, δ); the released sum
carries all survivors' shares, a variance (n − d)/H times the honest one
(``noise_variance`` against ``honest_noise_variance``). A run in which more than K
clients drop out is refused: the planned ε no longer holds and is never claimed (the
error states the weaker ε of the noise that remains).

Entry points: :func:`run_secure_sum` (a simulated run on a real column) and
:func:`plan_secure_sum` (the same report figures, no data, no simulation). Both take a
registry name: ``secagg_gaussian`` or ``skellam``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.calibration import (
    discrete_gaussian_sigma,
    validate_delta,
    validate_epsilon,
)
from dpstudio.engine.distributed import encoding, secagg
from dpstudio.engine.distributed.noise import DistributedNoise, calibrate_noise
from dpstudio.engine.distributed.notes import dropout_note
from dpstudio.engine.distributed.result import SecureSumResult
from dpstudio.engine.entry import DELTA, EPSILON, MechanismInfo, Param, entry_named
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import Source
from dpstudio.jobs import State, check, scaled

__all__ = [
    "ENTRIES",
    "NoisePlan",
    "SecureSumMechanism",
    "SecureSumResult",
    "corrupt_clients",
    "plan_secure_sum",
    "run_secure_sum",
]

QUERIES = ("sum", "mean")
# Largest modulus: 2^62 keeps every intermediate sum of two residues inside uint64.
_MAX_MODULUS_BITS = 62
_OVERFLOW_TARGET = 2.0**-40
# Share of a run's progress reached once the noise is planned and the shares drawn: the
# masking round (O(n·degree) PRF blocks) is the rest.
_PREPARED = 0.1


def corrupt_clients(n: int, corrupt_fraction: float) -> int:
    """Most clients that may collude with the server: ⌊γn⌋.

    γn is rounded to 9 decimals first, so that a fraction typed in decimal counts the
    clients it means (0.29 × 100 is 28.999999999999996 in binary floating point: 29
    colluders, not 28) — the pessimistic side.

    Parameters
    ----------
    n : int
        Clients.
    corrupt_fraction : float
        γ in [0, 0.5).

    Returns
    -------
    int
    """
    return int(math.floor(round(float(corrupt_fraction) * int(n), 9)))


@dataclass(frozen=True)
class NoisePlan:
    """What the n clients agree on before anyone drops out.

    Attributes
    ----------
    noise : DistributedNoise
        The shares, calibrated for ``honest`` clients (``noise.planned_clients``).
    modulus_bits : int
        Messages are integers modulo 2^bits.
    n_clients : int
        Clients taking part.
    corrupt : int
        ⌊γn⌋ clients who may collude with the server (their shares protect no one).
    max_dropouts : int
        Dropouts the noise is planned for (declared in advance).
    honest : int
        n − corrupt − max_dropouts: honest clients sure to survive, whose shares alone
        give (ε, δ).
    """

    noise: DistributedNoise
    modulus_bits: int
    n_clients: int
    corrupt: int
    max_dropouts: int
    honest: int

    def honest_survivors(self, dropouts: int) -> int:
        """Honest clients left at worst after ``dropouts`` (the server drops honest ones)."""
        return self.n_clients - self.corrupt - int(dropouts)

    def guarantee(self, dropouts: int) -> tuple[float, float]:
        """(ε, δ) against the colluding server after ``dropouts``: that of the shares of
        the honest survivors alone (the planned one while ``dropouts`` ≤ max_dropouts)."""
        h = self.honest_survivors(dropouts)
        if h < 1:
            return math.inf, self.noise.delta
        return self.noise.guarantee(h)


class SecureSumMechanism:
    """What the ``secagg_gaussian`` and ``skellam`` registry entries build.

    Parameters
    ----------
    name : str
        The registry entry.
    family : str
        The shares' family: ``"gaussian"`` or ``"skellam"``.
    epsilon, delta : float
        The guarantee; δ > 0.
    max_dropouts : int
        Dropouts the noise is planned for, declared in advance.
    precision_bits : int
        Bits of the value grid; 0 chooses them from (ε, δ).
    modulus_bits : int
        Bits of the message modulus; 0 chooses the smallest safe one.
    prf : str
        The mask PRF.
    corrupt_fraction : float
        γ in [0, 0.5): clients that may collude with the server.
    confidence : float
        Level of the error bound, in (0, 1).

    Raises
    ------
    ParameterError
        For a value out of range.
    """

    def __init__(self, name: str, family: str, epsilon: float, delta: float,
                 max_dropouts: int = 0, precision_bits: int = 0, modulus_bits: int = 0,
                 prf: str = secagg.DEFAULT_PRF,
                 corrupt_fraction: float = secagg.DEFAULT_CORRUPT_FRACTION,
                 confidence: float = 0.95):
        self.name = name
        self.family = family
        self.epsilon = validate_epsilon(epsilon)
        self.delta = validate_delta(delta, required=True)
        self.max_dropouts = int(max_dropouts)
        if self.max_dropouts < 0:
            raise ParameterError(f"max_dropouts must be ≥ 0, got {max_dropouts}")
        bits = encoding.check_precision_bits(precision_bits)
        self.precision_bits = bits or encoding.auto_precision_bits(self.epsilon, self.delta)
        self.modulus_bits = int(modulus_bits)
        if self.modulus_bits and not 8 <= self.modulus_bits <= _MAX_MODULUS_BITS:
            raise ParameterError(f"modulus bits must be 0 (automatic) or in [8, "
                                 f"{_MAX_MODULUS_BITS}], got {modulus_bits}")
        if prf not in secagg.PRFS:
            raise ParameterError(f"prf must be one of {', '.join(secagg.PRFS)}; got {prf!r}")
        self.prf = prf
        self.corrupt_fraction = float(corrupt_fraction)
        if not 0.0 <= self.corrupt_fraction < 0.5:
            raise ParameterError(f"corrupt_fraction must lie in [0, 0.5), got "
                                 f"{corrupt_fraction}")
        if not 0.0 < float(confidence) < 1.0:
            raise ParameterError(f"confidence must lie strictly between 0 and 1, got "
                                 f"{confidence}")
        self.confidence = float(confidence)

    @property
    def precision(self) -> int:
        """p = 2^precision_bits grid steps across the bounds."""
        return 1 << self.precision_bits

    # --------------------------------------------------------------------- planning

    def plan_noise(self, n: int) -> NoisePlan:
        """The noise the clients draw, planned before anyone drops out.

        The shares are calibrated so that those of the n − ⌊γn⌋ − max_dropouts honest
        clients sure to survive give (ε, δ) alone: the colluders' shares are known to the
        server, and who drops out is not known when the shares are drawn.
        """
        n = int(n)
        if n < 2:
            raise QueryError(f"secure aggregation needs at least 2 clients, got {n}")
        max_drop = self.max_dropouts
        threshold = n // 2 + 1
        if n - max_drop < threshold:
            raise ParameterError(
                f"up to {max_drop} dropouts among {n} clients leaves fewer than the "
                f"{threshold} survivors needed to recover the masks")
        corrupt = corrupt_clients(n, self.corrupt_fraction)
        honest = n - corrupt - max_drop
        if honest < 1:
            raise ParameterError(
                f"with {corrupt} of {n} clients colluding and {max_drop} dropouts planned, "
                f"no honest client is sure to survive to add noise")
        noise = calibrate_noise(self.family, self.precision, self.epsilon, self.delta,
                                honest)
        bits = self.modulus_bits or self._auto_modulus_bits(noise, n)
        return NoisePlan(noise, bits, n, corrupt, max_drop, honest)

    def check_dropouts(self, plan: NoisePlan, dropouts: int) -> None:
        """Refuse, in one line, a run where more clients dropped out than planned.

        The shares were drawn before the dropouts, so the honest survivors' noise may now
        be short of (ε, δ): the message states the weaker ε that holds, never the planned.
        """
        d = int(dropouts)
        if d < 0:
            raise ParameterError(f"dropouts must be ≥ 0, got {dropouts}")
        if d <= plan.max_dropouts:
            return
        eps, _ = plan.guarantee(d)
        left = max(plan.n_clients - d, 0)
        honest = max(plan.honest_survivors(d), 0)
        weaker = (f"only ε = {_round_up(eps)}" if math.isfinite(eps) else "no privacy at all")
        raise ParameterError(
            f"{d} of {plan.n_clients} clients dropped out but the noise was planned for at "
            f"most {plan.max_dropouts} (max_dropouts): the {left} survivors' shares "
            f"({honest} honest at worst) give {weaker}, not the stated ε = "
            f"{self.epsilon:g}; nothing released — declare a larger max_dropouts")

    def _auto_modulus_bits(self, noise: DistributedNoise, n: int) -> int:
        h = noise.tail_bound(n, _OVERFLOW_TARGET)
        need = n * self.precision / 2.0 + h + 1  # half-width of the window decoded
        bits = max(8, math.ceil(math.log2(need)) + 1)
        if bits > _MAX_MODULUS_BITS:
            raise ParameterError("the noisy sum does not fit a 62-bit modulus: use fewer "
                                 "precision bits")
        return bits

    def _report(self, plan: NoisePlan, survivors: int, query: str) -> SecureSumResult:
        noise, bits, n = plan.noise, plan.modulus_bits, plan.n_clients
        step = 1.0 / self.precision  # value units are applied by the caller's scale
        var_noise = noise.total_variance(survivors)
        var_round = survivors / 4.0
        beta = 1.0 - self.confidence
        half = noise.tail_bound(survivors, beta / 2) + encoding.bernstein_half_width(
            var_round, 1.0, beta / 2)
        # The guarantee against the colluding server: that of the honest survivors' shares.
        eps, dlt = plan.guarantee(n - survivors)
        central = discrete_gaussian_sigma(self.precision, self.epsilon, self.delta)
        q = 1 << bits
        margin = q // 2 - math.ceil(survivors * self.precision / 2.0) - 1
        overflow = noise.tail_probability(survivors, margin)
        acc = ("exact δ of the Skellam sum (Bessel pmf)" if noise.family == "skellam" else
               "Kairouz, Liu & Steinke 2021 Thm 1 (zCDP) → (ε, δ)")
        acc += f", over the shares of the {plan.honest} honest survivors alone"
        notes = [
            f"noise planned before anyone drops out, against a server colluding with up to "
            f"{plan.corrupt} of the {n} clients ({self.corrupt_fraction * 100:g}%), with up "
            f"to {plan.max_dropouts} dropouts (max_dropouts): the shares of the {plan.honest} "
            f"honest clients sure to survive alone give (ε, δ) = ({eps:g}, {dlt:g}); the "
            f"released sum carries all {survivors} survivors' shares, "
            f"{survivors / plan.honest:.4g}× the variance of those honest shares"]
        return SecureSumResult(
            mechanism=self.name, query=query, value=None,
            stderr=math.sqrt(var_noise + var_round) * step, error_bound=half * step,
            confidence=self.confidence, epsilon=eps, delta=dlt, n=survivors, n_clients=n,
            dropouts=n - survivors, max_dropouts=plan.max_dropouts, messages_per_user=1,
            bits_per_message=bits, precision=self.precision, noise=noise.family,
            noise_variance=var_noise * step * step, central_stderr=central * step,
            overflow_probability=overflow, simulated=False, accounting=acc, notes=notes,
            corrupt_fraction=self.corrupt_fraction, corrupt_clients=plan.corrupt,
            honest_clients=plan.honest,
            honest_noise_variance=noise.total_variance(plan.honest) * step * step,
            # σ_c of the shares drawn (grid steps): what the loss description reads.
            share_sigma_steps=noise.per_client if noise.family == "gaussian" else 0.0,
        )

    def plan(self, n: int, dropouts: int = 0, query: str = "sum") -> SecureSumResult:
        """Report figures for n clients (in units of the [0, 1]-scaled values).

        ``dropouts`` above the declared ``max_dropouts`` are refused (ParameterError).
        """
        plan = self.plan_noise(n)
        self.check_dropouts(plan, dropouts)
        return self._report(plan, int(n) - int(dropouts), query)

    def decoded(self, plan: NoisePlan, total: int, survivors: int, enc: encoding.Encoded,
                query: str, source: Source) -> SecureSumResult:
        """The server's decoding of the survivors' sum modulo q, in value units.

        Parameters
        ----------
        plan : NoisePlan
            The noise planned for every client.
        total : int
            The survivors' noisy integers summed modulo q = 2^b.
        survivors : int
            Clients in that sum.
        enc : Encoded
            The bounds and grid (its clamped and missing counts are reported; its steps
            are not read).
        query : str
            ``"sum"`` or ``"mean"``.
        source : Source
            The random source (a seeded one marks the result simulated).

        Returns
        -------
        SecureSumResult
        """
        s, q = int(survivors), 1 << plan.modulus_bits
        # The true sum lies in [0, s·p]: the residue's representative nearest its middle.
        center = s * self.precision // 2
        integer_sum = (int(total) - center + q // 2) % q - q // 2 + center
        out = self._report(plan, s, query)
        width = enc.upper - enc.lower
        total_value = enc.decode_sum(integer_sum, s)
        out.value = total_value / s if query == "mean" else total_value
        _rescale(out, width / s if query == "mean" else width)
        out.simulated = not source.is_secure
        out.source = source.label
        out.clamped, out.missing_count = enc.clamped, enc.missing
        # Unconditional: a note that appeared only when values are missing would say so.
        out.notes.append(encoding.MISSING_NOTE)
        return out

    # ----------------------------------------------------------------------- running

    def run(self, values, bounds, source: Source, dropouts: int = 0, query: str = "sum",
            state: State | None = None) -> SecureSumResult:
        """Simulate the protocol on ``values``: encode, noise, mask, drop, unmask, decode.

        Parameters
        ----------
        values : array_like
            One value per client (missing ones sent as the middle of the bounds).
        bounds : tuple of float
            Declared (lower, upper); values outside are clamped.
        source : Source
            Randomness of the rounding, the shares, the seeds and the dropouts.
        dropouts : int
            Clients, drawn at random, that drop out after masking.
        query : str
            ``"sum"`` or ``"mean"``.
        state : State, optional
            The job's state (:mod:`dpstudio.jobs`): cancellation checked before each
            stage and before every chunk of the masking round, progress reported through
            it (the round, :meth:`~.secagg.SecAggSession.aggregate`, is the long part).
            The random stream is the same with or without a state.

        Returns
        -------
        SecureSumResult
            The noisy sum (or mean) of the survivors, in value units.

        Raises
        ------
        ParameterError
            For more dropouts than planned, or too few clients for the noise.
        Cancelled
            If ``state`` is cancelled.
        """
        check(state)
        enc = encoding.encode_values(values, bounds, self.precision, source)
        n = enc.n
        plan = self.plan_noise(n)
        # The simulation knows the dropouts in advance; the protocol would find out after
        # masking and refuse to unmask then. Refusing first draws nothing.
        self.check_dropouts(plan, dropouts)
        check(state)
        noise, bits, max_drop = plan.noise, plan.modulus_bits, plan.max_dropouts
        session = secagg.setup_session(n, bits, 1, source, self.prf,
                                       corrupt_fraction=self.corrupt_fraction,
                                       dropout_fraction=max_drop / n)
        noisy = enc.steps + noise.shares(n, source)
        # The round takes the survivors up front; masking draws nothing from the source, so
        # drawing them before it changes no random draw.
        order = sampling.permutation(n, source)
        survivors = np.sort(order[int(dropouts):])
        if state is not None:
            state.progress(_PREPARED, "noise shares drawn")
        total = int(session.aggregate(noisy, survivors, scaled(state, _PREPARED, 1.0))[0])
        s = survivors.size
        out = self.decoded(plan, total, s, enc, query, source)
        if session.graph == "harary":
            out.notes.append(
                f"masks over a random {session.degree}-regular graph (Bell et al. 2020), not "
                f"all pairs: private against a semi-honest server colluding with up to "
                f"{self.corrupt_fraction * 100:g}% of clients (with up to {max_drop} "
                f"dropouts), "
                f"except with probability 2^-{secagg.SIGMA}")
        if dropouts:
            out.notes.append(dropout_note(dropouts, max_drop, s))
        return out


def _round_up(x: float, digits: int = 4) -> str:
    """x to ``digits`` significant digits, rounded up: a weaker ε is never shown smaller
    (1.00033 shows as 1.001, not as the stated 1)."""
    if x <= 0:
        return f"{x:g}"
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(x)))
    return f"{math.ceil(x * scale) / scale:.{digits}g}"


def _rescale(out: SecureSumResult, scale: float) -> None:
    """Grid units → value units (``scale`` = bound width, over n for a mean)."""
    for name in ("stderr", "error_bound", "central_stderr"):
        setattr(out, name, getattr(out, name) * scale)
    out.noise_variance *= scale * scale
    out.honest_noise_variance *= scale * scale


def _mechanism(mechanism: str, epsilon: float, delta: float, params: dict[str, Any]
               ) -> SecureSumMechanism:
    # This module's own entries, not the registry's: the registry imports this module.
    info = entry_named(ENTRIES, mechanism, "a secure-aggregation (distributed) mechanism")
    extra = {k: v for k, v in params.items() if k != "confidence"}
    resolved = info.resolve({**extra, "epsilon": epsilon, "delta": delta})
    return info.build(**resolved, confidence=params.get("confidence", 0.95))


def run_secure_sum(values, bounds, mechanism: str, epsilon: float, delta: float,
                   source: Source, dropouts: int = 0, query: str = "sum", *,
                   state: State | None = None, **params: Any) -> SecureSumResult:
    """Simulate secure aggregation with distributed noise on a real column.

    ``dropouts`` clients, drawn at random, drop out after masking; more than the declared
    ``max_dropouts`` is refused (ParameterError, stating the weaker ε the remaining noise
    gives), since the shares were drawn for the planned number.

    Parameters
    ----------
    values : array_like
        One value per client (every row is a client; missing values are sent as the
        middle of the bounds).
    bounds : tuple of float
        Declared (lower, upper).
    mechanism : str
        ``secagg_gaussian`` or ``skellam``.
    epsilon, delta : float
        The guarantee, against a server colluding with the declared fraction of clients.
    source : Source
        The random source (a seeded one marks the result simulated).
    dropouts : int
        Clients that drop out after masking.
    query : str
        ``"sum"`` or ``"mean"``.
    state : State, optional
        The job's state (:mod:`dpstudio.jobs`): progress through the masking round and
        cancellation before each of its chunks; the result is the same without one.
    **params
        The entry's parameters (``max_dropouts``, ``precision_bits``, ``modulus_bits``,
        ``prf``, ``corrupt_fraction``) and ``confidence``.

    Returns
    -------
    SecureSumResult
        The noisy sum (or mean) with its privacy and utility figures.

    Raises
    ------
    QueryError
        For a query other than a sum or mean, or too few survivors to unmask.
    ParameterError
        For a bad parameter or more dropouts than planned.
    Cancelled
        If ``state`` is cancelled.
    """
    if query not in QUERIES:
        raise QueryError(f"secure aggregation answers {', '.join(QUERIES)}; got {query!r}")
    mech = _mechanism(mechanism, epsilon, delta, params)
    d = int(dropouts)
    if d < 0:
        raise ParameterError(f"dropouts must be ≥ 0, got {dropouts}")
    return mech.run(values, bounds, source, dropouts=d, query=query, state=state)


def plan_secure_sum(n: int, bounds, mechanism: str, epsilon: float, delta: float,
                    dropouts: int = 0, query: str = "sum", **params: Any) -> SecureSumResult:
    """The report of :func:`run_secure_sum` for n clients, without data or simulation.

    Parameters
    ----------
    n : int
        Clients (every row of a column is one).
    bounds : tuple of float
        Declared (lower, upper).
    mechanism : str
        ``secagg_gaussian`` or ``skellam``.
    epsilon, delta : float
        The guarantee.
    dropouts : int
        Clients that would drop out after masking.
    query : str
        ``"sum"`` or ``"mean"``.
    **params
        The entry's parameters and ``confidence``, as for :func:`run_secure_sum`.

    Returns
    -------
    SecureSumResult
        With ``value`` None.

    Raises
    ------
    QueryError
        For a query other than a sum or mean, or bad bounds.
    ParameterError
        For a bad parameter, too few clients, or more dropouts than planned.
    """
    if query not in QUERIES:
        raise QueryError(f"secure aggregation answers {', '.join(QUERIES)}; got {query!r}")
    lo, hi = encoding.check_bounds(bounds)
    mech = _mechanism(mechanism, epsilon, delta, params)
    d = int(dropouts)
    if d < 0:
        raise ParameterError(f"dropouts must be ≥ 0, got {dropouts}")
    out = mech.plan(int(n), d, query)
    _rescale(out, (hi - lo) / out.n if query == "mean" else hi - lo)
    return out


# ------------------------------------------------------------------------------ registry

_DROPS = Param("max_dropouts", "int", 0,
               "Clients that may drop out, declared in advance: the noise is planned for the "
               "honest clients left after that many to carry it all; more dropouts abort.",
               low=0, high=1_000_000, label="dropout tolerance")
_PREC = Param("precision_bits", "int", 0,
              "Values are rounded to 2^bits steps of their range; 0 chooses automatically.",
              low=0, high=encoding.MAX_PRECISION_BITS, label="precision bits")
_MOD = Param("modulus_bits", "int", 0,
             "Messages are integers modulo 2^bits; 0 chooses the smallest safe modulus.",
             low=0, high=_MAX_MODULUS_BITS, label="modulus bits")
_PRF = Param("prf", "choice", secagg.DEFAULT_PRF,
             "PRF expanding the 256-bit mask seeds: ChaCha20 (vectorized), or SHAKE-128 or "
             "AES-256-CTR (slow, for cross-checks).",
             choices=secagg.PRFS, label="mask PRF")
_CORRUPT = Param("corrupt_fraction", "float", secagg.DEFAULT_CORRUPT_FRACTION,
                 "Fraction of clients that may collude with the server: the honest "
                 "clients' noise alone carries (ε, δ), and it sizes the sparse masking "
                 f"graph used above {secagg.SPARSE_ABOVE} clients.",
                 low=0.0, high=0.5, high_open=True, label="colluding clients")
_PARAMS = (EPSILON, DELTA, _DROPS, _PREC, _MOD, _PRF, _CORRUPT)
_REFS = ("Bonawitz et al. 2017 (secure aggregation)",
         "Bell et al. 2020 (sparse masking graphs)")

#: The registry entries of this module (registered by :mod:`dpstudio.engine.mechanisms`).
ENTRIES = (
    MechanismInfo(
        name="secagg_gaussian",
        label="Secure aggregation + distributed discrete Gaussian",
        description="Clients add discrete Gaussian shares and mask them; the server learns "
        "only the noisy sum.",
        trust_models=("distributed",),
        value_types=("numeric", "integer", "boolean"),
        kind="randomizer",
        params=_PARAMS,
        factory=lambda **kw: SecureSumMechanism("secagg_gaussian", "gaussian", **kw),
        needs_delta=True,
        queries=QUERIES,
        references=_REFS + ("Kairouz, Liu & Steinke 2021 (distributed discrete Gaussian)",),
    ),
    MechanismInfo(
        name="skellam",
        label="Secure aggregation + Skellam",
        description="Clients add Skellam shares (the sum is exactly Skellam) and mask them.",
        trust_models=("distributed",),
        value_types=("numeric", "integer", "boolean"),
        kind="randomizer",
        params=_PARAMS,
        factory=lambda **kw: SecureSumMechanism("skellam", "skellam", **kw),
        needs_delta=True,
        queries=QUERIES,
        references=_REFS + ("Agarwal, Kairouz & Liu 2021 (Skellam mechanism)",),
    ),
)
