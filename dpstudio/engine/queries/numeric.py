"""The release of a count, sum, mean or variance from its noisy bounded sums.

Intervals by interval arithmetic with a union bound over the sums (a guarantee), the
variance by the delta method, and the public notes on the missing-value treatment.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpstudio.engine.queries.result import Release
from dpstudio.engine.queries.spec import QuerySpec, missing_statement, sum_sensitivity
from dpstudio.engine.queries.sums import (
    _box_ratio,
    _family,
    _noisy_sums,
    _Plan,
    _plan,
    delta_method_variance,
)
from dpstudio.engine.rng import Source


def _missing_notes(spec: QuerySpec, plan: _Plan) -> tuple[dict[str, Any], list[str]]:
    """The public statement of the missing-value treatment: a field and a note."""
    statement = missing_statement(spec)
    if statement is None:
        return {}, []
    # The result's own field: the treatment and its constant (the manifest has the rest).
    field_ = {k: v for k, v in statement.items() if k in ("treatment", "value")}
    lo, hi = plan.lo, plan.hi
    if spec.missing == "impute":
        c = spec.impute_value()
        note = (f"missing values (empty, NaN, ±inf) imputed as {c:g}, a declared constant "
                "inside the bounds: every row contributes")
        if spec.relation == "replace":
            note += (f"; under replace the number of rows is public (n = {plan.rows:,}) and "
                     f"the sum's sensitivity is hi − lo = {hi - lo:g}")
        else:
            note += "; under add-remove the number of rows stays private (a noisy count)"
        return field_, [note]
    note = "missing values (empty, NaN, ±inf) dropped, not imputed"
    if spec.relation == "replace":
        true = sum_sensitivity(lo, hi, "replace", "drop")
        note += (f"; under replace a value may appear where one was missing, so the sum's "
                 f"sensitivity is max(hi − lo, |lo|, |hi|) = {true:g}")
        if true > hi - lo:
            note += f" (declare an imputed value to use hi − lo = {hi - lo:g})"
    return field_, [note]


def _numeric_release(values: np.ndarray, spec: QuerySpec, source: Source,
                     max_rows: int = 1) -> Release:
    """One release of the plan's noisy sums; ``max_rows`` = k scales every sensitivity
    (a user-level release, add-remove; 1: row-level)."""
    plan = _plan(values, spec)
    noisy, noises = _noisy_sums(plan, _family(spec), spec, source, 1, max_rows)
    out = _release_from_noisy(plan, noisy, noises, spec)
    if max_rows != 1:
        out.sensitivity = max_rows * plan.sensitivity
    return out


def _release_from_noisy(plan: _Plan, noisy: dict[str, np.ndarray],
                        noises: dict[str, Any], spec: QuerySpec) -> Release:
    """The release of one draw of the plan's noisy sums: value, interval, notes.

    Shared by the in-process path and a plan whose exact sums were added up partition by
    partition elsewhere (:mod:`~dpstudio.engine.queries.partial`).
    """
    value = float(plan.post(noisy)[0])
    got = {name: float(v[0]) for name, v in noisy.items()}
    # Union bound: each noisy sum's interval at 1 − β/k holds jointly with 1 − β.
    conf = 1.0 - (1.0 - spec.confidence) / len(plan.sums)
    iv = {name: (got[name] - noises[name].half_width(conf),
                 got[name] + noises[name].half_width(conf)) for name in got}
    var = {name: noises[name].variance for name in got}
    if plan.rows is not None and spec.query in ("mean", "variance"):
        # n is public: an exact count, no noise, an interval of one point.
        n = float(max(plan.rows, 1))
        got["count"], var["count"], iv["count"] = n, 0.0, (n, n)
    missing, notes = _missing_notes(spec, plan)
    exact = True
    variance = delta_method_variance(spec.query, got, var)
    if spec.query in ("count", "sum"):
        ci = iv[spec.query]
    else:
        lo, hi = plan.lo, plan.hi
        if spec.query == "mean":
            ci = (lo, hi) if iv["count"][0] < 1.0 else tuple(
                float(np.clip(x, lo, hi)) for x in _box_ratio(iv["sum"], iv["count"]))
            if plan.rows is not None:
                notes.append("mean = noisy sum / n (n public) with the whole budget; variance "
                             "and interval exact (the interval clipped to the bounds)")
            else:
                exact = False
                notes.append("mean = noisy sum / noisy count, each with half the budget; "
                             "variance by the delta method (approximate); interval "
                             "guaranteed")
        else:
            exact = False
            cap = (hi - lo) ** 2 / 4.0
            if iv["count"][0] < 1.0:
                ci = (0.0, cap)
            else:
                sq = iv["sum of squares"]
                a_lo, a_hi = _box_ratio((max(sq[0], 0.0), max(sq[1], 0.0)), iv["count"])
                m_lo, m_hi = _box_ratio(iv["sum"], iv["count"])
                msq_lo = 0.0 if m_lo <= 0.0 <= m_hi else min(m_lo * m_lo, m_hi * m_hi)
                msq_hi = max(m_lo * m_lo, m_hi * m_hi)
                ci = (float(np.clip(a_lo - msq_hi, 0.0, cap)),
                      float(np.clip(a_hi - msq_lo, 0.0, cap)))
            k = len(plan.sums)
            notes.append(f"variance = Σx²/n − (Σx/n)² from {k} noisy sums, each with "
                         f"1/{k} of the budget" + (" (n public)" if plan.rows is not None
                                                   else "")
                         + "; interval guaranteed by interval arithmetic")
    # What each noise was calibrated to (on its grid): the components' own figures.
    sensitivities = {name: noise.sensitivity_value for name, noise in noises.items()}
    if len(sensitivities) > 1:
        notes.append("sensitivity shown is the sum's; each noisy statistic's own: "
                     + ", ".join(f"{k} {v:g}" for k, v in sensitivities.items())
                     + " (see components)")
    main = noises.get("sum", next(iter(noises.values())))
    return Release(
        query=spec.query, mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
        relation=spec.relation, value=value, sensitivity=plan.sensitivity,
        noise_scale=main.noise_scale, variance=variance, ci_low=float(ci[0]),
        ci_high=float(ci[1]), confidence=spec.confidence, simulated=False, source="",
        variance_exact=exact,
        components=[noises[n].to_dict() | {"statistic": n} for n in noises],
        notes=notes, clamped=plan.clamped, sensitivities=sensitivities, missing=missing,
        missing_count=plan.missing, non_finite_count=plan.non_finite,
    )
