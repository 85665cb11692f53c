"""A release plan's split in closed form: each statistic's noise, interval half-width and
the ε an accuracy target needs, from the spec alone (never the data).

The noise is the continuous twin of what the engine draws: a count, sum, histogram cell
or grouped cell adds Laplace(b) or N(0, σ²) noise, b = Δ·c/ε and σ the analytic Gaussian
σ of ℓ₂ sensitivity Δ√c at (ε, δ) (``c`` coordinates change between neighbours: 2 for a
histogram or a grouped statistic under replace). The engine's integer noise lies on a
grid of at least 2^15 steps per scale (Laplace, Gaussian), where these are its quantiles
to far better than the tolerance of any target.

The half-width ``h`` at confidence ``c`` is the smallest with P(|error| ≤ h) = c:

- one noise: h = b·ln(1/(1 − c)) (Laplace), h = σ·z₍₁₊c₎/₂ (Gaussian);
- a mean whose number of rows is public (imputed values under replace): the sum's noise
  over the public n;
- a mean over a noisy count: error ≈ (Z_sum − m·Z_count)/n with the true mean m unknown,
  planned at its worst |m| = max(|lo|, |hi|) (so the target is met for every dataset of
  the planned size, to first order in the count's noise): the sum of two Laplaces of
  scales a and b has P(|X| > t) = (a²e^{−t/a} − b²e^{−t/b})/(a² − b²); of two Gaussians,
  σ² = σ_sum² + m²σ_count².

A mean's n is the plan's public ``rows`` (per group: ``rows`` over the number of groups);
without it a mean has no planned half-width. For the Laplace families h is proportional to
1/ε, so the ε of a target is h(ε = 1)/target exactly; for the Gaussian families ε is found
by bisection (h falls as ε grows).
"""

from __future__ import annotations

import math
from dataclasses import replace

from scipy.optimize import brentq
from scipy.special import ndtri

from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec, check_bounds, noisy_statistics
from dpstudio.engine.queries.grouped import grouped_sensitivities
from dpstudio.engine.registry import REGISTRY

__all__ = ["epsilon_for_target", "half_width", "noise_parts", "noise_sd", "split_weights"]

#: The range of ε searched for a Gaussian target.
_EPS_RANGE = (1e-6, 100.0)  # the engine's range of ε


def noise_parts(spec: QuerySpec, grouped: bool = False, max_rows: int = 1
                ) -> list[tuple[str, str, float]]:
    """The noises a statistic adds, each as its continuous twin's family and scale.

    Parameters
    ----------
    spec : QuerySpec
        A count, sum, mean or histogram at its share (ε, δ).
    grouped : bool, optional
        Whether it is grouped by declared keys (the noise of each cell).
    max_rows : int, optional
        A user-level plan's k (rows per person): every sensitivity × k, the coordinates
        unchanged (add-remove: a person's k rows move ℓ₁ and ℓ₂ by at most k × a row's,
        all in one cell being the worst case for ℓ₂). 1: row-level.

    Returns
    -------
    list of (str, str, float)
        (name, ``"laplace"`` or ``"gaussian"``, scale b or σ in value units), the budget
        split evenly over the parts as the engine splits it.

    Raises
    ------
    QueryError, ParameterError
        For a query with no closed form, or ε, δ out of range.
    """
    info = REGISTRY.get(spec.mechanism)
    if info.kind != "additive":
        raise QueryError(f"{info.label} has no closed-form error; plan with laplace or "
                         "gaussian")
    family = info.build(**info.resolve(spec.mechanism_params()))
    if grouped:
        parts = grouped_sensitivities(spec)
    elif spec.query == "histogram":
        parts = [("cell", 1.0, 2 if spec.relation == "replace" else 1)]
    elif spec.query in ("count", "sum", "mean"):
        parts = [(name, sens, 1) for name, _, _, sens in noisy_statistics(spec)]
    else:
        raise QueryError(f"a plan holds counts, sums, means and histograms, not a "
                         f"{spec.query}")
    k = len(parts)
    m = int(max_rows)
    return [(name, family.family,
             family.continuous_scale(m * sens, spec.epsilon / k, spec.delta / k, coords))
            for name, sens, coords in parts]


def noise_sd(family: str, scale: float) -> float:
    """Standard deviation of Laplace(b) (√2·b) or N(0, σ²) (σ).

    Parameters
    ----------
    family : str
        ``"laplace"`` or ``"gaussian"``.
    scale : float
        b or σ.

    Returns
    -------
    float
    """
    return math.sqrt(2.0) * scale if family == "laplace" else scale


def _single(family: str, scale: float, confidence: float) -> float:
    if family == "laplace":
        return scale * math.log(1.0 / (1.0 - confidence))
    return scale * float(ndtri(0.5 + confidence / 2.0))


def _two_laplace(a: float, b: float, confidence: float) -> float:
    """h with P(|aL₁ + bL₂| ≤ h) = confidence, L₁, L₂ independent standard Laplace."""
    if b <= 0:
        return _single("laplace", a, confidence)
    a, b = max(a, b), min(a, b)
    beta = 1.0 - confidence
    if abs(a - b) <= 1e-9 * a:
        def tail(t):
            return (2.0 + t / a) * math.exp(-t / a) / 2.0 - beta
    else:
        def tail(t):
            return (a * a * math.exp(-t / a) - b * b * math.exp(-t / b)) / (a * a - b * b) \
                - beta
    hi = a * (math.log(1.0 / beta) + 2.0 * math.log1p(1.0 / beta) + 10.0)
    return float(brentq(tail, 0.0, hi, xtol=1e-14 * hi, rtol=1e-13))


def half_width(spec: QuerySpec, grouped: bool = False, rows: float | None = None,
               max_rows: int = 1) -> float:
    """The planned half-width of a statistic's error at ``spec.confidence``.

    Parameters
    ----------
    spec : QuerySpec
        At its share (ε, δ); a histogram's or grouped statistic's is per cell.
    grouped : bool, optional
        Whether it is grouped by declared keys.
    rows : float, optional
        A mean's public number of rows (per group when grouped). Never read off the data.
    max_rows : int, optional
        A user-level plan's k (see :func:`noise_parts`).

    Returns
    -------
    float
        In the statistic's units; NaN for a mean without ``rows``.

    Raises
    ------
    QueryError, ParameterError
        As :func:`noise_parts`.
    """
    parts = {name: (fam, scale) for name, fam, scale in noise_parts(spec, grouped, max_rows)}
    c = float(spec.confidence)
    if spec.query != "mean":
        fam, scale = next(iter(parts.values()))
        return _single(fam, scale, c)
    if rows is None or not rows > 0:
        return math.nan
    n = float(rows)
    fam, s_sum = parts["sum"]
    if "count" not in parts:  # n public: the sum's noise over n
        return _single(fam, s_sum, c) / n
    lo, hi = check_bounds(spec.bounds)
    m = max(abs(lo), abs(hi))  # the worst mean: the plan holds whatever the data
    s_count = parts["count"][1]
    if fam == "laplace":
        return _two_laplace(s_sum / n, m * s_count / n, c)
    return math.hypot(s_sum, m * s_count) / n * float(ndtri(0.5 + c / 2.0))


def epsilon_for_target(spec: QuerySpec, target: float, grouped: bool = False,
                       rows: float | None = None, max_rows: int = 1) -> float:
    """The ε at which a statistic's planned half-width is ``target`` (its δ kept).

    Parameters
    ----------
    spec : QuerySpec
        The statistic (its ε is replaced; its δ and confidence are used).
    target : float
        The half-width wanted, > 0, in the statistic's units (per cell when grouped or a
        histogram).
    grouped : bool, optional
        Whether it is grouped.
    rows : float, optional
        A mean's public number of rows (per group when grouped).
    max_rows : int, optional
        A user-level plan's k (see :func:`noise_parts`).

    Returns
    -------
    float

    Raises
    ------
    QueryError
        In one sentence: a target that is not positive, a mean without public rows, or a
        Gaussian target out of reach.
    """
    if not (isinstance(target, int | float) and math.isfinite(target) and target > 0):
        raise QueryError(f"a target half-width must be a positive number, got {target!r}")
    if spec.query == "mean" and (rows is None or not rows > 0):
        raise QueryError("a target for a mean needs a public number of rows (rows = N in the "
                         "plan): a plan never reads ε off the private data")
    if REGISTRY.get(spec.mechanism).build(
            **REGISTRY.get(spec.mechanism).resolve(replace(spec, epsilon=1.0)
                                                   .mechanism_params())).family == "laplace":
        return half_width(replace(spec, epsilon=1.0), grouped, rows, max_rows) / target

    def gap(log_eps: float) -> float:
        eps = min(max(math.exp(log_eps), _EPS_RANGE[0]), _EPS_RANGE[1])  # exp(log x) ≠ x
        return math.log(half_width(replace(spec, epsilon=eps), grouped, rows, max_rows)
                        / target)

    lo, hi = (math.log(x) for x in _EPS_RANGE)
    try:
        g_lo, g_hi = gap(lo), gap(hi)
    except (QueryError, ValueError, ArithmeticError):
        g_lo = g_hi = math.nan
    if not (g_lo > 0 > g_hi):
        raise QueryError(f"no ε between {_EPS_RANGE[0]:g} and {_EPS_RANGE[1]:g} gives the "
                         f"{spec.query} of {spec.column} a half-width of {target:g} at δ = "
                         f"{spec.delta:g}")
    # The larger end of the bracket: its half-width is at most the target.
    root = brentq(gap, lo, hi, xtol=1e-12)
    eps = min(math.exp(root), _EPS_RANGE[1])
    while eps < _EPS_RANGE[1] and gap(math.log(eps)) > 0:
        eps = min(eps * (1 + 1e-12), _EPS_RANGE[1])
    return eps


def split_weights(weights: list[float], epsilon: float, delta: float,
                  takes_delta: list[bool]) -> list[tuple[float, float]]:
    """A total (ε, δ) split by weights: ε by every weight, δ among the statistics whose
    mechanism takes one (a pure mechanism's share of δ is 0).

    Parameters
    ----------
    weights : list of float
        One positive weight per statistic.
    epsilon, delta : float
        The total.
    takes_delta : list of bool
        Per statistic, whether its mechanism takes δ.

    Returns
    -------
    list of (float, float)
        (ε_i, δ_i); Σε_i = ε and Σδ_i = δ up to rounding (the plan charges its stated
        total, never less).

    Raises
    ------
    QueryError
        For weights that are not positive finite numbers, one per statistic.
    """
    if len(weights) != len(takes_delta):
        raise QueryError(f"give one weight per statistic ({len(takes_delta)}), got "
                         f"{len(weights)}")
    if any(isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w)
           or w <= 0 for w in weights):
        raise QueryError(f"weights must be positive numbers, got {list(weights)!r}")
    total = math.fsum(weights)
    d_total = math.fsum(w for w, t in zip(weights, takes_delta, strict=True) if t)
    return [(epsilon * w / total, delta * w / d_total if t and d_total > 0 else 0.0)
            for w, t in zip(weights, takes_delta, strict=True)]
