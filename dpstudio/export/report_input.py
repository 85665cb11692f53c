"""What a report shows: :class:`ReportInput` — public, but for the analyst's figures.

Kept apart from :mod:`dpstudio.export.report` (which draws with Qt) so that the report's
data-only pieces — its trade-off curves (:mod:`~dpstudio.export.report_curves`) and
utility series (:mod:`~dpstudio.export.utility_series`) — need no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpstudio.analysis.capabilities import Capability, capability
from dpstudio.analysis.result import shape_of
from dpstudio.engine.queries import QuerySpec
from dpstudio.export.report_analyst import AnalystFigures

__all__ = ["ReportInput", "is_model"]


def is_model(public: dict[str, Any]) -> bool:
    """Whether a release's public fields are a model's (logistic regression).

    Parameters
    ----------
    public : dict
        The release's public fields.

    Returns
    -------
    bool
    """
    return public.get("model") == "logistic_regression"


@dataclass
class ReportInput:
    """Everything the report shows; all of it public except ``analyst``.

    Attributes
    ----------
    release_id, uid, created_at : int, str, str
        The release's number in the project, its unique id and its time (UTC).
    dataset_name, fingerprint : str
        The dataset's file name and SHA-256.
    spec : QuerySpec
        The release's query as declared.
    public : dict
        The release's public fields (values, intervals, noise scale…).
    epsilon, delta : float
        What the release was charged.
    accountant : str
        The project's accountant for this dataset.
    budget_epsilon, budget_delta : float
        The dataset's budget.
    history : list of dict
        The dataset's ledger in order, this release included, as dicts with ``id``,
        ``time``, ``query``, ``column``, ``mechanism``, ``epsilon``, ``delta``, ``status``
        (``"this release"`` for this one).
    engine_version : str
        The DP Studio version that drew the release.
    trust_model : str
        ``"central"`` (default) or ``"local"``; a model release is ``"central"``.
    analyst : AnalystFigures or None
        None (default) for the stakeholder (public) copy. Figures read off the raw data
        at release time (:func:`~dpstudio.export.report_analyst.measure_clamping`) make
        it the analyst's copy: n, values outside the bounds, the error as bias + noise.
        Never set for a file that is published.
    """

    release_id: int
    uid: str
    created_at: str
    dataset_name: str
    fingerprint: str
    spec: QuerySpec
    public: dict[str, Any]
    epsilon: float
    delta: float
    accountant: str
    budget_epsilon: float
    budget_delta: float
    history: list[dict[str, Any]] = field(default_factory=list)
    engine_version: str = ""
    trust_model: str = "central"
    analyst: AnalystFigures | None = None

    @property
    def shape(self) -> str:
        """How the release reads (:func:`~dpstudio.analysis.result.shape_of`)."""
        return shape_of(self.trust_model, self.spec.query, is_model(self.public))

    @property
    def capability(self) -> Capability:
        """The capability row of the release (``"model"``'s for a model)."""
        return capability("model" if self.shape == "model" else self.trust_model)
