"""What the analyst's copy of a report adds: figures read off the raw data at release time.

The stakeholder copy shows only what was released. The analyst's copy also states how
many records the release used and, when the declared bounds clamp values, how far that
moves the statistic: the error is then bias + noise, not noise alone (issue 12, item 1).
The bias is split into its causes — clamping, and missing values filled in — by the
analysis layer's own :func:`~dpstudio.analysis.bias.clamping_report`, the function the
application's readout calls, so both say the same sentence.
:func:`measure_clamping` reads these off the very values the release used; the figures
never enter a public file (:data:`dpstudio.export.manifest.FORBIDDEN_KEYS` keeps the
manifest clean, and :func:`dpstudio.export.report.render_report` prints them only in the
analyst's copy). No Qt here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpstudio.analysis.bias import MATERIAL_FRACTION, MATERIAL_SHARE, clamping_report
from dpstudio.analysis.capabilities import release_fill
from dpstudio.analysis.choices import Choices
from dpstudio.engine.errors import EngineError
from dpstudio.engine.missing import fill_missing
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.utility import true_value

__all__ = ["BIASED_QUERIES", "AnalystFigures", "measure_clamping", "percent"]

#: Statistics whose expectation clamping moves, and whose bias is measured.
BIASED_QUERIES = ("sum", "mean", "variance")


@dataclass(frozen=True)
class AnalystFigures:
    """Figures read off the raw data at release time; for the analyst's eyes only.

    Attributes
    ----------
    rows : int
        Rows in the column.
    n : int
        Records the statistic used: the present values, or every row when missing values
        are imputed (or, in the local model, sent as the middle of the bounds).
    missing : int
        Rows without a usable value (empty, NaN, ±inf).
    outside : int
        Present values outside the declared bounds, clamped to the nearest bound.
    bounds : tuple of float, or None
        The declared bounds (None for a statistic without bounds).
    raw : float or None
        The statistic of the present values, unclamped (what the analyst wants to know).
    clamped : float or None
        The statistic the noise was added to (clamped, imputed).
    bias : float or None
        ``clamped - raw``, in the statistic's units; None where it is not measured.
    causes : dict or None
        The bias split into its causes, as the application computes it
        (:func:`~dpstudio.analysis.bias.clamping_report`: ``clamping_bias``,
        ``missing_bias``, ``missing_fraction``, ``missing_value``, ``cause``…); None where
        nothing is clamped or filled in, or the statistic has no bias model.
    """

    rows: int
    n: int
    missing: int = 0
    outside: int = 0
    bounds: tuple[float, float] | None = None
    raw: float | None = None
    clamped: float | None = None
    bias: float | None = None
    causes: dict[str, Any] | None = field(default=None, compare=False, hash=False)

    @property
    def clamping_bias(self) -> float | None:
        """The part of :attr:`bias` clamping causes (all of it without :attr:`causes`)."""
        return self.bias if self.causes is None else float(self.causes["clamping_bias"])

    @property
    def missing_bias(self) -> float:
        """The part of :attr:`bias` filling in missing values causes (0 when dropped)."""
        return 0.0 if self.causes is None else float(self.causes["missing_bias"])

    @property
    def fills_missing(self) -> bool:
        """Whether the release filled in missing values (and so biased the statistic)."""
        return (self.causes is not None and self.causes.get("missing_value") is not None
                and self.causes.get("missing_fraction", 0.0) > 0)

    @property
    def fraction_outside(self) -> float:
        """Share of the present values outside the declared bounds (0 when none)."""
        present = self.rows - self.missing
        return self.outside / present if present > 0 else 0.0

    def total_error(self, noise: float) -> float:
        """Expected error √(noise² + bias²) for a noise standard deviation ``noise``.

        Parameters
        ----------
        noise : float
            The noise's standard deviation, in the statistic's units.

        Returns
        -------
        float
        """
        return math.hypot(noise, self.bias or 0.0)

    def material(self, noise: float) -> bool:
        """Whether the bias matters: over 5% of values outside, or a bias of at least a
        tenth of the noise (the application's rule, :mod:`dpstudio.analysis.bias`).

        Parameters
        ----------
        noise : float
            The noise's standard deviation at the released ε.

        Returns
        -------
        bool
        """
        bias = abs(self.bias or 0.0)
        return (self.outside > 0 and self.fraction_outside > MATERIAL_FRACTION) or (
            bias > 0 and math.isfinite(noise) and bias >= MATERIAL_SHARE * noise)


def percent(fraction: float) -> str:
    """A share as a percentage a reader can take in: "84%", "0.4%", "under 0.1%"."""
    p = 100.0 * fraction
    if p == 0:
        return "0%"
    if p < 0.1:
        return "under 0.1%"
    if p < 1 or 99 < p < 100:
        return f"{p:.1f}%"
    return f"{p:.0f}%"


def measure_clamping(spec: QuerySpec, values: np.ndarray, trust_model: str = "central"
                     ) -> AnalystFigures:
    """Measure what the release's declaration does to the data it was drawn from.

    Parameters
    ----------
    spec : QuerySpec
        The release's query as drawn (bounds, missing-value treatment).
    values : numpy.ndarray
        The column the release read (the same values: call this at release time).
    trust_model : str, optional
        ``"local"``: every row reports, a missing value as the middle of the bounds.

    Returns
    -------
    AnalystFigures
        Rows, records used, missing values; for a bounded numeric statistic the values
        outside the bounds; for a sum, mean or variance also the raw and clamped
        statistic, the bias and its causes (:attr:`AnalystFigures.causes`).
    """
    x = np.asarray(values)
    rows = int(x.size)
    if spec.bounds is None or spec.categories is not None or x.dtype.kind not in "fiub":
        present = int(np.count_nonzero(np.not_equal(x, None))) if x.dtype.kind == "O" \
            else rows if x.dtype.kind not in "fc" else int(np.count_nonzero(np.isfinite(x)))
        return AnalystFigures(rows=rows, n=present, missing=rows - present)
    xf = x.astype(np.float64)
    finite = xf[np.isfinite(xf)]
    lo, hi = float(spec.bounds[0]), float(spec.bounds[1])
    missing = rows - int(finite.size)
    outside = int(np.count_nonzero((finite < lo) | (finite > hi)))
    fill = release_fill(spec, trust_model)
    used = fill_missing(xf, fill)[0] if fill is not None else finite
    figures = AnalystFigures(rows=rows, n=int(used.size), missing=missing, outside=outside,
                             bounds=(lo, hi))
    if spec.query not in BIASED_QUERIES or finite.size == 0:
        return figures
    # The truth drops missing values and clamps nothing (engine.utility.true_value); the
    # release's expectation is the same statistic of the values it used, clamped.
    drop = replace(spec, missing="drop", impute=None)
    raw = float(true_value(finite, drop))
    clamped = float(true_value(np.clip(used, lo, hi), drop))
    return replace(figures, raw=raw, clamped=clamped, bias=clamped - raw,
                   causes=_causes(spec, xf, trust_model))


def _causes(spec: QuerySpec, values: np.ndarray, trust_model: str) -> dict[str, Any] | None:
    """The application's split of the bias (:func:`~dpstudio.analysis.bias.clamping_report`),
    or None where it has none. Measured inside the release's transaction: a failure here
    costs the analyst's copy its split, never the release."""
    choices = Choices(
        column=spec.column or "", column_type="numeric", value_types=("numeric",),
        trust_model=trust_model, query=spec.query, mechanism=spec.mechanism,
        epsilon=float(spec.epsilon), delta=float(spec.delta),
        params=tuple(sorted(dict(spec.params or {}).items())), bounds=spec.bounds,
        relation=spec.relation, confidence=float(spec.confidence), missing=spec.missing,
        impute=spec.impute)
    try:
        report = clamping_report(choices, values)
    except (EngineError, ValueError, TypeError, KeyError):
        return None
    if report is None:
        return None
    # The ε-free judgement of clamping_report is redone at the released ε and noise.
    report.pop("warning", None)
    report.pop("material_from_epsilon", None)
    return report
