"""Central-model queries: accuracy within known variance, interval coverage, sensitivity
from declared bounds only, secure-source enforcement, and bad input."""

import math

import numpy as np
import pytest

from dpstudio.engine.calibration import analytic_gaussian_sigma
from dpstudio.engine.errors import EngineError, ParameterError, QueryError
from dpstudio.engine.queries import (
    QuerySpec,
    release,
    run_query,
    simulate_query,
    sum_sensitivity,
)
from dpstudio.engine.rng import InsecureSourceError, SecureSource, SimulationSource

RNG = np.random.default_rng(0)
AGES = np.round(RNG.uniform(18, 90, size=500), 1)
REPS = 300


def _repeat(values, spec, seed=0, reps=REPS):
    src = SimulationSource(seed)
    return [run_query(values, spec, src) for _ in range(reps)]


def test_sum_sensitivity_from_bounds_and_relation():
    assert sum_sensitivity(-5.0, 10.0, "add-remove") == 10.0
    assert sum_sensitivity(-5.0, 10.0, "replace") == 15.0
    assert sum_sensitivity(0.0, 100.0, "replace") == 100.0


@pytest.mark.parametrize("mechanism,delta", [("laplace", 0.0), ("gaussian", 1e-6),
                                             ("discrete_laplace", 0.0),
                                             ("discrete_gaussian", 1e-6)])
def test_sum_is_unbiased_with_the_stated_variance_and_coverage(mechanism, delta):
    spec = QuerySpec("sum", mechanism, epsilon=0.5, delta=delta, bounds=(0.0, 100.0))
    outs = _repeat(AGES, spec)
    values = np.array([r.value for r in outs])
    truth = AGES.sum()
    var = outs[0].variance
    assert abs(values.mean() - truth) < 5 * math.sqrt(var / REPS)
    assert values.var() == pytest.approx(var, rel=5 * math.sqrt(2 / REPS) * 1.6)
    covered = np.mean([r.ci_low <= truth <= r.ci_high for r in outs])
    assert covered >= 0.95 - 5 * math.sqrt(0.95 * 0.05 / REPS)
    assert outs[0].sensitivity == 100.0


def test_laplace_sum_noise_scale_is_the_closed_form():
    r = run_query(AGES, QuerySpec("sum", "laplace", epsilon=0.25, bounds=(0.0, 100.0)),
                  SimulationSource(0))
    assert r.noise_scale == pytest.approx(100.0 / 0.25, rel=1e-12)
    g = run_query(AGES, QuerySpec("sum", "gaussian", epsilon=0.5, delta=1e-6,
                                  bounds=(0.0, 100.0)), SimulationSource(0))
    assert g.noise_scale == pytest.approx(analytic_gaussian_sigma(100.0, 0.5, 1e-6), rel=1e-3)


def test_mean_and_variance_intervals_cover_the_truth():
    for query, truth in (("mean", AGES.mean()), ("variance", AGES.var())):
        spec = QuerySpec(query, "laplace", epsilon=1.0, bounds=(0.0, 100.0))
        outs = _repeat(AGES, spec, reps=200)
        vals = np.array([r.value for r in outs])
        assert np.mean([r.ci_low <= truth <= r.ci_high for r in outs]) >= 0.95
        # The approximate (delta-method) variance is close to what we see.
        assert vals.std() == pytest.approx(math.sqrt(outs[0].variance), rel=0.35)
        assert abs(vals.mean() - truth) < 5 * vals.std() / math.sqrt(len(vals)) + 1e-9


def test_count_and_histogram():
    faculty = np.array(["arts", "science", "law", None, "science", "medicine"] * 100,
                       dtype=object)
    spec = QuerySpec("count", "discrete_laplace", epsilon=1.0)
    outs = _repeat(faculty, spec, reps=200)
    assert np.mean([r.value for r in outs]) == pytest.approx(500, abs=5 * math.sqrt(2.0 / 200) * 2)
    hist = QuerySpec("histogram", "laplace", epsilon=1.0, categories=("arts", "science", "law"))
    r = run_query(faculty, hist, SimulationSource(2))
    assert set(r.value) == {"arts", "science", "law"}
    assert r.clamped == 100  # "medicine" was not declared: dropped, and told to the analyst
    assert r.value["science"] == pytest.approx(200, abs=5 * math.sqrt(r.variance))
    binned = QuerySpec("histogram", "gaussian", epsilon=1.0, delta=1e-6, bounds=(0, 100), bins=4,
                       relation="replace")
    rb = run_query(AGES, binned, SimulationSource(3))
    assert list(rb.value) == ["[0, 25)", "[25, 50)", "[50, 75)", "[75, 100)"]
    assert rb.sensitivity == pytest.approx(math.sqrt(2))  # ℓ₂: two cells move by one
    lap = run_query(AGES, QuerySpec("histogram", "laplace", epsilon=0.5, bounds=(0, 100), bins=4,
                                    relation="replace"), SimulationSource(3))
    assert lap.sensitivity == 2.0 and lap.noise_scale == pytest.approx(2.0 / 0.5)  # ℓ₁
    assert sum(rb.value.values()) == pytest.approx(AGES.size, abs=5 * 2 * math.sqrt(rb.variance))


def test_median_lands_near_the_truth_and_reports_its_rank_error():
    spec = QuerySpec("median", "exponential", epsilon=1.0, bounds=(0.0, 100.0))
    outs = _repeat(AGES, spec, reps=50)
    ranks = np.array([np.searchsorted(np.sort(AGES), r.value) for r in outs])
    bound = outs[0].components[0]["rank_error_bound"]
    assert np.mean(np.abs(ranks - AGES.size / 2) <= bound + 1) >= 0.9
    pf = run_query(AGES, QuerySpec("quantile", "permute_and_flip", epsilon=2.0,
                                   bounds=(0.0, 100.0), quantile=0.9), SimulationSource(1))
    assert abs(pf.value - np.quantile(AGES, 0.9)) < 10


def test_clamped_values_are_counted_for_the_analyst():
    values = np.array([-5.0, 10.0, 20.0, 150.0, np.nan])
    r = run_query(values, QuerySpec("sum", "laplace", epsilon=1.0, bounds=(0.0, 100.0)),
                  SimulationSource(0))
    assert r.clamped == 2


def test_release_insists_on_the_os_csprng():
    spec = QuerySpec("sum", "laplace", epsilon=1.0, bounds=(0.0, 100.0))
    with pytest.raises(InsecureSourceError):
        release(AGES, spec, SimulationSource(0))
    r = release(AGES, spec, SecureSource())
    assert r.simulated is False and "CSPRNG" in r.source
    sim = run_query(AGES, spec, SimulationSource(0))
    assert sim.simulated is True and "not for releases" in sim.source


@pytest.mark.parametrize("values,spec,error", [
    (AGES, QuerySpec("sum", "laplace", 1.0, bounds=(100.0, 0.0)), QueryError),
    (AGES, QuerySpec("sum", "laplace", 1.0, bounds=(0.0, float("inf"))), QueryError),
    (AGES, QuerySpec("sum", "laplace", 1.0, bounds=(float("nan"), 1.0)), QueryError),
    (AGES, QuerySpec("sum", "laplace", 1.0), QueryError),  # bounds are never read off data
    (AGES, QuerySpec("sum", "laplace", 0.0, bounds=(0.0, 1.0)), ParameterError),
    (AGES, QuerySpec("sum", "laplace", -1.0, bounds=(0.0, 1.0)), ParameterError),
    (AGES, QuerySpec("sum", "gaussian", 1.0, delta=0.0, bounds=(0.0, 1.0)), ParameterError),
    (AGES, QuerySpec("sum", "gaussian", 1.0, delta=1.0, bounds=(0.0, 1.0)), ParameterError),
    (AGES, QuerySpec("sum", "laplace", 1.0, delta=-0.1, bounds=(0.0, 1.0)), ParameterError),
    (np.array([]), QuerySpec("mean", "laplace", 1.0, bounds=(0.0, 1.0)), QueryError),
    (np.array([np.nan, np.nan]), QuerySpec("mean", "laplace", 1.0, bounds=(0.0, 1.0)),
     QueryError),
    (np.array(["a", "b"], dtype=object), QuerySpec("mean", "laplace", 1.0, bounds=(0.0, 1.0)),
     QueryError),
    (AGES, QuerySpec("histogram", "laplace", 1.0), QueryError),
    (AGES, QuerySpec("median", "laplace", 1.0, bounds=(0.0, 1.0)), QueryError),
    (AGES, QuerySpec("sum", "exponential", 1.0, bounds=(0.0, 1.0)), QueryError),
    (AGES, QuerySpec("sum", "nope", 1.0, bounds=(0.0, 1.0)), ParameterError),
    (AGES, QuerySpec("quantile", "exponential", 1.0, bounds=(0.0, 1.0), quantile=1.5),
     QueryError),
    (AGES, QuerySpec("sum", "laplace", 1.0, bounds=(0.0, 1.0), relation="swap"), QueryError),
    (AGES, QuerySpec("sum", "laplace", 1.0, bounds=(0.0, 1.0), confidence=1.0), QueryError),
])
def test_bad_input_gets_a_one_line_message(values, spec, error):
    with pytest.raises(error) as err:
        run_query(values, spec, SimulationSource(0))
    assert isinstance(err.value, EngineError)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("query", ["sum", "mean", "variance", "count"])
def test_simulate_query_has_the_release_distribution(query):
    spec = QuerySpec(query, "laplace", epsilon=0.3, bounds=(0.0, 100.0))
    sims = simulate_query(AGES, spec, 4000, SimulationSource(1))
    outs = np.array([r.value for r in _repeat(AGES, spec, seed=2, reps=300)])
    assert sims.shape == (4000,)
    # Same mean (5 standard errors of the difference) and same spread (within 25%).
    se = math.sqrt(sims.var() / sims.size + outs.var() / outs.size)
    assert abs(sims.mean() - outs.mean()) < 5 * se
    assert sims.std() == pytest.approx(outs.std(), rel=0.25)


def test_simulate_query_power_a_wrong_epsilon_is_visible():
    spec = QuerySpec("sum", "laplace", epsilon=0.3, bounds=(0.0, 100.0))
    wrong = QuerySpec("sum", "laplace", epsilon=0.6, bounds=(0.0, 100.0))
    a = simulate_query(AGES, spec, 4000, SimulationSource(1))
    b = simulate_query(AGES, wrong, 4000, SimulationSource(2))
    assert a.std() > 1.6 * b.std()  # scale ratio 2; 5 SE of an std ratio at n=4000 ≈ 0.1


def test_simulate_histogram_and_quantile_shapes():
    hist = QuerySpec("histogram", "gaussian", epsilon=1.0, delta=1e-6, bounds=(0, 100), bins=5)
    h = simulate_query(AGES, hist, 100, SimulationSource(0))
    assert h.shape == (100, 5)
    assert h.sum(axis=1).mean() == pytest.approx(AGES.size, abs=50)
    med = simulate_query(AGES, QuerySpec("median", "exponential", 1.0, bounds=(0.0, 100.0)),
                         200, SimulationSource(0))
    assert med.shape == (200,) and abs(np.median(med) - np.median(AGES)) < 3


def test_pure_epsilon_mechanisms_report_no_delta():
    # A δ offered to a pure mechanism is refused (issue 10, item 11), not silently dropped.
    spec = QuerySpec("sum", "laplace", epsilon=1.0, delta=1e-6, bounds=(0.0, 100.0))
    with pytest.raises(ParameterError, match="laplace is pure ε-DP: drop --delta"):
        run_query(AGES, spec, SimulationSource(0))
    pure = QuerySpec("sum", "laplace", epsilon=1.0, delta=0.0, bounds=(0.0, 100.0))
    assert run_query(AGES, pure, SimulationSource(0)).delta == 0.0
    gauss = QuerySpec("sum", "gaussian", epsilon=1.0, delta=1e-6, bounds=(0.0, 100.0))
    assert run_query(AGES, gauss, SimulationSource(0)).delta == 1e-6
