"""Shuffle and secure-aggregation previews: the shuffle's runs through the one dispatch,
the secure aggregation's is drawn from the plan the dispatch gives. Each is checked
against the engine called directly, as the preview computed it before it went through
the dispatch (so a preview's numbers for a fixed seed do not move)."""

from __future__ import annotations

import numpy as np
import pytest

from dpstudio.analysis.choices import Choices
from dpstudio.analysis.dispatch import plan, planned_trust_models, quick_to_simulate
from dpstudio.analysis.preview import preview
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.utility import PLANNED_MODELS, sum_analysis
from dpstudio.engine.distributed import plan_secure_sum
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.shuffle import run_shuffle_sum

RNG = np.random.default_rng(42)
AGES = RNG.normal(40.0, 15.0, 4_000)
AGES[RNG.choice(AGES.size, 100, replace=False)] = np.nan
AGES[:4] = [-10.0, 200.0, np.inf, -np.inf]
BOUNDS = (0.0, 100.0)


def _choices(trust: str, mechanism: str, query: str, **kw) -> Choices:
    return Choices(column="age", column_type="numeric", value_types=("numeric",),
                   trust_model=trust, query=query, mechanism=mechanism, epsilon=0.8,
                   delta=1e-6, bounds=BOUNDS, confidence=0.9, **kw)


def _sent() -> np.ndarray:
    """The column as every client sends it: missing or infinite as the middle, clamped."""
    return np.clip(np.where(np.isfinite(AGES), AGES, 50.0), *BOUNDS)


@pytest.mark.parametrize("mechanism,params", [
    ("cloak", ()), ("cloak", (("noise", "gaussian"),)), ("blanket", ())])
@pytest.mark.parametrize("query", ["sum", "mean"])
def test_shuffle_preview_is_the_engines_run_on_the_sent_column(mechanism, params, query):
    s = _choices("shuffle", mechanism, query, params=params)
    p = preview(s, AGES, seed=5)
    res = run_shuffle_sum(_sent(), BOUNDS, mechanism, 0.8, 1e-6, SimulationSource(5),
                          query=query, confidence=0.9, **dict(params))
    assert p.value[0] == res.value
    assert p.ci_low[0] == res.value - res.error_bound
    assert p.ci_high[0] == res.value + res.error_bound
    assert (p.epsilon, p.delta, p.n) == (res.epsilon, res.delta, AGES.size)
    assert p.notes[1:-1] == res.notes  # between the shuffle's sentence and the interval's


@pytest.mark.parametrize("mechanism", ["secagg_gaussian", "skellam"])
@pytest.mark.parametrize("query", ["sum", "mean"])
def test_distributed_preview_is_drawn_from_the_planned_error(mechanism, query):
    s = _choices("distributed", mechanism, query, params=(("max_dropouts", 7),))
    p = preview(s, AGES, seed=11)
    planned = plan_secure_sum(AGES.size, BOUNDS, mechanism, 0.8, 1e-6, query=query,
                              max_dropouts=7, confidence=0.9)
    sent = _sent()
    centre = sent.sum() if query == "sum" else sent.mean()
    words = SimulationSource(11).uint64(4)
    noise = np.random.Generator(np.random.PCG64([int(w) for w in words])).normal(
        0.0, planned.stderr)
    assert p.value[0] == centre + noise
    assert p.ci_high[0] - p.value[0] == pytest.approx(planned.error_bound, rel=1e-12)
    assert (p.epsilon, p.delta) == (planned.epsilon, planned.delta)
    assert set(planned.notes) <= set(p.notes)


def test_the_dispatch_says_which_protocols_are_planned_and_which_run_live():
    assert set(planned_trust_models()) == set(PLANNED_MODELS) == {"shuffle", "distributed"}
    assert quick_to_simulate("shuffle") and not quick_to_simulate("distributed")
    assert quick_to_simulate("central") and quick_to_simulate("local")


def test_a_plan_is_the_engines_and_is_computed_once():
    s = _choices("distributed", "skellam", "mean")
    a = plan(sum_analysis(s, 0.8), 1_000)
    direct = plan_secure_sum(1_000, BOUNDS, "skellam", 0.8, 1e-6, query="mean",
                             confidence=0.9)
    assert a.to_dict() == direct.to_dict()
    assert plan(sum_analysis(s, 0.8), 1_000) is a  # cached: plans are data-free
    assert plan(sum_analysis(s, 0.8), 1_001) is not a


def test_no_plan_without_a_protocol_or_bounds():
    central = AnalysisSpec("central", QuerySpec("mean", "laplace", 1.0, bounds=BOUNDS))
    with pytest.raises(QueryError, match="no data-free plan"):
        plan(central, 100)
    unbounded = AnalysisSpec("shuffle", QuerySpec("sum", "cloak", 1.0, delta=1e-6,
                                                  relation="replace"))
    with pytest.raises(QueryError, match="needs declared bounds"):
        plan(unbounded, 100)
