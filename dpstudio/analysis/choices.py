"""The analyst's choices as one hashable snapshot, and what they resolve to in the registry.

:class:`Choices` is what every job of the analysis view takes: column and its declared
type, trust model, query, mechanism and parameters, ε and δ. This module also holds what
the choices offer (queries per column type, mechanisms per trust model), the ε grids of
the curves, and how the choices build the engine's objects: a central
:class:`~dpstudio.engine.queries.QuerySpec` (:meth:`Choices.spec`), a local randomizer
(:func:`build_randomizer`) and its per-row inputs (:func:`local_inputs`), and the ε a
release claims (:func:`release_epsilon`).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpstudio.engine.entry import DELTA, EPSILON
from dpstudio.engine.errors import EngineError
from dpstudio.engine.queries import QuerySpec, histogram_bins
from dpstudio.engine.registry import REGISTRY, MechanismInfo
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.tradeoff import alpha_grid
from dpstudio.engine.trust_models import TRUST_MODELS

__all__ = [
    "ALPHA",
    "EPS_MAX",
    "EPS_MIN",
    "LINE_EPSILONS",
    "MC_EPSILONS",
    "QUERIES_BY_TYPE",
    "VIEW_TRUST_MODELS",
    "Choices",
    "build_randomizer",
    "cell_labels",
    "comparison_settings",
    "fixed_epsilon",
    "is_histogram",
    "local_column",
    "local_inputs",
    "mechanisms_for",
    "registry_value_types",
    "release_epsilon",
    "resolved_params",
]

#: The trust models the analysis view offers, in the engine's order. Federated learning
#: releases a model, not a statistic of one column: it has no curve or preview here.
VIEW_TRUST_MODELS: tuple[str, ...] = tuple(t for t in TRUST_MODELS if t != "federated")

#: The ε the analysis view offers and draws: :data:`~dpstudio.engine.entry.EPSILON`'s shown
#: range (a display range; a release may use any valid ε).
EPS_MIN, EPS_MAX = EPSILON.shown_range
#: ε of the Monte-Carlo points (5 per decade) and of the analytic lines (20 per decade).
MC_EPSILONS = np.geomspace(EPS_MIN, EPS_MAX, 21)
LINE_EPSILONS = np.geomspace(EPS_MIN, EPS_MAX, 81)
#: Type I errors of the trade-off curves (denser near 0, where curves are steep).
ALPHA = alpha_grid(256)

#: Queries offered per declared column type, most useful first.
QUERIES_BY_TYPE = {
    "numeric": ("mean", "sum", "count", "variance", "median", "quantile", "histogram"),
    "categorical": ("histogram", "count"),
    "boolean": ("histogram", "count"),
    # Free text: only the local model's dictionary-free discovery of frequent words.
    "text": ("heavy_hitters",),
}


@dataclass(frozen=True)
class Choices:
    """A plain, hashable snapshot of the analyst's choices (what a job needs).

    Attributes
    ----------
    column : str
        The column's name.
    column_type : str
        Its declared type: numeric, categorical, boolean or text.
    value_types : tuple of str
        The registry value types the column's values fit (e.g. ``("integer", "numeric")``).
    trust_model, query, mechanism : str
        What is released, in which trust model, by which registry entry.
    epsilon, delta : float
        The release's ε and δ (δ counts only for a mechanism that takes one).
    params : tuple of (str, Any)
        The mechanism's parameters other than ε and δ, as sorted pairs.
    bounds : (float, float) or None
        The column's declared bounds (numeric columns).
    categories : tuple of str or None
        The declared categories (categorical and boolean columns).
    bins, quantile : int, float
        The histogram's bins and the quantile asked for, for those queries.
    relation : str
        The neighbouring relation, ``"add-remove"`` or ``"replace"``.
    confidence : float
        The confidence of the intervals shown.
    metric : str
        The utility curve's error metric.
    compositions : int
        How many releases the composed trade-off curve counts.
    missing, impute : str, float or None
        How a central sum, mean or variance treats missing values (the engine's
        :class:`QuerySpec` fields; ignored by other queries).
    """

    column: str
    column_type: str
    value_types: tuple[str, ...]
    trust_model: str
    query: str
    mechanism: str
    epsilon: float = EPSILON.default
    delta: float = DELTA.default
    params: tuple[tuple[str, Any], ...] = ()
    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None
    bins: int = 10
    quantile: float = 0.9
    relation: str = "add-remove"
    confidence: float = 0.95
    metric: str = "rmse"
    compositions: int = 10
    missing: str = "drop"
    impute: float | None = None

    @property
    def info(self) -> MechanismInfo:
        """The chosen mechanism's registry entry."""
        return REGISTRY.get(self.mechanism)

    @property
    def takes_delta(self) -> bool:
        """Whether the release is (ε, δ): the mechanism takes δ, or its trust model's
        releases all do (a local randomizer shuffled)."""
        from dpstudio.analysis.capabilities import capability

        return bool(self.info.needs_delta or capability(self.trust_model).needs_delta)

    @property
    def effective_delta(self) -> float:
        """δ if the release takes one (:attr:`takes_delta`), else 0 (pure ε-DP)."""
        return float(self.delta) if self.takes_delta else 0.0

    def param_dict(self) -> dict[str, Any]:
        """The mechanism's parameters (other than ε and δ) as a dict."""
        return dict(self.params)

    def spec(self, epsilon: float | None = None, mechanism: str | None = None,
             params: Mapping[str, Any] | None = None) -> QuerySpec:
        """The engine's QuerySpec for these choices (central model).

        Parameters
        ----------
        epsilon : float, optional
            ε of the spec; the chosen one by default.
        mechanism : str, optional
            Another registry entry than the chosen one.
        params : mapping, optional
            Its parameters; the chosen ones by default. Names the entry does not take,
            and ε and δ, are left out.

        Returns
        -------
        QuerySpec
            Not validated: the engine validates it when it runs.
        """
        mech = mechanism or self.mechanism
        info = REGISTRY.get(mech)
        names = {p.name for p in info.params}
        given = self.param_dict() if params is None else dict(params)
        given = {k: v for k, v in given.items() if k in names and k not in ("epsilon", "delta")}
        histogram = self.query == "histogram"
        categorical = self.column_type in ("categorical", "boolean")
        return QuerySpec(
            query=self.query, mechanism=mech,
            epsilon=float(self.epsilon if epsilon is None else epsilon),
            delta=float(self.delta) if (info.needs_delta or (
                mech == self.mechanism and self.takes_delta)) else 0.0,
            bounds=None if categorical else self.bounds,
            categories=self.categories if (histogram and categorical) else None,
            bins=int(self.bins) if (histogram and not categorical) else None,
            quantile=float(self.quantile) if self.query == "quantile" else None,
            relation=self.relation, confidence=float(self.confidence), params=given,
            column=self.column,
            missing=self.missing if self.query in ("sum", "mean", "variance") else "drop",
            impute=self.impute if self.query in ("sum", "mean", "variance") else None,
        )

    def utility_key(self) -> tuple:
        """Everything the utility curves depend on: not ε, k, confidence or display options.

        δ matters only for mechanisms that take it.
        """
        return (self.column, self.column_type, self.value_types, self.trust_model, self.query,
                self.mechanism, self.params, self.bounds, self.categories,
                self.bins if self.query == "histogram" else None,
                self.quantile if self.query == "quantile" else None, self.relation,
                self.metric, self.effective_delta, self.missing, self.impute)


def registry_value_types(column_type: str, values: np.ndarray | None = None) -> tuple[str, ...]:
    """The registry value types a column fits: whole-number numeric columns fit both.

    Parameters
    ----------
    column_type : str
        The declared type (numeric, categorical, boolean, text).
    values : numpy.ndarray, optional
        The column's values; without them a numeric column fits ``"numeric"`` only.

    Returns
    -------
    tuple of str
        ``("integer", "numeric")`` for a numeric column of whole numbers (non-finite
        values aside), ``("numeric",)`` for another numeric one, else ``(column_type,)``.
    """
    if column_type != "numeric":
        return (column_type,)
    if values is not None:
        v = np.asarray(values, dtype=np.float64)
        v = v[np.isfinite(v)]
        if v.size and np.all(v == np.floor(v)):
            return ("integer", "numeric")
    return ("numeric",)


def mechanisms_for(trust_model: str, value_types: tuple[str, ...], query: str,
                   cells: int | None = None) -> list[MechanismInfo]:
    """Registry entries for a trust model, any of the value types and the query (in order).

    Parameters
    ----------
    trust_model : str
        A trust model's name.
    value_types : tuple of str
        The registry value types the column fits (:func:`registry_value_types`).
    query : str
        The query's name.
    cells : int, optional
        The number of categories or bins of a histogram: randomizers that refuse that
        domain size (e.g. binary randomized response for six categories) are left out;
        each entry is built once with its defaults to ask it (cached).

    Returns
    -------
    list of MechanismInfo
        In the registry's order; for heavy hitters, the entries made for it first.
    """
    seen: dict[str, MechanismInfo] = {}
    for vt in value_types:
        for info in REGISTRY.select(trust_model=trust_model, value_type=vt, query=query):
            seen.setdefault(info.name, info)
    order = REGISTRY.names()
    out = sorted(seen.values(), key=lambda i: order.index(i.name))
    if query == "heavy_hitters":  # the entries made for it first (sfp before cms)
        out.sort(key=lambda i: i.queries != ("heavy_hitters",))
    if cells is not None and query == "histogram":
        out = [i for i in out if i.kind != "randomizer" or _takes_domain(i.name, int(cells))]
    return out


@functools.lru_cache(maxsize=256)
def _takes_domain(mechanism: str, k: int) -> bool:
    """Whether a randomizer entry builds for a domain of k values (at its defaults)."""
    info = REGISTRY.get(mechanism)
    try:
        info.build(**_accepted_kwargs(info.factory, {**info.resolve({}), "k": k}))
    except EngineError:
        return False
    except TypeError:
        return True  # it does not take k: not a frequency oracle, nothing to check
    return True


def _accepted_kwargs(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``kwargs`` that ``fn`` accepts (all of them if it takes **kwargs)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in sig.parameters}


# --------------------------------- the answer's cells; the column as a local release reads it


def is_histogram(s: Choices) -> bool:
    """Whether the answer is a histogram (counts per cell) rather than one number.

    Parameters
    ----------
    s : Choices

    Returns
    -------
    bool
        True for a histogram query, and for any query of a categorical or yes/no column.
    """
    return s.query == "histogram" or s.column_type not in ("numeric", "text")


def cell_labels(s: Choices) -> list[str]:
    """Cells of a histogram: declared categories, or the bins of the declared bounds.

    Parameters
    ----------
    s : Choices

    Returns
    -------
    list of str

    Raises
    ------
    EngineError
        For a numeric column whose bounds or bins the engine refuses.
    """
    if s.column_type in ("categorical", "boolean"):
        return [str(c) for c in (s.categories or ())]
    return histogram_bins(replace(s, query="histogram").spec())[0]


def _local_cells(s: Choices, mechanism: str | None = None) -> list[str]:
    """Cells of a local histogram: the declared ones, then "other or missing" (not rr)."""
    from dpstudio.engine.local import OTHER_LABEL
    from dpstudio.engine.local.respond import has_other_cell

    extra = [OTHER_LABEL] if has_other_cell(mechanism or s.mechanism) else []
    return cell_labels(s) + extra


def local_column(s: Choices, values: np.ndarray) -> np.ndarray:
    """The column as a local release reads it: one entry per row, missing ones included.

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray
        The column's values.

    Returns
    -------
    numpy.ndarray
        ``values`` itself, but for a numeric column's histogram: each present value's
        bin label (the declared bounds' bins; values outside fall in the edge bins) and
        None for a missing value.
    """
    if not (is_histogram(s) and s.column_type == "numeric"):
        return np.asarray(values)
    labels = np.asarray(cell_labels(s), dtype=object)
    _, edges = histogram_bins(replace(s, query="histogram").spec())
    x = np.asarray(values, dtype=np.float64)
    out = np.full(x.size, None, dtype=object)
    present = np.isfinite(x)
    cells = np.clip(np.searchsorted(edges, x[present], side="right") - 1, 0, len(edges) - 2)
    out[present] = labels[cells]
    return out


def local_inputs(s: Choices, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(truth, per-user inputs) of a local randomizer, one input per row as in a release.

    Parameters
    ----------
    s : Choices
        A local-model choice.
    values : numpy.ndarray
        The column's values.

    Returns
    -------
    truth : numpy.ndarray
        What the estimator targets. Histograms: the count per declared cell (and the
        "other or missing" one); binary randomized response: the declared count plus
        half of the others. Means: the mean of the inputs.
    inputs : numpy.ndarray
        Histograms: codes of the declared cells, the "other or missing" code for the
        rest (binary randomized response: a fair coin's code, drawn from a fixed seed).
        Means: the value clamped to the bounds, the bounds' middle for a missing one.

    Raises
    ------
    EngineError
        For a domain the engine refuses.
    """
    from dpstudio.engine.local.respond import has_other_cell, histogram_inputs, mean_inputs

    column = local_column(s, values)
    if is_histogram(s):
        labels = cell_labels(s)
        k = len(labels)
        exact = histogram_inputs(column, labels, SimulationSource(0), other=True).values
        counts = np.bincount(exact, minlength=k + 1).astype(np.float64)
        if has_other_cell(s.mechanism):
            return counts, exact
        coins = histogram_inputs(column, labels, SimulationSource(0), other=False).values
        return counts[:k] + counts[k] / 2.0, coins
    lo, hi = s.bounds
    x = np.clip(mean_inputs(column, lo, hi).values, lo, hi)
    return np.atleast_1d(float(x.mean()) if x.size else 0.0), x



# ------------------------------------------------------- what the choices build


def resolved_params(s: Choices, epsilon: float, mechanism: str | None = None
                    ) -> dict[str, Any]:
    """The entry's own parameters at ``epsilon``, validated by the registry.

    Parameters
    ----------
    s : Choices
    epsilon : float
        ε to set (where the entry takes one); δ is the chosen one.
    mechanism : str, optional
        Another entry than the chosen one: its defaults, not the chosen parameters.

    Returns
    -------
    dict
        Every parameter of the entry, defaults filled in.

    Raises
    ------
    EngineError
        For a value the entry refuses.
    """
    info = REGISTRY.get(mechanism or s.mechanism)
    names = {p.name for p in info.params}
    given = {k: v for k, v in s.param_dict().items() if k in names} if (
        info.name == s.mechanism) else {}
    if "epsilon" in names:
        given["epsilon"] = epsilon
    if "delta" in names:
        given["delta"] = s.delta
    return info.resolve(given)


def build_randomizer(s: Choices, epsilon: float, mechanism: str | None = None) -> Any:
    """Build a local randomizer entry for this column.

    Parameters
    ----------
    s : Choices
    epsilon : float
        The randomizer's ε.
    mechanism : str, optional
        Another local entry than the chosen one (at its defaults).

    Returns
    -------
    object
        The built oracle, for ``k`` cells (the declared ones and, but for binary
        randomized response, the "other or missing" one), for ``bounds``, or the
        sequence-fragment puzzle of a heavy-hitters query.

    Raises
    ------
    EngineError
        For parameters or a domain the entry refuses.
    """
    info = REGISTRY.get(mechanism or s.mechanism)
    kwargs = resolved_params(s, epsilon, info.name)
    if s.query == "heavy_hitters":
        from dpstudio.engine.local.entries import sfp_from_params

        return sfp_from_params(**kwargs)
    if is_histogram(s):
        kwargs["k"] = len(_local_cells(s, info.name))
    else:
        kwargs["bounds"] = s.bounds
    return info.build(**_accepted_kwargs(info.factory, kwargs))


@functools.lru_cache(maxsize=256)
def release_epsilon(s: Choices) -> float:
    """The ε this release claims and is charged: the built engine object's, not the slider's.

    They differ where a parameter fixes the guarantee: randomized response with a chosen
    p is ln(p/(1−p))-DP whatever the slider says (the project charges the same).

    Parameters
    ----------
    s : Choices

    Returns
    -------
    float
        The randomizer's own ε for a local release that builds, else ``s.epsilon``.
    """
    if s.trust_model != "local":
        return float(s.epsilon)
    try:
        return float(getattr(build_randomizer(s, float(s.epsilon)), "epsilon", s.epsilon))
    except (EngineError, TypeError, ValueError):
        return float(s.epsilon)


def fixed_epsilon(s: Choices) -> float | None:
    """The ε the mechanism's parameters fix whatever the slider says.

    Parameters
    ----------
    s : Choices

    Returns
    -------
    float or None
        Randomized response with a chosen p: ln(p/(1−p)); None when the slider's ε is
        the release's.
    """
    low = release_epsilon(replace(s, epsilon=EPS_MIN))
    high = release_epsilon(replace(s, epsilon=EPS_MAX))
    return low if math.isclose(low, high, rel_tol=1e-12) else None


def comparison_settings(s: Choices, models: tuple[str, ...] = VIEW_TRUST_MODELS
                        ) -> list[Choices]:
    """The same column and query under each trust model compared, like with like.

    Every one at the same ε and δ, replace-one neighbours and n known
    (:func:`~dpstudio.analysis.footing.like_for_like`). A central choice also gets the
    central model on that footing, for when its own relation or treatment of n differ
    (the utility view draws it only where it differs from the chosen line).

    Parameters
    ----------
    s : Choices
    models : tuple of str
        The trust models to compare with (the view's, by default).

    Returns
    -------
    list of Choices
        One per trust model that has a mechanism for the column and query, at that
        mechanism's default parameters, in the view's order.
    """
    from dpstudio.analysis.footing import like_for_like  # it builds on this module

    out = []
    for tm in VIEW_TRUST_MODELS:
        if tm not in models or (tm == s.trust_model and tm != "central"):
            continue
        other = like_for_like(s, tm)
        if other is not None:
            out.append(other)
    return out
