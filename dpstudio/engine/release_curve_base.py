"""What every release curve shares: :class:`ReleaseCurve`, the default type I errors,
and the central release's noise plan (:func:`release_parts`).

Split from :mod:`dpstudio.engine.release_curve` (which re-exports every public name) so
that each trust model's curves sit in a module of their own.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.queries import (
    QuerySpec,
    noisy_statistics,
)
from dpstudio.engine.registry import MechanismInfo
from dpstudio.engine.tradeoff import (
    alpha_grid,
)

__all__ = ["DEFAULT_ALPHA", "LATTICE_BUDGET", "ReleaseCurve", "release_parts"]

#: Type I errors of the curves by default (denser near 0, where curves are steep).
DEFAULT_ALPHA = alpha_grid(256)
#: Largest lattice (k·parts·steps) used to compose Laplace-type curves exactly.
LATTICE_BUDGET = 2_000
#: Largest exact lattice (steps × parts) of a discrete Laplace release.
_EXACT_LATTICE = 20_000


@dataclass(frozen=True, eq=False)
class ReleaseCurve:
    """The trade-off curve of one release (all its noisy statistics) and of k of them.

    Attributes
    ----------
    trust_model, mechanism : str
        What was asked for (the registry name of the mechanism).
    label : str
        Legend of the release's curve: the mechanism's label, ``"(n noisy sums)"`` when
        there are several; ``"<label>: one report"`` in the local model.
    alpha : numpy.ndarray
        Type I errors of both curves.
    beta : numpy.ndarray or None
        The release's trade-off curve at ``alpha``; None when there is no exact curve
        (the caller then draws the (ε, δ) guarantee).
    exact : bool
        False where ``beta`` is an approximation: a pessimistic lattice, or the
        pessimistic composition of a discrete Gaussian release's several noises.
    compositions : int
        k, the number of releases of ``composed_beta``.
    composed_beta : numpy.ndarray or None
        The trade-off curve of k independent such releases (k reports in the local model).
    composed_label : str
        Its legend (``"k releases"``, ``"k releases (μ = …)"``, ``"k reports"``, …).
    composed_exact : bool
        Like ``exact``, for ``composed_beta``.
    mu : float or None
        Gaussian-DP μ of one release where it is exact (Gaussian noise), else None (see
        :func:`tightest_mu` for the tightest μ below another curve).
    parts : int
        Number of noisy statistics one release adds noise to (1 in the local model).
    part_epsilon : float or None
        ε of each Laplace-type part (``epsilon / parts``), else None.
    attack : tuple or None
        ``(mechanism, params)`` for :func:`dpstudio.engine.attack.simulate_attack` that
        reproduces the release's pair of output distributions, when one statistic (or one
        G_μ) describes it; None otherwise (e.g. several Laplace parts: simulate ``parts``
        independent Laplace(``part_epsilon``) statistics).
    notes : tuple of str
        What the curve is, in the analysis view's words.
    region_only : bool
        True when only the release's (ε, δ) is known and ``beta`` is the boundary of that
        region (then ``exact`` is False): shuffle protocols, permute-and-flip, model
        training.
    region_note : str or None
        One sentence saying so, for the plot's caption and the report (None otherwise).
    """

    trust_model: str
    mechanism: str
    label: str
    alpha: np.ndarray
    beta: np.ndarray | None
    exact: bool
    compositions: int
    composed_beta: np.ndarray | None = None
    composed_label: str = ""
    composed_exact: bool = False
    mu: float | None = None
    parts: int = 1
    part_epsilon: float | None = None
    attack: tuple[str, dict[str, float]] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    region_only: bool = False
    region_note: str | None = None

    @property
    def available(self) -> bool:
        """Whether the engine has this release's own curve (else: draw its (ε, δ) bound)."""
        return self.beta is not None


# ------------------------------------------------------------------------ the noise plan


def release_parts(spec: QuerySpec) -> int:
    """How many noisy statistics one central release adds noise to, each with ε/parts.

    The engine's own plan: a count or sum is one, a mean two (sum and count) and a
    variance three (sum of squares, sum, count), one fewer when the number of rows is
    public (:func:`~dpstudio.engine.queries.noisy_statistics`); a histogram is one noisy
    vector whose neighbours differ in one cell (``add-remove``) or two (``replace``).

    Parameters
    ----------
    spec : QuerySpec
        The release (its query, bounds, relation and missing-value treatment matter).

    Returns
    -------
    int
        The number of parts (1 for queries not built from noisy sums).
    """
    if spec.query == "histogram":
        return 2 if spec.relation == "replace" else 1
    if spec.query in ("count", "sum", "mean", "variance") and (
            spec.query == "count" or spec.bounds is not None):
        return len(noisy_statistics(spec))
    return 1


def _family(info: MechanismInfo, spec: QuerySpec) -> Any:
    return info.build(**info.resolve(spec.mechanism_params()))


def _effective_delta(info: MechanismInfo, spec: QuerySpec) -> float:
    """δ if the mechanism takes one, else 0 (pure ε-DP)."""
    return float(spec.delta) if info.needs_delta else 0.0


def _check_k(k: Any) -> int:
    try:
        n = operator.index(k)
    except TypeError:
        raise ParameterError(f"the number of releases must be an integer ≥ 1, got {k!r}"
                             ) from None
    if isinstance(k, bool) or n < 1:
        raise ParameterError(f"the number of releases must be an integer ≥ 1, got {k!r}")
    return n

