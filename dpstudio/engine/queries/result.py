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

    Attributes
    ----------
    query, mechanism : str
        What was released and how (registry name).
    epsilon, delta : float
        The guarantee of the whole release.
    relation : str
        The neighbouring relation (``"add-remove"`` or ``"replace"``).
    value : float or dict
        The released value (label → count for a histogram).
    sensitivity : float
        The main statistic's sensitivity, in the values' units.
    noise_scale : float or None
        The main noise's scale (Laplace b or Gaussian σ), in the values' units.
    variance : float or dict
        Variance of the released value's error.
    ci_low, ci_high : float or dict
        The interval at ``confidence``.
    confidence : float
        Coverage of the interval, in (0, 1).
    simulated : bool
        True when drawn from a seeded source (not a release).
    source : str
        The random source's label.
    column : str or None
        The column released.
    variance_exact : bool
        False when ``variance`` is a delta-method approximation (mean, variance).
    components : list of dict
        Each noisy statistic (its name, noise and share of the budget).
    notes : list of str
        Remarks for the reader.
    clamped : int
        Analyst only: values outside the declared bounds or categories.
    sensitivities : dict of str to float
        Each noisy statistic's sensitivity, by name.
    missing : dict
        The public missing-value treatment.
    missing_count, non_finite_count : int
        Analyst only: missing values, and how many of them were ±inf.
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
        """Every field as a plain dict, analyst-only counts included (exports drop them).

        Returns
        -------
        dict
        """
        return asdict(self)
