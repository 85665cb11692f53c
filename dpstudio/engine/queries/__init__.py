"""Central-model queries on one declared column: count, sum, mean, variance, histogram,
quantiles.

Every numeric query is built from one primitive, a *bounded sum*: values clamped to the
user's declared bounds, snapped to the mechanism's grid by unbiased randomized rounding,
summed as exact integers, plus exact integer noise. Sensitivity follows from the declared
bounds and the neighbouring relation only — never from the data. Mean and variance spend
the budget on several bounded sums (basic composition) and carry confidence intervals
by interval arithmetic with a union bound, so the stated coverage is a guarantee.

Missing values (empty, NaN, ±inf) are part of a record's domain. Under ``replace`` a
record whose value is missing and the same record with a value are neighbours, so a sum
that *drops* missing values moves by up to max(hi − lo, |lo|, |hi|), not hi − lo. The
other treatment *imputes* a declared constant inside the bounds: every row contributes,
the sensitivity is hi − lo, and under ``replace`` the number of rows is public, so a mean
is the noisy sum over n with the whole budget.

Modules
-------
:mod:`~dpstudio.engine.queries.spec` (:class:`QuerySpec`, its validation, sensitivities),
:mod:`~dpstudio.engine.queries.result` (:class:`Release`),
:mod:`~dpstudio.engine.queries.columns` (missing values, category codes, encoded by
:mod:`~dpstudio.engine.queries.codes`),
:mod:`~dpstudio.engine.queries.sums` (the bounded-sum primitive and its plans),
:mod:`~dpstudio.engine.queries.numeric` (count, sum, mean and variance releases),
:mod:`~dpstudio.engine.queries.histogram`, :mod:`~dpstudio.engine.queries.quantile`,
and :mod:`~dpstudio.engine.queries.run` (the entry points). Import from the package:
the submodules are its layout, not its interface.
"""

from __future__ import annotations

from dpstudio.engine.queries.columns import (
    category_codes,
    category_counts,
    present_mask,
    row_codes,
)
from dpstudio.engine.queries.histogram import histogram_bins
from dpstudio.engine.queries.quantile import quantile_scores
from dpstudio.engine.queries.result import Release
from dpstudio.engine.queries.run import release, run_query, simulate_query
from dpstudio.engine.queries.spec import (
    MISSING,
    QUERIES,
    RELATIONS,
    QuerySpec,
    check_bounds,
    missing_statement,
    noisy_statistics,
    sum_sensitivity,
)
from dpstudio.engine.queries.sums import delta_method_variance, plan_sums

__all__ = [
    "MISSING",
    "QUERIES",
    "RELATIONS",
    "QuerySpec",
    "Release",
    "category_codes",
    "category_counts",
    "check_bounds",
    "delta_method_variance",
    "histogram_bins",
    "missing_statement",
    "noisy_statistics",
    "plan_sums",
    "present_mask",
    "quantile_scores",
    "release",
    "row_codes",
    "run_query",
    "simulate_query",
    "sum_sensitivity",
]
