"""The result of a central-model release: :class:`Release`."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.errors import ParameterError

__all__ = ["Release"]

# Queries whose noise is the engine's integer noise (one component per noisy sum or cell
# vector); the others select (quantile, median: the exponential mechanism).
_ADDITIVE = ("count", "sum", "mean", "variance", "histogram")
# How far a component's sensitivity, read back in grid steps, may sit from an integer.
_STEP_SLACK = 1e-9


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

    def loss_description(self) -> LossDescription:
        """What this release drew, for a ledger's tight accountants.

        A count, sum or histogram is one integer noise on the mechanism's grid: the
        discrete Laplace or discrete Gaussian in grid steps (a histogram under replace-one
        changes two cells). A mean or variance is several noisy sums, the budget split
        among them: a ``composed`` description of the parts. A quantile or median is the
        exponential mechanism: ``pure`` at its ε. Read off :attr:`components` (each
        noise's family, scale and grid, as the engine calibrated it), so a release
        computed from partitions' sums (:mod:`~dpstudio.engine.queries.partial`)
        describes itself the same way.

        Returns
        -------
        LossDescription
            Claiming this release's (ε, δ): a composed one claims the whole release's,
            never less than the sum of its parts.

        Raises
        ------
        ParameterError
            When the components do not describe integer noise the claim covers (then a
            ledger describes the release by its (ε, δ) alone).
        """
        if self.query not in _ADDITIVE:
            if self.delta > 0:
                return LossDescription("approx", epsilon=self.epsilon, delta=self.delta)
            return LossDescription("pure", epsilon=self.epsilon)
        if not self.components:
            raise ParameterError("this release lists no noise components to describe")
        coords = 2 if self.query == "histogram" and self.relation == "replace" else 1
        parts = tuple(_component_loss(c, coords) for c in self.components)
        if len(parts) == 1:
            return parts[0]
        eps = math.fsum(p.epsilon for p in parts)
        dlt = math.fsum(p.delta for p in parts)
        if eps > self.epsilon * (1 + _STEP_SLACK) or dlt > self.delta * (1 + _STEP_SLACK):
            raise ParameterError("this release's parts claim more than the release")
        # The claim is the release's own (ε, δ) (what it is charged), at least the parts'.
        return LossDescription("composed", epsilon=max(self.epsilon, eps),
                               delta=max(self.delta, dlt), parts=parts)


def _component_loss(component: dict, coordinates: int) -> LossDescription:
    """One integer noise (an ``IntegerNoise.to_dict()``) as a description, in grid steps."""
    try:
        family = component["family"]
        scale = float(component["scale_steps"])
        grid = float(component["grid"])
        value = float(component["sensitivity"])
        eps, dlt = float(component["epsilon"]), float(component["delta"])
    except (KeyError, TypeError, ValueError):
        raise ParameterError("a noise component lacks its family, scale, grid or "
                             "sensitivity") from None
    if family not in ("laplace", "gaussian") or grid <= 0:
        raise ParameterError(f"a noise component of family {family!r} is not integer noise")
    # sensitivity_value is Δ·grid·c (ℓ₁, Laplace) or Δ·grid·√c (ℓ₂, Gaussian), Δ in steps.
    per = coordinates if family == "laplace" else math.sqrt(coordinates)
    steps = value / (grid * per)
    whole = round(steps)
    if whole < 1 or abs(steps - whole) > _STEP_SLACK * max(1.0, steps):
        raise ParameterError(f"a noise component's sensitivity {value:g} is not a whole "
                             f"number of grid steps of {grid:g}")
    fam = "discrete_laplace" if family == "laplace" else "discrete_gaussian"
    return LossDescription(fam, epsilon=eps, delta=dlt, scale=scale, sensitivity=int(whole),
                           coordinates=coordinates)
