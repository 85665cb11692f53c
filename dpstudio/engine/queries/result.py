"""The result of a central-model release: :class:`Release`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Release"]


@dataclass
class Release:
    """A released statistic with its privacy parameters and its utility.

    ``value``, ``ci_low`` and ``ci_high`` are floats, or dicts label → float for a
    histogram. ``sensitivity`` is the main statistic's (the sum's for a mean or variance);
    ``sensitivities`` gives each noisy statistic's, by name, as do ``components``.
    ``missing`` states how missing values were treated (public: it is part of the
    procedure). ``clamped`` (values outside the declared bounds or categories),
    ``missing_count`` (missing values: empty, NaN, ±inf) and ``non_finite_count`` (of
    which ±inf) are for the analyst's eyes only and never part of an exported release.
    """

    query: str
    mechanism: str
    epsilon: float
    delta: float
    relation: str
    value: Any
    sensitivity: float
    noise_scale: float | None
    variance: Any
    ci_low: Any
    ci_high: Any
    confidence: float
    simulated: bool
    source: str
    column: str | None = None
    variance_exact: bool = True
    components: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    clamped: int = 0
    sensitivities: dict[str, float] = field(default_factory=dict)
    missing: dict[str, Any] = field(default_factory=dict)
    missing_count: int = 0
    non_finite_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
