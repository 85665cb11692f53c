"""What a central-model query asks for: :class:`QuerySpec`, its validation, and the
bounded sums its release is built from.

The vocabulary (:data:`QUERIES`, :data:`RELATIONS`, :data:`MISSING`), the declared
domain's checks (:func:`check_bounds`), the sensitivity of a bounded sum under each
neighbouring relation (:func:`sum_sensitivity`), the noisy statistics a count, sum, mean
or variance spends its budget on (:func:`noisy_statistics`) and the public statement of
the missing-value treatment (:func:`missing_statement`): everything that follows from
the spec alone, never from the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dpstudio.engine.calibration import check_budget_use, validate_delta, validate_epsilon
from dpstudio.engine.checks import bounds_pair
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.missing import midpoint
from dpstudio.engine.registry import REGISTRY

__all__ = [
    "MISSING",
    "QUERIES",
    "RELATIONS",
    "QuerySpec",
    "check_bounds",
    "missing_statement",
    "noisy_statistics",
    "sum_sensitivity",
]

QUERIES = ("count", "sum", "mean", "variance", "histogram", "quantile", "median")
RELATIONS = ("add-remove", "replace")
#: Treatments of missing values (empty, NaN, ±inf) in sums, means and variances.
MISSING = ("drop", "impute")
#: Queries built from bounded sums of the values, where the missing treatment applies.
_SUM_QUERIES = ("sum", "mean", "variance")


@dataclass(frozen=True)
class QuerySpec:
    """What to release: the query, its declared domain, the mechanism and the budget.

    Parameters
    ----------
    query : one of :data:`QUERIES`.
    mechanism : a registry name (``laplace``, ``gaussian``, …).
    epsilon, delta : the budget this release spends.
    bounds : declared (lower, upper) for numeric queries and binned histograms.
    categories : declared categories for a categorical histogram.
    bins : number of equal-width bins for a numeric histogram.
    quantile : q in [0, 1] for ``quantile`` (``median`` is q = 0.5).
    relation : neighbouring relation, ``add-remove`` (one record more or fewer) or
        ``replace`` (one record's value changed).
    confidence : level of the confidence intervals reported with the release.
    params : further mechanism parameters (e.g. ``calibration`` or ``candidates``).
    column : the column's name (for labels only).
    missing : what a sum, mean or variance does with missing values (empty, NaN, ±inf):
        ``drop`` them (the sensitivity under ``replace`` then covers a value appearing:
        max(hi − lo, |lo|, |hi|)) or ``impute`` the constant ``impute`` (every row
        contributes; under ``replace`` the number of rows is public).
    impute : the declared constant for ``missing="impute"``, inside the bounds; None means
        the midpoint of the bounds.
    """

    query: str
    mechanism: str
    epsilon: float
    delta: float = 0.0
    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None
    bins: int | None = None
    quantile: float | None = None
    relation: str = "add-remove"
    confidence: float = 0.95
    params: dict[str, Any] = field(default_factory=dict)
    column: str | None = None
    missing: str = "drop"
    impute: float | None = None

    def impute_value(self) -> float | None:
        """The constant imputed for missing values (``missing="impute"``), else None."""
        if self.missing != "impute" or self.bounds is None:
            return None
        if self.impute is not None:
            return float(self.impute)
        return midpoint(*check_bounds(self.bounds))

    def n_public(self) -> bool:
        """Whether the number of rows is public: imputed values and replace neighbours."""
        return self.missing == "impute" and self.relation == "replace"

    def mechanism_params(self) -> dict[str, Any]:
        """The mechanism's parameters: ``params`` with this spec's ε (and δ if it takes one)."""
        names = {p.name for p in REGISTRY.get(self.mechanism).params}
        budget = {"epsilon": self.epsilon, "delta": self.delta}
        return {**self.params, **{k: v for k, v in budget.items() if k in names}}

    def validated(self) -> QuerySpec:
        """Check every field; raise QueryError/ParameterError with a one-line message."""
        if self.query not in QUERIES:
            raise QueryError(f"unknown query {self.query!r} (choose from {', '.join(QUERIES)})")
        if self.relation not in RELATIONS:
            raise QueryError(f"relation must be add-remove or replace, got {self.relation!r}")
        validate_epsilon(self.epsilon)
        validate_delta(self.delta)
        if not (0.0 < float(self.confidence) < 1.0):
            raise QueryError(f"confidence must lie strictly between 0 and 1, got {self.confidence}")
        info = REGISTRY.get(self.mechanism)
        if "central" not in info.trust_models:
            raise QueryError(f"{self.mechanism} is not a central-model mechanism")
        if self.query not in info.queries:
            raise QueryError(
                f"{info.label} does not answer {self.query} queries "
                f"(it answers {', '.join(info.queries)})"
            )
        if info.needs_delta and not self.delta > 0:
            raise ParameterError(f"{info.label} needs δ > 0 (e.g. --delta 1e-6)")
        check_budget_use(info, self.epsilon, self.delta)
        info.resolve(self.mechanism_params())
        if self.bounds is not None:
            check_bounds(self.bounds)
        if self.query in ("sum", "mean", "variance", "quantile", "median") and self.bounds is None:
            raise QueryError(f"a {self.query} needs declared bounds (e.g. --bounds 0,100)")
        if self.query == "histogram":
            if self.categories is None and (self.bounds is None or self.bins is None):
                raise QueryError(
                    "a histogram needs declared categories (--categories a,b,c) "
                    "or declared bounds and a number of bins (--bounds 0,100 --bins 10)"
                )
            if self.categories is not None and len(set(self.categories)) != len(self.categories):
                raise QueryError("declared categories must be distinct")
            if self.categories is not None and len(self.categories) == 0:
                raise QueryError("declare at least one category")
            if self.categories is None and not (1 <= int(self.bins) <= 100_000):
                raise QueryError(f"bins must be between 1 and 100000, got {self.bins}")
        if self.query == "quantile":
            if self.quantile is None or not (0.0 <= float(self.quantile) <= 1.0):
                raise QueryError(f"quantile must be in [0, 1], got {self.quantile}")
        self._validate_missing()
        return self

    def _validate_missing(self) -> None:
        if self.missing not in MISSING:
            raise QueryError(f"missing must be drop or impute, got {self.missing!r}")
        if self.impute is not None and self.missing != "impute":
            raise QueryError("an imputed value needs missing = impute (--missing impute)")
        if self.missing != "impute":
            return
        if self.query not in _SUM_QUERIES:
            raise QueryError(f"imputing missing values applies to sum, mean and variance, "
                             f"not to a {self.query}")
        lo, hi = check_bounds(self.bounds)
        try:
            c = math.nan if isinstance(self.impute, bool) else self.impute_value()
        except (TypeError, ValueError):
            c = math.nan
        if not math.isfinite(c):
            raise QueryError(f"the imputed value must be a number, got {self.impute!r} "
                             f"(one inside the declared bounds [{lo:g}, {hi:g}])")
        if not lo <= c <= hi:
            raise QueryError(f"the imputed value {c:g} lies outside the declared bounds "
                             f"[{lo:g}, {hi:g}]: impute a value inside the declared bounds")


def check_bounds(bounds: tuple[float, float]) -> tuple[float, float]:
    """The declared bounds as floats.

    Parameters
    ----------
    bounds : tuple of float
        The declared (lower, upper).

    Returns
    -------
    tuple of float
        (lower, upper).

    Raises
    ------
    QueryError
        If a bound is not a finite number or lower > upper.
    """
    return bounds_pair(bounds)


def sum_sensitivity(lower: float, upper: float, relation: str, missing: str = "drop"
                    ) -> float:
    """Sensitivity of a sum of values in [lower, upper] under the neighbouring relation.

    Adding or removing one record moves the sum by at most max(|lower|, |upper|).
    Replacing one record's value moves it by at most upper − lower when every record
    contributes (``missing="impute"``); when missing values are dropped, a value may
    also appear or vanish (missing ↔ present), so by max(upper − lower, |lower|, |upper|).

    Parameters
    ----------
    lower, upper : float
        The declared bounds of each value.
    relation : str
        ``"add-remove"`` or ``"replace"``.
    missing : str
        ``"drop"`` or ``"impute"`` (see :data:`MISSING`).

    Returns
    -------
    float
        The largest change of the sum between neighbouring datasets.
    """
    if relation == "replace":
        if missing == "impute":
            return upper - lower
        return max(upper - lower, abs(lower), abs(upper))
    return max(abs(lower), abs(upper))


def noisy_statistics(spec: QuerySpec) -> list[tuple[str, float, float, float]]:
    """The bounded sums a count, sum, mean or variance adds noise to, from the spec alone.

    The release spends ε/k and δ/k on each of the k sums. Under ``replace`` with imputed
    values the number of rows is public, so a mean is one sum and a variance two (no
    noisy count).

    Parameters
    ----------
    spec : QuerySpec
        A count, sum, mean or variance.

    Returns
    -------
    list of (str, float, float, float)
        (name, lower, upper, sensitivity) of each noisy sum.

    Raises
    ------
    QueryError
        For other queries, or bounds that are not finite and ordered.
    """
    if spec.query == "count":
        return [("count", 0.0, 1.0, sum_sensitivity(0.0, 1.0, spec.relation))]
    if spec.query not in _SUM_QUERIES:
        raise QueryError(f"a {spec.query} is not built from bounded sums")
    lo, hi = check_bounds(spec.bounds)
    mode = spec.missing
    parts = [("sum", lo, hi)]
    if spec.query == "variance":
        sq_lo = 0.0 if lo <= 0.0 <= hi else min(lo * lo, hi * hi)
        parts.insert(0, ("sum of squares", sq_lo, max(lo * lo, hi * hi)))
    if spec.query in ("mean", "variance") and not spec.n_public():
        parts.append(("count", 0.0, 1.0))
    return [(name, a, b, sum_sensitivity(a, b, spec.relation, mode)) for name, a, b in parts]


def missing_statement(spec: QuerySpec) -> dict[str, Any] | None:
    """The public statement of how a sum, mean or variance treats missing values.

    Missing values are empty, NaN and ±inf. The statement is the one the release's
    ``missing`` field, the manifest and the report give: the declared procedure only,
    never how many were missing.

    Parameters
    ----------
    spec : QuerySpec
        The query.

    Returns
    -------
    dict or None
        ``treatment``, ``meaning``, ``sensitivity_rule`` (and ``value``, ``rows_public``
        when imputing); None for queries other than sum, mean and variance.
    """
    if spec.query not in _SUM_QUERIES:
        return None
    if spec.missing == "impute":
        c = spec.impute_value()
        public = spec.relation == "replace"
        return {"treatment": "impute", "value": c, "rows_public": public,
                "meaning": f"imputed as {c:g}, a declared constant inside the bounds: every "
                           "row contributes",
                "sensitivity_rule": "upper − lower (the number of rows is public)" if public
                else "max(|lower|, |upper|); the number of rows is private"}
    return {"treatment": "drop", "meaning": "dropped: missing values left out of the sums",
            "sensitivity_rule": "max(upper − lower, |lower|, |upper|): a value may appear "
                                "where one was missing" if spec.relation == "replace"
            else "max(|lower|, |upper|)"}

