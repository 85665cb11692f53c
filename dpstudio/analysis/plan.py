"""Release plans: several statistics under one budget, split by weights or accuracy targets.

A :class:`ReleasePlan` holds statistics (:class:`PlanStatistic`: a column, a query —
count, sum, mean or histogram —, declared bounds or categories, optionally grouped ``by``
one or two columns whose keys are declared, optionally a ``target`` half-width) and a
total (ε, δ), split

- by **weights** (``method = "weights"``): statistic i gets ε·wᵢ/Σw (δ likewise among
  the statistics whose mechanism takes one); equal weights when none are given;
- by **accuracy** (``method = "accuracy"``): each statistic gets the ε at which its
  planned interval half-width at the plan's confidence is its ``target``
  (:mod:`~dpstudio.analysis.plan_split`, closed forms of the noise); the total is their
  sum, refused in one sentence when it is more than the plan's ε.

Nothing here reads the data to choose ε: a mean's target needs the plan's public
``rows``. The data enter only :meth:`ReleasePlan.expected_errors`, for the analyst's
table (the clamping bias, and the delta method at the true sums, as the analysis layer's
utility view shows them).

Completed from the declared schema by
:func:`~dpstudio.analysis.plan_resolve.resolve_plan`. For a GUI table: build with
:func:`~dpstudio.analysis.plan_resolve.plan_from_rows`, change the split with
:meth:`ReleasePlan.with_weights` / :meth:`ReleasePlan.with_method`, read
:meth:`ReleasePlan.shares`, :meth:`ReleasePlan.expected_errors` and
:meth:`ReleasePlan.refusal` (None, or the sentence to show).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpstudio.analysis.plan_split import (
    epsilon_for_target,
    half_width,
    noise_parts,
    noise_sd,
    split_weights,
)
from dpstudio.engine.errors import EngineError, QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY

__all__ = ["METHODS", "PLAN_QUERIES", "ExpectedError", "PlanError", "PlanStatistic",
           "PlanTable", "ReleasePlan"]

METHODS = ("weights", "accuracy")
PLAN_QUERIES = ("count", "sum", "mean", "histogram")


class PlanError(QueryError):
    """A plan that cannot be released, in one sentence.

    Attributes
    ----------
    args : tuple of str
        The sentence.
    """


@dataclass(frozen=True)
class PlanStatistic:
    """One statistic of a plan.

    Attributes
    ----------
    column : str
        The value column.
    query : str
        ``count``, ``sum``, ``mean`` or ``histogram``.
    bounds : (float, float) or None
        Declared bounds (sum, mean, binned histogram).
    categories : tuple of str or None
        Declared categories (categorical histogram).
    by : tuple of str
        Zero, one or two key columns (count, sum, mean); their keys are declared.
    target : float or None
        The interval half-width wanted at the plan's confidence (per cell for a histogram
        or a grouped statistic).
    mechanism : str or None
        ``laplace`` (default), ``gaussian``, ``discrete_laplace`` or
        ``discrete_gaussian``; None: the plan's.
    bins : int or None
        A binned histogram's bins.
    missing, impute
        A sum's or mean's missing-value treatment (the engine's).
    """

    column: str
    query: str
    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None
    by: tuple[str, ...] = ()
    target: float | None = None
    mechanism: str | None = None
    bins: int | None = None
    missing: str = "drop"
    impute: float | None = None

    @property
    def label(self) -> str:
        """``"mean of age by region"``: the statistic in words.

        Returns
        -------
        str
        """
        text = f"{self.query} of {self.column}"
        return text + (f" by {' and '.join(self.by)}" if self.by else "")


@dataclass(frozen=True)
class ExpectedError:
    """One statistic's accuracy at its share (one row of a plan table).

    Attributes
    ----------
    label : str
        The statistic in words.
    epsilon, delta : float
        Its share.
    half_width : float
        The planned interval half-width at the plan's confidence, from the spec alone
        (per cell for a histogram or grouped statistic; NaN for a mean without rows).
    noise : float
        The noise's root-mean-square error (per cell), with the true sums where data
        were given (the analysis layer's analytic line), else planned.
    bias : float or None
        The clamping (and imputing) bias measured on the data (analyst only); None
        without data or where the analysis layer has none.
    expected : float
        √(noise² + bias²): the analysis layer's expected error.
    target : float or None
        The statistic's target half-width.
    note : str
        What the numbers assume, in one sentence ("" when nothing).
    """

    label: str
    epsilon: float
    delta: float
    half_width: float
    noise: float
    bias: float | None
    expected: float
    target: float | None
    note: str = ""


@dataclass(frozen=True)
class PlanTable:
    """What a plan table shows: one row per statistic, the total, and a refusal.

    Attributes
    ----------
    rows : list of ExpectedError
        Each statistic at its share; with an accuracy split the budget cannot buy, at the
        ε its target needs (so the table shows what it would take); empty when no share
        can be computed.
    total : (float, float) or None
        The (ε, δ) the plan spends (for accuracy, what the targets need).
    refusal : str or None
        Why the plan cannot be released as it stands, in one sentence.
    """

    rows: list[ExpectedError]
    total: tuple[float, float] | None
    refusal: str | None


@dataclass(frozen=True)
class ReleasePlan:
    """Several statistics and a split of one total (ε, δ).

    Attributes
    ----------
    statistics : tuple of PlanStatistic
        At least one.
    epsilon, delta : float
        The total budget of the plan (with ``accuracy``, the most its targets may need).
    method : str
        ``weights`` or ``accuracy``.
    weights : tuple of float or None
        One per statistic (``weights``; None: equal).
    confidence : float
        The confidence of targets and intervals.
    relation : str
        The neighbouring relation (the dataset's).
    mechanism : str
        The default mechanism of its statistics.
    rows : int or None
        A public number of rows (a mean's error needs it); never read off the data.
    keys : mapping of str to tuple of str
        The declared keys of each ``by`` column (:func:`resolve_plan` fills them).
    max_rows : int or None
        A user-level plan's declared k (rows per person, bounded once for the whole plan
        before any statistic): every sensitivity, target and error is k × a row's. None:
        row-level.
    """

    statistics: tuple[PlanStatistic, ...]
    epsilon: float
    delta: float = 0.0
    method: str = "weights"
    weights: tuple[float, ...] | None = None
    confidence: float = 0.95
    relation: str = "add-remove"
    mechanism: str = "laplace"
    rows: int | None = None
    keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    max_rows: int | None = None

    # ------------------------------------------------------------------ editing

    def with_weights(self, weights: Sequence[float]) -> ReleasePlan:
        """The same plan split by these weights.

        Parameters
        ----------
        weights : sequence of float
            One positive weight per statistic.

        Returns
        -------
        ReleasePlan
        """
        return replace(self, method="weights", weights=tuple(float(w) for w in weights))

    def with_method(self, method: str) -> ReleasePlan:
        """The same plan split by ``method`` (``weights`` or ``accuracy``).

        Parameters
        ----------
        method : str

        Returns
        -------
        ReleasePlan

        Raises
        ------
        PlanError
            For another method.
        """
        if method not in METHODS:
            raise PlanError(f"split method must be weights or accuracy, got {method!r}")
        return replace(self, method=method)

    def with_targets(self, targets: Sequence[float | None]) -> ReleasePlan:
        """The same plan with these target half-widths (None: no target).

        Parameters
        ----------
        targets : sequence of float or None

        Returns
        -------
        ReleasePlan
        """
        stats = tuple(replace(s, target=None if t is None else float(t))
                      for s, t in zip(self.statistics, targets, strict=True))
        return replace(self, statistics=stats)

    # ---------------------------------------------------------------- the split

    def mechanism_of(self, i: int) -> str:
        """The mechanism of statistic ``i``.

        Parameters
        ----------
        i : int

        Returns
        -------
        str
        """
        return self.statistics[i].mechanism or self.mechanism

    def _takes_delta(self) -> list[bool]:
        return [REGISTRY.get(self.mechanism_of(i)).needs_delta
                for i in range(len(self.statistics))]

    def query_spec(self, i: int, epsilon: float | None = None,
                   delta: float | None = None) -> QuerySpec:
        """Statistic ``i`` as the engine's QuerySpec at its share (or the given ε, δ).

        Parameters
        ----------
        i : int
        epsilon, delta : float, optional
            Instead of the share.

        Returns
        -------
        QuerySpec
            Not validated.
        """
        s = self.statistics[i]
        if epsilon is None or delta is None:
            e, d = self.shares()[i]
            epsilon = e if epsilon is None else epsilon
            delta = d if delta is None else delta
        numeric = s.query in ("sum", "mean") or (s.query == "histogram" and s.bins)
        return QuerySpec(
            query=s.query, mechanism=self.mechanism_of(i), epsilon=float(epsilon),
            delta=float(delta), bounds=s.bounds if numeric else None,
            categories=s.categories if s.query == "histogram" else None,
            bins=s.bins if s.query == "histogram" else None, relation=self.relation,
            confidence=float(self.confidence), column=s.column,
            missing=s.missing if s.query in ("sum", "mean") else "drop",
            impute=s.impute if s.query in ("sum", "mean") else None)

    @property
    def k(self) -> int:
        """The factor on every sensitivity: ``max_rows``, or 1 for a row-level plan.

        Returns
        -------
        int
        """
        return 1 if self.max_rows is None else int(self.max_rows)

    def group_rows(self, i: int) -> float | None:
        """The public rows a mean's error is planned with (per group: spread evenly).

        Parameters
        ----------
        i : int

        Returns
        -------
        float or None
        """
        if self.rows is None:
            return None
        s = self.statistics[i]
        groups = math.prod(len(self.keys.get(b, ())) or 1 for b in s.by)
        return float(self.rows) / groups

    def needed(self) -> list[tuple[float, float]]:
        """Each statistic's (ε, δ) for its target (the ``accuracy`` split, before the
        budget check).

        Returns
        -------
        list of (float, float)

        Raises
        ------
        PlanError
            For a statistic without a target, or a target no ε reaches.
        """
        takes = self._takes_delta()
        n_delta = sum(takes)
        out = []
        for i, s in enumerate(self.statistics):
            if s.target is None:
                raise PlanError(f"statistic {i + 1} ({s.label}) has no target: with method = "
                                "\"accuracy\" every statistic needs a target half-width")
            d = self.delta / n_delta if takes[i] and n_delta else 0.0
            spec = self.query_spec(i, 1.0, d)
            try:
                e = epsilon_for_target(spec, float(s.target), bool(s.by), self.group_rows(i),
                                       self.k)
            except EngineError as exc:
                raise PlanError(f"statistic {i + 1} ({s.label}): {exc}") from None
            out.append((e, d))
        return out

    def shares(self) -> list[tuple[float, float]]:
        """Each statistic's (ε, δ).

        Returns
        -------
        list of (float, float)

        Raises
        ------
        PlanError
            In one sentence: bad weights, a missing target, or targets the budget cannot
            buy.
        """
        if self.method == "accuracy":
            need = self.needed()
            total = math.fsum(e for e, _ in need)
            if total > self.epsilon:
                raise PlanError(
                    f"the targets need ε = {total:.4g} in total, more than the plan's ε = "
                    f"{self.epsilon:g}: widen the targets, lower the confidence or raise "
                    "the budget")
            return need
        if self.method != "weights":
            raise PlanError(f"split method must be weights or accuracy, got {self.method!r}")
        weights = self.weights or (1.0,) * len(self.statistics)
        try:
            return split_weights(list(weights), self.epsilon, self.delta,
                                 self._takes_delta())
        except QueryError as exc:
            raise PlanError(str(exc)) from None

    def total(self) -> tuple[float, float]:
        """The (ε, δ) the plan spends: its stated total for weights, the targets' sum for
        accuracy.

        Returns
        -------
        (float, float)

        Raises
        ------
        PlanError
            As :meth:`shares`.
        """
        if self.method == "weights":
            self.shares()
            # δ is spent only when a statistic's mechanism takes one.
            return float(self.epsilon), float(self.delta) if any(self._takes_delta()) else 0.0
        need = self.shares()
        return math.fsum(e for e, _ in need), math.fsum(d for _, d in need)

    def refusal(self) -> str | None:
        """Why the plan cannot be released as it stands, in one sentence; None if it can.

        Returns
        -------
        str or None
        """
        try:
            self.validate()
            self.shares()
        except EngineError as exc:
            return str(exc)
        return None

    def validate(self) -> ReleasePlan:
        """Check every statistic at its share (the engine's checks, and the plan's).

        Returns
        -------
        ReleasePlan
            ``self``.

        Raises
        ------
        PlanError
            In one sentence.
        """
        if not self.statistics:
            raise PlanError("a plan needs at least one statistic")
        if self.method not in METHODS:
            raise PlanError(f"split method must be weights or accuracy, got {self.method!r}")
        if not (0.0 < float(self.confidence) < 1.0):
            raise PlanError(f"confidence must lie strictly between 0 and 1, got "
                            f"{self.confidence}")
        if self.rows is not None and (isinstance(self.rows, bool) or not isinstance(
                self.rows, int) or self.rows < 1):
            raise PlanError(f"rows must be a positive whole number, got {self.rows!r}")
        if self.max_rows is not None:
            if (isinstance(self.max_rows, bool) or not isinstance(self.max_rows, int)
                    or self.max_rows < 1):
                raise PlanError(f"max_rows must be a whole number of rows ≥ 1, got "
                                f"{self.max_rows!r}")
            if self.relation != "add-remove":
                raise PlanError("a user-level plan protects adding or removing one person's "
                                "rows: use relation add-remove")
        for i, s in enumerate(self.statistics):
            where = f"statistic {i + 1} ({s.label})"
            if s.query not in PLAN_QUERIES:
                raise PlanError(f"{where}: a plan holds counts, sums, means and histograms")
            if len(s.by) > 2 or len(set(s.by)) != len(s.by):
                raise PlanError(f"{where}: group by one or two distinct columns")
            if s.by and s.query == "histogram":
                raise PlanError(f"{where}: group a count, sum or mean, not a histogram")
            for b in s.by:
                if not self.keys.get(b):
                    raise PlanError(f"{where}: the keys of {b!r} are not declared (declare "
                                    "its categories in the schema: keys are never read off "
                                    "the data)")
            if s.column in s.by:
                raise PlanError(f"{where}: the value column cannot also be a key column")
            try:
                self.query_spec(i, 1.0, 1e-6 if self._takes_delta()[i] else 0.0).validated()
            except EngineError as exc:
                raise PlanError(f"{where}: {exc}") from None
        return self

    # --------------------------------------------------------------- the errors

    def table(self, columns: Mapping[str, Any] | None = None) -> PlanTable:
        """The plan table's content: never raises for a plan that cannot be released.

        Parameters
        ----------
        columns : mapping of str to numpy.ndarray, optional
            The analyst's columns (see :meth:`expected_errors`).

        Returns
        -------
        PlanTable
        """
        refusal = self.refusal()
        try:
            shares = self.needed() if self.method == "accuracy" else self.shares()
        except EngineError:
            return PlanTable([], None, refusal)
        rows = [self._error(i, e, d, columns) for i, (e, d) in enumerate(shares)]
        total = (math.fsum(e for e, _ in shares), math.fsum(d for _, d in shares))
        if self.method == "weights":
            total = self.total()
        return PlanTable(rows, total, refusal)

    def expected_errors(self, columns: Mapping[str, Any] | None = None
                        ) -> list[ExpectedError]:
        """Each statistic's expected error at its share: one row of the plan table each.

        Parameters
        ----------
        columns : mapping of str to numpy.ndarray, optional
            The analyst's columns by name (never released): with them, an ungrouped
            count, sum or mean shows the analysis layer's numbers (the noise by the delta
            method at the true sums, and the clamping bias).

        Returns
        -------
        list of ExpectedError
            One per statistic, in order.

        Raises
        ------
        PlanError
            As :meth:`shares` (the table shows :meth:`refusal` instead).
        """
        shares = self.shares()
        return [self._error(i, e, d, columns) for i, (e, d) in enumerate(shares)]

    def _error(self, i: int, eps: float, delta: float,
               columns: Mapping[str, Any] | None) -> ExpectedError:
        s = self.statistics[i]
        spec = self.query_spec(i, eps, delta)
        rows = self.group_rows(i)
        grouped = bool(s.by)
        note = ""
        try:
            h = half_width(spec, grouped, rows, self.k)
            parts = {n: (f, sc) for n, f, sc in noise_parts(spec, grouped, self.k)}
        except EngineError as exc:
            return ExpectedError(s.label, eps, delta, math.nan, math.nan, None, math.nan,
                                 s.target, str(exc))
        if s.query == "mean":
            fam, s_sum = parts["sum"]
            if rows is None:
                noise = math.nan
                note = ("a mean's error needs a public number of rows (rows = N in the "
                        "plan)")
            else:
                var = noise_sd(fam, s_sum) ** 2
                if "count" in parts:
                    lo, hi = spec.bounds
                    var += (max(abs(lo), abs(hi)) * noise_sd(*parts["count"])) ** 2
                    note = "planned at the worst mean, max(|lo|, |hi|)"
                noise = math.sqrt(var) / rows
                if grouped:
                    note = (note + "; " if note else "") + "rows spread evenly over the groups"
        else:
            noise = noise_sd(*next(iter(parts.values())))
        bias = None
        # The measured numbers are row-level ones: a user-level plan shows the planned.
        values = (None if columns is None or grouped or self.max_rows is not None
                  else columns.get(s.column))
        if values is not None and s.query in ("count", "sum", "mean"):
            noise, bias = _measured(spec, np.asarray(values), noise)
            note = "measured on the data (analyst only)"
        expected = math.hypot(noise, bias) if bias else noise
        return ExpectedError(s.label, eps, delta, h, noise, bias, expected, s.target, note)


def _measured(spec: QuerySpec, values: np.ndarray, planned: float
              ) -> tuple[float, float | None]:
    """The analysis layer's noise and bias of an ungrouped count, sum or mean on the data."""
    from dpstudio.analysis.bias import release_bias
    from dpstudio.analysis.choices import Choices
    from dpstudio.engine.utility import analytic_curve

    try:
        noise = float(analytic_curve(spec, np.array([spec.epsilon]), "rmse", values).error[0])
    except EngineError:
        noise = planned
    if spec.query == "count":
        return noise, None
    choice = Choices(column=spec.column or "", column_type="numeric",
                     value_types=("numeric",), trust_model="central", query=spec.query,
                     mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
                     bounds=spec.bounds, relation=spec.relation,
                     confidence=spec.confidence, missing=spec.missing, impute=spec.impute)
    try:
        bias = release_bias(choice, values)
    except (EngineError, ValueError, TypeError):
        bias = None
    return noise, bias
