"""The capability table refuses what the application's Release… button used to refuse.

Each test names the tooltip sentence whose rule moved from ``ui/project_controller.py``
into :mod:`dpstudio.analysis.capabilities`; dropping the rule from the table fails it.
The expected answers come from the engine's own lists (its local randomizers, the
registry's trust models and queries), not from the table under test.
"""

from __future__ import annotations

import math

import pytest

from dpstudio.analysis.capabilities import (
    capability,
    mechanism_fits,
    releasable,
    releasable_trust_models,
    release_query,
    release_refusal,
    release_relation,
)
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.errors import QueryError
from dpstudio.engine.local.entries import HISTOGRAM_RANDOMIZERS, MEAN_RANDOMIZERS
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.trust_models import TRUST_MODELS


def _analysis(trust: str, query: str, mechanism: str, relation: str = "add-remove",
              **params) -> AnalysisSpec:
    return AnalysisSpec(trust, QuerySpec(query, mechanism, 1.0, relation=relation,
                                         params=params))


def _offered() -> list[tuple[str, str, str]]:
    """Every (trust model, query, mechanism) the application can offer: the mechanism
    serves the trust model and answers the query."""
    return [(t, q, info.name) for info in REGISTRY for t in info.trust_models
            for q in info.queries]


# "Local-model releases are histograms or means with a local randomizer; choose one to
# release."  (before: query in ("histogram", "mean") and mechanism in the randomizer lists)

@pytest.mark.parametrize("trust,query,mechanism", _offered(),
                         ids=lambda v: str(v))
def test_what_is_releasable_is_what_the_release_button_allowed(trust, query, mechanism):
    if trust == "central":
        expected = True
    elif trust == "local":
        allowed = {"histogram": HISTOGRAM_RANDOMIZERS, "mean": MEAN_RANDOMIZERS}
        expected = mechanism in allowed.get(query, ())
    elif trust in ("shuffle", "distributed"):
        # the protocols that run a sum or a mean release them, and a local frequency
        # oracle shuffled releases a histogram (issue 14)
        expected = query in ("sum", "mean") or (trust, query) == ("shuffle", "histogram")
    else:
        expected = False
    assert releasable(_analysis(trust, query, mechanism)) is expected


@pytest.mark.parametrize("query,mechanism", [
    ("heavy_hitters", "cms"), ("heavy_hitters", "sfp"),  # local, but not a release query
    ("histogram", "laplace"), ("mean", "gaussian"),      # a release query, central noise
    ("mean", "cloak"), ("mean", "rr"),                    # another model's; another query's
    ("histogram", "no_such_mechanism"),
])
def test_a_local_release_needs_a_local_randomizer_for_a_histogram_or_a_mean(query, mechanism):
    analysis = _analysis("local", query, mechanism)
    assert not releasable(analysis)
    assert capability("local").release == ("histogram", "mean")
    assert capability("local").mechanism_kinds == ("randomizer",)


def test_the_mechanism_fit_is_checked_apart_from_the_table_sentence():
    # The project's release keeps its own message for a misfit (resolve names the
    # randomizers); the table's sentence is only for trust models and queries.
    analysis = _analysis("local", "histogram", "laplace")
    assert release_refusal(analysis) is None and not mechanism_fits(analysis)
    assert mechanism_fits(_analysis("local", "histogram", "krr"))
    assert not mechanism_fits(_analysis("central", "histogram", "krr"))


# Shuffle and secure-aggregation sums and means release through a project (issue 14).

@pytest.mark.parametrize("trust,mechanism", [("shuffle", "cloak"), ("shuffle", "blanket"),
                                             ("distributed", "secagg_gaussian"),
                                             ("distributed", "skellam")])
@pytest.mark.parametrize("query", ["sum", "mean"])
def test_shuffle_and_distributed_sums_and_means_are_releasable(trust, mechanism, query):
    analysis = _analysis(trust, query, mechanism, relation="replace")
    assert mechanism_fits(analysis)
    assert releasable(analysis) and release_refusal(analysis) is None
    assert {"sum", "mean"} <= set(capability(trust).release)


def test_every_trust_model_but_federated_statistics_releases():
    assert releasable_trust_models() == ("central", "local", "shuffle", "distributed")
    assert [t for t in TRUST_MODELS if not capability(t).release] == ["federated"]


# "… is budgeted under the add-remove relation in …: ε-local DP bounds changing one
# person's value, so local releases need a dataset budgeted under the replace relation."

def test_a_local_release_states_replace_whatever_the_choice():
    row = capability("local")
    assert row.relations == ("replace",) and not row.chooses_relation
    assert row.relation_why == "ε-local DP bounds changing one person's value"
    for chosen in ("add-remove", "replace"):
        analysis = _analysis("local", "histogram", "krr", relation=chosen)
        assert release_relation(analysis) == "replace"
        assert release_query(analysis).relation == "replace"


# "… is budgeted under the add-remove relation in …: choose that neighbouring relation
# (Analysis panel) to release."

@pytest.mark.parametrize("chosen", ["add-remove", "replace"])
def test_a_central_release_states_the_chosen_relation(chosen):
    row = capability("central")
    assert row.chooses_relation and set(row.relations) == {"add-remove", "replace"}
    analysis = _analysis("central", "mean", "laplace", relation=chosen)
    assert release_relation(analysis) == chosen
    assert release_query(analysis) == analysis.query  # nothing else changes


# What a release spec carries (before: ``if spec.trust_model == "central"`` when applying
# a spec; the randomizer's own ε when writing one).

def test_only_the_central_spec_carries_a_missing_value_treatment():
    assert "missing" in capability("central").options
    assert "missing" not in capability("local").options


@pytest.mark.parametrize("p", [0.6, 0.75, 0.9])
def test_a_local_spec_carries_the_randomizers_own_epsilon(p):
    analysis = _analysis("local", "histogram", "rr", p=p)  # stated ε = 1
    assert release_query(analysis).epsilon == pytest.approx(math.log(p / (1 - p)), rel=1e-12)


def test_a_randomizer_that_does_not_build_keeps_the_stated_epsilon():
    analysis = _analysis("local", "histogram", "rr", p=1.5)
    assert release_query(analysis).epsilon == 1.0


@pytest.mark.parametrize("trust,query,mechanism", [("shuffle", "count", "cloak"),
                                                   ("local", "histogram", "laplace")])
def test_release_query_refuses_what_is_not_releasable(trust, query, mechanism):
    with pytest.raises(QueryError):
        release_query(_analysis(trust, query, mechanism))
