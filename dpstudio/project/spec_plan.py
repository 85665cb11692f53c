"""Release-plan specs (``schema_version = 2``): several statistics under one budget.

Example::

    schema_version = 2
    dataset = "survey.csv"          # relative to the spec file's folder
    epsilon = 1.0                   # the plan's total (with method = "accuracy": the most
    delta = 1e-6                    # its targets may spend)
    confidence = 0.95               # of every target and interval
    rows = 2000                     # a PUBLIC number of rows: a mean's target needs it
    # mechanism = "laplace"         # default of the statistics (or "gaussian", …)
    # relation = "add-remove"       # must match the dataset's registered relation
    # identifier = "person_id"      # user-level: one person per value of this column (the
    # max_rows = 5                  # schema's identifier by default), each bounded to k
    #                               # rows once for the whole plan
    formats = ["csv", "json"]
    report = true
    script = true
    # name, fingerprint, accountant, header, share_budget_with, separate_budget: as in
    # version 1; [budget]: the dataset's total budget if this release registers it

    [[statistics]]
    column = "age"
    query = "mean"                  # count, sum, mean or histogram
    bounds = [18, 100]              # or categories = [...] (histogram); from the schema
    by = ["region"]                 # optional: one or two columns with declared keys
    target = 1.5                    # optional: the interval half-width wanted
    # mechanism = "gaussian"; missing = "impute"; impute = 50.0; bins = 10

    [split]
    method = "weights"              # or "accuracy" (every statistic then has a target)
    weights = [1, 2]                # one per statistic (default: equal)

Version-1 specs are read by :mod:`dpstudio.project.spec` as before; it hands version 2
here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpstudio.analysis.plan import METHODS, PLAN_QUERIES, PlanStatistic, ReleasePlan
from dpstudio.engine.queries import RELATIONS
from dpstudio.project.errors import SpecError
from dpstudio.project.spec_fields import (
    prefix,
    read_accountant,
    read_bool,
    read_bounds,
    read_categories,
    read_number,
    read_script_format,
    read_string,
)

__all__ = ["PLAN_SPEC_VERSION", "PlanSpec", "parse_plan_spec"]

PLAN_SPEC_VERSION = 2

_TOP = ("schema_version", "dataset", "epsilon", "delta", "confidence", "rows", "mechanism",
        "relation", "formats", "report", "script", "script_format", "name", "fingerprint",
        "accountant", "header", "share_budget_with", "separate_budget", "identifier",
        "max_rows")
_TABLES = ("statistics", "split", "budget")
_STAT_KEYS = ("column", "query", "bounds", "categories", "bins", "by", "target",
              "mechanism", "missing", "impute")


@dataclass(frozen=True)
class PlanSpec:
    """A plan release to perform: the dataset, the plan (as written, resolved against the
    declared schema at release time) and what to write.

    Attributes
    ----------
    dataset : str
        The dataset's path.
    plan : ReleasePlan
        The statistics and the split.
    formats, report, script, script_format, name, fingerprint, accountant, header,
    share_budget_with, separate_budget, budget_epsilon, budget_delta
        As :class:`~dpstudio.project.spec.ReleaseSpec`.
    identifier, max_rows
        A user-level plan's identifier column and rows per person, when the spec names
        them (else the schema's declaration, if any, decides).
    """

    dataset: str
    plan: ReleasePlan
    formats: tuple[str, ...] = ("csv", "json")
    report: bool = False
    script: bool = False
    script_format: str = "py"
    name: str | None = None
    fingerprint: str | None = None
    accountant: str | None = None
    header: bool = True
    share_budget_with: int | None = None
    separate_budget: bool = False
    budget_epsilon: float | None = None
    budget_delta: float | None = None
    #: The spec's identifier column and k (a user-level plan; the schema's by default).
    identifier: str | None = None
    max_rows: int | None = None
    #: Whether the spec stated a relation (else the dataset's is used).
    relation_given: bool = False
    source: str = field(default="", compare=False)
    trust_model: str = "central"


def _statistic(raw: Any, i: int, where: str) -> PlanStatistic:
    at = f"{where}[[statistics]] {i + 1}: "
    if not isinstance(raw, dict):
        raise SpecError(f"{at}a statistic is a table")
    unknown = sorted(set(raw) - set(_STAT_KEYS))
    if unknown:
        raise SpecError(f"{at}unknown key {unknown[0]!r} (known: {', '.join(_STAT_KEYS)})")
    for key in ("column", "query"):
        if key not in raw:
            raise SpecError(f"{at}missing required key {key!r}")
    query = read_string(raw, "query", at)
    if query not in PLAN_QUERIES:
        raise SpecError(f"{at}query must be one of {', '.join(PLAN_QUERIES)}, got {query!r}")
    bounds = read_bounds(raw, at)
    categories = read_categories(raw, at)
    by = raw.get("by", [])
    if (not isinstance(by, list) or not all(isinstance(b, str) and b.strip() for b in by)
            or not 0 <= len(by) <= 2):
        raise SpecError(f"{at}by must list one or two column names, got {by!r}")
    target = read_number(raw, "target", at)
    if target is not None and not target > 0:
        raise SpecError(f"{at}target must be a positive half-width, got {target!r}")
    return PlanStatistic(
        column=read_string(raw, "column", at), query=query, bounds=bounds,
        categories=categories, by=tuple(b.strip() for b in by),
        target=None if target is None else float(target),
        mechanism=read_string(raw, "mechanism", at),
        bins=read_number(raw, "bins", at, integer=True, low=1),
        missing=read_string(raw, "missing", at, "impute" if "impute" in raw else "drop"),
        impute=read_number(raw, "impute", at))


def _split(data: dict, n: int, where: str) -> tuple[str, tuple[float, ...] | None]:
    split = data.get("split", {})
    if not isinstance(split, dict):
        raise SpecError(f"{where}[split] must be a table")
    unknown = sorted(set(split) - {"method", "weights"})
    if unknown:
        raise SpecError(f"{where}unknown key {unknown[0]!r} in [split] (method, weights)")
    method = split.get("method", "weights")
    if method not in METHODS:
        raise SpecError(f"{where}[split] method must be \"weights\" or \"accuracy\", got "
                        f"{method!r}")
    weights = split.get("weights")
    if weights is None:
        return method, None
    if method != "weights":
        raise SpecError(f"{where}[split] weights go with method = \"weights\"")
    if (not isinstance(weights, list) or len(weights) != n
            or any(isinstance(w, bool) or not isinstance(w, int | float) or not w > 0
                   for w in weights)):
        raise SpecError(f"{where}[split] weights must be {n} positive numbers, one per "
                        f"statistic, got {weights!r}")
    return method, tuple(float(w) for w in weights)


def parse_plan_spec(data: dict[str, Any], source: str = "", base: Path | None = None
                    ) -> PlanSpec:
    """A :class:`PlanSpec` from parsed TOML (``schema_version = 2``).

    Parameters
    ----------
    data : dict
        The parsed TOML.
    source : str, optional
        The file's name, for messages.
    base : pathlib.Path, optional
        The folder a relative dataset path is relative to.

    Returns
    -------
    PlanSpec

    Raises
    ------
    SpecError
        In one line, for anything the spec gets wrong.
    """
    import os

    where = prefix(source)
    unknown = sorted(set(data) - set(_TOP) - set(_TABLES))
    if unknown:
        raise SpecError(f"{where}unknown key {unknown[0]!r} in a version-2 spec (known: "
                        f"{', '.join(_TOP)}, [[statistics]], [split], [budget])")
    for key in ("dataset", "epsilon"):
        if key not in data:
            raise SpecError(f"{where}missing required key {key!r}")
    raw_stats = data.get("statistics")
    if not isinstance(raw_stats, list) or not raw_stats:
        raise SpecError(f"{where}a version-2 spec needs at least one [[statistics]] table")
    stats = tuple(_statistic(s, i, where) for i, s in enumerate(raw_stats))
    method, weights = _split(data, len(stats), where)
    dataset = read_string(data, "dataset", where)
    if base is not None and not os.path.isabs(dataset):
        dataset = str(base / dataset)
    relation = read_string(data, "relation", where, "add-remove")
    if relation not in RELATIONS:
        raise SpecError(f"{where}relation must be add-remove or replace, got {relation!r}")
    confidence = float(read_number(data, "confidence", where, 0.95))
    if not 0.0 < confidence < 1.0:
        raise SpecError(f"{where}confidence must lie strictly between 0 and 1, got "
                        f"{confidence}")
    budget = data.get("budget", {})
    if not isinstance(budget, dict) or set(budget) - {"epsilon", "delta"}:
        raise SpecError(f"{where}[budget] is a table of epsilon and delta")
    formats = data.get("formats", ["csv", "json"])
    allowed = ("csv", "json")
    if (not isinstance(formats, list) or not formats
            or any(f not in allowed for f in formats)):
        raise SpecError(f"{where}a plan's formats are \"csv\" and \"json\", got {formats!r}")
    fingerprint = read_string(data, "fingerprint", where)
    share = read_number(data, "share_budget_with", where, integer=True, low=1,
                    what="a dataset id")
    separate = read_bool(data, "separate_budget", where, False)
    if separate and share is not None:
        raise SpecError(f"{where}share_budget_with and separate_budget = true contradict each "
                        "other: choose one")
    if read_script_format(data, where) != "py":
        raise SpecError(f"{where}a plan's script is a Python file: leave out script_format "
                        "(a notebook comes later)")
    plan = ReleasePlan(
        statistics=stats, epsilon=float(read_number(data, "epsilon", where, low=0.0)),
        delta=float(read_number(data, "delta", where, 0.0, low=0.0)), method=method,
        weights=weights, confidence=confidence, relation=relation,
        mechanism=read_string(data, "mechanism", where, "laplace"),
        rows=read_number(data, "rows", where, integer=True, low=1, what="a number of rows"))
    identifier = read_string(data, "identifier", where)
    max_rows = read_number(data, "max_rows", where, integer=True, low=1,
                       what="a number of rows per person")
    b_eps = read_number(budget, "epsilon", f"{where}[budget] ")
    b_delta = read_number(budget, "delta", f"{where}[budget] ")
    return PlanSpec(
        dataset=dataset, plan=plan, formats=tuple(dict.fromkeys(formats)),
        report=read_bool(data, "report", where, False),
        script=read_bool(data, "script", where, False),
        script_format=read_script_format(data, where), name=read_string(data, "name", where),
        fingerprint=None if fingerprint is None else fingerprint.lower(),
        accountant=read_accountant(data, where), header=read_bool(data, "header", where, True),
        share_budget_with=share, separate_budget=separate,
        budget_epsilon=None if b_eps is None else float(b_eps),
        budget_delta=None if b_delta is None else float(b_delta),
        relation_given="relation" in data, source=source,
        identifier=None if identifier is None else identifier.strip(),
        max_rows=None if max_rows is None else int(max_rows))
