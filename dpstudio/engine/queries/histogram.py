"""Histograms: counts per declared category or equal-width bin, with integer noise.

One record changes one cell by 1 (add-remove) or two cells by 1 each (replace); the
counts are integers, so the noise's grid never coarsens past 1.
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries.columns import _numeric, category_counts
from dpstudio.engine.queries.result import Release
from dpstudio.engine.queries.spec import QuerySpec, check_bounds
from dpstudio.engine.queries.sums import _family

__all__ = ["histogram_bins"]


def histogram_bins(spec: QuerySpec) -> tuple[list[str], np.ndarray | None]:
    """Labels of the histogram's cells and, for a binned numeric histogram, the edges.

    Parameters
    ----------
    spec : QuerySpec
        A histogram with declared categories, or declared bounds and bins.

    Returns
    -------
    labels : list of str
        One per cell: the categories, or ``"[a, b)"`` per bin.
    edges : numpy.ndarray or None
        The ``bins + 1`` bin edges, or None for a categorical histogram.
    """
    if spec.categories is not None:
        return [str(c) for c in spec.categories], None
    lo, hi = check_bounds(spec.bounds)
    edges = np.linspace(lo, hi, int(spec.bins) + 1)
    return [f"[{a:g}, {b:g})" for a, b in zip(edges[:-1], edges[1:], strict=True)], edges


def _histogram_parts(values, spec: QuerySpec):
    """True counts per cell, calibrated noise, labels and the analyst-only clamped count."""
    labels, edges = histogram_bins(spec)
    v = np.asarray(values)
    if v.size == 0:
        raise QueryError("the column is empty")
    if edges is None:
        counts, clamped, _ = category_counts(v, labels)
    else:
        col = _numeric(v, spec)
        clamped = col.clamped
        cells = np.clip(np.searchsorted(edges, col.values, side="right") - 1, 0,
                        len(labels) - 1)
        counts = np.bincount(cells, minlength=len(labels)).astype(np.int64)
    return counts, _histogram_noise(spec), labels, clamped


def _histogram_noise(spec: QuerySpec):
    """The calibrated integer noise of every cell, from the spec alone."""
    fam = _family(spec)
    # One record changes one cell by 1 (add/remove) or two cells by 1 each (replace).
    coords = 2 if spec.relation == "replace" else 1
    # Counts are integers: the grid never coarsens past 1 here (no rounding of counts).
    grid = min(1.0, fam.grid(1.0, spec.epsilon, spec.delta, coords))
    return fam.calibrate(int(round(1.0 / grid)), grid, spec.epsilon, spec.delta, coords)


def _histogram(values, spec, source):
    counts, noise, labels, clamped = _histogram_parts(values, spec)
    return _histogram_release(counts, noise, labels, clamped, spec, source)


def _histogram_release(counts, noise, labels, clamped, spec, source):
    """Noise drawn once over exact integer cell counts (however they were counted)."""
    noisy = (counts * noise.sensitivity + noise.sample(counts.size, source)) * noise.grid
    h = noise.half_width(spec.confidence)
    return Release(
        query="histogram", mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
        relation=spec.relation, value=dict(zip(labels, noisy.tolist(), strict=True)),
        sensitivity=noise.sensitivity_value, noise_scale=noise.noise_scale,
        variance=noise.variance, ci_low=dict(zip(labels, (noisy - h).tolist(), strict=True)),
        ci_high=dict(zip(labels, (noisy + h).tolist(), strict=True)),
        confidence=spec.confidence, simulated=False, source="",
        components=[noise.to_dict()],
        notes=["each interval holds with the stated probability on its own (not jointly)"],
        clamped=clamped,
    )
