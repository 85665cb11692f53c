"""Empirical trade-off points: what an attacker actually achieves against a mechanism.

Draw outputs of a mechanism on two neighbouring inputs D and D′, run the likelihood-ratio
test "reject H0 (the data was D) when ln q(x)/p(x) > t" for several thresholds t, and
count its errors: α̂ = share of D's outputs rejected, β̂ = share of D′'s outputs accepted.
Exact Clopper–Pearson intervals bound each (:func:`dpstudio.engine.audit.clopper_pearson`),
so the points can be overlaid on the theoretical curve: an honest mechanism's boxes meet
its curve, and a box entirely *below* the claimed curve certifies (at the stated
confidence) that the claim is wrong. The likelihood-ratio test is the Neyman–Pearson test,
so with the true likelihood ratio the points lie on the mechanism's own curve.

:func:`simulate_attack` attacks one mechanism; :func:`simulate_laplace_parts_attack` a
release of several Laplace statistics at once (a mean is two noisy sums), whose curve
the engine composes (:mod:`dpstudio.engine.release_curve`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstudio.engine.audit import clopper_pearson
from dpstudio.engine.calibration import validate_epsilon, validate_sensitivity
from dpstudio.engine.checks import count, number
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.sampling import categorical_log, discrete_laplace
from dpstudio.engine.tradeoff import TradeoffCurve
from dpstudio.jobs import State, check

__all__ = [
    "ATTACKABLE",
    "EmpiricalTradeoff",
    "empirical_tradeoff",
    "simulate_attack",
    "simulate_laplace_parts_attack",
]

ATTACKABLE = ("gaussian", "laplace", "discrete_laplace", "rr", "krr")


@dataclass(frozen=True, eq=False)
class EmpiricalTradeoff:
    """Estimated (α, β) of likelihood-ratio tests, one per threshold, with intervals.

    Attributes
    ----------
    thresholds : numpy.ndarray
        One test "reject D when LLR > t" per threshold t.
    alpha, beta : numpy.ndarray
        Estimated type I errors (D's outputs rejected) and type II errors (D′'s accepted).
    alpha_low, alpha_high, beta_low, beta_high : numpy.ndarray
        Two-sided Clopper–Pearson intervals at ``confidence``: per point, or for all
        points at once when ``simultaneous`` (Bonferroni over the 2 × thresholds
        intervals).
    n_d, n_d2 : int
        Outputs drawn on D and on D′.
    confidence : float
        Level of the intervals.
    simultaneous : bool
        Whether the intervals hold together.
    label : str
        What was attacked, for plots and reports.
    """

    thresholds: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    alpha_low: np.ndarray
    alpha_high: np.ndarray
    beta_low: np.ndarray
    beta_high: np.ndarray
    n_d: int
    n_d2: int
    confidence: float
    simultaneous: bool
    label: str = ""

    def covers(self, curve: TradeoffCurve | Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Per point: does the curve pass through its confidence box?

        A decreasing continuous f meets [α_lo, α_hi] × [β_lo, β_hi] iff f(α_hi) ≤ β_hi and
        f(α_lo) ≥ β_lo.

        Parameters
        ----------
        curve : TradeoffCurve or callable
            The claimed trade-off function (a curve, or α ↦ β vectorized).

        Returns
        -------
        numpy.ndarray
            bool per threshold.
        """
        f = _as_function(curve)
        return (f(self.alpha_high) <= self.beta_high) & (f(self.alpha_low) >= self.beta_low)

    def below(self, curve: TradeoffCurve | Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Per point: is the whole box below the curve, i.e. β_hi < f(α_hi)?

        Then a test with type I error ≤ α_hi and type II error ≤ β_hi exists (at the stated
        confidence), which a mechanism satisfying f-DP cannot allow.

        Parameters
        ----------
        curve : TradeoffCurve or callable
            The claimed trade-off function (a curve, or α ↦ β vectorized).

        Returns
        -------
        numpy.ndarray
            bool per threshold: True certifies (at the confidence) that the claim is wrong.
        """
        return self.beta_high < _as_function(curve)(self.alpha_high)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary of the arrays (as lists) and the settings."""
        keys = ("thresholds", "alpha", "beta", "alpha_low", "alpha_high", "beta_low",
                "beta_high")
        out: dict[str, Any] = {k: getattr(self, k).tolist() for k in keys}
        out.update(n_d=self.n_d, n_d2=self.n_d2, confidence=self.confidence,
                   simultaneous=self.simultaneous, label=self.label)
        return out


def _as_function(curve) -> Callable[[np.ndarray], np.ndarray]:
    return curve.at if isinstance(curve, TradeoffCurve) else curve


def empirical_tradeoff(sample_d, sample_d2, log_likelihood_ratio: Callable | None,
                       thresholds, confidence: float = 0.95, *,
                       simultaneous: bool = False, label: str = "") -> EmpiricalTradeoff:
    """Errors of the tests "reject H0 when LLR(x) > t", estimated from samples.

    Parameters
    ----------
    sample_d, sample_d2 : array_like
        Outputs of the mechanism on D (H0) and on D′ (H1).
    log_likelihood_ratio : callable or None
        x ↦ ln(q(x)/p(x)) with p, q the output densities on D and D′ (vectorized); None
        when the samples already are log-likelihood ratios.
    thresholds : array_like of float
        One test per threshold t.
    confidence : float
        Level of each two-sided Clopper–Pearson interval (or of all together, see
        ``simultaneous``), in (0, 1).
    simultaneous : bool
        Whether the intervals hold for all points at once (Bonferroni).
    label : str
        What was attacked.

    Returns
    -------
    EmpiricalTradeoff

    Raises
    ------
    ParameterError
        For a confidence outside (0, 1), no outputs, or bad thresholds.
    """
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise ParameterError(f"confidence must lie in (0, 1), got {confidence!r}")
    x, y = np.ravel(sample_d), np.ravel(sample_d2)
    if x.size == 0 or y.size == 0:
        raise ParameterError("an attack needs outputs on both inputs")
    llr = (lambda v: v) if log_likelihood_ratio is None else log_likelihood_ratio
    lx = np.sort(np.asarray(llr(x), dtype=np.float64))
    ly = np.sort(np.asarray(llr(y), dtype=np.float64))
    t = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    if t.ndim != 1 or t.size == 0 or np.any(np.isnan(t)):
        raise ParameterError("thresholds must be a non-empty 1-D array of numbers")
    rejected_d = lx.size - np.searchsorted(lx, t, side="right")  # LLR > t under D
    accepted_d2 = np.searchsorted(ly, t, side="right")  # LLR ≤ t under D′
    tail = (1.0 - c) / 2.0
    if simultaneous:
        tail /= 2 * t.size
    a_lo, a_hi = clopper_pearson(rejected_d, lx.size, tail)
    b_lo, b_hi = clopper_pearson(accepted_d2, ly.size, tail)
    return EmpiricalTradeoff(t, rejected_d / lx.size, accepted_d2 / ly.size, a_lo, a_hi,
                             b_lo, b_hi, int(lx.size), int(ly.size), c, bool(simultaneous),
                             label)


def _numpy_generator(source) -> np.random.Generator:
    """A numpy generator seeded with 256 bits of ``source`` (reproducible for a seeded one)."""
    return np.random.Generator(np.random.PCG64([int(w) for w in source.uint64(4)]))


def _positive(params: Mapping[str, Any], name: str) -> float:
    """``params[name]`` as a finite float > 0 (the engine's one range validator)."""
    if name not in params:
        raise ParameterError(f"missing parameter {name!r}")
    return number(name, params[name], low=0.0, low_open=True)


def simulate_attack(mechanism_name: str, params: Mapping[str, Any], n: int, source,
                    thresholds=None, confidence: float = 0.95, *,
                    simultaneous: bool = False, state: State | None = None
                    ) -> EmpiricalTradeoff:
    """Run a mechanism ``n`` times on each of two neighbours and attack it (a simulation).

    Inputs: D has query value 0 (or user value 0) and D′ has Δ (user value 1).

    * ``gaussian`` (``sigma``, ``sensitivity`` = 1) and ``laplace`` (``scale``,
      ``sensitivity`` = 1): *continuous* floating-point draws of numpy's generator,
      seeded from 256 bits of ``source``. These are simulations, not releases, so the
      textbook samplers serve; the exact ones would only add cost. LLR:
      Δ(2x − Δ)/(2σ²) and (|x| − |x − Δ|)/b = (2 clip(x, 0, Δ) − Δ)/b.
    * ``discrete_laplace`` (``scale``, integer ``sensitivity`` = 1): the exact sampler
      :func:`~dpstudio.engine.sampling.discrete_laplace`; LLR (|x| − |x − Δ|)/scale.
    * ``rr`` (``epsilon``) and ``krr`` (``epsilon``, ``k``): the exact categorical sampler
      :func:`~dpstudio.engine.sampling.categorical_log` with weights e^ε on the true
      value; LLR ε on output 1, −ε on output 0, 0 elsewhere.

    Default thresholds: 25 from −μ²/2 − 3μ to μ²/2 + 3μ for the Gaussian (μ = Δ/σ),
    21 from −ε to just under ε for the Laplace ones (ε = Δ/scale), −ε/2 and ε/2 for
    randomized response (the corners of its curve).

    Parameters
    ----------
    mechanism_name : str
        One of :data:`ATTACKABLE`.
    params : mapping
        The mechanism's parameters, as above.
    n : int
        Draws per input.
    source : Source
        The random source (seeded for reproducible simulations).
    thresholds : array_like of float, optional
        The tests' thresholds; the defaults above when None.
    confidence : float
        Level of the Clopper–Pearson intervals.
    simultaneous : bool
        Whether the intervals hold for all points at once (Bonferroni).
    state : State, optional
        The job's state (:mod:`~dpstudio.jobs`): cancellation checked before and
        between the two inputs' draws and before the tests; progress after each. Each
        input's draws are one vectorized call (the same random stream with or without a
        state), so a cancellation takes effect between them.

    Returns
    -------
    EmpiricalTradeoff
        The tests' estimated errors with their intervals.

    Raises
    ------
    ParameterError
        For an unknown mechanism, a bad parameter, n or threshold.
    Cancelled
        If ``state`` is cancelled.
    """
    if mechanism_name not in ATTACKABLE:
        raise ParameterError(f"unknown mechanism {mechanism_name!r}; expected one of "
                             + ", ".join(ATTACKABLE))
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ParameterError(f"n must be a positive integer, got {n!r}")
    n = int(n)
    sens = params.get("sensitivity", 1.0)

    def drawn(fraction: float) -> None:
        check(state)
        if state is not None:
            state.progress(fraction, "attack: outputs drawn")

    if mechanism_name == "gaussian":
        sigma = _positive(params, "sigma")
        sens = validate_sensitivity(sens)
        gen = _numpy_generator(source)
        drawn(0.0)
        xd = gen.normal(0.0, sigma, n)
        drawn(0.45)
        xd2 = gen.normal(sens, sigma, n)
        mu = sens / sigma

        def llr(v):
            return sens * (2.0 * v - sens) / (2.0 * sigma * sigma)

        default = np.linspace(-mu * mu / 2 - 3 * mu, mu * mu / 2 + 3 * mu, 25)
    elif mechanism_name in ("laplace", "discrete_laplace"):
        scale = _positive(params, "scale")
        sens = validate_sensitivity(sens)
        if mechanism_name == "laplace":
            gen = _numpy_generator(source)
            drawn(0.0)
            xd = gen.laplace(0.0, scale, n)
            drawn(0.45)
            xd2 = gen.laplace(sens, scale, n)
        else:
            if sens != math.floor(sens):
                raise ParameterError("the discrete Laplace needs an integer sensitivity")
            drawn(0.0)
            xd = discrete_laplace(scale, n, source)
            drawn(0.45)
            xd2 = discrete_laplace(scale, n, source) + int(sens)

        def llr(v):
            # (|x| − |x−Δ|)/b written as (2·clip(x, 0, Δ) − Δ)/b: on both tails it is then
            # exactly ±ε (no rounding), so the atoms of the loss fall on the right side of
            # the thresholds ±ε.
            return (2.0 * np.clip(v, 0.0, sens) - sens) / scale

        eps = sens / scale
        default = np.linspace(-eps, eps, 22)[:-1]
    else:
        eps = validate_epsilon(params.get("epsilon"))
        k = 2 if mechanism_name == "rr" else params.get("k")
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
            raise ParameterError(f"k must be an integer ≥ 2, got {k!r}")
        logw = np.zeros(int(k))
        logw[0] = eps
        drawn(0.0)
        xd = categorical_log(logw, n, source)  # the user's value is 0 in D …
        drawn(0.45)
        xd2 = categorical_log(np.roll(logw, 1), n, source)  # … and 1 in D′

        def llr(v):
            return np.where(v == 1, eps, np.where(v == 0, -eps, 0.0))

        default = np.array([-eps / 2, eps / 2])
    t = default if thresholds is None else thresholds
    drawn(0.9)
    out = empirical_tradeoff(
        xd, xd2, llr, t, confidence, simultaneous=simultaneous,
        label=f"simulated attack on {mechanism_name} ({n} draws per input, {source!r})")
    if state is not None:
        state.progress(1.0, "attack: tests counted")
    return out


def simulate_laplace_parts_attack(part_epsilon: float, parts: int, n: int, source,
                                  thresholds=None, confidence: float = 0.95, *,
                                  simultaneous: bool = False, state: State | None = None
                                  ) -> EmpiricalTradeoff:
    """Attack a release of ``parts`` independent Laplace statistics at once (a simulation).

    A central mean is two noisy sums, a variance three, a histogram under ``replace``
    moves two cells: one person changes every part, each by its sensitivity Δ = 1, and
    each part carries Laplace noise of scale b = 1/ε_part. D has every part at 0, D′ every
    part at 1; the likelihood-ratio test sums the parts' losses,
    LLR = ε_part · Σ_i (2 clip(x_i, 0, 1) − 1), each term in [−ε_part, ε_part]. The sum is
    taken in units of ε_part, so the atoms of the loss (every part in a tail) land
    exactly on ±k·ε_part for k parts, on the right side of thresholds placed there.

    Parameters
    ----------
    part_epsilon : float
        ε of each part (the release's ε over ``parts``), > 0.
    parts : int
        Number of noisy statistics, ≥ 1.
    n : int
        Draws of the whole release per input.
    source : Source
        The random source: continuous floating-point draws of numpy's generator seeded
        from 256 bits of it (a simulation, not a release; the same seeded source gives
        the same points).
    thresholds : array_like of float, optional
        The tests' thresholds; by default 21 from −ε_part·parts to just under
        ε_part·parts.
    confidence : float
        Level of the Clopper–Pearson intervals.
    simultaneous : bool
        Whether the intervals hold for all points at once (Bonferroni).
    state : State, optional
        The job's state (:mod:`~dpstudio.jobs`): cancellation checked before and between
        the two inputs' draws and before the tests; progress after each.

    Returns
    -------
    EmpiricalTradeoff
        The tests' estimated errors with their intervals; with the true likelihood ratio
        the points lie on the ``parts``-fold composition of the Laplace curve.

    Raises
    ------
    ParameterError
        For a bad ε, number of parts, n or threshold.
    Cancelled
        If ``state`` is cancelled.
    """
    eps = number("part_epsilon", part_epsilon, low=0.0, low_open=True)
    k = count("parts", parts)
    n = count("n", n)
    scale = 1.0 / eps

    def drawn(fraction: float) -> None:
        check(state)
        if state is not None:
            state.progress(fraction, "attack: outputs drawn")

    gen = _numpy_generator(source)
    drawn(0.0)
    xd = gen.laplace(0.0, scale, (n, k))
    drawn(0.45)
    xd2 = gen.laplace(1.0, scale, (n, k))

    def llr(v: np.ndarray) -> np.ndarray:
        return (2.0 * np.clip(v, 0.0, 1.0) - 1.0).sum(axis=1) * eps

    total = eps * k
    t = np.linspace(-total, total, 22)[:-1] if thresholds is None else thresholds
    drawn(0.9)
    out = empirical_tradeoff(
        llr(xd), llr(xd2), None, t, confidence, simultaneous=simultaneous,
        label=f"simulated attack on {k} Laplace parts ({n} draws per input, {source!r})")
    if state is not None:
        state.progress(1.0, "attack: tests counted")
    return out
