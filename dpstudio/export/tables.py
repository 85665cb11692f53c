"""What may leave the machine: the public part of a release, as a table.

Which fields are public is the analysis layer's allow-list
(:mod:`dpstudio.analysis.result`: :func:`public_result`, :func:`local_public`,
:func:`model_public`, re-exported here); this module lays them out as tables.

Every export goes through an :class:`ExportTable`: a statistic (one row), a histogram
(one row per cell), and hooks for the other kinds of privatized output — records
randomized on the user's side (local model) and model coefficients.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dpstudio.analysis.result import (
    LOCAL_PUBLIC_FIELDS,
    MODEL_PUBLIC_FIELDS,
    PUBLIC_FIELDS,
    local_public,
    model_public,
    plain,
    public_result,
)

__all__ = [
    "KINDS",
    "PUBLIC_FIELDS",
    "ExportTable",
    "LOCAL_PUBLIC_FIELDS",
    "MODEL_PUBLIC_FIELDS",
    "coefficient_noise_scales",
    "coefficients_table",
    "local_public",
    "local_table",
    "model_public",
    "model_table",
    "public_result",
    "records_table",
    "release_table",
]

KINDS = ("statistic", "histogram", "records", "coefficients")
COLUMN_TYPES = ("text", "number", "integer")


def local_table(public: Mapping[str, Any]) -> ExportTable:
    """The table of a local-model estimate: one row per histogram cell, or one mean row,
    each with its standard error (the protocol's exact variance) and normal interval."""
    q, col, conf = public["query"], public.get("column") or "", _num(public["confidence"])
    if q == "histogram":
        se = public["stderr"]
        rows = tuple(
            (q, col, str(label), _num(v), _num(public["ci_low"][label]),
             _num(public["ci_high"][label]), conf, _num(se[label]))
            for label, v in public["value"].items()
        )
        columns = (("statistic", "text"), ("column", "text"), ("cell", "text"),
                   ("value", "number"), ("ci_low", "number"), ("ci_high", "number"),
                   ("confidence", "number"), ("std_error", "number"))
        return ExportTable("histogram", columns, rows, f"local histogram of {col}")
    row = (q, col, _num(public["value"]), _num(public.get("ci_low")),
           _num(public.get("ci_high")), conf, _num(public.get("stderr")))
    columns = (("statistic", "text"), ("column", "text"), ("value", "number"),
               ("ci_low", "number"), ("ci_high", "number"), ("confidence", "number"),
               ("std_error", "number"))
    return ExportTable("statistic", columns, (row,), f"local {q} of {col}")


@dataclass(frozen=True)
class ExportTable:
    """A rectangular table of privatized values.

    ``columns`` are (name, type) with type ``"text"``, ``"number"`` or ``"integer"``;
    ``rows`` hold str, int, float or None (missing) in column order.
    """

    kind: str
    columns: tuple[tuple[str, str], ...]
    rows: tuple[tuple[Any, ...], ...]
    title: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown export kind {self.kind!r}")
        for name, kind in self.columns:
            if kind not in COLUMN_TYPES:
                raise ValueError(f"column {name!r}: unknown type {kind!r}")
        width = len(self.columns)
        rows = tuple(tuple(plain(v) for v in row) for row in self.rows)
        for row in rows:
            if len(row) != width:
                raise ValueError(f"a row has {len(row)} cells, expected {width}")
        object.__setattr__(self, "columns", tuple(tuple(c) for c in self.columns))
        object.__setattr__(self, "rows", rows)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def records(self) -> list[dict[str, Any]]:
        """Rows as dictionaries column → value."""
        return [dict(zip(self.names, row, strict=True)) for row in self.rows]


def _num(x: Any) -> float | None:
    if x is None:
        return None
    f = float(x)
    return f if math.isfinite(f) else None


def release_table(public: Mapping[str, Any]) -> ExportTable:
    """The table of a released statistic (one row) or histogram (one row per cell).

    ``std_error`` is the square root of the reported variance: the noise's standard
    deviation for counts, sums and histogram cells, a delta-method approximation for means
    and variances, and empty for quantiles.
    """
    q, col, conf = public["query"], public.get("column") or "", _num(public["confidence"])
    variance = public.get("variance")
    if public["query"] == "histogram":
        sd = math.sqrt(variance) if variance is not None else None
        rows = tuple(
            (q, col, str(label), _num(v), _num(public["ci_low"][label]),
             _num(public["ci_high"][label]), conf, sd)
            for label, v in public["value"].items()
        )
        columns = (("statistic", "text"), ("column", "text"), ("cell", "text"),
                   ("value", "number"), ("ci_low", "number"), ("ci_high", "number"),
                   ("confidence", "number"), ("std_error", "number"))
        return ExportTable("histogram", columns, rows, f"histogram of {col}")
    sd = math.sqrt(variance) if isinstance(variance, int | float) else None
    row = (q, col, _num(public["value"]), _num(public.get("ci_low")),
           _num(public.get("ci_high")), conf, sd)
    columns = (("statistic", "text"), ("column", "text"), ("value", "number"),
               ("ci_low", "number"), ("ci_high", "number"), ("confidence", "number"),
               ("std_error", "number"))
    return ExportTable("statistic", columns, (row,), f"{q} of {col}")


def _column_type(values: Sequence[Any]) -> str:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool | int) for v in present):
        return "integer"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "number"
    return "text"


def records_table(columns: Mapping[str, Sequence[Any]]) -> ExportTable:
    """Hook for locally privatized records: each column's randomized values, one per record.

    Only pass values that left each user's device already randomized (the local model's
    output); the table does not, and cannot, check that.
    """
    names = list(columns)
    lengths = {len(columns[n]) for n in names}
    if len(lengths) > 1:
        raise ValueError("record columns have different lengths")
    values = [[plain(v) for v in columns[n]] for n in names]
    kinds = [_column_type(v) for v in values]
    values = [[None if v is None else str(v) for v in col] if k == "text" else col
              for col, k in zip(values, kinds, strict=True)]
    rows = tuple(zip(*values, strict=True)) if names else ()
    return ExportTable("records", tuple(zip(names, kinds, strict=True)), rows,
                       "locally privatized records")


def coefficients_table(names: Sequence[str], estimates: Sequence[float],
                       std_errors: Sequence[float] | None = None,
                       ci_low: Sequence[float] | None = None,
                       ci_high: Sequence[float] | None = None) -> ExportTable:
    """Hook for privately trained model coefficients, with their uncertainty if known."""
    n = len(names)
    cols = {"std_error": std_errors, "ci_low": ci_low, "ci_high": ci_high}
    for key, seq in cols.items():
        if seq is not None and len(seq) != n:
            raise ValueError(f"{key} has {len(seq)} entries for {n} coefficients")
    rows = tuple(
        (str(names[i]), _num(estimates[i]), *[_num(seq[i]) if seq is not None else None
                                              for seq in cols.values()])
        for i in range(n)
    )
    columns = (("term", "text"), ("estimate", "number"), ("std_error", "number"),
               ("ci_low", "number"), ("ci_high", "number"))
    return ExportTable("coefficients", columns, rows, "model coefficients")


def coefficient_noise_scales(public: Mapping[str, Any]) -> list[float]:
    """The noise scale (Laplace b or Gaussian σ per normalized coordinate) carried to each
    released coefficient's units, the intercept last: a function of the declared bounds
    and the noise scale only.

    A coefficient is θⱼ·2/((hⱼ − lⱼ)√p); the intercept (θₚ − Σⱼ θⱼ(2lⱼ/(hⱼ − lⱼ) + 1))/√p,
    whose independent per-coordinate noises add in quadrature.
    """
    scale = float(public["noise_scale"])
    features = list(public["features"])
    root = math.sqrt(len(features) + 1)
    out, shift = [], 1.0
    for f in features:
        lo, hi = (float(b) for b in public["bounds"][f])
        out.append(scale * 2.0 / ((hi - lo) * root))
        shift += (2.0 * lo / (hi - lo) + 1.0) ** 2
    return out + [scale * math.sqrt(shift) / root]


def model_table(public: Mapping[str, Any]) -> ExportTable:
    """The table of a released model: one row (feature, coefficient) per feature, in the
    spec's order, then ``(intercept)``."""
    rows = tuple((str(c["feature"]), _num(c["coefficient"])) for c in public["coefficients"])
    return ExportTable("coefficients", (("feature", "text"), ("coefficient", "number")), rows,
                       f"logistic regression of {public.get('column') or ''}")
