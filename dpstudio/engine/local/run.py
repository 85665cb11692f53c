"""Run a local protocol on one column: :func:`run_local` → :class:`LocalResult`.

The column's owner plays both sides: every value is randomized as its user's device would
(client), then estimated from the reports alone (server). The result carries the reports
(``LocalResult.records()`` are the collector's columns, for ``--export-records``) and, for
comparison, the standard error of the central model's Laplace release at the same ε.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtri

from dpstudio.engine.errors import QueryError
from dpstudio.engine.local.base import POSTPROCESS, MeanOracle, postprocess_counts
from dpstudio.engine.local.entries import sfp_from_params
from dpstudio.engine.local.mean import check_numeric_values
from dpstudio.engine.queries import category_codes, present_mask
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import Source

__all__ = ["LocalResult", "run_local"]


@dataclass
class LocalResult:
    """A local-model estimate from one column.

    ``query`` is ``"histogram"`` (``estimate``/``stderr``/``ci_*``: dicts label → count),
    ``"mean"`` (``value``/``stderr``/``ci_*``: floats; ``estimate = {"mean": value}``) or
    ``"heavy_hitters"`` (discovered words → estimated count). ``stderr`` comes from the
    protocol's exact variance (for histograms with the estimated counts, clipped to
    ``[0, n]``, plugged in). ``unbiased`` holds the estimates before post-processing;
    intervals are normal ones around them. ``clamped`` (values outside the declared
    categories or bounds) is for the analyst only.
    """

    mechanism: str
    query: str
    epsilon: float
    delta: float
    n: int
    estimate: dict[str, float]
    stderr: Any
    value: float | None = None
    ci_low: Any = None
    ci_high: Any = None
    confidence: float = 0.95
    trust_model: str = "local"
    postprocess: str = "none"
    unbiased: Any = None
    messages_bits: int = 0
    clamped: int = 0
    central_stderr: float | None = None
    simulated: bool = False
    source: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reports: Any = field(default=None, repr=False)
    oracle: Any = field(default=None, repr=False)

    def records(self) -> dict[str, np.ndarray]:
        """What the untrusted collector received, as columns (one row per user)."""
        return self.oracle.to_records(self.reports)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON summary (without the reports)."""
        keys = ("mechanism", "query", "epsilon", "delta", "n", "estimate", "stderr", "value",
                "ci_low", "ci_high", "confidence", "trust_model", "postprocess", "unbiased",
                "messages_bits", "clamped", "central_stderr", "simulated", "source",
                "parameters", "notes")
        return {k: getattr(self, k) for k in keys}


def _labels(values, categories, name: str) -> list[str]:
    if categories is not None:
        labels = [str(c) for c in categories]
        if len(set(labels)) != len(labels):
            raise QueryError("declared categories must be distinct")
        if len(labels) < 2:
            raise QueryError("declare at least two categories")
        if name == "rr" and len(labels) != 2:
            raise QueryError("randomized response needs exactly two categories (no, yes)")
        return labels
    v = np.asarray(values)
    if v.dtype == bool:
        return ["False", "True"]
    if name == "rr":
        return ["0", "1"]
    raise QueryError("a local histogram needs declared categories (e.g. --categories a,b,c): "
                     "the collector cannot learn the domain from data it never sees")


def run_local(values, info_name: str, params: dict[str, Any] | None = None, *,
              categories=None, bounds=None, source: Source, postprocess: str = "none",
              confidence: float = 0.95) -> LocalResult:
    """Run the local protocol ``info_name`` on a column and estimate from its reports.

    Parameters
    ----------
    values : the column (labels for histograms, numbers for means, words for a ``cms``
        text column without categories). Missing values (None/NaN) are skipped: those
        users send nothing.
    info_name : a registry entry of kind ``"randomizer"`` (``rr``, ``krr``, ``sue``,
        ``oue``, ``olh``, ``hadamard``, ``cms``, ``local_laplace``, ``local_gaussian``,
        ``duchi``).
    params : the entry's parameters (``epsilon``, …), validated by the registry.
    categories : the declared domain of a histogram (required, except for ``rr`` on
        0/1 or booleans and for ``cms`` on text, which discovers frequent words).
    bounds : ``(lower, upper)`` for means (required).
    source : random source (:class:`~dpstudio.engine.rng.SecureSource` for a release).
    postprocess : ``"none"``, ``"clip"`` or ``"simplex"`` for histograms (see
        :func:`~dpstudio.engine.local.base.postprocess_counts`); ``"clip"`` also clamps a
        mean into the bounds.
    confidence : level of the normal confidence intervals.
    """
    info = REGISTRY.get(info_name)
    if info.kind != "randomizer" or "local" not in info.trust_models:
        raise QueryError(f"{info_name} is not a local randomizer")
    if postprocess not in POSTPROCESS:
        raise QueryError(f"postprocess must be one of {', '.join(POSTPROCESS)}; "
                         f"got {postprocess!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise QueryError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    resolved = info.resolve(params)
    z = float(-ndtri((1.0 - confidence) / 2.0))
    v = np.asarray(values)
    if v.size == 0:
        raise QueryError("the column is empty")
    common = dict(trust_model="local", confidence=confidence, postprocess=postprocess,
                  simulated=not source.is_secure, source=source.label)
    eps = float(resolved["epsilon"])

    if "mean" in info.queries:
        oracle: MeanOracle = info.build(**resolved, bounds=bounds)
        x = v[present_mask(v)] if v.dtype.kind in "fcO" else v
        x = check_numeric_values(x)
        if x.size == 0:
            raise QueryError("the column has no values")
        clamped = int(np.count_nonzero((x < oracle.lower) | (x > oracle.upper)))
        reports = oracle.randomize(x, source)
        raw = oracle.estimate(reports)
        se = math.sqrt(oracle.variance(x.size))
        lo, hi = oracle.lower, oracle.upper
        value = float(np.clip(raw, lo, hi)) if postprocess != "none" else raw
        width = hi - lo
        return LocalResult(
            mechanism=info.name, query="mean", epsilon=oracle.epsilon, delta=oracle.delta,
            n=int(x.size), estimate={"mean": value}, stderr=se, value=value,
            ci_low=max(lo, raw - z * se), ci_high=min(hi, raw + z * se), unbiased=raw,
            messages_bits=oracle.messages_bits, clamped=clamped,
            central_stderr=math.sqrt(2.0) * width / (eps * x.size),
            parameters=oracle.describe(), reports=reports, oracle=oracle,
            notes=["interval: normal approximation around the unbiased estimate",
                   "central_stderr: Laplace on the mean of n known users at the same ε "
                   "(sensitivity (upper − lower)/n), for comparison"], **common)

    if info.name == "cms" and categories is None:
        sfp = sfp_from_params(**resolved)
        words = v[present_mask(v)] if v.dtype.kind == "O" else v
        reports = sfp.randomize(words, source)
        found = sfp.discover(reports, alpha=1.0 - confidence)
        n = len(reports)
        return LocalResult(
            mechanism=info.name, query="heavy_hitters", epsilon=sfp.epsilon, delta=0.0, n=n,
            estimate={d.word: d.count for d in found},
            stderr={d.word: d.stderr for d in found},
            ci_low={d.word: d.count - z * d.stderr for d in found},
            ci_high={d.word: d.count + z * d.stderr for d in found},
            unbiased={d.word: d.count for d in found}, messages_bits=sfp.messages_bits,
            parameters=sfp.describe(), reports=reports, oracle=sfp,
            notes=["sequence-fragment puzzle: words of at most 10 characters, lower-cased; "
                   f"false discoveries controlled at {1.0 - confidence:g} (Bonferroni)"],
            **common)

    labels = _labels(v, categories, info.name)
    codes, clamped = category_codes(v, labels)
    if codes.size == 0:
        raise QueryError("no value of the column is a declared category")
    oracle = info.build(**resolved, k=len(labels))
    reports = oracle.randomize(codes, source)
    n = int(codes.size)
    est = oracle.estimate(reports, n)
    se = np.sqrt(oracle.variance(n, np.clip(est, 0.0, n)))
    post = postprocess_counts(est, postprocess, float(n))
    central = 1.0 / (2.0 * math.sinh(eps / 2.0) ** 2)  # discrete Laplace, scale 1/ε
    return LocalResult(
        mechanism=info.name, query="histogram", epsilon=oracle.epsilon, delta=0.0, n=n,
        estimate=dict(zip(labels, post.tolist(), strict=True)),
        stderr=dict(zip(labels, se.tolist(), strict=True)),
        ci_low=dict(zip(labels, np.clip(est - z * se, 0.0, n).tolist(), strict=True)),
        ci_high=dict(zip(labels, np.clip(est + z * se, 0.0, n).tolist(), strict=True)),
        unbiased=dict(zip(labels, est.tolist(), strict=True)),
        messages_bits=oracle.messages_bits, clamped=clamped,
        central_stderr=math.sqrt(central), parameters=oracle.describe(), reports=reports,
        oracle=oracle,
        notes=["counts; standard errors from the exact variance with the estimated counts "
               "plugged in; intervals are normal ones around the unbiased estimates",
               "central_stderr: the central model's discrete Laplace count at the same ε"],
        **common)
