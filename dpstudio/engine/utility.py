"""Privacy–utility curves of the central model: error against ε, analytic and simulated.

The analytic curve is the noise's own error (no clamping bias), from the exact variance of
the integer noise each part of the release is calibrated to at each ε. The Monte-Carlo
curve draws the very release on the analyst's data many times and measures the error
against the true statistic of the present values, unclamped and not imputed, so the bias
of clamping and of imputation shows. It reads the rows once: a release is a function of
the column's clamped sufficient statistics (the bounded sums' distinct values and their
counts, a histogram's counts, a quantile's candidate scores) and of fresh randomness, so
each ε costs only noise draws (:class:`_Releases`), with exactly the distribution of
:func:`dpstudio.engine.queries.simulate_query`. Both are for the analyst's eyes: they use
the raw data and are never released.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import (
    QuerySpec,
    category_codes,
    delta_method_variance,
    histogram_bins,
    noisy_statistics,
    plan_sums,
    present_mask,
    sum_sensitivity,
)
from dpstudio.engine.queries.sums import _step_sensitivity
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.release_draws import ReleaseDraws
from dpstudio.engine.rng import Source
from dpstudio.engine.special import ndtri
from dpstudio.jobs import State, check

__all__ = ["METRICS", "ErrorCurve", "analytic_curve", "monte_carlo_curve", "true_value"]

METRICS = {
    "rmse": "root-mean-square error",
    "relative": "relative error (RMSE / |true value|)",
    "tv": "total-variation distance (histograms)",
    "ci_halfwidth": "half-width of the confidence interval",
}


@dataclass
class ErrorCurve:
    """Error of a release against ε; ``low``/``high`` bound a simulated point (≈95%).

    Attributes
    ----------
    label : str
        Legend text, e.g. ``"Laplace (analytic)"``.
    trust_model : str
        The trust model of the release (``"central"`` for the curves of this module).
    mechanism : str
        Registry name of the mechanism.
    metric : str
        A key of :data:`METRICS`.
    kind : str
        ``"analytic"`` or ``"monte-carlo"``.
    epsilon : numpy.ndarray, shape (n,)
        The ε of each point.
    error : numpy.ndarray, shape (n,)
        The error at each ε, in the values' units (``rmse``, ``ci_halfwidth``) or as a
        fraction (``relative``, ``tv``).
    low, high : numpy.ndarray, shape (n,), or None
        A ±2 standard-error band around a simulated point; None for analytic curves.
    """

    label: str
    trust_model: str
    mechanism: str
    metric: str
    kind: str  # "analytic" or "monte-carlo"
    epsilon: np.ndarray
    error: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None


def true_value(values: np.ndarray, spec: QuerySpec) -> np.ndarray:
    """The exact statistic of the present values (for measuring error; never released).

    Missing values (NaN, ±inf) are dropped and the values are not clamped, whatever the
    spec does with them: the truth is what the analyst wants to know, so an error
    measured against it includes the imputation's shift and the clamping's bias besides
    the release's noise.

    Parameters
    ----------
    values : array_like
        The analyst's column.
    spec : QuerySpec
        The release; its ``query`` (and bins, quantile) choose the statistic.

    Returns
    -------
    numpy.ndarray
        A 0-d array for scalar queries; for a histogram, one count per bin.

    Raises
    ------
    QueryError
        If a numeric query finds no finite value.
    """
    v = np.asarray(values)
    if spec.query == "histogram":
        labels, edges = histogram_bins(spec)
        if edges is None:
            return np.bincount(category_codes(v, labels)[0], minlength=len(labels))
        finite = v.astype(np.float64)
        finite = finite[np.isfinite(finite)]
        cells = np.clip(np.searchsorted(edges, finite, side="right") - 1, 0, len(labels) - 1)
        return np.bincount(cells, minlength=len(labels))
    if spec.query == "count":
        return np.asarray(float(np.count_nonzero(present_mask(v))))
    finite = v.astype(np.float64)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        raise QueryError("the column has no finite values")
    q = {"sum": np.sum, "mean": np.mean, "variance": np.var, "median": np.median}
    if spec.query == "quantile":
        return np.asarray(np.quantile(finite, float(spec.quantile)))
    return np.asarray(float(q[spec.query](finite)))


def _error(samples: np.ndarray, truth: np.ndarray, metric: str) -> tuple[float, float, float]:
    """(point, low, high) of the metric over simulated answers (rows = replications)."""
    if metric == "tv":
        if samples.ndim != 2:
            raise QueryError("total variation applies to histograms")
        per = 0.5 * np.abs(samples - truth).sum(axis=1) / max(float(truth.sum()), 1.0)
        mean, se = per.mean(), per.std(ddof=1) / math.sqrt(per.size)
        return float(mean), float(mean - 2 * se), float(mean + 2 * se)
    sq = (samples - truth) ** 2
    sq = sq.mean(axis=1) if sq.ndim == 2 else sq  # per-cell mean square for histograms
    mse, se = sq.mean(), sq.std(ddof=1) / math.sqrt(sq.size)
    point, low, high = (math.sqrt(max(x, 0.0)) for x in (mse, mse - 2 * se, mse + 2 * se))
    if metric == "relative":
        scale = float(np.abs(truth).mean()) or 1.0
        return point / scale, low / scale, high / scale
    if metric == "ci_halfwidth":
        raise QueryError("the interval half-width is analytic only")
    return point, low, high


def monte_carlo_curve(values: np.ndarray, spec: QuerySpec, epsilons: np.ndarray, reps: int,
                      source: Source, metric: str = "rmse", state: State | None = None,
                      label: str | None = None) -> ErrorCurve:
    """Simulated error of ``spec``'s release on ``values`` at each ε (``reps`` answers each).

    The rows are read once (:class:`~dpstudio.engine.release_draws.ReleaseDraws`); each ε
    then costs ``reps`` draws of the release's noise and rounding, whatever the number of
    rows, with exactly the distribution of a real release.

    Parameters
    ----------
    values : numpy.ndarray
        The analyst's column (never released).
    spec : QuerySpec
        The release; its ε is replaced by each of ``epsilons``.
    epsilons : array_like of float
        The ε values of the curve.
    reps : int
        Simulated answers per ε.
    source : Source
        The random source.
    metric : str
        One of :data:`METRICS` (not ``ci_halfwidth``, which is analytic only).
    state : State, optional
        The job's state (:mod:`~dpstudio.jobs`): cancellation checked before each
        ε, progress reported after each (reaching 1 with the last).
    label : str, optional
        The curve's label; by default the mechanism's, "(simulated)".

    Returns
    -------
    ErrorCurve
        The point estimate and a ±2 standard-error band at each ε.

    Raises
    ------
    QueryError, ParameterError
        For a bad spec, column or metric.
    Cancelled
        If ``state`` is cancelled.
    """
    eps = np.asarray(epsilons, dtype=np.float64)
    truth = true_value(values, spec)
    draws = ReleaseDraws(values, spec)  # the one pass over the rows
    points = np.empty((eps.size, 3))
    for i, e in enumerate(eps):
        check(state)
        sims = draws.draw(float(e), reps, source)
        points[i] = _error(sims, truth, metric)
        if state is not None:
            state.progress((i + 1) / eps.size)
    return ErrorCurve(label or f"{REGISTRY.get(spec.mechanism).label} (simulated)", "central",
                      spec.mechanism, metric, "monte-carlo", eps, points[:, 0], points[:, 1],
                      points[:, 2])


def analytic_curve(spec: QuerySpec, epsilons: np.ndarray, metric: str = "rmse",
                   values: np.ndarray | None = None, label: str | None = None) -> ErrorCurve:
    """Error of the noise alone at each ε, from the noise each part is calibrated to.

    ``values`` (the analyst's column) are needed for mean and variance (delta method at
    the true sums), relative error and total variation. Quantiles have no closed form:
    raises QueryError (use :func:`monte_carlo_curve`).

    Parameters
    ----------
    spec : QuerySpec
        The release, with an additive mechanism; its ε is replaced by each of
        ``epsilons`` (split evenly over the noisy sums of a mean or variance).
    epsilons : array_like of float
        The ε values of the curve.
    metric : str, optional
        One of :data:`METRICS`.
    values : numpy.ndarray, optional
        The analyst's column (never released).
    label : str, optional
        The curve's label; by default the mechanism's, "(analytic)".

    Returns
    -------
    ErrorCurve
        Without a band (``low`` and ``high`` are None).

    Raises
    ------
    QueryError
        For a non-additive mechanism, a quantile or median, a mean or variance without
        ``values``, or a metric that does not apply to the query.
    ParameterError
        For ε or δ out of range.
    """
    info = REGISTRY.get(spec.mechanism)
    if info.kind != "additive":
        raise QueryError(f"no analytic error for {info.label}; simulate it")
    eps = np.asarray(epsilons, dtype=np.float64)
    truth = None if values is None else true_value(values, spec)
    sums = None
    if spec.query in ("mean", "variance", "count", "sum"):
        if values is None and spec.query in ("mean", "variance"):
            raise QueryError(f"the analytic error of a {spec.query} needs the data")
        sums = plan_sums(values, spec) if values is not None else None
    out = np.array([_analytic_point(spec, float(e), metric, truth, sums) for e in eps])
    return ErrorCurve(label or f"{info.label} (analytic)", "central", spec.mechanism, metric,
                      "analytic", eps, out)


def _family(spec: QuerySpec, eps: float):
    info = REGISTRY.get(spec.mechanism)
    return info.build(**info.resolve(replace(spec, epsilon=eps).mechanism_params()))


def _part_sd(family, lo: float, hi: float, eps: float, delta: float, spec: QuerySpec
             ) -> float:
    """Standard deviation of the noise a release gives one bounded sum in [lo, hi].

    The integer mechanisms' noise is calibrated exactly as
    :func:`~dpstudio.engine.queries.sums._noisy_sums` does (grid, step sensitivity) and
    its exact variance taken: far narrower than the continuous twin's at large ε. The
    fine-grid ones (Laplace, Gaussian) have a scale of at least 2^15 steps, where the
    continuous formula is their variance to within 1e-9.
    """
    sens = sum_sensitivity(lo, hi, spec.relation, spec.missing)
    if sens == 0:
        raise QueryError("the declared bounds give this statistic zero sensitivity")
    if not family.integer_grid:
        return _sd(family, family.continuous_scale(sens, eps, delta))
    grid = family.grid(sens, eps, delta)
    steps = _step_sensitivity(math.floor(lo / grid), math.ceil(hi / grid), spec.relation,
                              spec.missing)
    return math.sqrt(family.calibrate(steps, grid, eps, delta).variance)


#: Above this scale (in grid steps) E|Z| of the integer noise is its continuous twin's to
#: well within 1e-6; below it the pmf is summed exactly.
_CONTINUOUS_STEPS = 64.0


def _histogram_cell(family, spec: QuerySpec, eps: float) -> tuple[float, float]:
    """(standard deviation, E|Z|) of a histogram cell's noise, as
    :func:`~dpstudio.engine.queries.histogram._histogram_parts` calibrates it (exact for
    the integer mechanisms, continuous for the fine-grid ones, as :func:`_part_sd`)."""
    coords = 2 if spec.relation == "replace" else 1
    if not family.integer_grid:
        scale = family.continuous_scale(1.0, eps, spec.delta, coords)
        # E|Z| is b for Laplace(b) and σ√(2/π) for N(0, σ²).
        mad = scale if family.family == "laplace" else scale * math.sqrt(2.0 / math.pi)
        return _sd(family, scale), mad
    grid = min(1.0, family.grid(1.0, eps, spec.delta, coords))
    noise = family.calibrate(int(round(1.0 / grid)), grid, eps, spec.delta, coords)
    t = noise.scale
    if t > _CONTINUOUS_STEPS:
        mad = t if noise.family == "laplace" else t * math.sqrt(2.0 / math.pi)
    else:
        k = np.arange(1, math.ceil(40.0 * t) + 41)
        mad = float(2.0 * np.sum(k * noise.pmf(k)))
    return math.sqrt(noise.variance), mad * noise.grid


def _analytic_point(spec: QuerySpec, eps: float, metric: str, truth, sums) -> float:
    family = _family(spec, eps)
    if spec.query == "histogram":
        sd, mad = _histogram_cell(family, spec, eps)
        if metric == "tv":
            cells = len(histogram_bins(spec)[0])
            total = float(np.sum(truth)) if truth is not None else 1.0
            return 0.5 * cells * mad / max(total, 1.0)
        return _finish(sd, metric, spec, truth)
    if spec.query in ("quantile", "median"):
        raise QueryError("quantiles have no analytic error curve; simulate them")
    parts = noisy_statistics(spec)  # the noisy sums, each with ε/k and δ/k
    k = len(parts)
    variances = {name: _part_sd(family, lo, hi, eps / k, spec.delta / k, spec) ** 2
                 for name, lo, hi, _ in parts}
    if sums is None:  # count or sum without the data: the noise is all there is
        return _finish(math.sqrt(variances[spec.query]), metric, spec, truth)
    # An exact public count (imputed values under replace) has no noise.
    variances.setdefault("count", 0.0)
    true_sums = {name: total for name, total, _ in sums}
    return _finish(math.sqrt(delta_method_variance(spec.query, true_sums, variances)), metric,
                   spec, truth)


def _sd(family, scale: float) -> float:
    """Standard deviation of continuous noise at ``scale`` (Laplace b: √2·b; Gaussian σ)."""
    return math.sqrt(2.0) * scale if family.family == "laplace" else scale


def _finish(sd: float, metric: str, spec: QuerySpec, truth) -> float:
    if metric == "rmse":
        return sd
    if metric == "relative":
        scale = float(np.abs(truth).mean()) if truth is not None else 0.0
        return sd / scale if scale else math.inf
    if metric == "ci_halfwidth":
        # Normal approximation of the half-width; the release reports the exact one.
        return sd * float(ndtri(0.5 + spec.confidence / 2))
    raise QueryError(f"metric {metric!r} does not apply to a {spec.query}")
