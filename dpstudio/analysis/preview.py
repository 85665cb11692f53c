"""One simulated release at the current choices, beside the true value it estimates.

:func:`preview` runs the release as the engine would, on a seeded
:class:`~dpstudio.engine.rng.SimulationSource`, and labels it a simulation. A central
preview is :func:`~dpstudio.engine.queries.run_query`; a local one goes through the
engine's own release path (:func:`~dpstudio.engine.local.run_local` on every row of the
column), so its ``n`` is a real release's. Every simulated run goes through the one
dispatch (:func:`~dpstudio.analysis.dispatch.run`); a protocol too slow to rerun on every
change (secure aggregation, or a shuffle of a large column:
:func:`~dpstudio.analysis.dispatch.quick_to_simulate`) is drawn from its planned error
(:func:`~dpstudio.analysis.dispatch.plan`) instead. The truth (for the analyst only) is
the same for every trust model: the statistic of the present values, unclamped
(:func:`~dpstudio.analysis.bias.estimand`), so the error shown includes the bias.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpstudio.analysis.choices import (
    Choices,
    cell_labels,
    is_histogram,
    local_column,
    resolved_params,
)
from dpstudio.analysis.compare import reach_at
from dpstudio.analysis.contribution import person_ids
from dpstudio.analysis.curves import Preview, trust_label
from dpstudio.analysis.dispatch import plan, quick_to_simulate, run
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.shuffled_local import is_shuffled_histogram
from dpstudio.analysis.utility import (
    PLANNED_MODELS,
    estimand,
    imputation_shift,
    protocol_values,
    sum_analysis,
)
from dpstudio.engine.errors import EngineError, QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.utility import true_value
from dpstudio.jobs import State, check

__all__ = ["preview"]


def preview(s: Choices, values: np.ndarray, state: State | None = None, *, seed: int = 1
            ) -> Preview:
    """One simulated release at the current choices, with its interval and the truth.

    Parameters
    ----------
    s : Choices
    values : numpy.ndarray
        The column's values.
    state : State, optional
        Cancellation of the job.
    seed : int
        Seed of the simulation (the same seed gives the same release).

    Returns
    -------
    Preview
        Labelled simulated, with the truth it estimates (for the analyst only).

    Raises
    ------
    QueryError
        For a trust model without a preview (federated).
    EngineError
        For choices the engine refuses.
    """
    check(state)
    source = SimulationSource(seed)
    if s.trust_model == "central":
        spec = s.spec()
        ids = person_ids(s)  # user-level: each person's rows bounded first, noise × k
        analysis = AnalysisSpec("central", spec) if ids is None else s.analysis()
        rel = run(analysis, values, source, ids=ids).engine
        truth = np.atleast_1d(true_value(values, spec)).astype(np.float64)
        if isinstance(rel.value, dict):
            labels = list(rel.value)
            value = np.array([rel.value[c] for c in labels])
            low = np.array([rel.ci_low[c] for c in labels])
            high = np.array([rel.ci_high[c] for c in labels])
        else:
            labels = None
            value = np.array([rel.value])
            low = None if rel.ci_low is None else np.array([rel.ci_low])
            high = None if rel.ci_high is None else np.array([rel.ci_high])
        return Preview(s.query, s.mechanism, "central", s.epsilon, rel.delta, labels, value,
                       low, high, truth, s.confidence, source.label, seed, rel.noise_scale,
                       rel.sensitivity, rel.clamped, list(rel.notes),
                       imputation_shift=imputation_shift(s, values))
    if s.trust_model == "local" and s.query == "heavy_hitters":
        return _heavy_hitters_preview(s, values, source, seed)
    if s.trust_model == "local":
        return _local_preview(s, values, source, seed)
    if is_shuffled_histogram(s.trust_model, "histogram" if is_histogram(s) else s.query):
        from dpstudio.analysis.shuffled_local import shuffled_histogram_preview

        return shuffled_histogram_preview(s, values, source, seed)
    if s.trust_model in PLANNED_MODELS:
        try:
            return _sum_preview(s, values, source, seed)
        except EngineError as e:
            raise _plain_refusal(s, values, e) from e
    raise QueryError(f"no preview for the {s.trust_model} model yet")


def _plain_refusal(s: Choices, values: np.ndarray, error: EngineError) -> EngineError:
    """A protocol's refusal at the chosen (ε, δ) in the words of the readout and of
    ``dpstudio compare`` (:func:`~dpstudio.analysis.compare.unreachable_reason`), with the
    δ the analyst set (the engine's may be the part of it a protocol gives its noise)."""
    reach = reach_at(s, values, s.epsilon)
    if reach.reaches(s.epsilon):  # not a matter of (ε, δ): the engine's own sentence
        return error
    return QueryError(f"{trust_label(s.trust_model)} {reach.reason(s.epsilon)}")


def _local_preview(s: Choices, values: np.ndarray, source: Any, seed: int) -> Preview:
    """A local release simulated through the engine's release path: every row sends one
    report (:func:`~dpstudio.engine.local.run_local`), so n and the estimated value are
    a real release's."""
    params = resolved_params(s, s.epsilon)
    column = local_column(s, values)
    # The same truth as the other models: the present values' statistic, unclamped, so
    # the preview's error shows the bias of clamping and of sending the bounds' middle.
    truth = estimand(s, values)
    if is_histogram(s):
        res = _run_local(s, column, params, "histogram", source, categories=cell_labels(s))
        labels = list(res.unbiased)  # the declared cells, then "other or missing"
        value = np.array([res.unbiased[c] for c in labels])
        low = np.array([res.ci_low[c] for c in labels])
        high = np.array([res.ci_high[c] for c in labels])
    else:
        labels = None
        res = _run_local(s, column, params, "mean", source, bounds=s.bounds)
        value, low, high = (np.array([v]) for v in (res.unbiased, res.ci_low, res.ci_high))
    notes = [f"each of the {res.n:,} people randomizes their own value before sending it; "
             "the collector never sees raw data"] + list(res.notes)
    return Preview(s.query, s.mechanism, "local", res.epsilon, res.delta, labels, value, low,
                   high, truth, s.confidence, res.source, seed, clamped=res.clamped,
                   notes=notes, n=res.n)


def _run_local(s: Choices, column: Any, params: dict[str, Any], query: str, source: Any,
               categories: Any = None, bounds: Any = None) -> Any:
    """One simulated local release through the analysis layer's dispatch (the engine's
    release path: every row sends a report); the engine's result object."""
    given = {k: v for k, v in params.items() if k not in ("epsilon", "delta")}
    spec = QuerySpec(query, s.mechanism, float(params.get("epsilon", s.epsilon)),
                     delta=float(params.get("delta", 0.0) or 0.0), bounds=bounds,
                     categories=None if categories is None else tuple(categories),
                     relation="replace", confidence=s.confidence, params=given,
                     column=s.column)
    return run(AnalysisSpec("local", spec), column, source).engine


def _heavy_hitters_preview(s: Choices, values: np.ndarray, source: Any, seed: int
                           ) -> Preview:
    """The words a heavy-hitters release would discover, with their estimated counts and
    intervals; the truth is each discovered word's count in the column (analyst only)."""
    from dpstudio.engine.local.respond import word_inputs
    from dpstudio.engine.local.sfp import word_codes

    column = np.asarray(values, dtype=object)
    res = _run_local(s, column, resolved_params(s, s.epsilon), "heavy_hitters", source)
    items = res.items or []
    labels = [str(i["item"]) for i in items]
    words = res.oracle.prepare(word_inputs(column).values)  # as the devices see them
    # Counted through the words' codes (one hashing pass), not a sorted string array.
    codes, texts = word_codes(words)
    counts = np.bincount(codes, minlength=len(texts))
    index = dict(zip(texts, counts.tolist(), strict=True))
    truth = np.array([float(index.get(w, 0)) for w in labels])
    value = np.array([float(i["count"]) for i in items])
    low = np.array([float(i["ci_low"]) for i in items])
    high = np.array([float(i["ci_high"]) for i in items])
    notes = [f"each of the {res.n:,} people sends one randomized report about their word; "
             "the collector discovers the frequent words without a dictionary"] + list(
                 res.notes)
    return Preview(s.query, s.mechanism, "local", res.epsilon, res.delta, labels, value, low,
                   high, truth, s.confidence, res.source, seed, notes=notes, n=res.n)


def _sum_preview(s: Choices, values: np.ndarray, source: Any, seed: int) -> Preview:
    """A sum or mean through the shuffle or secure-aggregation protocol.

    Where running the protocol is quick (shuffling a column of at most
    :data:`~dpstudio.analysis.dispatch.QUICK_MESSAGES` messages), it runs on the column
    through the dispatch. Otherwise (secure aggregation, whose output is exactly the noisy
    sum but whose masking costs seconds; a shuffle of a large column) the release is drawn
    from the protocol's planned error: normal noise of the planned standard error around
    the clamped statistic.
    """
    truth = estimand(s, values)
    # The column as the protocol sends it (missing values as the middle, clamped): the
    # planned draw centres on its statistic, and the live run is given it as sent.
    x = protocol_values(s, values)
    model = trust_label(s.trust_model)
    analysis = sum_analysis(s, s.epsilon)
    rows = int(np.size(values))  # every row is a client
    live = quick_to_simulate(s.trust_model)
    if live:  # the plan (data-free, cached) says how many messages a run would shuffle
        per_row = getattr(plan(analysis, rows), "messages_per_user", 1)
        live = quick_to_simulate(s.trust_model, rows, per_row)
    if live:
        res = run(analysis, x, source).engine
        value, half = float(res.value), float(res.error_bound)
        notes = [f"{res.n:,} people's messages shuffled ({res.messages_per_user} per "
                 f"person, {res.bits_per_message} bits each); the analyst sees only the "
                 "shuffled multiset"] + list(res.notes)
        eps_, dlt_ = res.epsilon, res.delta
    else:
        planned = plan(analysis, rows)
        clamped = float(x.sum()) if s.query == "sum" else float(x.mean())
        gen = np.random.Generator(np.random.PCG64([int(w) for w in source.uint64(4)]))
        value, half = clamped + gen.normal(0.0, planned.stderr), float(planned.error_bound)
        n = getattr(planned, "n_clients", planned.n)
        if quick_to_simulate(s.trust_model):  # a quick protocol, too many rows to rerun
            notes = [f"{n:,} people's messages shuffled ({planned.messages_per_user} per "
                     f"person, {planned.bits_per_message} bits each); the analyst sees "
                     "only the shuffled multiset",
                     "preview drawn from the protocol's planned error (normal "
                     f"approximation); the shuffle of {n * planned.messages_per_user:,} "
                     "messages itself is not re-run on every change"]
        else:
            notes = [f"{n:,} clients add noise shares and mask their messages; the server "
                     "learns only the noisy sum",
                     "preview drawn from the protocol's planned error (normal "
                     "approximation); the masking protocol itself is not re-run on every "
                     "change"]
        notes += list(planned.notes)  # the threat model the noise was planned for
        eps_, dlt_ = planned.epsilon, planned.delta
    notes.append(f"{model} model · interval: the protocol's rigorous {s.confidence:g} "
                 "error bound")
    # Counted as the central and local previews count them: the interval then says it
    # covers the clamped statistic, in every model's words alike.
    present = np.asarray(values, dtype=np.float64)
    present = present[np.isfinite(present)]
    clamped = int(np.count_nonzero((present < s.bounds[0]) | (present > s.bounds[1])))
    return Preview(s.query, s.mechanism, s.trust_model, eps_, dlt_, None, np.array([value]),
                   np.array([value - half]), np.array([value + half]), truth, s.confidence,
                   source.label, seed, clamped=clamped, notes=notes, n=rows)
