"""Whether the Release… button can release the analysis on screen, and if not, why.

The rules are the analysis layer's capability table
(:mod:`dpstudio.analysis.capabilities`): which trust models, queries and mechanisms a
project releases, and under which neighbouring relations. This module only says them in
the application's words (one line for the button's tooltip), after the things only the
application knows: no project open, a job running, an edited ledger, nothing computed,
and last a release that does not fit in what the budget has left (said before the
analyst clicks, not in a pop-up after: :class:`~dpstudio.ui.budget_figures.BudgetFigures`).
"""

from __future__ import annotations

from typing import Any

from dpstudio.analysis.capabilities import (
    capability,
    releasable,
    releasable_trust_models,
    release_relation,
)
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.queries import QuerySpec
from dpstudio.ui.budget_figures import BudgetFigures
from dpstudio.ui.result_panel import RELEASE_TOOLTIP
from dpstudio.ui.texts import QUERY_LABELS, TRUST_MODELS

__all__ = ["OVER_BUDGET_TEXT", "RELEASE_READY", "RELEASE_TEXT", "release_problem",
           "session_analysis"]

RELEASE_READY = ("Release this statistic for real: noise from the OS CSPRNG, charged to "
                 "the project's budget and recorded in its ledger (you confirm first).")
#: The Release… button's text, and its text while the release does not fit the budget.
#: (Without a project the text stays short and the tooltip says why: a longer text widens
#: the result panel and squeezes the trade-off plot at 800 px.)
RELEASE_TEXT = "Release…"
OVER_BUDGET_TEXT = "Release… (over budget)"


def session_analysis(session: Any) -> AnalysisSpec:
    """The analysis the session shows, as the capability table reads it.

    Parameters
    ----------
    session : Session
        Read for its trust model, query, mechanism, ε and relation only.

    Returns
    -------
    AnalysisSpec
        Not validated (bounds and parameters do not decide whether it is releasable).
    """
    return AnalysisSpec(session.trust_model,
                        QuerySpec(session.query, session.mechanism, float(session.epsilon),
                                  relation=session.relation))


def release_problem(session: Any, project: Any, record: Any, *, busy: str | None,
                    tamper: list[str], budget: BudgetFigures | None = None) -> str | None:
    """Why the session's analysis cannot be released now (one line), or None.

    Parameters
    ----------
    session : Session
        The analysis on screen (:func:`session_analysis`) and ``problem()``, why nothing
        can be computed.
    project : Project or None
        The open project.
    record : DatasetRecord or None
        The session dataset's record in it (None: not registered yet, the project's
        default relation then applies).
    busy : str or None
        ``"check"`` or ``"release"`` while that job runs.
    tamper : list of str
        What was changed in the project's ledger outside DP Studio.
    budget : BudgetFigures, optional
        The dataset's budget and this release's charge: a release that does not fit is
        refused here, before the check (:meth:`BudgetFigures.shortfall`).

    Returns
    -------
    str or None
        The tooltip's sentence; None when the Release… action may start.
    """
    if project is None:
        return RELEASE_TOOLTIP
    if busy == "release":
        return "A release is under way…"
    if busy == "check":
        return "Checking the budget…"
    if tamper:
        return (f"The ledger of {project.path.name} was changed outside DP Studio "
                f"({tamper[0]}{'; …' if len(tamper) > 1 else ''}): new releases "
                "are refused until you acknowledge it in the Ledger tab.")
    problem = session.problem()
    if problem:
        return f"Nothing to release: {problem}."
    relation = record.relation if record is not None else project.defaults()["relation"]
    analysis = session_analysis(session)
    trust, row = analysis.trust_model, capability(analysis.kind)
    label = TRUST_MODELS[trust]["label"]
    if not row.release:
        unreleased = [t for t in TRUST_MODELS if not capability(t).release]
        released = [t for t in releasable_trust_models() if t in TRUST_MODELS]
        return (f"{label}-model releases are not in the project format yet: "
                f"{' and '.join(unreleased)} releases cannot be recorded in a ledger. Choose "
                f"the {' or '.join(released)} model to release.")
    if not releasable(analysis):
        queries = " or ".join(f"{QUERY_LABELS.get(q, q).lower()}s" for q in row.release)
        return (f"{label}-model releases are {queries} with a {trust} "
                f"{' or '.join(row.mechanism_kinds)}; choose one to release.")
    name = session.dataset.name if session.dataset else "This dataset"
    if relation not in row.relations:
        return (f"{name} is budgeted under the {relation} relation in {project.path.name}: "
                f"{row.relation_why}, so {trust} releases need a dataset budgeted under the "
                f"{' or '.join(row.relations)} relation.")
    if release_relation(analysis) != relation:
        return (f"{name} is budgeted under the {relation} relation in {project.path.name}: "
                "choose that neighbouring relation (Analysis panel) to release.")
    return budget.shortfall() if budget is not None else None
