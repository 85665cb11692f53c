"""The analysis layer: one dispatch, one result shape, one capability table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstudio.analysis import AnalysisSpec, capability, release_refusal, resolve, run
from dpstudio.analysis.dispatch import runnable_trust_models
from dpstudio.engine.errors import EngineError, QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SecureSource, SimulationSource
from dpstudio.engine.trust_models import TRUST_MODELS

RNG = np.random.default_rng(5)
AGES = np.concatenate([RNG.uniform(20, 60, 3_000), [np.nan] * 40, [150.0] * 10])
LABELS = np.array(["a", "b", "c"] * 1_000 + [None] * 30, dtype=object)


class Declared:
    """A declared schema as the data layer gives it (``get(column)``)."""

    class Column:
        def __init__(self, type_, bounds=None, categories=None):
            self.type, self.bounds, self.categories = type_, bounds, categories

    def __init__(self, **columns):
        self.columns = columns

    def get(self, name):
        return self.columns.get(name)


DECLARED = Declared(age=Declared.Column("numeric", (18.0, 90.0)),
                    cat=Declared.Column("categorical", categories=("a", "b", "c")))


def _sum_analysis(trust: str, mechanism: str) -> AnalysisSpec:
    spec = QuerySpec("sum", mechanism, 1.0, delta=1e-6, bounds=(18.0, 90.0), relation="replace",
                     column="age")
    return AnalysisSpec(trust, spec)


CASES = {
    "central": (AnalysisSpec("central", QuerySpec("mean", "laplace", 1.0, bounds=(18.0, 90.0),
                                                  column="age")), AGES),
    "local": (AnalysisSpec("local", QuerySpec("histogram", "krr", 1.0, relation="replace",
                                              categories=("a", "b", "c"), column="cat")),
              LABELS),
    "shuffle": (_sum_analysis("shuffle", "cloak"), AGES),
    "distributed": (_sum_analysis("distributed", "skellam"), AGES),
}


def test_every_runnable_trust_model_has_a_case_here():
    assert set(runnable_trust_models()) == set(CASES)
    assert set(runnable_trust_models()) <= set(TRUST_MODELS)


@pytest.mark.parametrize("trust", sorted(CASES))
def test_one_result_shape(trust):
    analysis, values = CASES[trust]
    result = run(analysis, values, SimulationSource(3), notes=["from the schema"])
    out = result.to_dict()
    # ε and δ are read off the engine object that drew the noise, and printed as such.
    assert result.epsilon == float(result.engine.epsilon) == out["epsilon"]
    assert result.simulated and out["simulated"] is True
    assert out["trust_model"] == trust and out["notes"][0] == "from the schema"
    # Analyst-only counts are kept apart and never among the printable fields.
    assert "clamped" not in out and "missing_count" not in out
    assert "clamped" in result.analyst_only
    assert result.to_dict(analyst=True)["analyst_only"] == result.analyst_only
    # Ten ages of 150 fall outside 18–90; a local histogram clamps nothing. Every row is
    # sent, so the missing ones are counted for the analyst (40 ages, 30 labels).
    assert result.analyst_only["clamped"] == (0 if trust == "local" else 10)
    assert result.analyst_only["missing"] == (30 if trust == "local" else 40)


def test_missing_values_are_counted_for_the_analyst_only():
    analysis, values = CASES["central"]
    result = run(analysis, values, SimulationSource(1))
    assert result.analyst_only["missing"] == 40
    assert result.analyst_only["clamped"] == 10


@pytest.mark.parametrize("trust", sorted(CASES))
def test_a_simulation_is_never_exported(trust):
    analysis, values = CASES[trust]
    result = run(analysis, values, SimulationSource(3))
    with pytest.raises(ValueError, match="simulation|not exported"):
        result.public()


def test_a_central_release_draws_from_the_csprng_and_exports_the_allow_list():
    analysis, values = CASES["central"]
    result = run(analysis, values, SecureSource())
    public = result.public()
    assert not result.simulated and public["epsilon"] == 1.0
    assert "clamped" not in public and "missing_count" not in public
    noise = result.noise_description(public)
    # The mean is two noisy statistics under add-remove: each part's sensitivity recorded.
    assert noise["params"]["epsilon"] == 1.0 and len(noise["components"]) == 2


def test_local_release_records_one_report_per_row_and_exports():
    analysis, values = CASES["local"]
    result = run(analysis, values, SecureSource())
    records = result.records()
    assert len(next(iter(records.values()))) == len(values)
    public = result.public()
    assert public["trust_model"] == "local" and set(public["value"]) >= {"a", "b", "c"}


def test_randomized_response_with_p_states_its_own_epsilon():
    spec = QuerySpec("histogram", "rr", 0.5, relation="replace", categories=("no", "yes"),
                     params={"p": 0.75}, column="x")
    with pytest.raises(QueryError, match="disagrees"):
        resolve(AnalysisSpec("local", spec), None)
    fixed, _ = resolve(AnalysisSpec("local", QuerySpec(
        "histogram", "rr", math.log(3), relation="replace", categories=("no", "yes"),
        params={"p": 0.75}, column="x")), None)
    result = run(fixed, np.array(["no", "yes"] * 200, dtype=object), SimulationSource(2))
    assert result.epsilon == pytest.approx(math.log(3), rel=1e-12)


def test_resolution_fills_declared_bounds_and_drops_delta_of_pure_mechanisms():
    analysis = AnalysisSpec("central", QuerySpec("mean", "laplace", 1.0, delta=1e-6,
                                                 column="age"))
    resolved, notes = resolve(analysis, DECLARED)
    assert resolved.query.bounds == (18.0, 90.0) and resolved.query.delta == 0.0
    assert any("declared" in n for n in notes) and any("δ set to 0" in n for n in notes)


def test_local_histogram_needs_declared_categories():
    spec = QuerySpec("histogram", "krr", 1.0, relation="replace", column="free")
    with pytest.raises(QueryError, match="declared categories"):
        resolve(AnalysisSpec("local", spec), DECLARED)


@pytest.mark.parametrize("trust,query,refused", [
    ("central", "mean", None),
    ("local", "histogram", None),
    ("local", "heavy_hitters", "cannot release a local heavy_hitters"),
    ("shuffle", "sum", None),
    ("distributed", "sum", None),
    ("federated", "sum", "federated-model releases are not supported yet"),
    ("elsewhere", "sum", "unknown trust model"),
])
def test_capability_table_decides_what_a_project_releases(trust, query, refused):
    mechanism = {"central": "laplace", "local": "krr" if query == "histogram" else "sfp",
                 "distributed": "secagg_gaussian"}.get(trust, "cloak")
    problem = release_refusal(AnalysisSpec(trust, QuerySpec(query, mechanism, 1.0)))
    if refused is None:
        assert problem is None
    else:
        assert refused in problem and "\n" not in problem


def test_a_trust_model_without_a_row_can_do_nothing_yet():
    row = capability("federated")
    assert row.preview == () and row.release == ()
    with pytest.raises(EngineError):
        capability("nowhere")


def test_shuffle_sum_without_bounds_is_refused_in_one_line():
    spec = QuerySpec("sum", "cloak", 1.0, delta=1e-6, relation="replace", column="age")
    with pytest.raises(QueryError, match="needs declared bounds"):
        run(AnalysisSpec("shuffle", spec), AGES, SimulationSource(1))
