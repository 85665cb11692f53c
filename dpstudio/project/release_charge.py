"""The charge every release makes, in its one ledger transaction (step 1 of the design in
:mod:`dpstudio.project.release`): the steps a statistic, a trained model and a plan share.

:func:`open_charge` registers the dataset if it is new, re-checks the ledger's chain, the
unit of privacy and the budget under the lock; :func:`insert_pending` records the release
as ``pending``; the caller draws its noise; :func:`record_drawn` charges what the engine
objects state they drew (checking the budget again if that is more, or if a tight
accountant composes it) and chains the entry; the caller renders its files;
:func:`record_output` records their names and hashes and the public result. Anything
raised before the transaction commits rolls all of it back: nothing charged, nothing
written.
"""

from __future__ import annotations

import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from dpstudio.project import _chain
from dpstudio.project.accountant import get_accountant
from dpstudio.project.errors import LedgerTamperedError
from dpstudio.project.ledger_loss import loss_json
from dpstudio.project.privacy_unit import check_unit
from dpstudio.project.recovery import tamper_message
from dpstudio.project.release_checks import check_budget

__all__ = ["RELEASE_WAIT", "Chargeable", "insert_pending", "open_charge", "record_drawn",
           "record_output"]

# How long a release waits for the project lock while other releases go first. Releases
# queue on it one at a time; a hundred started at once on a busy machine can wait well
# beyond a minute, and each must end with a definitive answer (released, or budget
# exceeded), never "busy". The bound only ends a wait behind a holder that is alive but
# stuck (a dead holder's lock is dropped by the kernel at once).
RELEASE_WAIT = 900.0


class Chargeable(Protocol):
    """What a checked release tells its charge (a statistic's or model's ``Prepared``, a
    plan's ``_PreparedPlan``)."""

    record: Any
    fingerprint: str
    path: Path
    schema: dict[str, Any]
    budget: tuple[Decimal, Decimal]
    relation: str
    accountant: str
    content: Any
    budget_of: int | None
    charge: tuple[Decimal, Decimal]
    out: Path


def open_charge(project: Any, conn: sqlite3.Connection, prep: Chargeable,
                identifier: str | None, planned: Any = None) -> tuple[int, list, list]:
    """Open a release's charge: the dataset registered (if new) and everything re-checked.

    Parameters
    ----------
    project : Project
        The open project, its lock held.
    conn : sqlite3.Connection
        The charge's transaction (``BEGIN IMMEDIATE``).
    prep : Chargeable
        The checked release.
    identifier : str or None
        A user-level release's identifier column (its unit of privacy is a person).
    planned : LossDescription, optional
        For a tight accountant, the description the release will draw (None: its
        charge's).

    Returns
    -------
    (int, list, list)
        The dataset's id, and the charges and losses of the releases before this one.

    Raises
    ------
    LedgerTamperedError
        If the ledger was edited since the release was checked.
    ProjectError, BudgetExceededError
        If the unit of privacy or the budget no longer allow it.
    """
    if prep.record is None:
        dataset_id = project._insert_dataset(conn, prep.fingerprint, prep.path, prep.schema,
                                             prep.budget, prep.relation, prep.accountant,
                                             prep.content, prep.budget_of)
    else:
        dataset_id = prep.record.id
    problems = project._audit_locked(conn).problems  # edited since the release was checked?
    if problems:
        raise LedgerTamperedError(tamper_message(project.path, problems), problems)
    charges, losses = project._losses(conn, dataset_id)
    name = prep.path.name
    check_unit(project, conn, dataset_id, identifier, name)
    check_budget(get_accountant(prep.accountant), prep.budget, charges, losses, prep.charge,
                 planned, name)
    return dataset_id, charges, losses


def insert_pending(conn: sqlite3.Connection, prep: Chargeable, uid: str, dataset_id: int,
                   created_at: str, what: tuple[str, str, str, str],
                   spec: dict[str, Any]) -> int:
    """Record the release as ``pending``, charged what it was checked for.

    Parameters
    ----------
    conn : sqlite3.Connection
        The charge's transaction.
    prep : Chargeable
        The checked release (its charge, accountant and output folder).
    uid : str
        The release's uid.
    dataset_id : int
        From :func:`open_charge`.
    created_at : str
        When it started.
    what : (str, str, str, str)
        Its query, column(s), mechanism and trust model, as the ledger lists them.
    spec : dict
        The resolved spec the ledger keeps.

    Returns
    -------
    int
        The release's id.
    """
    query, column, mechanism, trust_model = what
    cur = conn.execute(
        "INSERT INTO releases (uid, dataset_id, status, created_at, query, column_name, "
        "mechanism, trust_model, epsilon, delta, accountant, spec_json, noise_json, "
        "out_dir) VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?)",
        (uid, dataset_id, created_at, query, column, mechanism, trust_model,
         str(prep.charge[0]), str(prep.charge[1]), prep.accountant,
         json.dumps(spec, ensure_ascii=False), str(prep.out)))
    return int(cur.lastrowid)


def record_drawn(conn: sqlite3.Connection, prep: Chargeable, release_id: int,
                 past: tuple[list, list], charge: tuple[Decimal, Decimal], loss: Any,
                 planned: Any = None) -> None:
    """Charge what was drawn, and chain the release's entry.

    What is charged is the (ε, δ) of the engine objects that drew the noise, never the
    spec's. Nothing drawn has been seen yet: if it is more than was checked, or a tight
    accountant composes a description other than the one checked, the budget is checked
    again and the transaction may still roll back (the decision is a function of the
    spec, never of the noise, so rolling back shows nothing).

    Parameters
    ----------
    conn : sqlite3.Connection
        The charge's transaction.
    prep : Chargeable
        The checked release.
    release_id : int
        From :func:`insert_pending`.
    past : (list, list)
        The charges and losses :func:`open_charge` returned.
    charge : (Decimal, Decimal)
        The (ε, δ) drawn.
    loss : LossDescription
        What was drawn, as the ledger keeps it (never claiming less than ``charge``).
    planned : LossDescription, optional
        The description checked before the draw (None: the charge's).

    Raises
    ------
    BudgetExceededError
        If what was drawn does not fit.
    """
    acc = get_accountant(prep.accountant)
    if charge != prep.charge or (acc.name != "basic" and loss != planned):
        check_budget(acc, prep.budget, past[0], past[1], charge, loss, prep.path.name)
    if charge != prep.charge:
        conn.execute("UPDATE releases SET epsilon = ?, delta = ? WHERE id = ?",
                     (str(charge[0]), str(charge[1]), release_id))
    # Stored before the chain entry, so the chain covers it: a hand-edited scale or
    # sensitivity is tampering, like an edited ε.
    conn.execute("UPDATE releases SET loss = ? WHERE id = ?", (loss_json(loss), release_id))
    _chain.record_release(conn, release_id)


def record_output(conn: sqlite3.Connection, release_id: int, files: list,
                  noise: dict[str, Any], public: dict[str, Any]) -> None:
    """Record the release's rendered files (name, role, SHA-256, size), its noise and its
    public result.

    Parameters
    ----------
    conn : sqlite3.Connection
        The charge's transaction.
    release_id : int
        From :func:`insert_pending`.
    files : list
        The rendered files (``name``, ``role``, ``sha256``, ``data``).
    noise : dict
        What the ledger stores about the noise drawn.
    public : dict
        The public fields.
    """
    conn.executemany(
        "INSERT INTO release_files (release_id, name, role, sha256, bytes) VALUES "
        "(?, ?, ?, ?, ?)",
        [(release_id, f.name, f.role, f.sha256, len(f.data)) for f in files])
    conn.execute("UPDATE releases SET noise_json = ?, result_json = ? WHERE id = ?",
                 (json.dumps(noise, allow_nan=False),
                  json.dumps(public, allow_nan=False, ensure_ascii=False), release_id))
