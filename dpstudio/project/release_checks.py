"""The checks every release makes before anything is drawn: the dataset is the file the
spec names (read between two hashes), its budget is the one it shares, and the release fits
that budget.

One statistic (:mod:`dpstudio.project.release_prepare`), a trained model
(:mod:`dpstudio.project.release_model`) and a plan (:mod:`dpstudio.project.release_plan`)
make them in the same words; the charge transaction
(:mod:`dpstudio.project.release_charge`) checks the budget again under the lock.
"""

from __future__ import annotations

import contextlib
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

from dpstudio.data.dataset import open_dataset
from dpstudio.data.fingerprint import ContentFingerprint, content_fingerprint, sha256_file
from dpstudio.data.schema import Schema
from dpstudio.project.accountant import BASIC
from dpstudio.project.errors import BudgetExceededError, DatasetChangedError, ProjectError
from dpstudio.project.ledger_loss import charge_loss
from dpstudio.project.records import DatasetRecord, dec_text

__all__ = ["Identified", "budget_root", "check_budget", "identify_file", "read_file"]


def read_file(path: Path, header: Any, named: str | None) -> tuple[str, Any]:
    """``path`` hashed, read and hashed again.

    Parameters
    ----------
    path : pathlib.Path
        The dataset's file.
    header : Any
        The spec's ``header`` (as :func:`~dpstudio.data.dataset.open_dataset` takes it).
    named : str or None
        The SHA-256 the spec names, if it names one.

    Returns
    -------
    (str, Dataset)
        The file's SHA-256 and the dataset read.

    Raises
    ------
    DatasetChangedError
        If it is not the file the spec ``named``, or it changed while it was read.
    """
    fingerprint = sha256_file(path)
    if named is not None and named != fingerprint:
        raise DatasetChangedError(
            f"warning: {path.name} is not the dataset the spec names (SHA-256 "
            f"{fingerprint[:12]}… is not {named[:12]}…); refusing to release")
    data = open_dataset(path, header=header)
    if sha256_file(path) != fingerprint:
        raise DatasetChangedError(f"warning: {path.name} changed while it was being read; "
                                  "refusing to release")
    return fingerprint, data


class Identified(NamedTuple):
    """A dataset file read and identified (:func:`identify_file`)."""

    fingerprint: str
    data: Any
    content: ContentFingerprint
    record: DatasetRecord | None
    budget_of: int | None
    notes: list[str]
    declared: Any


def identify_file(project: Any, spec: Any, path: Path) -> Identified:
    """Read the dataset file a release names and find it in the project.

    Parameters
    ----------
    project : Project
        The open project.
    spec : ReleaseSpec or PlanSpec
        Its ``header``, ``fingerprint``, ``share_budget_with`` and ``separate_budget``.
    path : pathlib.Path
        The dataset's file.

    Returns
    -------
    Identified
        Its SHA-256, the dataset read, its content fingerprint, the registered dataset it
        is (or None), the dataset whose budget a new version shares (or None), notes on
        how it was identified, and its declared schema (the sidecar's, else the one
        registered with it: a file moved without its sidecar; None if neither).

    Raises
    ------
    DatasetChangedError, ProjectError
        As :func:`read_file` and the project's identification do.
    """
    fingerprint, data = read_file(path, spec.header, spec.fingerprint)
    # A dataset is its rows as parsed: the same rows re-encoded or reordered spend the
    # same budget (the byte hash still names the exact file, in the manifest).
    content = content_fingerprint(data.frame)
    record, budget_of, notes = project._identify(path, fingerprint, content,
                                                 spec.share_budget_with,
                                                 spec.separate_budget)
    declared = data.declared
    if declared is None and record is not None:  # moved without its sidecar
        # An unreadable stored schema declares nothing.
        with contextlib.suppress(Exception):
            declared = Schema.from_dict(record.schema)
    return Identified(fingerprint, data, content, record, budget_of, notes, declared)


def budget_root(project: Any, spec: Any, path: Path, record: DatasetRecord | None,
                budget_of: int | None, relation: str | None,
                declared_schema: dict[str, Any]) -> tuple[tuple[Decimal, Decimal], str, str,
                                                          dict[str, Any]]:
    """The budget a release of ``path`` is checked against.

    A version of a dataset spends (and is accounted like) the dataset it shares; a new one
    is registered from the spec.

    Parameters
    ----------
    project : Project
        The open project.
    spec : ReleaseSpec or PlanSpec
        Its ``budget_epsilon``, ``budget_delta`` and ``accountant``.
    path : pathlib.Path
        The dataset.
    record : DatasetRecord or None
        The registered dataset it is, if any.
    budget_of : int or None
        The dataset whose budget a new version shares, if any.
    relation : str or None
        The relation a new dataset asks for; None for the default.
    declared_schema : dict
        The declared schema a new dataset is registered with.

    Returns
    -------
    ((Decimal, Decimal), str, str, dict)
        The budget, the relation, the accountant and the schema.

    Raises
    ------
    ProjectError
        If the spec names another accountant than the dataset's.
    """
    if record is not None or budget_of is not None:
        root = project.dataset(record.budget_root if record is not None else budget_of)
        budget = (root.budget_epsilon, root.budget_delta)
        relation, accountant = root.relation, root.accountant
        schema = record.schema if record is not None else declared_schema
    else:
        budget, relation, accountant = project._registration(
            spec.budget_epsilon, spec.budget_delta, relation, spec.accountant, path.name)
        schema = declared_schema
    if spec.accountant is not None and spec.accountant != accountant:
        raise ProjectError(f"{path.name} is accounted with the {accountant} accountant; the "
                           f"spec asks for {spec.accountant}")
    return budget, relation, accountant, schema


def check_budget(acc: Any, budget: tuple[Decimal, Decimal], charges: list, losses: list,
                 request: tuple[Decimal, Decimal], request_loss: Any, name: str) -> None:
    """Refuse a release that does not fit its budget.

    Parameters
    ----------
    acc : Accountant
        The dataset's accountant.
    budget : (Decimal, Decimal)
        The dataset's (ε, δ) budget.
    charges, losses : list
        The past releases' charges and privacy-loss descriptions.
    request : (Decimal, Decimal)
        This release's charge.
    request_loss : LossDescription or None
        For a tight accountant, this release's description (None: its charge's).
    name : str
        The dataset as the message names it.

    Raises
    ------
    BudgetExceededError
        Unless the past releases and this one fit ``budget``.
    """
    if acc.fits_charged(budget, charges, losses, request, request_loss):
        return
    spent = acc.spent_losses(losses, BASIC.spent(charges))
    left = (budget[0] - spent[0], budget[1] - spent[1])
    shown = tuple(max(x, Decimal(0)) for x in left)
    if acc.name != "basic" and left[1] >= request[1]:
        # A tight accountant does not add this release's ε to the rest: say what the
        # composition with it comes to (δ, which does add up, fits).
        loss = charge_loss(*request) if request_loss is None else request_loss
        after = acc.spent_losses([*losses, loss], BASIC.spent([*charges, request]))
        raise BudgetExceededError(
            f"budget exceeded for {name}: with this release (ε = {dec_text(request[0])}, "
            f"δ = {dec_text(request[1])}) the {acc.name} accountant counts ε = "
            f"{float(after[0]):.4g} spent, over the budget ε = {dec_text(budget[0])} "
            f"(ε = {dec_text(shown[0])} is left before it)", left[0], left[1])
    raise BudgetExceededError(
        f"budget exceeded for {name}: this release needs ε = {dec_text(request[0])}, "
        f"δ = {dec_text(request[1])}, but only ε = {dec_text(shown[0])}, δ = "
        f"{dec_text(shown[1])} is left (of ε = {dec_text(budget[0])}, δ = "
        f"{dec_text(budget[1])}, {acc.name} accountant)", left[0], left[1])
