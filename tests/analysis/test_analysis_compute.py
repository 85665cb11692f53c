"""The analysis view's jobs (dpstudio.analysis: choices, utility, privacy, preview), called
directly: no Qt involved."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpstudio.analysis.choices import ALPHA, Choices, mechanisms_for, registry_value_types
from dpstudio.analysis.preview import preview
from dpstudio.analysis.privacy import tradeoff
from dpstudio.analysis.utility import estimand, imputation_shift, release_bias, utility
from dpstudio.data import column_values, open_dataset, sample_path
from dpstudio.engine import release_curve
from dpstudio.engine.release_curve import tightest_mu
from dpstudio.engine.tradeoff import alpha_grid, gaussian_tradeoff, laplace_tradeoff
from dpstudio.jobs import Cancelled, NullState

EPS = np.array([0.05, 0.2, 1.0, 5.0])


@pytest.fixture(scope="module")
def survey():
    return open_dataset(sample_path("survey"))


def settings_for(dataset, column: str, **kw) -> tuple[Choices, np.ndarray]:
    spec = dataset.schema[column]
    values = column_values(dataset.frame, spec)
    kind = spec.type.value
    defaults = dict(column=column, column_type=kind,
                    value_types=registry_value_types(kind, values),
                    trust_model="central", query="mean" if kind == "numeric" else "histogram",
                    mechanism="laplace", bounds=spec.bounds,
                    categories=tuple(spec.categories) or None)
    defaults.update(kw)
    return Choices(**defaults), values


def test_utility_curves_on_the_column(survey):
    s, values = settings_for(survey, "age")
    result = utility(s, values, reps=120, mc_epsilons=EPS)
    by_kind = {(c.trust_model, c.kind): c for c in result.curves if c.primary}
    analytic = by_kind[("central", "analytic")]
    simulated = by_kind[("central", "simulation")]
    assert np.all(simulated.error > 0) and np.all(np.diff(simulated.error) < 0)
    assert np.all(simulated.low <= simulated.error) and np.all(simulated.error <= simulated.high)
    # The simulation agrees with the analytic error where clamping bias is negligible.
    at = np.interp(np.log(EPS[1:]), np.log(analytic.epsilon), analytic.error)
    np.testing.assert_allclose(simulated.error[1:], at, rtol=0.25)
    assert "simulation" in " ".join(result.notes) and "seed" in " ".join(result.notes)
    assert result.key == s.utility_key()


def test_utility_does_not_depend_on_epsilon(survey):
    s, values = settings_for(survey, "age")
    a = utility(replace(s, epsilon=0.1), values, reps=50, mc_epsilons=EPS)
    b = utility(replace(s, epsilon=7.0, compositions=3, confidence=0.9), values,
                        reps=50, mc_epsilons=EPS)
    assert a.key == b.key
    for ca, cb in zip(a.curves, b.curves, strict=True):
        np.testing.assert_array_equal(ca.error, cb.error)


def test_local_model_costs_a_root_n_factor(survey):
    s, values = settings_for(survey, "cheated_on_exam")
    result = utility(s, values, simulate=False)
    names = {c.trust_model: c for c in result.curves}
    # No distributed entry for yes/no; the shuffle's is K-RR shuffled (issue 14).
    assert set(names) == {"central", "local", "shuffle"}
    central = np.interp(0.0, np.log(names["central"].epsilon), names["central"].error)
    local = np.interp(0.0, np.log(names["local"].epsilon), names["local"].error)
    n = int(np.count_nonzero(np.not_equal(values, None)))
    assert 0.2 * np.sqrt(n) < local / central < 5 * np.sqrt(n)


def test_local_and_distributed_curves_and_previews(survey):
    s, values = settings_for(survey, "cheated_on_exam", trust_model="local", mechanism="rr")
    result = utility(s, values, mc_epsilons=EPS, compare=False)
    sim = next(c for c in result.curves if c.kind == "simulation")
    line = next(c for c in result.curves if c.kind == "analytic" and c.primary)
    exact = np.interp(np.log(sim.epsilon), np.log(line.epsilon), line.error)
    np.testing.assert_allclose(sim.error, exact, rtol=0.35)
    p = preview(s, values, seed=3)
    assert p.labels == ["yes", "no"] and p.simulated and p.trust_model == "local"
    assert np.all(p.ci_low < p.value) and np.all(p.value < p.ci_high)

    d, age = settings_for(survey, "age", trust_model="distributed",
                          mechanism="secagg_gaussian")
    lines = utility(d, age, simulate=False, compare=("central",))
    own = next(c for c in lines.curves if c.trust_model == "distributed")
    assert np.all(np.diff(own.error[np.isfinite(own.error)]) < 0)
    p = preview(d, age, seed=2)
    assert p.labels is None and p.ci_low[0] < p.value[0] < p.ci_high[0]
    assert abs(p.value[0] - p.truth[0]) < 5


def test_binary_randomized_response_is_not_offered_for_six_categories(survey):
    faculty = ("categorical",)
    names = [i.name for i in mechanisms_for("local", faculty, "histogram", cells=6)]
    assert "rr" not in names and "krr" in names
    names = [i.name for i in mechanisms_for("local", ("boolean",), "histogram", 2)]
    assert names[0] == "rr"


def test_tradeoff_of_a_laplace_count_is_exact_and_above_its_bound(survey):
    s, _ = settings_for(survey, "age", query="count", epsilon=0.8, compositions=4)
    r = tradeoff(s, draws=20_000)
    np.testing.assert_allclose(r.mechanism.beta, laplace_tradeoff(0.8, ALPHA).beta,
                               atol=1e-12)
    assert np.all(r.mechanism.beta >= r.bound.beta - 1e-12)  # never below the guarantee
    assert np.all(r.composed.beta <= r.mechanism.beta + 1e-9)  # k releases: less private
    assert np.all(r.gdp.beta <= r.mechanism.beta + 1e-9)  # the tightest GDP lies under it
    covered = r.attack is not None and np.mean(
        np.interp(r.attack.alpha_high, r.mechanism.alpha, r.mechanism.beta)
        <= r.attack.beta_high)
    assert covered > 0.8
    other = tradeoff(replace(s, epsilon=2.0))
    assert np.max(np.abs(other.mechanism.beta - r.mechanism.beta)) > 0.05


def test_tradeoff_of_a_gaussian_mean_composes_its_two_sums(survey):
    s, _ = settings_for(survey, "age", mechanism="gaussian", delta=1e-6,
                        params=(("calibration", "analytic"),))
    r = tradeoff(s)
    assert r.mu is not None and r.mu > 0
    np.testing.assert_allclose(r.mechanism.beta, gaussian_tradeoff(r.mu, ALPHA).beta)
    np.testing.assert_allclose(r.composed.beta,
                               gaussian_tradeoff(r.mu * np.sqrt(10), ALPHA).beta)
    assert r.delta == 1e-6 and r.bound.beta[0] == pytest.approx(1 - 1e-6)


def test_tightest_gdp_recovers_a_gaussian_mu():
    a = alpha_grid(256)
    assert tightest_mu(gaussian_tradeoff(1.3, a).beta, a) == pytest.approx(1.3, 1e-6)


def test_preview_is_a_labelled_simulation_beside_the_truth(survey):
    s, values = settings_for(survey, "age")
    p = preview(s, values, seed=5)
    assert p.simulated and "simulation" in p.source and p.seed == 5
    assert p.ci_low[0] <= p.value[0] <= p.ci_high[0]
    assert p.truth[0] == pytest.approx(np.nanmean(values))
    again = preview(s, values, seed=5)
    assert again.value[0] == p.value[0]  # seeded: reproducible
    h, hv = settings_for(survey, "faculty")
    hp = preview(h, hv)
    assert hp.labels == list(survey.schema["faculty"].categories)
    assert hp.truth.sum() == np.count_nonzero(np.not_equal(hv, None))


def test_jobs_report_progress_and_stop_when_cancelled(survey):
    s, values = settings_for(survey, "age")
    state = NullState()
    utility(s, values, state, reps=20, mc_epsilons=EPS)
    assert state.fractions and state.fractions[-1] == pytest.approx(0.9, abs=0.11)
    assert state.fractions == sorted(state.fractions)

    class StopAfterOne(NullState):
        def cancelled(self):
            return len(self.fractions) >= 2

    with pytest.raises(Cancelled):
        utility(s, values, StopAfterOne(), reps=20, mc_epsilons=EPS)


# ------------------------------------------- missing values: the engine's plan (issue 10)


def test_discrete_sum_tradeoff_uses_the_engines_sensitivity_under_replace(survey):
    # ages in [18, 100], missing values dropped: a value may appear where one was missing,
    # so the sum moves by up to 100, not 100 − 18 = 82 (the engine's rule, on its grid).
    s, values = settings_for(survey, "age", query="sum", mechanism="discrete_laplace",
                             relation="replace")
    from dpstudio.engine.queries import run_query
    from dpstudio.engine.rng import SimulationSource

    (component,) = run_query(values, s.spec(), SimulationSource(0)).components
    steps = round(component["sensitivity"] / component["grid"])
    assert release_curve._discrete_steps(s.spec(), s.info, s.epsilon) == steps == 100
    imputed = replace(s, missing="impute")
    assert release_curve._discrete_steps(imputed.spec(), imputed.info, imputed.epsilon) == 82


def test_imputed_mean_under_replace_is_one_noisy_sum_in_tradeoff_and_preview(survey):
    s, values = settings_for(survey, "age", mechanism="gaussian", delta=1e-6,
                             params=(("calibration", "analytic"),), relation="replace",
                             missing="impute", impute=40.0)
    assert release_curve.release_parts(s.spec()) == 1  # n public: no noisy count
    assert release_curve.release_parts(replace(s, missing="drop").spec()) == 2
    r = tradeoff(s)
    fam = s.info.build(**s.info.resolve(s.spec().mechanism_params()))
    assert r.mu == pytest.approx(1.0 / fam.continuous_scale(1.0, s.epsilon, 1e-6), rel=1e-9)
    p = preview(s, values)
    assert any("imputed as 40" in note for note in p.notes)
    assert s.utility_key() != replace(s, missing="drop", impute=None).utility_key()


def _imputing(**kw) -> tuple[Choices, np.ndarray]:
    values = np.array([10.0, np.nan, 30.0, np.inf, 50.0] * 40)  # 200 rows, 120 present
    s = Choices(column="x", column_type="numeric", value_types=("numeric",),
                         trust_model="central", query="mean", mechanism="laplace",
                         bounds=(0.0, 40.0), relation="replace", missing="impute",
                         impute=0.0)
    return replace(s, **kw), values


def test_an_imputing_release_counts_every_row_and_its_line_includes_the_bias():
    """Imputation makes every row count: the curves' n is the rows (before: the present
    values); the analytic line includes what imputing and clamping move the mean by
    (issue 12: before, it was the noise alone, flagged "noise only"), and a note says by
    how much (analyst only)."""
    s, values = _imputing()
    res = utility(s, values, reps=20, mc_epsilons=np.array([1.0]),
                          line_epsilons=np.array([1.0]), compare=False)
    assert res.n == 200
    assert any("on the 200 rows (missing values imputed)" in n for n in res.notes)
    [line] = [c for c in res.curves if c.kind == "analytic"]
    assert not line.noise_only and line.bias == pytest.approx(-14.0)
    noise = np.sqrt(2) * 40.0 / 1.0 / 200  # Laplace sum over a public n = 200
    assert line.error[0] == pytest.approx(np.hypot(noise, 14.0), rel=1e-6)
    # Release's expectation: mean of (10, 0, 30, 0, 40) = 16; truth: mean of 10, 30, 50.
    assert release_bias(s, values) == pytest.approx(16.0 - 30.0)
    assert any("by -14 from the true mean" in n for n in res.notes)
    # Imputing alone (no clamping): (10 + 0 + 30 + 0 + 50) / 5 − 30 = −12.
    assert imputation_shift(s, values) == pytest.approx(-12.0)
    assert imputation_shift(replace(s, missing="drop", impute=None), values) is None


@pytest.mark.parametrize("trust", ["shuffle", "distributed"])
def test_protocol_truth_is_the_present_values_statistic(trust):
    """Shuffle and secure aggregation: the truth is the present values' unclamped mean
    (before: the clamped column with the middle for missing values, 24 here)."""
    s, values = _imputing(trust_model=trust, missing="drop", impute=None,
                          mechanism=mechanisms_for(trust, ("numeric",), "mean")[0].name)
    assert estimand(s, values)[0] == pytest.approx(30.0)
