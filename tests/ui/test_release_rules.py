"""The Release… button's sentences, word for word, now that the capability table decides.

The expected sentences are the ones the application showed before the rules moved into
:mod:`dpstudio.analysis.capabilities` (an analyst reads them; they must not change).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from dpstudio.ui.release_rules import release_problem
from dpstudio.ui.result_panel import RELEASE_TOOLTIP

LOCAL = ("Local-model releases are histograms or means with a local randomizer; choose one "
         "to release.")
LOCAL_RELATION = ("{} is budgeted under the add-remove relation in study.dpstudio: ε-local "
                  "DP bounds changing one person's value, so local releases need a dataset "
                  "budgeted under the replace relation.")
CENTRAL_RELATION = ("survey.csv is budgeted under the {} relation in study.dpstudio: choose "
                    "that neighbouring relation (Analysis panel) to release.")


class Session:
    """What release_problem reads of the application's session."""

    def __init__(self, trust_model="central", query="mean", mechanism="laplace",
                 relation="add-remove", dataset="survey.csv", problem=None):
        self.trust_model, self.query, self.mechanism = trust_model, query, mechanism
        self.relation, self.epsilon, self._problem = relation, 1.0, problem
        self.dataset = SimpleNamespace(name=dataset) if dataset else None

    def problem(self):
        return self._problem


class Project:
    def __init__(self, relation="add-remove"):
        self.path, self.relation = Path("study.dpstudio"), relation

    def defaults(self):
        return {"relation": self.relation}


def _problem(session=None, project=None, record=None, busy=None, tamper=(), budget=None):
    return release_problem(session or Session(), project, record, busy=busy,
                           tamper=list(tamper), budget=budget)


def test_before_the_analysis_the_application_says_what_it_knows():
    assert _problem() == RELEASE_TOOLTIP
    assert _problem(project=Project(), busy="release") == "A release is under way…"
    assert _problem(project=Project(), busy="check") == "Checking the budget…"
    assert _problem(project=Project(), tamper=["a", "b"]) == (
        "The ledger of study.dpstudio was changed outside DP Studio (a; …): new releases are "
        "refused until you acknowledge it in the Ledger tab.")
    assert _problem(Session(problem="Choose a column"), Project()) == (
        "Nothing to release: Choose a column.")


@pytest.mark.parametrize("trust,label,mechanism", [("shuffle", "Shuffle", "cloak"),
                                                   ("distributed", "Distributed", "skellam")])
def test_shuffle_and_distributed_sums_release_into_a_project(trust, label, mechanism):
    session = Session(trust, "sum", mechanism, relation="replace")
    assert _problem(session, Project("replace")) is None  # issue 14: they release now


@pytest.mark.parametrize("query,mechanism", [("heavy_hitters", "cms"), ("heavy_hitters", "sfp"),
                                             ("histogram", "laplace")])
def test_a_local_release_needs_a_histogram_or_a_mean_with_a_randomizer(query, mechanism):
    assert _problem(Session("local", query, mechanism), Project("replace")) == LOCAL


@pytest.mark.parametrize("dataset,name", [("survey.csv", "survey.csv"), (None, "This dataset")])
def test_a_local_release_needs_a_dataset_budgeted_under_replace(dataset, name):
    session = Session("local", "histogram", "krr", relation="replace", dataset=dataset)
    assert _problem(session, Project("add-remove")) == LOCAL_RELATION.format(name)
    # The dataset's record decides, not the project's default.
    record = SimpleNamespace(relation="replace")
    assert _problem(session, Project("add-remove"), record) is None


def test_a_local_release_ignores_the_central_relation_choice():
    session = Session("local", "mean", "duchi", relation="add-remove")
    assert _problem(session, Project("replace")) is None


@pytest.mark.parametrize("budgeted,chosen", [("add-remove", "replace"),
                                             ("replace", "add-remove")])
def test_a_central_release_needs_the_datasets_relation(budgeted, chosen):
    session = Session(relation=chosen)
    assert _problem(session, Project(budgeted)) == CENTRAL_RELATION.format(budgeted)
    assert _problem(Session(relation=budgeted), Project(budgeted)) is None


def _figures(total=("1", "1e-5"), spent=("0", "0"), this=("1", "0"), **kw):
    from decimal import Decimal

    from dpstudio.ui.budget_figures import BudgetFigures

    pair = lambda p: tuple(Decimal(x) for x in p)  # noqa: E731
    return BudgetFigures(pair(total), pair(spent), pair(this), project="study.dpstudio",
                         dataset="survey.csv", **kw)


def test_a_release_that_does_not_fit_is_refused_with_what_is_left():
    """Issue 12 item 9: the button says it before the click (before: a pop-up after)."""
    def problem(figures):
        return _problem(Session(), Project(), budget=figures)

    assert problem(_figures(spent=("0.3", "0"), this=("0.7", "0"))) is None  # exactly fits
    assert problem(_figures(spent=("0.6", "0"), this=("0.6", "0"))) == (
        "Over budget: this release needs ε 0.6, but only ε 0.4 of 1 is left for survey.csv "
        "in study.dpstudio; lower it, or use the remaining ε (budget panel).")
    assert problem(_figures(spent=("0.2", "1e-5"), this=("0.5", "1e-6"))) == (
        "Over budget: the δ budget of survey.csv in study.dpstudio is used up (δ 1e-05 of "
        "1e-05 spent); only a mechanism without δ (pure ε-DP) can still be released.")
    assert problem(_figures(spent=("0.6", "0"), this=("1.1", "0"), fixed=True)) == (
        "Over budget: this release needs ε 1.1, but only ε 0.4 of 1 is left for survey.csv "
        "in study.dpstudio; a mechanism parameter fixes this ε: change it to release.")
    # What the analyst may use instead: exactly what is left.
    assert _figures(spent=("0.35", "0"), this=("0.8", "0")).usable() == (0.65, None)
    assert _figures(spent=("0.6", "0"), this=("1.1", "0"), fixed=True).usable() == (None, None)
    assert _figures(spent=("0.2", "9e-6"), this=("0.5", "2e-6")).usable() == (None, 1e-6)
