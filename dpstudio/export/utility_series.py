"""The report's utility figure: the expected error of a release at other values of ε.

One series per shape of result (:attr:`~dpstudio.export.report_input.ReportInput.shape`):
a central statistic (:func:`utility_series`), a local-model estimate
(:func:`local_utility_series`) and a model's coefficients (:func:`model_utility_series`).
Each is computed from the public release and its declaration only — never from the
data — so drawing it in a stakeholder report reveals nothing more than the release.
No Qt here: :mod:`dpstudio.export.report` draws the series.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from dpstudio.engine.local.respond import OTHER_LABEL, has_other_cell
from dpstudio.engine.queries import QuerySpec, noisy_statistics
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.utility import analytic_curve

__all__ = [
    "UtilitySeries",
    "epsilon_grid",
    "local_utility_series",
    "model_utility_series",
    "utility_series",
]


class UtilitySeries(NamedTuple):
    """Expected error against ε, as the report plots it (unpacks as a 5-tuple).

    Attributes
    ----------
    epsilon : numpy.ndarray
        The ε grid (:func:`epsilon_grid`), the released ε on it.
    error : numpy.ndarray
        The expected error at each ε of the grid.
    at_release : float
        The error at the released ε.
    ylabel : str
        The y-axis label.
    caption : str
        The figure's caption (plain text).
    """

    epsilon: np.ndarray
    error: np.ndarray
    at_release: float
    ylabel: str
    caption: str


def epsilon_grid(epsilon: float, upper: float, points: int = 41) -> np.ndarray:
    """A geometric ε grid from ε/10 to 10ε (capped at ``upper``) holding ε itself.

    Parameters
    ----------
    epsilon : float
        The released ε (> 0).
    upper : float
        Largest ε drawn, unless the released ε is larger (then the grid ends at it).
    points : int, optional
        Number of grid points (default 41).

    Returns
    -------
    numpy.ndarray
        Increasing ε values; the one nearest to ``epsilon`` (in log scale) is replaced by
        ``epsilon`` exactly, so the released value is read off the curve.
    """
    eps0 = float(epsilon)
    eps = np.geomspace(eps0 / 10.0, max(min(eps0 * 10.0, upper), eps0), points)
    eps[np.argmin(np.abs(np.log(eps / eps0)))] = eps0
    return eps


def utility_series(spec: QuerySpec, public: dict[str, Any], points: int = 41
                   ) -> UtilitySeries:
    """Expected error of a central release at each ε, from the release alone (no data).

    Counts, sums and histogram cells: the noise's standard deviation at each ε (exact
    for the continuous calibration). Means and variances: the released standard error
    rescaled by how the noise scale of their parts changes with ε — a function of the
    release only (post-processing), approximate like the delta method it comes from.
    Quantiles: the exponential mechanism's rank-error bound at the release's confidence.

    Parameters
    ----------
    spec : QuerySpec
        The release's query (mechanism, ε, δ, declared domain, relation, confidence).
    public : dict
        The release's public fields; means and variances read their ``variance``.
    points : int, optional
        Number of ε values (default 41).

    Returns
    -------
    UtilitySeries
        (ε grid, expected error, error at the released ε, y label, caption).
    """
    eps0 = float(spec.epsilon)
    eps = epsilon_grid(eps0, 100.0, points)
    info = REGISTRY.get(spec.mechanism)
    if spec.query in ("quantile", "median"):
        q = 0.5 if spec.query == "median" else float(spec.quantile)
        du = 1.0 if spec.relation == "replace" else max(q, 1.0 - q)
        m = int(info.resolve(spec.mechanism_params())["candidates"])
        beta = 1.0 - spec.confidence
        err = np.array([info.build(epsilon=float(e), sensitivity=du).utility_bound(m, beta)
                        for e in eps])
        at = float(info.build(epsilon=eps0, sensitivity=du).utility_bound(m, beta))
        return UtilitySeries(
            eps, err, at, "rank error bound (records)",
            f"With probability {spec.confidence:g} the released value's rank is within "
            "this many records of the requested one (exponential-mechanism bound).")
    if spec.query in ("count", "sum", "histogram"):
        err = analytic_curve(spec, eps, "rmse").error
        at = float(analytic_curve(spec, np.array([eps0]), "rmse").error[0])
        what = "per cell" if spec.query == "histogram" else "of the released value"
        return UtilitySeries(
            eps, err, at, "noise standard deviation",
            f"Standard deviation of the noise {what} at each ε (smaller ε: stronger "
            "privacy, more noise). This curve uses no data.")
    k = len(noisy_statistics(spec))  # the engine's split: 1 or 2 parts when n is public
    unit = replace(spec, query="count", bounds=None, delta=spec.delta / k, missing="drop",
                   impute=None)
    scale = analytic_curve(unit, eps / k, "rmse").error
    scale0 = float(analytic_curve(unit, np.array([eps0 / k]), "rmse").error[0])
    sd0 = math.sqrt(public["variance"]) if public.get("variance") is not None else math.nan
    err = sd0 * scale / scale0
    return UtilitySeries(
        eps, err, sd0, "standard error (approx.)",
        f"Approximate standard error of the {spec.query} at each ε: the released one, "
        "rescaled with the noise of its parts (delta method); a function of the release "
        "only.")


def local_utility_series(spec: QuerySpec, public: dict[str, Any], points: int = 41
                         ) -> UtilitySeries:
    """Standard error of a local-model estimate at each per-person ε, same reports.

    The protocol's exact standard error for the same number of reports (histograms:
    averaged over the cells, with the released counts plugged in). A function of the
    release only. ε is drawn up to 20 (randomizers are rarely run beyond).

    Parameters
    ----------
    spec : QuerySpec
        The release's query (randomizer, per-person ε, declared categories or bounds).
    public : dict
        The release's public fields: ``n`` and, for a histogram, ``unbiased`` counts.
    points : int, optional
        Number of ε values (default 41).

    Returns
    -------
    UtilitySeries
        (ε grid, standard error, standard error at the released ε, y label, caption);
        NaN where the protocol cannot take a parameter at that ε.
    """
    eps0 = float(spec.epsilon)
    eps = epsilon_grid(eps0, 20.0, points)
    info = REGISTRY.get(spec.mechanism)
    n = int(public.get("n") or 0)
    params = info.resolve(spec.mechanism_params())

    def stderr(e: float) -> float:
        try:
            p = params | {"epsilon": float(e)}
            if spec.query == "histogram":
                # The release randomizes over every released cell, the "other or
                # missing" one included (not over the declared categories alone).
                cells = list(spec.categories) + (
                    [OTHER_LABEL] if has_other_cell(spec.mechanism) else [])
                oracle = info.build(**p, k=len(cells))
                counts = np.clip(np.array([float(public["unbiased"].get(c, 0.0))
                                           for c in cells]), 0.0, n)
                return float(np.sqrt(np.mean(oracle.variance(n, counts))))
            return float(math.sqrt(info.build(**p, bounds=spec.bounds).variance(n)))
        except Exception:  # a parameter the protocol cannot take at this ε
            return math.nan

    err = np.array([stderr(e) for e in eps])
    at = stderr(eps0)
    what = "per cell (average)" if spec.query == "histogram" else "of the mean"
    return UtilitySeries(
        eps, err, at, "standard error",
        f"Standard error {what} of the local estimate at each per-person ε, for the same "
        f"{n} reports (the protocol's exact variance; smaller ε: stronger privacy, more "
        "noise).")


def model_utility_series(spec: QuerySpec, public: dict[str, Any], points: int = 41
                         ) -> UtilitySeries:
    """Per-coordinate noise scale of a model release at each ε (the calibration only).

    For the same n, λ and number of coefficients; no data.

    Parameters
    ----------
    spec : QuerySpec
        The release's query (ε, δ).
    public : dict
        The model's public fields: ``features``, ``n``, ``lambda``, ``noise_scale``,
        ``noise_family``.
    points : int, optional
        Number of ε values (default 41).

    Returns
    -------
    UtilitySeries
        (ε grid, noise scale, the released noise scale, y label, caption).
    """
    from dpstudio.engine.learning import calibrate_output_perturbation

    eps0 = float(spec.epsilon)
    eps = epsilon_grid(eps0, 100.0, points)
    p, n, lam = len(public["features"]) + 1, int(public["n"]), float(public["lambda"])

    def scale(e: float) -> float:
        return calibrate_output_perturbation(p, n, lam, float(e), float(spec.delta)).noise_scale

    err = np.array([scale(e) for e in eps])
    return UtilitySeries(
        eps, err, float(public["noise_scale"]), f"noise scale ({public['noise_family']})",
        f"Noise scale added to each normalized coefficient at each ε, for the same "
        f"{n} records and λ = {lam:g} (smaller ε: stronger privacy, more noise). This "
        "curve uses no data.")
