"""The server side of a local release: estimates, intervals and notes from the reports
(:func:`mean_result`, :func:`histogram_result`, :func:`result_fields`); re-exported by
:mod:`dpstudio.engine.local.run`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.local.base import POSTPROCESS, MeanOracle, postprocess_counts
from dpstudio.engine.local.collect import Collected
from dpstudio.engine.local.result import LocalResult
from dpstudio.engine.rng import Source
from dpstudio.engine.special import ndtri
from dpstudio.jobs import State, check

__all__ = ["histogram_result", "interval_z", "mean_result", "result_fields"]


def interval_z(postprocess: str, confidence: float) -> float:
    """Check the estimate's options, before anything is drawn; the intervals' normal
    quantile (for :func:`~dpstudio.engine.local.run_local` and an estimate from
    aggregated reports, :mod:`~dpstudio.engine.local.partial`).

    Parameters
    ----------
    postprocess : str
        One of :data:`~dpstudio.engine.local.base.POSTPROCESS`.
    confidence : float
        The intervals' level, in (0, 1).

    Returns
    -------
    float
        z with P(|N(0, 1)| ≤ z) = ``confidence``.

    Raises
    ------
    QueryError
        For another ``postprocess`` or a level outside (0, 1).
    """
    if postprocess not in POSTPROCESS:
        raise QueryError(f"postprocess must be one of {', '.join(POSTPROCESS)}; "
                         f"got {postprocess!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise QueryError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    return float(-ndtri((1.0 - confidence) / 2.0))


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

