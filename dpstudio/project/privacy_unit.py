"""A dataset's unit of privacy: one row, or one person (identified by a declared column).

A row-level release of ε says nothing useful about a person with many rows (their
guarantee is only k·ε, and k is not bounded at all on a row-level dataset), and a
user-level release bounds people, not the rows of a row-level budget. So a budget is
spent in one unit only: the unit of the first release charged to it (its releases'
recorded specs say it: ``identifier`` set, or not), and a release in the other unit is
refused in one sentence before any noise is drawn.

User-level releases with different ``max_rows`` share one unit: each bounds a person's
rows itself (any number of rows in, at most k used), so each is ε-DP for adding or
removing one whole person, whatever its k; they compose as any releases do. A different
identifier column names a different person (a customer is not a household), so it is
another unit.

No stored shape changes: the unit is read from the ``spec_json`` the ledger already keeps
for every release (old projects read as row-level, which is what they are).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from dpstudio.project.errors import ProjectError

__all__ = ["ROW", "check_unit", "dataset_unit", "recorded_units", "unit_of", "unit_text"]

#: The unit of a row-level release.
ROW = "row"


def unit_of(identifier: str | None) -> str:
    """``"row"``, or ``"person:COL"`` for a release bounding each person's rows by COL."""
    return ROW if not identifier else f"person:{identifier}"


def unit_text(unit: str) -> str:
    """How a unit reads in a sentence: "row-level" or "user-level (one person per COL)"."""
    if unit == ROW:
        return "row-level"
    return f"user-level (one person per {unit.split(':', 1)[1]!r})"


def recorded_units(project: Any, conn: sqlite3.Connection, dataset_id: int) -> list[str]:
    """The units of the releases charged to ``dataset_id``'s budget, oldest first.

    A release whose recorded spec cannot be read (deleted by hand, edited) is skipped:
    the ledger's audit refuses to release on an edited ledger anyway.
    """
    _, members = project._group(conn, dataset_id)
    found = project._audit_locked(conn)
    ids = [r for r, ds in sorted(found.release_dataset.items()) if ds & members]
    if not ids:
        return []
    rows = conn.execute(f"SELECT id, spec_json FROM releases WHERE id IN "
                        f"({', '.join('?' * len(ids))}) ORDER BY id", ids).fetchall()
    units = []
    for _, text in rows:
        try:
            spec = json.loads(text)
        except (TypeError, ValueError):
            continue
        if isinstance(spec, dict):
            units.append(unit_of(spec.get("identifier")))
    return units


def check_unit(project: Any, conn: sqlite3.Connection, dataset_id: int | None,
               identifier: str | None, label: str) -> None:
    """Refuse a release whose unit of privacy is not its budget's.

    Parameters
    ----------
    project : Project
        The project (its budget groups and audit).
    conn : sqlite3.Connection
        An open connection (inside the release's transaction when it charges).
    dataset_id : int or None
        The dataset whose budget the release spends; None: a new dataset (any unit).
    identifier : str or None
        The release's identifier column (None: row-level).
    label : str
        The dataset as the sentence names it.

    Raises
    ------
    ProjectError
        In one sentence, when the budget's first release was of the other unit.
    """
    if dataset_id is None:
        return
    units = recorded_units(project, conn, dataset_id)
    mine = unit_of(identifier)
    other = next((u for u in units if u != mine), None)
    if other is None:
        return
    reason = ("a row-level ε is only k·ε for a person with k rows"
              if ROW in (mine, other) else "another column names another person")
    recorded = units[0] if units[0] != mine else other
    raise ProjectError(f"{label} is released {unit_text(recorded)} since its first release "
                       f"and this release is {unit_text(mine)}: one budget is spent in one "
                       f"unit of privacy ({reason})")


def dataset_unit(project: Any, dataset_id: int) -> str | None:
    """The unit a dataset's budget is spent in, as ``dpstudio ledger --json`` states it:
    ``"row"``, ``"person:COL"``, or None before its first release."""
    with project._db() as conn:
        units = recorded_units(project, conn, dataset_id)
    return units[0] if units else None
