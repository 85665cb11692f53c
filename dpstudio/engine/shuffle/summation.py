"""Private sums in the shuffle model: the registry entries ``cloak`` and ``blanket`` and the
helpers the CLI and UI call.

- :func:`run_shuffle_sum` simulates a protocol on a real column: every user's messages
  are encoded (n·m messages as arrays), shuffled by a CSPRNG permutation and analyzed.
- :func:`plan_shuffle_sum` gives the same report figures for n users without data.

Neighbouring datasets differ in one user's value (replace-one; the number of users is
public, the shuffler sees every message). Both return a :class:`ShuffleResult` whose
error figures are data-independent: ``stderr`` is an upper bound on the standard error
(rounding counted at its worst) and ``P(|error| > error_bound) ≤ 1 − confidence``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from dpstudio.engine.calibration import validate_delta, validate_epsilon
from dpstudio.engine.distributed import encoding
from dpstudio.engine.distributed.noise import DistributedNoise, calibrate_noise
from dpstudio.engine.entry import DELTA, EPSILON, MechanismInfo, Param, entry_named
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import Source
from dpstudio.engine.shuffle import blanket, cloak

__all__ = [
    "ENTRIES",
    "BlanketProtocol",
    "CloakProtocol",
    "ShuffleResult",
    "plan_shuffle_sum",
    "run_shuffle_sum",
]

QUERIES = ("sum", "mean")
NOISES = ("skellam", "gaussian")


@dataclass
class ShuffleResult:
    """A shuffle-model sum (or mean) with its privacy and cost figures.

    ``value`` is None in plan mode. ``details`` holds protocol-specific figures (the
    cloak's modulus and encoding distance, the blanket's γ and precision k).

    Attributes
    ----------
    mechanism, query : str
        ``"cloak"`` or ``"blanket"``; ``"sum"`` or ``"mean"``.
    value : float or None
        The released sum or mean, in the values' units (None in plan mode).
    stderr : float
        Upper bound on the standard error (values' units).
    error_bound : float
        ``P(|error| > error_bound) ≤ 1 − confidence``.
    confidence : float
        The error bound's level.
    epsilon, delta : float
        The protocol's central guarantee (replace-one).
    n : int
        Number of users.
    messages_per_user, bits_per_message : int
        The communication cost.
    simulated : bool
        True when a seeded generator drew the randomness.
    source : str
        The random source's label.
    clamped, missing_count : int
        Values outside the bounds, and missing values (analyst-only).
    accounting : str
        How the guarantee was derived.
    details : dict
        Protocol-specific figures.
    notes : list of str
        What the user should know.
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
    messages_per_user: int
    bits_per_message: int
    simulated: bool = False
    source: str = ""
    clamped: int = 0
    missing_count: int = 0  # analyst-only, like clamped
    accounting: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Every field, as a plain dict.

        Returns
        -------
        dict
        """
        return asdict(self)

    def loss_description(self) -> Any:
        """What this sum drew, for a ledger's tight accountants: its (ε, δ), from the
        amplification or blanket bound (no tighter description of the shuffled messages
        is proven; :func:`~dpstudio.engine.accounting.protocol_loss.shuffle_loss`).

        Returns
        -------
        LossDescription

        Raises
        ------
        ParameterError
            When ε is not finite (nothing to account).
        """
        from dpstudio.engine.accounting.protocol_loss import shuffle_loss

        return shuffle_loss(self)

    def _scale(self, factor: float) -> None:
        self.stderr *= factor
        self.error_bound *= factor


def _confidence(value: float) -> float:
    c = float(value)
    if not 0.0 < c < 1.0:
        raise ParameterError(f"confidence must lie strictly between 0 and 1, got {value}")
    return c


class CloakProtocol:
    """GPV19's invisibility cloak with a distributed-noise pre-randomizer (see
    :mod:`dpstudio.engine.shuffle.cloak`). ``noise="none"`` (engine use only) drops the
    pre-randomizer: the exact sum of the rounded inputs, no DP against one user's change.

    Ghazi, Pagh & Velingker (2019); the reduction to (ε, δ)-DP is Balle, Bell, Gascón &
    Nissim (2020).

    Parameters
    ----------
    epsilon, delta : float
        The central guarantee; δ > 0.
    noise : {"skellam", "gaussian", "none"}
        The pre-randomizer's shares (:mod:`dpstudio.engine.distributed.noise`).
    precision_bits : int
        Values are rounded to ``2^bits`` steps of their range; 0 chooses
        (:func:`~dpstudio.engine.distributed.encoding.auto_precision_bits`).
    confidence : float
        Level of the error bound, in (0, 1).

    Raises
    ------
    ParameterError
        For a bad ε, δ, noise, precision or confidence.
    """

    name = "cloak"

    def __init__(self, epsilon: float, delta: float, noise: str = "skellam",
                 precision_bits: int = 0, confidence: float = 0.95):
        self.epsilon = validate_epsilon(epsilon)
        self.delta = validate_delta(delta, required=True)
        if noise not in (*NOISES, "none"):
            raise ParameterError(f"noise must be one of {', '.join(NOISES)}; got {noise!r}")
        self.noise = noise
        bits = encoding.check_precision_bits(precision_bits)
        self.precision_bits = bits or encoding.auto_precision_bits(self.epsilon, self.delta)
        self.confidence = _confidence(confidence)

    @property
    def precision(self) -> int:
        """``p = 2^precision_bits``: a value is an integer in ``{0, …, p}``."""
        return 1 << self.precision_bits

    def parameters(self, n: int) -> tuple[cloak.CloakParameters, DistributedNoise | None]:
        """The cloak's parameters and the calibrated noise shares for ``n`` users.

        δ is split: 90% to the noise, the rest (over ``1 + e^ε``) to the encoding's
        total variation (:data:`~dpstudio.engine.shuffle.cloak.TV_SHARE`).

        Parameters
        ----------
        n : int
            Number of users, ≥ 2.

        Returns
        -------
        (CloakParameters, DistributedNoise or None)
            The noise is None for ``noise="none"``.

        Raises
        ------
        QueryError
            For fewer than 2 users.
        ParameterError
            When no parameters reach the δ budget.
        """
        n = int(n)
        if n < 2:
            raise QueryError(f"the cloak needs at least 2 users, got {n}")
        if self.noise == "none":
            return cloak.cloak_parameters(n, self.precision, self.delta), None
        tv = cloak.TV_SHARE * self.delta / (1.0 + math.exp(self.epsilon))
        dn = calibrate_noise(self.noise, self.precision, self.epsilon,
                             (1.0 - cloak.TV_SHARE) * self.delta, n)
        return cloak.cloak_parameters(n, self.precision, tv,
                                      cloak.cloak_noise_halfwidth(dn, n)), dn

    def plan(self, n: int, query: str = "sum") -> ShuffleResult:
        """Report figures on the [0, 1] scale of the values (sum of n values in [0, 1]).

        Parameters
        ----------
        n : int
            Number of users.
        query : str
            ``"sum"`` or ``"mean"`` (a label here; scaling is the caller's).

        Returns
        -------
        ShuffleResult
            ``value`` None, errors on the [0, 1] scale of the sum.

        Raises
        ------
        QueryError, ParameterError
            As :meth:`parameters`.
        """
        params, dn = self.parameters(n)
        n = params.n
        beta = 1.0 - self.confidence
        var_round = n / 4.0  # randomized rounding: at most 1/4 step² per user
        if dn is None:
            var_noise, h_noise = 0.0, 0.0
            eps, dlt = math.inf, params.tv
            acc = "no pre-randomizer: (0, τ)-indistinguishable only for sum-preserving changes"
            beta_round = beta
        else:
            var_noise = dn.total_variance(n)
            h_noise = dn.tail_bound(n, beta / 2)
            d_noise = (1.0 - cloak.TV_SHARE) * self.delta
            eps = self.epsilon
            dlt = min(self.delta, d_noise + (1.0 + math.exp(eps)) * params.tv)
            acc = (f"{dn.label} pre-randomizer (ε, {d_noise:.3g}) + encoding within total "
                   f"variation {params.tv:.3g} of an ideal sum (GPV19 Lemma 1, chained)")
            beta_round = beta / 2
        half = h_noise + encoding.bernstein_half_width(var_round, 1.0, beta_round)
        step = 1.0 / self.precision
        q = params.modulus
        overflow = 0.0 if dn is None else dn.tail_probability(n, params.overflow_margin)
        return ShuffleResult(
            mechanism=self.name, query=query, value=None,
            stderr=math.sqrt(var_noise + var_round) * step, error_bound=half * step,
            confidence=self.confidence, epsilon=eps, delta=dlt, n=n,
            messages_per_user=params.messages, bits_per_message=params.bits_per_message,
            accounting=acc,
            details={"modulus": q, "precision": self.precision, "encoding_tv": params.tv,
                     "noise": self.noise,
                     "noise_variance_per_user": 0.0 if dn is None else dn.client_variance(),
                     "overflow_probability": overflow},
        )

    def run(self, values, bounds, source: Source, query: str = "sum") -> ShuffleResult:
        """Encode every user's messages, shuffle all n·m of them, analyze.

        Parameters
        ----------
        values : array_like
            The column, one value per user (missing values are sent as the middle of the
            bounds).
        bounds : tuple of float
            ``(lower, upper)``; values outside are clamped.
        source : Source
            The random source (rounding, shares, messages, permutation).
        query : str
            ``"sum"`` or ``"mean"``.

        Returns
        -------
        ShuffleResult
            In the values' units.

        Raises
        ------
        QueryError, ParameterError
            For missing or bad bounds, a non-numeric or empty column, or fewer than 2
            users.
        """
        enc = encoding.encode_values(values, bounds, self.precision, source)
        params, dn = self.parameters(enc.n)
        z = enc.steps if dn is None else enc.steps + dn.shares(enc.n, source)
        messages = cloak.cloak_encode(z, params, source)
        shuffled = cloak.cloak_shuffle(messages, source)
        integer_sum = cloak.cloak_analyze(shuffled, params)
        out = self.plan(enc.n, query)
        return _finish(out, enc.decode_sum(integer_sum), enc.upper - enc.lower, enc.n,
                       enc.clamped, source, query, enc.missing)


class BlanketProtocol:
    """BBGN19's single-message protocol (see :mod:`dpstudio.engine.shuffle.blanket`).

    Balle, Bell, Gascón & Nissim (CRYPTO 2019), "The Privacy Blanket of the Shuffle
    Model".

    Parameters
    ----------
    epsilon, delta : float
        The central guarantee; ε ≤ 1 (checked when parameters are chosen), δ > 0.
    precision : int
        ``k``: values are rounded to ``{0, …, k}``; 0 chooses ``k`` for the least error.
    confidence : float
        Level of the error bound, in (0, 1).

    Raises
    ------
    ParameterError
        For a bad ε, δ or confidence.
    """

    name = "blanket"

    def __init__(self, epsilon: float, delta: float, precision: int = 0,
                 confidence: float = 0.95):
        self.epsilon = validate_epsilon(epsilon)
        self.delta = validate_delta(delta, required=True)
        self.k = int(precision)
        self.confidence = _confidence(confidence)

    def parameters(self, n: int) -> blanket.BlanketParameters:
        """Blanket probability γ and precision k for ``n`` users.

        Parameters
        ----------
        n : int
            Number of users, ≥ 2.

        Returns
        -------
        BlanketParameters

        Raises
        ------
        ParameterError
            For fewer than 2 users, ε > 1, or too few users for γ < 1.
        """
        return blanket.blanket_parameters(int(n), self.epsilon, self.delta, self.k)

    def plan(self, n: int, query: str = "sum") -> ShuffleResult:
        """Report figures on the [0, 1] scale of the values (sum of n values in [0, 1]).

        Parameters
        ----------
        n : int
            Number of users.
        query : str
            ``"sum"`` or ``"mean"`` (a label here; scaling is the caller's).

        Returns
        -------
        ShuffleResult
            ``value`` None.

        Raises
        ------
        ParameterError
            As :meth:`parameters`.
        """
        params = self.parameters(n)
        var = params.variance()
        half = encoding.bernstein_half_width(var, params.term_range, 1.0 - self.confidence)
        # γ is calibrated for BBGN19's ε; FMT21 on each user's ε₀ may prove a smaller one
        # for the same messages: the smaller is stated (and charged).
        eps, bound = blanket.blanket_central_epsilon(params)
        how = ("each user's message is ε₀-LDP, amplified by shuffling (Feldman, McMillan & "
               "Talwar 2021), tighter here than Balle et al. 2019, Thm 3.1, which γ was "
               f"calibrated for (ε = {self.epsilon:g})") if bound == "fmt21" else (
               "Balle et al. 2019, Thm 3.1")
        return ShuffleResult(
            mechanism=self.name, query=query, value=None, stderr=math.sqrt(var),
            error_bound=half, confidence=self.confidence, epsilon=eps,
            delta=self.delta, n=params.n, messages_per_user=1,
            bits_per_message=params.bits_per_message,
            accounting=f"shuffled randomized response with blanket probability γ ({how})",
            details={"precision": params.k, "gamma": params.gamma, "bound": bound,
                     "calibrated_epsilon": self.epsilon},
        )

    def run(self, values, bounds, source: Source, query: str = "sum") -> ShuffleResult:
        """Randomize every user's message, shuffle the n messages, debias their sum.

        Parameters
        ----------
        values : array_like
            The column (missing values are sent as the middle of the bounds).
        bounds : tuple of float
            ``(lower, upper)``; values outside are clamped.
        source : Source
            The random source.
        query : str
            ``"sum"`` or ``"mean"``.

        Returns
        -------
        ShuffleResult
            In the values' units.

        Raises
        ------
        QueryError, ParameterError
            For missing or bad bounds, a non-numeric or empty column, or parameters that
            cannot be met.
        """
        from dpstudio.engine import sampling

        u, lo, hi, clamped, missing = encoding.unit_values(values, bounds)
        params = self.parameters(u.size)
        messages = blanket.blanket_randomize(u, params, source)
        shuffled = messages[sampling.permutation(messages.size, source)]
        estimate = blanket.blanket_analyze(shuffled, params)
        out = self.plan(u.size, query)
        total = u.size * lo + (hi - lo) * estimate
        return _finish(out, total, hi - lo, u.size, clamped, source, query, missing)


def _finish(out: ShuffleResult, total: float, width: float, n: int, clamped: int,
            source: Source, query: str, missing: int) -> ShuffleResult:
    scale = width / n if query == "mean" else width
    out._scale(scale)
    out.value = total / n if query == "mean" else total
    out.simulated = not source.is_secure
    out.source = source.label
    out.clamped, out.missing_count = clamped, missing
    # Unconditional: a note that appeared only when values are missing would say so.
    out.notes.append(encoding.MISSING_NOTE)
    return out


def _protocol(mechanism: str, epsilon: float, delta: float, params: dict[str, Any]):
    # This module's own entries, not the registry's: the registry imports this module.
    info = entry_named(ENTRIES, mechanism, "a shuffle-model mechanism")
    extra = {k: v for k, v in params.items() if k != "confidence"}
    resolved = info.resolve({**extra, "epsilon": epsilon, "delta": delta})
    return info.build(**resolved, confidence=params.get("confidence", 0.95))


def _check_query(query: str) -> None:
    if query not in QUERIES:
        raise QueryError(f"the shuffle protocols answer {', '.join(QUERIES)}; got {query!r}")


def run_shuffle_sum(values, bounds, mechanism: str, epsilon: float, delta: float,
                    source: Source, query: str = "sum", **params: Any) -> ShuffleResult:
    """Simulate ``cloak`` or ``blanket`` on a real column and report the sum (or mean).

    ``params`` are the entry's parameters (cloak: ``noise``, ``precision_bits``; blanket:
    ``precision``) and ``confidence`` (default 0.95).

    Parameters
    ----------
    values : array_like
        The column, one value per user.
    bounds : tuple of float
        Declared ``(lower, upper)``.
    mechanism : {"cloak", "blanket"}
        The protocol.
    epsilon, delta : float
        The central guarantee (replace-one neighbours).
    source : Source
        The random source (:class:`~dpstudio.engine.rng.SecureSource` for a release).
    query : {"sum", "mean"}
        What is released.
    **params
        See above.

    Returns
    -------
    ShuffleResult

    Raises
    ------
    QueryError, ParameterError
        For an unknown mechanism or query, bad parameters, bounds or column.
    """
    _check_query(query)
    return _protocol(mechanism, epsilon, delta, params).run(values, bounds, source, query)


def plan_shuffle_sum(n: int, bounds, mechanism: str, epsilon: float, delta: float,
                     query: str = "sum", **params: Any) -> ShuffleResult:
    """The report of :func:`run_shuffle_sum` for n users, without data or simulation.

    Parameters
    ----------
    n : int
        Number of users.
    bounds : tuple of float
        Declared ``(lower, upper)``: the errors are in the values' units.
    mechanism, epsilon, delta, query, **params
        As for :func:`run_shuffle_sum`.

    Returns
    -------
    ShuffleResult
        ``value`` None.

    Raises
    ------
    QueryError, ParameterError
        For an unknown mechanism or query, bad parameters or bounds.
    """
    _check_query(query)
    lo, hi = encoding.check_bounds(bounds)
    out = _protocol(mechanism, epsilon, delta, params).plan(int(n), query)
    out._scale((hi - lo) / out.n if query == "mean" else hi - lo)
    return out


# ------------------------------------------------------------------------------ registry

#: The registry entries of this module (registered by :mod:`dpstudio.engine.mechanisms`).
ENTRIES = (
    MechanismInfo(
        name="cloak",
        label="Invisibility cloak (multi-message)",
        description="Each user splits its noisy value into random shares mod q; the shuffled "
        "shares reveal only the sum.",
        trust_models=("shuffle",),
        value_types=("numeric", "integer", "boolean"),
        kind="randomizer",
        params=(
            EPSILON,
            DELTA,
            Param("noise", "choice", "skellam",
                  "Pre-randomizer shares: Skellam (exact accounting) or discrete Gaussian.",
                  choices=NOISES, label="noise shares"),
            Param("precision_bits", "int", 0,
                  "Values are rounded to 2^bits steps of their range; 0 chooses automatically.",
                  low=0, high=encoding.MAX_PRECISION_BITS, label="precision bits"),
        ),
        factory=lambda **kw: CloakProtocol(**kw),
        needs_delta=True,
        queries=QUERIES,
        references=("Ghazi, Pagh & Velingker 2019",
                    "Balle, Bell, Gascón & Nissim 2020 (reduction to DP)"),
    ),
    MechanismInfo(
        name="blanket",
        label="Privacy blanket (single message)",
        description="Each user sends its rounded value, or with probability γ a uniform one; "
        "the sum is debiased.",
        trust_models=("shuffle",),
        value_types=("numeric", "integer", "boolean"),
        kind="randomizer",
        params=(
            # ε at most 1: the privacy-blanket bound (Balle et al. 2019, Thm 3.1) is proved
            # only there, and the protocol refuses larger ε rather than extrapolate.
            replace(EPSILON, high=1.0),
            DELTA,
            Param("precision", "int", 0,
                  "Values are rounded to k + 1 levels 0..k; 0 chooses k for the least error.",
                  low=0, high=1 << 20, label="precision k"),
        ),
        factory=lambda **kw: BlanketProtocol(**kw),
        needs_delta=True,
        queries=QUERIES,
        references=("Balle, Bell, Gascón & Nissim 2019",),
    ),
)
