"""The files of a release plan: one table of every statistic's values, one manifest, one
report and one script, rendered in memory (the release transaction writes them).

The manifest has the identity fields of a single release's manifest (``kind``,
``release``, ``privacy`` with the plan's whole charge, ``dataset``, ``query`` with
``statistic = "plan"``), so the ledger's audit and ``dpstudio verify`` read it the same
way, and a ``statistics`` list: each statistic with its (ε, δ) share, its planned
half-width and its value(s) with intervals.

The script opens as every release script does (:mod:`dpstudio.export.script_preamble`:
the warning, the stderr note, the dataset's SHA-256 read in chunks) and writes each
statistic's :class:`~dpstudio.engine.queries.QuerySpec` as an explicit keyword call.

A user-level plan (each person's rows bounded to k once for the whole plan) states it as
a single user-level release does (:mod:`dpstudio.export.manifest_contributions`): the
query's and the privacy section's ``relation`` read "add or remove one person (up to k
rows)" and a ``contributions`` section names the identifier and k, so ``dpstudio verify``
checks they agree. How many rows were dropped is in no file.
"""

from __future__ import annotations

import csv
import html
import io
import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from dpstudio import __version__
from dpstudio.engine.contribution import person_relation
from dpstudio.export.manifest import MANIFEST_KIND, MANIFEST_VERSION, file_entry, manifest_bytes
from dpstudio.export.manifest_contributions import contributions_section, contributions_sentence
from dpstudio.export.rendered import RenderedFile
from dpstudio.export.script_preamble import (
    DATASET_LINES,
    END,
    READERS,
    USAGE,
    doc_safe,
    literal,
    preamble,
    spec_lines,
)

__all__ = ["PlanBundle", "plan_file_names", "render_plan_bundle"]


@dataclass
class PlanBundle:
    """What a plan release's files are rendered from (public fields only)."""

    release_id: int
    uid: str
    created_at: str
    stem: str
    dataset_name: str
    fingerprint: str
    schema: dict[str, Any]
    epsilon: Decimal
    delta: Decimal
    accountant: str
    budget_epsilon: Decimal
    budget_delta: Decimal
    plan: dict[str, Any]
    #: One per statistic: label, column, query, by, bounds, categories, mechanism,
    #: epsilon, delta, target, planned_half_width, value, ci_low, ci_high, notes, spec,
    #: reader, keys.
    statistics: list[dict[str, Any]]
    formats: tuple[str, ...] = ("csv", "json")
    report: bool = False
    script: bool = False
    header: bool = True
    notes: list[str] = field(default_factory=list)
    #: A user-level plan's identifier column and k (None: row-level).
    identifier: str | None = None
    max_rows: int | None = None
    #: The dataset's path on this machine: only the script's default (as a single
    #: release's script has), never the manifest or report.
    dataset_path: str = ""


def plan_file_names(stem: str, formats: tuple[str, ...], report: bool, script: bool
                    ) -> list[str]:
    """The names a plan release writes (the manifest last).

    Parameters
    ----------
    stem : str
    formats : tuple of str
        ``csv`` and/or ``json``.
    report, script : bool

    Returns
    -------
    list of str
    """
    names = [f"{stem}.{f}" for f in formats]
    if report:
        names.append(f"{stem}.report.html")
    if script:
        names.append(f"{stem}.py")
    return names + [f"{stem}.manifest.json"]


def _rows(stats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for i, s in enumerate(stats):
        value = s["value"]
        cells = value.items() if isinstance(value, dict) else [("", value)]
        for cell, v in cells:
            lo = s["ci_low"][cell] if isinstance(s["ci_low"], dict) else s["ci_low"]
            hi = s["ci_high"][cell] if isinstance(s["ci_high"], dict) else s["ci_high"]
            out.append({"statistic": i + 1, "label": s["label"], "column": s["column"],
                        "query": s["query"], "by": " / ".join(s["by"]), "cell": cell,
                        "value": v, "ci_low": lo, "ci_high": hi, "epsilon": s["epsilon"],
                        "delta": s["delta"], "target": s.get("target"),
                        "planned_half_width": s.get("planned_half_width")})
    return out


def _csv(stats: list[dict[str, Any]]) -> bytes:
    buf = io.StringIO()
    rows = _rows(stats)
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().encode()


def _public_stat(s: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in s.items() if k not in ("spec", "reader", "keys")}


def _num(x: Any) -> str:
    return "" if x is None else f"{x:.4g}"


def _report(inp: PlanBundle) -> bytes:
    e = html.escape
    rows = "".join(
        f"<tr><td>{r['statistic']}</td><td>{e(r['label'])}</td><td>{e(str(r['cell']))}</td>"
        f"<td>{r['value']:.6g}</td><td>[{r['ci_low']:.6g}, {r['ci_high']:.6g}]</td>"
        f"<td>{r['epsilon']:.4g}</td><td>{r['delta']:.3g}</td>"
        f"<td>{_num(r['target'])}</td><td>{_num(r['planned_half_width'])}</td></tr>"
        for r in _rows(inp.statistics))
    split = inp.plan
    neighbours = split['relation']
    person = ""
    if inp.max_rows is not None:
        neighbours = person_relation(inp.max_rows)
        person = (f"\n<p>User-level: one person per value of {e(str(inp.identifier))!s}. "
                  f"{e(contributions_sentence(inp.max_rows))} The bounding was done once, "
                  "for every statistic of the plan.</p>")
    notes = "".join(f"<li>{e(n)}</li>" for n in inp.notes + sorted(
        {n for s in inp.statistics for n in s.get("notes", [])}))
    text = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Release plan #{inp.release_id}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}
td,th{{padding:.2em .6em;border-bottom:1px solid #ccc;text-align:left}}</style></head>
<body><h1>Release plan #{inp.release_id}: {len(inp.statistics)} statistics of
{e(inp.dataset_name)}</h1>
<p>All statistics were released together under one differential-privacy budget of
ε = {inp.epsilon}, δ = {inp.delta} ({e(inp.accountant)} accountant), split
{e(split['method'] == 'accuracy' and 'by accuracy targets' or 'by weights')}
(confidence {split['confidence']:g}, {e(neighbours)} neighbours). Each interval
holds with that probability on its own, not jointly.</p>{person}
<table><tr><th>#</th><th>statistic</th><th>group</th><th>value</th><th>interval</th>
<th>ε</th><th>δ</th><th>target ±</th><th>planned ±</th></tr>{rows}</table>
<h2>Notes</h2><ul>{notes}</ul>
<p>DP Studio {__version__}; dataset SHA-256 {inp.fingerprint}; release {inp.uid};
{e(inp.created_at)}.</p></body></html>
"""
    return text.encode()


_PREAMBLE = preamble(released="release plan")

_SCRIPT = '''#!/usr/bin/env python3
"""Reproduce DP Studio release plan #{release_id} ({count} statistics) with dpstudio.

Generated {created_at} by DP Studio {version} for the dataset {dataset_name}
(SHA-256 {fingerprint}).

Each statistic is drawn again at its share of the plan's budget, every noise afresh.

''' + _PREAMBLE.warning + USAGE + '''
import sys
from pathlib import Path

import numpy as np

from dpstudio.data import {data_imports}
from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.queries.grouped import grouped_release
from dpstudio.engine.rng import SecureSource

''' + DATASET_LINES + '''
# A user-level plan: each person's rows beyond MAX_ROWS are dropped at random ONCE for
# every statistic, and every noise is MAX_ROWS × a row's (None: row-level).
IDENTIFIER = {identifier!r}
MAX_ROWS = {max_rows!r}

# Each statistic: its query at its share of the budget, how its column is read, the
# columns it is grouped by and their declared keys (never read off the data).
STATISTICS = [
{statistics}
]


''' + _PREAMBLE.main + '''\
    frame = load_table(DATASET{header_arg})
    keep = None
    if IDENTIFIER is not None:
        from dpstudio.engine.contribution import bound_contributions

        ids = category_column(frame, IDENTIFIER)
        keep = bound_contributions(ids, MAX_ROWS, SecureSource())
    for stat in STATISTICS:
        spec, by = stat["spec"], stat["by"]
        values = np.asarray(stat["reader"](frame, spec.column))
        key_values = [np.asarray(category_column(frame, b)) for b in by]
        if keep is not None:
            values, key_values = values[keep], [k[keep] for k in key_values]
        if by:
            out = grouped_release(values, key_values, stat["keys"], spec, SecureSource(),
                                  by=by, max_rows=MAX_ROWS or 1)
            print(spec.query, spec.column, "by", by, out.public()["value"])
        elif keep is not None:
            from dpstudio.engine.queries.bounded import run_bounded

            out = run_bounded(values, spec, MAX_ROWS, SecureSource())
            print(spec.query, spec.column, out.value)
        else:
            out = release(values, spec, SecureSource())
            print(spec.query, spec.column, out.value)
''' + END


def _statistic(i: int, s: dict[str, Any]) -> str:
    """One entry of the script's STATISTICS: explicit keyword calls, one field a line."""
    if s["reader"] not in READERS:  # written as a name the script imports
        raise ValueError(f"unknown column reader {s['reader']!r}")
    return (f"    dict(  # {i + 1}. {doc_safe(s['label'])}\n"
            f"        spec=QuerySpec(\n{spec_lines(s['spec'], ' ' * 12)}\n        ),\n"
            f"        reader={s['reader']},\n"
            f"        by={literal(tuple(str(b) for b in s['by']))},\n"
            f"        keys={literal(tuple(tuple(str(k) for k in ks) for ks in s['keys']))},\n"
            "    ),")


def _script(inp: PlanBundle, name: str) -> bytes:
    names = {"load_table", "sha256_file", "category_column"}
    names.update(s["reader"] for s in inp.statistics)
    return _SCRIPT.format(
        release_id=inp.release_id, count=len(inp.statistics), created_at=inp.created_at,
        version=__version__, dataset_name=doc_safe(inp.dataset_name),
        fingerprint=inp.fingerprint,
        # The exact charge (as the manifest's ``epsilon_exact``), not a rounded float.
        epsilon=str(inp.epsilon), delta=str(inp.delta), script_name=name,
        dataset_path=inp.dataset_path or inp.dataset_name,
        data_imports=", ".join(sorted(names)), identifier=inp.identifier,
        max_rows=inp.max_rows,
        statistics="\n".join(_statistic(i, s) for i, s in enumerate(inp.statistics)),
        header_arg="" if inp.header else ", header=False").encode()


def render_plan_bundle(inp: PlanBundle) -> list[RenderedFile]:
    """Every file of the plan release, the manifest last.

    Parameters
    ----------
    inp : PlanBundle

    Returns
    -------
    list of RenderedFile
    """
    public = [_public_stat(s) for s in inp.statistics]
    files: list[RenderedFile] = []
    for fmt in inp.formats:
        if fmt == "csv":
            files.append(RenderedFile(f"{inp.stem}.csv", "table", _csv(inp.statistics)))
        else:
            data = {"plan": inp.plan, "statistics": public}
            files.append(RenderedFile(f"{inp.stem}.json", "table", (json.dumps(
                data, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()))
    if inp.report:
        files.append(RenderedFile(f"{inp.stem}.report.html", "report", _report(inp)))
    if inp.script:
        files.append(RenderedFile(f"{inp.stem}.py", "script", _script(inp, f"{inp.stem}.py")))
    # As the ledger's column_name: the value columns, in the plan's order.
    columns = list(dict.fromkeys(s["column"] for s in inp.statistics))
    contributions = contributions_section(inp.identifier, inp.max_rows)
    person: dict[str, str] = {}
    if contributions is not None:
        person = {"relation": person_relation(inp.max_rows)}
    manifest = {
        "schema_version": MANIFEST_VERSION, "kind": MANIFEST_KIND,
        "release": {"id": inp.release_id, "uid": inp.uid, "created_at": inp.created_at},
        "engine": {"name": "dpstudio", "version": __version__},
        "engine_version": __version__, "trust_model": "central",
        "dataset": {"name": inp.dataset_name, "fingerprint": inp.fingerprint,
                    "schema": inp.schema},
        "query": {"statistic": "plan", "column": ", ".join(columns), **person},
        "mechanism": {"name": "plan"},
        "privacy": {"epsilon": float(inp.epsilon), "epsilon_exact": str(inp.epsilon),
                    "delta": float(inp.delta), "delta_exact": str(inp.delta),
                    "accountant": inp.accountant, **person,
                    "budget": {"epsilon": str(inp.budget_epsilon),
                               "delta": str(inp.budget_delta)}},
        **({} if contributions is None else {"contributions": contributions}),
        "plan": inp.plan,
        "statistics": public,
        "notes": list(inp.notes),
        "files": [file_entry(f.name, f.role, f.data) for f in files],
    }
    files.append(RenderedFile(f"{inp.stem}.manifest.json", "manifest",
                              manifest_bytes(manifest)))
    return files
