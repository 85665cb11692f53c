"""A release plan as a version-2 spec (TOML), so ``dpstudio release PLAN.toml`` repeats it.

The text is what :func:`~dpstudio.project.spec_plan.parse_plan_spec` reads: the plan's
total ``epsilon`` and ``delta`` at the top, one ``[[statistics]]`` table per statistic
with the bounds, categories and keys it was planned with (as declared, so the spec stands
on its own), and the ``[split]``. The relation is left out: a release uses the dataset's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dpstudio.analysis.plan import ReleasePlan

__all__ = ["plan_spec_text", "save_plan_spec"]


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return json.dumps(str(v), ensure_ascii=False)  # a TOML basic string


def plan_spec_text(plan: ReleasePlan, dataset: str, *, report: bool = True,
                   script: bool = True) -> str:
    """The TOML text of ``plan`` released from ``dataset``."""
    lines = ["# A release plan written by DP Studio: dpstudio release THIS.toml --project P "
             "--out DIR", "schema_version = 2", f"dataset = {_value(dataset)}",
             f"epsilon = {_value(float(plan.epsilon))}"]
    if plan.delta:
        lines.append(f"delta = {_value(float(plan.delta))}")
    lines.append(f"confidence = {_value(float(plan.confidence))}")
    if plan.rows is not None:
        lines.append(f"rows = {int(plan.rows)}  # public, stated by the analyst")
    lines += [f"mechanism = {_value(plan.mechanism)}", f"report = {_value(report)}",
              f"script = {_value(script)}"]
    for s in plan.statistics:
        lines += ["", "[[statistics]]", f"column = {_value(s.column)}",
                  f"query = {_value(s.query)}"]
        if s.bounds is not None and s.query != "count":
            lines.append(f"bounds = {_value([float(b) for b in s.bounds])}")
        if s.categories is not None and s.query == "histogram":
            lines.append(f"categories = {_value(list(s.categories))}")
        if s.bins:
            lines.append(f"bins = {int(s.bins)}")
        if s.by:
            lines.append(f"by = {_value(list(s.by))}")
        if s.target is not None:
            lines.append(f"target = {_value(float(s.target))}")
        if s.mechanism:
            lines.append(f"mechanism = {_value(s.mechanism)}")
    lines += ["", "[split]", f"method = {_value(plan.method)}"]
    if plan.method == "weights" and plan.weights is not None:
        lines.append(f"weights = {_value([float(w) for w in plan.weights])}")
    return "\n".join(lines) + "\n"


def save_plan_spec(plan: ReleasePlan, dataset: str | os.PathLike[str],
                   path: str | os.PathLike[str]) -> Path:
    """Write ``plan`` as a spec at ``path``; the dataset relative to it where it can be."""
    target = Path(path)
    data = Path(dataset).resolve()
    folder = target.resolve().parent
    shown = data.relative_to(folder).as_posix() if data.is_relative_to(folder) else str(data)
    target.write_text(plan_spec_text(plan, shown), encoding="utf-8")
    return target
