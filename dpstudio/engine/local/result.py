"""What a local release returns: :class:`LocalResult` (re-exported by
:mod:`dpstudio.engine.local.run`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.local.loss import randomizer_loss

__all__ = ["LocalResult"]


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
        relation is replace-one: the privacy loss is the randomizer's, described exactly
        where its worst-case pair is known (:mod:`~dpstudio.engine.local.loss`: K-ary
        randomized response, unary encoding, local hashing, Hadamard, the count-mean
        sketch, the sequence-fragment puzzle, Duchi's bit, the grid noise of the local
        Laplace and Gaussian) and by its own (ε, δ) otherwise.

        Returns
        -------
        LossDescription
        """
        return randomizer_loss(self.oracle, float(self.epsilon), float(self.delta))

