"""Differentially private sums by secure aggregation with distributed noise.

The protocol, for n clients with values in declared bounds:

1. each client encodes its value as an integer in {0, …, p} (randomized rounding,
   :mod:`~dpstudio.engine.distributed.encoding`) and adds its noise share
   (:mod:`~dpstudio.engine.distributed.noise`: Skellam or discrete Gaussian, planned so
   that the shares of the clients sure to survive carry the central mechanism's noise);
2. the clients mask their noisy integers modulo q = 2^b and the server sums them
   (:mod:`~dpstudio.engine.distributed.secagg`: pairwise masks over all pairs up to 512
   clients, over a random O(log n)-regular graph above), recovering from dropouts;
3. the server reads the sum modulo q as the integer nearest the middle of the feasible
   range and rescales it.

The server sees only masked messages and the noisy sum, so the guarantee is that of the
noisy sum: replace-one neighbours, sensitivity p grid steps. The modulus is chosen so the
noisy sum wraps around with probability below 2⁻⁴⁰ (reported as ``overflow_probability``).

Entry points: :func:`run_secure_sum` (a simulated run on a real column) and
:func:`plan_secure_sum` (the same report figures, no data, no simulation). Both take a
registry name: ``secagg_gaussian`` or ``skellam``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
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
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.registry import REGISTRY, MechanismInfo, Param
from dpstudio.engine.rng import Source

__all__ = [
    "SecureSumMechanism",
    "SecureSumResult",
    "plan_secure_sum",
    "run_secure_sum",
]

QUERIES = ("sum", "mean")
# Largest modulus: 2^62 keeps every intermediate sum of two residues inside uint64.
_MAX_MODULUS_BITS = 62
_OVERFLOW_TARGET = 2.0**-40


@dataclass
class SecureSumResult:
    """A secure-aggregation sum (or mean) with its privacy and utility figures.

    ``value`` is None in plan mode. ``stderr`` and ``error_bound`` are in value units and
    data-independent: stderr is an upper bound (rounding counted at its worst, n/4 steps²)
    and P(|error| > error_bound) ≤ 1 − confidence rigorously (noise tail + Bernstein for
    rounding). ``central_stderr`` is the standard error of the central discrete Gaussian
    meeting the same (ε, δ) on the same grid, for comparison.
    """

    mechanism: str
    query: str
    value: float | None
    stderr: float
    error_bound: float
    confidence: float
    epsilon: float
    delta: float
    n: int
    n_clients: int
    dropouts: int
    max_dropouts: int
    messages_per_user: int
    bits_per_message: int
    precision: int
    noise: str
    noise_variance: float
    central_stderr: float
    overflow_probability: float
    simulated: bool
    source: str = ""
    clamped: int = 0
    accounting: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SecureSumMechanism:
    """What the ``secagg_gaussian`` and ``skellam`` registry entries build."""

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
        return 1 << self.precision_bits

    # --------------------------------------------------------------------- planning

    def _plan(self, n: int, dropouts: int) -> tuple[DistributedNoise, int, int]:
        n, dropouts = int(n), int(dropouts)
        if n < 2:
            raise QueryError(f"secure aggregation needs at least 2 clients, got {n}")
        max_drop = max(self.max_dropouts, dropouts)
        threshold = n // 2 + 1
        if n - max_drop < threshold:
            raise ParameterError(
                f"up to {max_drop} dropouts among {n} clients leaves fewer than the "
                f"{threshold} survivors needed to recover the masks")
        noise = calibrate_noise(self.family, self.precision, self.epsilon, self.delta,
                                n - max_drop)
        bits = self.modulus_bits or self._auto_modulus_bits(noise, n)
        return noise, bits, max_drop

    def _auto_modulus_bits(self, noise: DistributedNoise, n: int) -> int:
        h = noise.tail_bound(n, _OVERFLOW_TARGET)
        need = n * self.precision / 2.0 + h + 1  # half-width of the window decoded
        bits = max(8, math.ceil(math.log2(need)) + 1)
        if bits > _MAX_MODULUS_BITS:
            raise ParameterError("the noisy sum does not fit a 62-bit modulus: use fewer "
                                 "precision bits")
        return bits

    def _report(self, noise: DistributedNoise, bits: int, n: int, survivors: int,
                max_drop: int, query: str) -> SecureSumResult:
        step = 1.0 / self.precision  # value units are applied by the caller's scale
        var_noise = noise.total_variance(survivors)
        var_round = survivors / 4.0
        beta = 1.0 - self.confidence
        half = noise.tail_bound(survivors, beta / 2) + encoding.bernstein_half_width(
            var_round, 1.0, beta / 2)
        eps, dlt = noise.guarantee(survivors)
        central = discrete_gaussian_sigma(self.precision, self.epsilon, self.delta)
        q = 1 << bits
        margin = q // 2 - math.ceil(survivors * self.precision / 2.0) - 1
        overflow = noise.tail_probability(survivors, margin)
        acc = ("exact δ of the Skellam sum (Bessel pmf)" if noise.family == "skellam" else
               "Kairouz, Liu & Steinke 2021 Thm 1 (zCDP) → (ε, δ)")
        return SecureSumResult(
            mechanism=self.name, query=query, value=None,
            stderr=math.sqrt(var_noise + var_round) * step, error_bound=half * step,
            confidence=self.confidence, epsilon=eps, delta=dlt, n=survivors, n_clients=n,
            dropouts=n - survivors, max_dropouts=max_drop, messages_per_user=1,
            bits_per_message=bits, precision=self.precision, noise=noise.family,
            noise_variance=var_noise * step * step, central_stderr=central * step,
            overflow_probability=overflow, simulated=False, accounting=acc,
        )

    def plan(self, n: int, dropouts: int = 0, query: str = "sum") -> SecureSumResult:
        """Report figures for n clients (in units of the [0, 1]-scaled values)."""
        noise, bits, max_drop = self._plan(n, dropouts)
        return self._report(noise, bits, int(n), int(n) - int(dropouts), max_drop, query)

    # ----------------------------------------------------------------------- running

    def run(self, values, bounds, source: Source, dropouts: int = 0, query: str = "sum"
            ) -> SecureSumResult:
        """Simulate the protocol on ``values``: encode, noise, mask, drop, unmask, decode."""
        enc = encoding.encode_values(values, bounds, self.precision, source)
        n = enc.n
        noise, bits, max_drop = self._plan(n, dropouts)
        session = secagg.setup_session(n, bits, 1, source, self.prf,
                                       corrupt_fraction=self.corrupt_fraction,
                                       dropout_fraction=max_drop / n)
        noisy = enc.steps + noise.shares(n, source)
        messages = session.mask(noisy)
        order = sampling.permutation(n, source)
        survivors = np.sort(order[int(dropouts):])
        total = int(session.unmask_sum(survivors, messages[survivors])[0])
        s = survivors.size
        q = session.modulus
        center = s * self.precision // 2
        integer_sum = (total - center + q // 2) % q - q // 2 + center
        out = self._report(noise, bits, n, s, max_drop, query)
        width = enc.upper - enc.lower
        total_value = enc.decode_sum(integer_sum, s)
        out.value = total_value / s if query == "mean" else total_value
        scale = width / s if query == "mean" else width
        for name in ("stderr", "error_bound", "central_stderr"):
            setattr(out, name, getattr(out, name) * scale)
        out.noise_variance *= scale * scale
        out.simulated = not source.is_secure
        out.source = source.label
        out.clamped = enc.clamped
        if session.graph == "harary":
            out.notes.append(
                f"masks over a random {session.degree}-regular graph (Bell et al. 2020), not "
                f"all pairs: private against a semi-honest server colluding with up to "
                f"{self.corrupt_fraction:.0%} of clients (with up to {max_drop} dropouts), "
                f"except with probability 2^-{secagg.SIGMA}")
        if dropouts:
            out.notes.append(f"{dropouts} clients dropped out after masking; the sum is over "
                             f"the {s} survivors")
        return out


def _mechanism(mechanism: str, epsilon: float, delta: float, params: dict[str, Any]
               ) -> SecureSumMechanism:
    info = REGISTRY.get(mechanism)
    if "distributed" not in info.trust_models:
        raise QueryError(f"{mechanism} is not a secure-aggregation (distributed) mechanism")
    extra = {k: v for k, v in params.items() if k != "confidence"}
    resolved = info.resolve({**extra, "epsilon": epsilon, "delta": delta})
    return info.build(**resolved, confidence=params.get("confidence", 0.95))


def run_secure_sum(values, bounds, mechanism: str, epsilon: float, delta: float,
                   source: Source, dropouts: int = 0, query: str = "sum", **params: Any
                   ) -> SecureSumResult:
    """Simulate secure aggregation with distributed noise on a real column.

    ``mechanism`` is ``secagg_gaussian`` or ``skellam``; ``params`` are the entry's
    parameters (``max_dropouts``, ``precision_bits``, ``modulus_bits``, ``prf``,
    ``corrupt_fraction``) and ``confidence``. ``dropouts`` clients, drawn at random, drop
    out after masking.
    """
    if query not in QUERIES:
        raise QueryError(f"secure aggregation answers {', '.join(QUERIES)}; got {query!r}")
    mech = _mechanism(mechanism, epsilon, delta, params)
    d = int(dropouts)
    if d < 0:
        raise ParameterError(f"dropouts must be ≥ 0, got {dropouts}")
    return mech.run(values, bounds, source, dropouts=d, query=query)


def plan_secure_sum(n: int, bounds, mechanism: str, epsilon: float, delta: float,
                    dropouts: int = 0, query: str = "sum", **params: Any) -> SecureSumResult:
    """The report of :func:`run_secure_sum` for n clients, without data or simulation."""
    if query not in QUERIES:
        raise QueryError(f"secure aggregation answers {', '.join(QUERIES)}; got {query!r}")
    lo, hi = encoding.check_bounds(bounds)
    mech = _mechanism(mechanism, epsilon, delta, params)
    out = mech.plan(int(n), int(dropouts), query)
    scale = (hi - lo) / out.n if query == "mean" else hi - lo
    for name in ("stderr", "error_bound", "central_stderr"):
        setattr(out, name, getattr(out, name) * scale)
    out.noise_variance *= scale * scale
    return out


# ------------------------------------------------------------------------------ registry

_EPS = Param("epsilon", "float", 1.0, "Privacy-loss bound of the released sum.",
             low=0.0, low_open=True, high=100.0, log_scale=True, label="ε")
_DELTA = Param("delta", "float", 1e-6, "Probability that the ε bound may fail.",
               low=0.0, low_open=True, high=1.0, high_open=True, log_scale=True, label="δ")
_DROPS = Param("max_dropouts", "int", 0,
               "Clients that may drop out: noise is planned for the others to carry it all.",
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
                 "Fraction of clients that may collude with the server: sizes the sparse "
                 f"masking graph used above {secagg.SPARSE_ABOVE} clients.",
                 low=0.0, high=0.5, high_open=True, label="colluding clients")
_PARAMS = (_EPS, _DELTA, _DROPS, _PREC, _MOD, _PRF, _CORRUPT)
_REFS = ("Bonawitz et al. 2017 (secure aggregation)",
         "Bell et al. 2020 (sparse masking graphs)")

REGISTRY.register(MechanismInfo(
    name="secagg_gaussian",
    label="Secure aggregation + distributed discrete Gaussian",
    description="Clients add discrete Gaussian shares and mask them; the server learns only "
    "the noisy sum.",
    trust_models=("distributed",),
    value_types=("numeric", "integer", "boolean"),
    kind="randomizer",
    params=_PARAMS,
    factory=lambda **kw: SecureSumMechanism("secagg_gaussian", "gaussian", **kw),
    needs_delta=True,
    queries=QUERIES,
    references=_REFS + ("Kairouz, Liu & Steinke 2021 (distributed discrete Gaussian)",),
))

REGISTRY.register(MechanismInfo(
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
))
