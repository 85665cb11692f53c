"""What the analysis view's jobs return, and the names its curves are shown under.

Plain dataclasses (no Qt): :class:`UtilityResult` (error against ε, a list of
:class:`Curve`), :class:`TradeoffResult` (curves on the unit square, each a
:class:`Line`, and a simulated attack's :class:`AttackPoints`) and :class:`Preview` (one
simulated release beside the truth). The labels (:func:`curve_name`, :func:`metric_label`)
are the legend texts the plots show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.trust_models import trust_model

if TYPE_CHECKING:
    from dpstudio.analysis.choices import Choices

__all__ = [
    "METRIC_LABELS",
    "AttackPoints",
    "Curve",
    "Line",
    "Preview",
    "TradeoffResult",
    "UtilityResult",
    "curve_name",
    "metric_label",
    "short",
    "trust_label",
]


@dataclass
class Curve:
    """One utility curve: error against ε (``low``/``high`` bound simulated points).

    Attributes
    ----------
    name : str
        Legend text (:func:`curve_name`).
    trust_model, mechanism : str
        Whose error it is.
    kind : str
        ``"analytic"`` (a line from the error model) or ``"simulation"`` (Monte-Carlo
        points).
    epsilon, error : numpy.ndarray
        The ε grid and the error at each ε, in the metric's units.
    low, high : numpy.ndarray or None
        Simulated points: the interval around each error.
    primary : bool
        True for the chosen mechanism, False for another trust model's, for comparison.
    noise_only : bool
        See below.
    assumptions : str
        One caption fragment: the curve's δ, neighbouring relation and whether n is
        known (e.g. "δ = 1e-6 · replace-one · n known").
    bias : float or None
        The clamping (and imputation) bias included in an analytic curve, in the column's
        units, measured on the data (analyst only); None where none is modelled.
    """

    name: str
    trust_model: str
    mechanism: str
    kind: str  # "analytic" or "simulation"
    epsilon: np.ndarray
    error: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    primary: bool = True
    #: An analytic line of the noise alone, where the release's expectation is not the
    #: truth (clamping, imputation): its value at ε is not the whole error. The lines now
    #: include the bias they model (``bias``), so this is False unless a caller builds one.
    noise_only: bool = False
    assumptions: str = ""
    bias: float | None = None
    #: Where an analytic line stops short of the plotted ε, and why
    #: (:class:`~dpstudio.analysis.reach.Unreached`); None where it covers them all.
    unreached: Any = None
    #: What the line computed at each ε where that changes along it (the central line of
    #: a comparison: :func:`~dpstudio.analysis.compare.computed_names`), else None.
    names: tuple[str | None, ...] | None = None


@dataclass
class UtilityResult:
    """Error against ε of the chosen mechanism and of the other trust models' ones.

    Attributes
    ----------
    key : tuple
        What the curves depend on (``Choices.utility_key()``): a cache key.
    metric, metric_label : str
        The error measure (``"rmse"``, ``"relative"``, ``"tv"``) and its axis label.
    curves : list of Curve
        The lines and points to plot.
    n : int
        Rows the errors are computed for.
    reps : int
        Monte-Carlo replications per ε (0 without simulation).
    notes : list of str
        What the plot should say.
    fixed_epsilon : float or None
        See below.
    caption : str
        One caption: the assumptions the compared curves share, and where a curve differs.
    clamping : dict or None
        Analyst only: ``fraction_outside`` (0..1 of the present values outside the
        declared bounds), ``bounds`` (lo, hi), ``bias`` (the release's bias, units of the
        statistic), ``warning`` (one sentence, or None while the bias is immaterial at
        ε = 1 and at most 5% of the values lie outside), ``material_from_epsilon`` (the
        smallest ε of the plot from which the bias is at least a tenth of the noise, or
        None); None when no value is clamped or the query has no bias model
        (:func:`dpstudio.analysis.bias.clamping_warning` gives the sentence at any ε).
    """

    key: tuple
    metric: str
    metric_label: str
    curves: list[Curve]
    n: int
    reps: int
    notes: list[str] = field(default_factory=list)
    #: The ε the mechanism's parameters fix (rr with a chosen p), else None: the marker
    #: then stands there, whatever the slider says.
    fixed_epsilon: float | None = None
    caption: str = ""
    clamping: dict | None = None


@dataclass
class Line:
    """One trade-off curve β = f(α).

    Attributes
    ----------
    label : str
        Legend text.
    alpha, beta : numpy.ndarray
        Type I errors and the smallest type II error at each.
    exact : bool
        False for an approximation (e.g. a pessimistic envelope, or an estimate).
    """

    label: str
    alpha: np.ndarray
    beta: np.ndarray
    exact: bool = True


@dataclass
class AttackPoints:
    """Empirical (α, β) of likelihood-ratio tests with Clopper–Pearson intervals.

    Attributes
    ----------
    label : str
        Legend text.
    alpha, beta : numpy.ndarray
        Each test's observed error rates.
    alpha_low, alpha_high, beta_low, beta_high : numpy.ndarray
        Their Clopper–Pearson intervals at ``confidence``.
    draws : int
        Seeded draws per neighbouring dataset.
    confidence : float
        The intervals' level.
    """

    label: str
    alpha: np.ndarray
    beta: np.ndarray
    alpha_low: np.ndarray
    alpha_high: np.ndarray
    beta_low: np.ndarray
    beta_high: np.ndarray
    draws: int
    confidence: float


@dataclass
class TradeoffResult:
    """What an attacker can do at one ε: the bound, the release's curve, μ, k releases.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee the release claims.
    compositions : int
        ``k``, the number of releases composed.
    bound : Line
        The (ε, δ)-DP bound f_{ε,δ}.
    mechanism : Line or None
        The release's own curve, where the engine computes it.
    gdp : Line or None
        The Gaussian-DP curve G_μ.
    mu : float or None
        Its μ.
    composed : Line or None
        The curve of ``k`` releases.
    attack : AttackPoints or None
        A simulated likelihood-ratio attack.
    notes : list of str
        What is exact and what is simulated.
    """

    epsilon: float
    delta: float
    compositions: int
    bound: Line
    mechanism: Line | None
    gdp: Line | None
    mu: float | None
    composed: Line | None
    attack: AttackPoints | None
    notes: list[str] = field(default_factory=list)


@dataclass
class Preview:
    """One simulated release and the truth it estimates (the truth is for the analyst).

    Attributes
    ----------
    query, mechanism, trust_model : str
        What was simulated.
    epsilon, delta : float
        The release's guarantee.
    labels : list of str or None
        Cells of a histogram, None for one number.
    value : numpy.ndarray
        The simulated release (one entry per cell, or one).
    ci_low, ci_high : numpy.ndarray or None
        Its interval at ``confidence``.
    truth : numpy.ndarray
        The statistic without noise (analyst-only).
    confidence : float
        The intervals' level.
    source : str
        The random source's label.
    seed : int
        The simulation's seed.
    noise_scale, sensitivity : float or None
        Central releases: the noise scale and the sensitivity.
    clamped : int
        Values clamped to the bounds (analyst-only).
    notes : list of str
        The release's notes.
    simulated : bool
        Always True: a preview is never a release.
    n, imputation_shift
        See below.
    """

    query: str
    mechanism: str
    trust_model: str
    epsilon: float
    delta: float
    labels: list[str] | None  # cells of a histogram, None for one number
    value: np.ndarray
    ci_low: np.ndarray | None
    ci_high: np.ndarray | None
    truth: np.ndarray
    confidence: float
    source: str
    seed: int
    noise_scale: float | None = None
    sensitivity: float | None = None
    clamped: int = 0
    notes: list[str] = field(default_factory=list)
    simulated: bool = True
    #: Number of reports of a local release (every row sends one), else None.
    n: int | None = None
    #: Imputed-column statistic minus the present values' (central imputation; analyst
    #: only), else None.
    imputation_shift: float | None = None


METRIC_LABELS = {
    "rmse": "RMSE",
    "relative": "relative error",
    "tv": "total-variation distance",
}


def metric_label(s: Choices) -> str:
    """The utility plot's axis label: the error measure of what is released.

    Parameters
    ----------
    s : Choices
        The analysis view's choices (its ``metric`` and ``query`` are read).

    Returns
    -------
    str
        E.g. "RMSE of the mean", "total-variation distance of the counts".
    """
    what = {"histogram": "counts", "heavy_hitters": "word counts"}.get(s.query, s.query)
    base = METRIC_LABELS.get(s.metric, s.metric)
    return f"{base} of the {what}"


def short(label: str, width: int = 26) -> str:
    """A mechanism's label cut to ``width`` characters for legends.

    Parameters
    ----------
    label : str
        A mechanism's label.
    width : int
        Most characters kept, the ellipsis included.

    Returns
    -------
    str
        ``label`` itself if it fits, else its start and an ellipsis.
    """
    return label if len(label) <= width else label[: width - 1].rstrip() + "…"


def trust_label(tm: str) -> str:
    """A trust model's name for people, from the engine's table.

    Parameters
    ----------
    tm : str
        A trust model's name.

    Returns
    -------
    str
        Its label ("Central"); an unknown name title-cased.
    """
    try:
        return trust_model(tm).label
    except ParameterError:
        return tm.title()


def curve_name(trust_model: str, label: str, kind: str) -> str:
    """Legend name of a utility curve.

    Parameters
    ----------
    trust_model : str
        The curve's trust model.
    label : str
        The mechanism's label.
    kind : str
        ``"simulated"`` (the Monte-Carlo points of the chosen mechanism), ``"bound"`` (a
        protocol's planned error), ``"like"`` (the central model on a comparison's
        footing, beside the chosen central line) or anything else for an analytic line.

    Returns
    -------
    str
        Trust model and mechanism, or "<trust model>: simulated releases".
    """
    if kind == "simulated":
        return f"{trust_label(trust_model)}: simulated releases"
    suffix = {"bound": " (bound)", "like": " (like for like)"}.get(kind, "")
    return f"{trust_label(trust_model)}: {short(label, 30)}{suffix}"
