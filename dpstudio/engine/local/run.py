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

from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.errors import QueryError
from dpstudio.engine.local.base import POSTPROCESS, MeanOracle, postprocess_counts
from dpstudio.engine.local.entries import sfp_from_params
from dpstudio.engine.local.frequency import KaryRR
from dpstudio.engine.local.respond import (
    OTHER_LABEL,
    has_other_cell,
    histogram_inputs,
    mean_inputs,
    word_inputs,
)
from dpstudio.engine.queries import present_mask
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import Source
from dpstudio.engine.special import ndtri
from dpstudio.jobs import State, check, scaled

__all__ = ["Collected", "LocalResult", "collect_reports", "histogram_note", "histogram_result",
           "mean_note", "mean_result", "result_fields", "run_local"]


@dataclass
class LocalResult:
    """A local-model estimate from one column.

    ``query`` is ``"histogram"`` (``estimate``/``stderr``/``ci_*``: dicts label → count),
    ``"mean"`` (``value``/``stderr``/``ci_*``: floats; ``estimate = {"mean": value}``) or
    ``"heavy_hitters"`` (discovered words → estimated count; ``items`` lists them, most
    frequent first, each with its count, standard error and interval). ``stderr`` comes
    from the protocol's exact variance (for histograms with the estimated counts, clipped
    to ``[0, n]``, plugged in). ``unbiased`` holds the estimates before post-processing;
    intervals are normal ones around them. ``n`` is the number of rows: every row sends
    one report. Histograms have one more cell than the declared categories,
    :data:`~dpstudio.engine.local.respond.OTHER_LABEL` (except ``rr``). ``clamped``
    (values outside the declared categories or bounds) and ``missing`` (missing values)
    are for the analyst only: ``missing`` is not in :meth:`to_dict`, and callers move
    ``clamped`` out of the released fields.

    Attributes
    ----------
    mechanism, query : str
        The registry entry and the query answered.
    epsilon, delta : float
        The randomizer's own per-user guarantee.
    n : int
        The number of rows (= reports).
    estimate : dict of str to float
        The released estimates (post-processed for histograms).
    stderr : float or dict
        Standard error(s), from the exact variance.
    value : float or None
        A mean's estimate.
    ci_low, ci_high : float or dict
        Normal intervals at ``confidence`` around the unbiased estimates.
    confidence : float
        The intervals' level.
    trust_model : str
        ``"local"``.
    postprocess : str
        ``"none"``, ``"clip"`` or ``"simplex"``.
    unbiased : float or dict
        The estimates before post-processing.
    messages_bits : int
        Bits per report.
    clamped, missing : int
        Analyst-only counts (see above).
    items : list of dict or None
        Heavy hitters: each word with ``count``, ``stderr``, ``ci_low``, ``ci_high``.
    central_stderr : float or None
        Standard error of the central model's release at the same ε, for comparison.
    simulated : bool
        True when a seeded generator drew the coins.
    source : str
        The random source's label.
    parameters : dict
        The randomizer's :meth:`~dpstudio.engine.local.base.LocalRandomizer.describe`.
    notes : list of str
        What the user should know about the estimate.
    reports, oracle
        The users' reports and the randomizer that produced them.
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
    missing: int = 0
    items: list[dict[str, Any]] | None = None
    central_stderr: float | None = None
    simulated: bool = False
    source: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reports: Any = field(default=None, repr=False)
    oracle: Any = field(default=None, repr=False)

    def records(self) -> dict[str, np.ndarray]:
        """What the untrusted collector received, as columns (one row per user).

        Returns
        -------
        dict of str to numpy.ndarray
        """
        return self.oracle.to_records(self.reports)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON summary (without the reports).

        Returns
        -------
        dict
            The fields above except ``missing``, ``reports`` and ``oracle``; ``items``
            only for heavy hitters.
        """
        keys = ("mechanism", "query", "epsilon", "delta", "n", "estimate", "stderr", "value",
                "ci_low", "ci_high", "confidence", "trust_model", "postprocess", "unbiased",
                "messages_bits", "clamped", "central_stderr", "simulated", "source",
                "parameters", "notes")
        out = {k: getattr(self, k) for k in keys}
        if self.items is not None:
            out["items"] = self.items
        return out

    def loss_description(self) -> LossDescription:
        """What this release drew, for a ledger's tight accountants.

        Each user's report is the randomizer's output on their value alone, and the
        relation is replace-one: the privacy loss is the randomizer's. K-ary (and
        Warner's) randomized response is described exactly (``randomized_response`` with
        its ``k``, at ε = ln(p/q)); every other randomizer by its own (ε, δ) (``pure``, or
        ``approx`` for δ > 0), the worst case of any mechanism with that guarantee.

        Returns
        -------
        LossDescription
        """
        oracle = self.oracle
        eps = float(self.epsilon)
        if getattr(oracle, "name", None) in ("krr", "rr") and isinstance(oracle, KaryRR) \
                and not self.delta:
            return LossDescription("randomized_response", epsilon=max(eps, oracle.epsilon),
                                   k=int(oracle.k))
        if self.delta > 0:
            return LossDescription("approx", epsilon=eps, delta=float(self.delta))
        return LossDescription("pure", epsilon=eps)


def _labels(values, categories, name: str) -> list[str]:
    if categories is not None:
        labels = [str(c) for c in categories]
        if len(set(labels)) != len(labels):
            raise QueryError("declared categories must be distinct")
        if len(labels) < 2:
            raise QueryError("declare at least two categories")
        if name == "rr" and len(labels) != 2:
            raise QueryError("randomized response needs exactly two categories (no, yes)")
        if OTHER_LABEL in labels:
            raise QueryError(f"{OTHER_LABEL!r} is the cell of missing and undeclared values; "
                             "it cannot be a declared category")
        return labels
    v = np.asarray(values)
    if v.dtype == bool or (v.dtype == object and _booleans(v)):
        return ["False", "True"]
    if name == "rr":
        return ["0", "1"]
    raise QueryError("a local histogram needs declared categories (e.g. --categories a,b,c): "
                     "the collector cannot learn the domain from data it never sees")


def _booleans(v: np.ndarray) -> bool:
    """Whether an object column holds booleans and missing values only."""
    present = v[present_mask(v)]
    try:
        distinct = np.unique(present).tolist()  # one test per distinct value, not per row
    except TypeError:  # mixed types cannot be sorted: not a boolean column
        return False
    return bool(distinct) and all(isinstance(x, bool | np.bool_) for x in distinct)


def _query_for(info, query: str | None, categories) -> str:
    """The query the entry answers: given, or inferred (``cms`` without categories:
    heavy hitters, as before the ``query`` argument existed)."""
    if query is None:
        if "mean" in info.queries:
            query = "mean"
        elif info.queries == ("heavy_hitters",) or (
                "heavy_hitters" in info.queries and categories is None):
            query = "heavy_hitters"
        else:
            query = "histogram"
    if query not in info.queries:
        raise QueryError(f"{info.name} answers {' or '.join(info.queries)} queries, "
                         f"not {query}")
    if query == "heavy_hitters" and categories is not None:
        raise QueryError("heavy hitters are discovered without a dictionary: do not "
                         "declare categories (use a histogram for a declared domain)")
    return query


def _hash_seed(source: Source) -> int:
    """A public hash family drawn for this release (63 bits: a signed 8-byte salt)."""
    return int(source.uint64(1)[0] >> np.uint64(1))


# Fresh draws of the family before an exact debiasing gives up on telling the declared
# categories apart (a draw fails with probability about k²/2·m^-K: negligible at the
# defaults; 92% for a single hash of 8 buckets and 6 codes, still a 0.6% failure here).
_FAMILY_TRIES = 64


@dataclass
class Collected:
    """The client side of a local release: one report per row of the column.

    ``labels`` are the histogram's cells (the declared categories, then
    :data:`~dpstudio.engine.local.respond.OTHER_LABEL` unless the protocol is binary
    randomized response); ``missing``/``clamped`` are analyst-only counts.

    Attributes
    ----------
    mechanism, query : str
        The registry entry and the query (``"histogram"``, ``"mean"``,
        ``"heavy_hitters"``).
    oracle : LocalRandomizer
        The randomizer built for the column.
    reports
        One report per row.
    n : int
        The number of rows.
    inputs : numpy.ndarray
        What each row fed its randomizer (:mod:`~dpstudio.engine.local.respond`).
    labels : list of str or None
        A histogram's cells.
    clamped, missing : int
        Analyst-only counts.
    notes : list of str
        How missing and undeclared values were sent.
    """

    mechanism: str
    query: str
    oracle: Any
    reports: Any
    n: int
    inputs: np.ndarray = field(repr=False)
    labels: list[str] | None = None
    clamped: int = 0
    missing: int = 0
    notes: list[str] = field(default_factory=list)

    def records(self) -> dict[str, np.ndarray]:
        """What the untrusted collector received, as columns (one row per row).

        Returns
        -------
        dict of str to numpy.ndarray
        """
        return self.oracle.to_records(self.reports)


def collect_reports(values, info_name: str, params: dict[str, Any] | None = None, *,
                    query: str | None = None, categories=None, bounds=None,
                    source: Source) -> Collected:
    """Every row's report through the local protocol ``info_name`` (the client side).

    Every row sends exactly one report, whatever its value
    (:mod:`~dpstudio.engine.local.respond`): the number of reports is the number of rows.
    Arguments as for :func:`run_local`.

    Parameters
    ----------
    values : array_like
        The column.
    info_name : str
        A local randomizer's registry name.
    params : dict, optional
        The entry's parameters.
    query : str, optional
        ``"histogram"``, ``"mean"`` or ``"heavy_hitters"``; by default the entry's.
    categories : sequence of str, optional
        A histogram's declared domain.
    bounds : tuple of float, optional
        A mean's ``(lower, upper)``.
    source : Source
        The random source (coins, and the count-mean sketch's hash family).

    Returns
    -------
    Collected

    Raises
    ------
    QueryError, ParameterError
        For an entry that is not a local randomizer, a query it does not answer, an empty
        column, a bad declared domain or parameter.
    """
    info = REGISTRY.get(info_name)
    if info.kind != "randomizer" or "local" not in info.trust_models:
        raise QueryError(f"{info_name} is not a local randomizer")
    resolved = info.resolve(params)
    query = _query_for(info, query, categories)
    v = np.asarray(values)
    if v.size == 0:
        raise QueryError("the column is empty")
    if query == "mean":
        oracle = info.build(**resolved, bounds=bounds)
        given = mean_inputs(v, oracle.lower, oracle.upper)
        return Collected(
            info.name, "mean", oracle, oracle.randomize(given.values, source), int(v.size),
            given.values, clamped=given.undeclared, missing=given.missing,
            notes=[mean_note(oracle)])
    if query == "heavy_hitters":
        sfp = sfp_from_params(**resolved, hash_seed=_hash_seed(source))
        given = word_inputs(v)
        return Collected(
            info.name, "heavy_hitters", sfp, sfp.randomize(given.values, source), int(v.size),
            given.values, missing=given.missing,
            notes=["every row sends a report: a missing value is sent as the empty word, "
                   "never discovered; n is the number of rows"])
    labels = _labels(v, categories, info.name)
    other = has_other_cell(info.name)
    oracle = _build_histogram(info, resolved, len(labels) + other, source)
    given = histogram_inputs(v, labels, source, other=other)
    cells = labels + ([OTHER_LABEL] if other else [])
    return Collected(info.name, "histogram", oracle, oracle.randomize(given.values, source),
                     int(v.size), given.values, labels=cells, clamped=given.undeclared,
                     missing=given.missing, notes=[histogram_note(other)])


def mean_note(oracle) -> str:
    """How a local mean sends a missing value (a :class:`Collected` note).

    Parameters
    ----------
    oracle : MeanOracle
        The randomizer (its bounds).

    Returns
    -------
    str
    """
    return (f"every row sends a report: a missing value is sent as the middle of the "
            f"declared bounds ({0.5 * (oracle.lower + oracle.upper):g}), so n is the "
            "number of rows and the estimate is the mean over all of them")


def histogram_note(other: bool) -> str:
    """How a local histogram sends a missing or undeclared value (a :class:`Collected`
    note).

    Parameters
    ----------
    other : bool
        Whether the randomizer has the extra "other or missing" cell.

    Returns
    -------
    str
    """
    return (f"every row sends a report: a missing or undeclared value is sent as the extra "
            f"category {OTHER_LABEL!r} through the same randomizer, whose count is "
            "estimated like the others; n is the number of rows"
            if other else
            "every row sends a report: a missing or undeclared value is answered with a fair "
            "coin (yes/no has no third answer), so each count estimates its declared count "
            "plus half of the missing and undeclared ones; n is the number of rows")


def _build_histogram(info, resolved: dict[str, Any], k: int, source: Source):
    if info.name != "cms":
        return info.build(**resolved, k=k)
    for _ in range(_FAMILY_TRIES):
        oracle = info.build(**resolved, k=k, hash_seed=_hash_seed(source))
        if oracle.debias != "exact":
            return oracle
        try:
            oracle.collisions()  # refuses a family that cannot tell two codes apart
            return oracle
        except QueryError:
            # Redrawing depends on k, the buckets and the seed only, never on the data.
            continue
    raise QueryError("the hash family cannot tell some values apart; raise buckets or "
                     "hashes, or use debias=apple")


def run_local(values, info_name: str, params: dict[str, Any] | None = None, *,
              query: str | None = None, categories=None, bounds=None, source: Source,
              postprocess: str = "none", confidence: float = 0.95,
              state: State | None = None) -> LocalResult:
    """Run the local protocol ``info_name`` on a column and estimate from its reports.

    Every row sends one report (:mod:`~dpstudio.engine.local.respond`): ``n`` is the
    number of rows and :meth:`LocalResult.records` has one report per row, whatever the
    values, so neither reveals how many values are missing or undeclared.

    Parameters
    ----------
    values : array_like
        The column (labels for histograms, numbers for means, words for heavy
        hitters). Missing values (None/NaN) send the "other or missing" category (a fair
        coin's answer for ``rr``), the middle of the bounds (means) or the empty word.
    info_name : str
        A registry entry of kind ``"randomizer"`` (``rr``, ``krr``, ``sue``,
        ``oue``, ``olh``, ``hadamard``, ``cms``, ``sfp``, ``local_laplace``,
        ``local_gaussian``, ``duchi``).
    params : dict, optional
        The entry's parameters (``epsilon``, …), validated by the registry.
    query : str, optional
        ``"histogram"``, ``"mean"`` or ``"heavy_hitters"``; by default the entry's
        (``cms`` without categories, and ``sfp``: heavy hitters).
    categories : sequence of str, optional
        The declared domain of a histogram (required, except for ``rr`` on
        0/1 or booleans).
    bounds : tuple of float, optional
        ``(lower, upper)`` for means (required).
    source : Source
        Random source (:class:`~dpstudio.engine.rng.SecureSource` for a release).
        The count-mean sketch's public hash family is drawn from it for each release.
    postprocess : str
        ``"none"``, ``"clip"`` or ``"simplex"`` for histograms (see
        :func:`~dpstudio.engine.local.base.postprocess_counts`, over all cells including
        the "other or missing" one, to a total of ``n``); ``"clip"`` also clamps a mean
        into the bounds.
    confidence : float
        Level of the normal confidence intervals, in (0, 1).
    state : State, optional
        The job's state (:mod:`~dpstudio.jobs`): cancellation is
        checked before the reports are drawn, between the client and the server side,
        and (heavy hitters) once per hash function of the fragment sketch; progress
        reaches 1 when the estimate is done. Randomizing is one vectorized draw over all
        rows, so a cancellation takes effect after it.

    Returns
    -------
    LocalResult
        The estimate, its standard errors and intervals, and the reports.

    Raises
    ------
    QueryError, ParameterError
        For a bad entry, query, declared domain, parameter or column.
    Cancelled
        If ``state`` is cancelled.
    """
    if postprocess not in POSTPROCESS:
        raise QueryError(f"postprocess must be one of {', '.join(POSTPROCESS)}; "
                         f"got {postprocess!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise QueryError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    check(state)
    got = collect_reports(values, info_name, params, query=query, categories=categories,
                          bounds=bounds, source=source)
    if state is not None:
        state.progress(0.5, "reports collected")
    check(state)
    z = float(-ndtri((1.0 - confidence) / 2.0))
    common = result_fields(got, source, postprocess, confidence)
    estimate = {"mean": _mean, "heavy_hitters": _heavy_hitters,
                "histogram": _histogram}[got.query]
    out = estimate(got, z, postprocess, common, scaled(state, 0.5, 1.0))
    if state is not None:
        state.progress(1.0, "estimated")
    return out


def result_fields(got: Collected, source: Source, postprocess: str, confidence: float
                  ) -> dict[str, Any]:
    """The :class:`LocalResult` fields every query shares (also for an estimate from
    aggregated reports, :mod:`~dpstudio.engine.local.partial`).

    Parameters
    ----------
    got : Collected
        The reports (``reports`` may be None when only their aggregate exists).
    source : Source
        The source the reports were drawn from.
    postprocess : str
        The post-processing.
    confidence : float
        The intervals' level.

    Returns
    -------
    dict
    """
    return dict(trust_model="local", confidence=confidence, postprocess=postprocess,
                simulated=not source.is_secure, source=source.label, reports=got.reports,
                oracle=got.oracle, messages_bits=got.oracle.messages_bits,
                parameters=got.oracle.describe(), clamped=got.clamped, missing=got.missing)


def _mean(got: Collected, z: float, postprocess: str, common: dict,
          state: State | None = None) -> LocalResult:
    # ``state`` only for the estimators' common signature: a mean's estimate is one sum.
    return mean_result(got, got.oracle.estimate(got.reports, got.n), z, postprocess, common)


def mean_result(got: Collected, raw: float, z: float, postprocess: str, common: dict
                ) -> LocalResult:
    """A mean's :class:`LocalResult` from its unbiased estimate ``raw``.

    Parameters
    ----------
    got : Collected
        The collection (its oracle, ``n`` and notes).
    raw : float
        The unbiased estimate.
    z : float
        The normal quantile of the intervals.
    postprocess : str
        ``"clip"`` clamps the value into the bounds.
    common : dict
        :func:`result_fields`.

    Returns
    -------
    LocalResult
    """
    oracle: MeanOracle = got.oracle
    n = got.n
    se = math.sqrt(oracle.variance(n))  # data-free (Duchi: its upper bound)
    lo, hi = oracle.lower, oracle.upper
    value = float(np.clip(raw, lo, hi)) if postprocess != "none" else raw
    return LocalResult(
        mechanism=got.mechanism, query="mean", epsilon=oracle.epsilon, delta=oracle.delta,
        n=n, estimate={"mean": value}, stderr=se, value=value,
        ci_low=max(lo, raw - z * se), ci_high=min(hi, raw + z * se), unbiased=raw,
        central_stderr=math.sqrt(2.0) * (hi - lo) / (oracle.epsilon * n),
        notes=got.notes + ["interval: normal approximation around the unbiased estimate",
                           "central_stderr: Laplace on the mean of n known users at the same "
                           "ε (sensitivity (upper − lower)/n), for comparison"], **common)


def _heavy_hitters(got: Collected, z: float, postprocess: str, common: dict,
                   state: State | None = None) -> LocalResult:
    sfp = got.oracle
    alpha = 1.0 - common["confidence"]
    found = sfp.discover(got.reports, alpha=alpha, state=state)
    items = [{"item": d.word, "count": d.count, "stderr": d.stderr,
              "ci_low": d.count - z * d.stderr, "ci_high": d.count + z * d.stderr}
             for d in found]
    return LocalResult(
        mechanism=got.mechanism, query="heavy_hitters", epsilon=sfp.epsilon, delta=0.0, n=got.n,
        estimate={d.word: d.count for d in found},
        stderr={d.word: d.stderr for d in found},
        ci_low={d.word: d.count - z * d.stderr for d in found},
        ci_high={d.word: d.count + z * d.stderr for d in found},
        unbiased={d.word: d.count for d in found}, items=items,
        notes=got.notes + [
            f"sequence-fragment puzzle: words of at most {sfp.max_length} characters, "
            f"lower-cased; false discoveries controlled at {alpha:g} (Bonferroni)",
            "counts: the word sketch's estimates, unbiased for a given word over the coins "
            "and the hash family drawn for this release; a discovered word passed a "
            "threshold, so its count tends to be overstated near that threshold",
            "intervals: normal ones around each count, from the coins' variance plus the "
            "collisions with the other words (a plug-in)"], **common)


def _histogram(got: Collected, z: float, postprocess: str, common: dict,
               state: State | None = None) -> LocalResult:
    est = got.oracle.estimate(got.reports, got.n)  # one cell per label, "other" included
    return histogram_result(got, est, z, postprocess, common, state)


def histogram_result(got: Collected, est: np.ndarray, z: float, postprocess: str,
                     common: dict, state: State | None = None) -> LocalResult:
    """A histogram's :class:`LocalResult` from its unbiased count estimates ``est``.

    Parameters
    ----------
    got : Collected
        The collection (its oracle, ``n``, labels and notes).
    est : numpy.ndarray
        One unbiased count per label, "other" included.
    z : float
        The normal quantile of the intervals.
    postprocess : str
        The post-processing of the counts.
    common : dict
        :func:`result_fields`.
    state : State, optional
        Checked for a cancel before the exact variances.

    Returns
    -------
    LocalResult
    """
    oracle, n, labels = got.oracle, got.n, got.labels
    check(state)  # the exact variances (count-mean sketch: O(K·k²)) may take as long again
    plug = np.clip(est, 0.0, n)
    var = oracle.variance(n, plug)
    if hasattr(oracle, "hash_variance"):  # the family is drawn per release
        var = var + oracle.hash_variance(plug)
    se = np.sqrt(var)
    post = postprocess_counts(est, postprocess, float(n))
    eps = oracle.epsilon
    central = 1.0 / (2.0 * math.sinh(eps / 2.0) ** 2)  # discrete Laplace, scale 1/ε
    cells = lambda a: dict(zip(labels, np.asarray(a).tolist(), strict=True))  # noqa: E731
    notes = ["counts; standard errors from the exact variance with the estimated counts "
             "plugged in; intervals are normal ones around the unbiased estimates",
             "central_stderr: the central model's discrete Laplace count at the same ε"]
    if getattr(oracle, "debias", None) == "apple":
        notes.append("count-mean sketch: its hash family is drawn for this release, so the "
                     "apple estimates are unbiased over it; the standard errors include the "
                     "collisions' variance")
    return LocalResult(
        mechanism=got.mechanism, query="histogram", epsilon=eps, delta=0.0, n=n,
        estimate=cells(post), stderr=cells(se),
        ci_low=cells(np.clip(est - z * se, 0.0, n)), ci_high=cells(np.clip(est + z * se, 0.0, n)),
        unbiased=cells(est), central_stderr=math.sqrt(central), notes=got.notes + notes,
        **common)
