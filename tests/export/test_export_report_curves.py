"""The report's trade-off figure draws the release's own curve, as the engine computes it.

Pinned here (issue 11): a central release's first curve is labelled "this release (…)" and
is :func:`~dpstudio.engine.release_curve.release_tradeoff`'s curve for the same spec; a
local K-RR histogram's first curve counts the "other or missing" cell, k = d + 1 for d
declared categories. The curves are read where the figure is drawn (the call to
``tradeoff_image``), so a report that drew anything else would fail, and they are checked
against independent computations (a fresh engine call, closed forms from the released
noise or randomizer).
"""

import numpy as np
import pytest
from scipy.stats import norm

import dpstudio.export.report as report
from dpstudio.analysis import AnalysisSpec, run
from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.release_curve import release_tradeoff
from dpstudio.engine.rng import SecureSource
from dpstudio.engine.tradeoff import (
    alpha_grid,
    epsilon_delta_tradeoff,
    krr_tradeoff,
    mechanism_curve,
)
from dpstudio.export import public_result
from dpstudio.export.report import ReportInput, render_report, report_images

#: The α grid of the report's trade-off figure.
ALPHA = alpha_grid(400)


def _entry(spec, status="this release", rid=1):
    return {"id": rid, "time": "2024-01-01T00:00:00Z", "query": spec.query,
            "column": spec.column, "mechanism": spec.mechanism, "epsilon": spec.epsilon,
            "delta": spec.delta, "status": status}


def _input(spec, public, trust_model="central", earlier=0):
    """A report input for ``spec`` after ``earlier`` releases of the same spec."""
    history = [_entry(spec, "done", i + 1) for i in range(earlier)]
    history.append(_entry(spec, rid=earlier + 1))
    return ReportInput(release_id=earlier + 1, uid="a" * 32,
                       created_at="2024-01-01T00:00:00Z", dataset_name="d.csv",
                       fingerprint="b" * 64, spec=spec, public=public,
                       epsilon=spec.epsilon, delta=spec.delta, accountant="basic",
                       budget_epsilon=10.0, budget_delta=1e-3, history=history,
                       trust_model=trust_model)


def _central(spec, values):
    return public_result(release(values, spec, SecureSource()))


@pytest.fixture
def drawn(monkeypatch):
    """The curves the report hands to ``tradeoff_image`` (label, α, β), per call."""
    calls = []
    draw = report.tradeoff_image

    def spy(curves, *args, **kwargs):
        calls.append([(label, np.asarray(a), np.asarray(b)) for label, a, b in curves])
        return draw(curves, *args, **kwargs)

    monkeypatch.setattr(report, "tradeoff_image", spy)
    return calls


AGES = np.linspace(18.0, 90.0, 300)
CENTRAL = [
    QuerySpec("count", "laplace", 0.5, column="age"),
    QuerySpec("mean", "laplace", 0.5, bounds=(18.0, 90.0), column="age"),
    QuerySpec("variance", "gaussian", 0.5, delta=1e-6, bounds=(18.0, 90.0), column="age"),
    QuerySpec("histogram", "gaussian", 1.0, delta=1e-6, categories=("a", "b", "c"),
              column="g"),
    QuerySpec("sum", "discrete_laplace", 0.5, bounds=(18.0, 90.0), column="age"),
]


def _values(spec):
    return (np.array(["a", "b", "c", "a"] * 50, dtype=object) if spec.query == "histogram"
            else AGES)


@pytest.mark.parametrize("earlier", [0, 2], ids=["alone", "after two"])
@pytest.mark.parametrize("spec", CENTRAL, ids=lambda s: f"{s.query}-{s.mechanism}")
def test_the_first_curve_is_this_releases_own(qapp, drawn, spec, earlier):
    report_images(_input(spec, _central(spec, _values(spec)), earlier=earlier))
    (curves,) = drawn
    label, alpha, beta = curves[0]
    own = release_tradeoff(spec, "central", alpha=ALPHA)  # an independent engine call
    assert own.available
    assert label.startswith("this release (")
    assert label == (f"this release ({own.label}, "
                     f"{'exact' if own.exact else 'approximate'}): "
                     f"ε = {spec.epsilon:g}, δ = {spec.delta:g}")
    np.testing.assert_array_equal(alpha, ALPHA)
    np.testing.assert_allclose(beta, own.beta, rtol=0, atol=1e-12)
    # Not the (ε, δ) bound the report drew before the engine owned the curve.
    bound = epsilon_delta_tradeoff(spec.epsilon, spec.delta, ALPHA).beta
    assert np.max(np.abs(beta - bound)) > 0.02
    assert len(curves) == (1 if earlier == 0 else 2)


def test_a_gaussian_count_draws_g_mu_of_its_released_noise(qapp, drawn):
    """Closed form from the release alone: G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), μ = Δ/σ."""
    spec = QuerySpec("count", "gaussian", 0.5, delta=1e-6, column="age")
    pub = _central(spec, AGES)
    report_images(_input(spec, pub))
    label, alpha, beta = drawn[0][0]
    mu = pub["sensitivity"] / pub["noise_scale"]
    assert 0.05 < mu < 0.5  # a curve well away from both the diagonal and the axes
    np.testing.assert_allclose(beta, norm.cdf(norm.ppf(1.0 - alpha) - mu), atol=1e-9)
    assert label.startswith("this release (Gaussian, exact)")


def test_the_exponential_mechanism_draws_its_own_curve_not_the_bound(qapp, drawn):
    # Once drawn as its ε bound; its catalog curve (issue 14) is exact and lies above it.
    spec = QuerySpec("median", "exponential", 1.0, bounds=(18.0, 90.0), column="age")
    report_images(_input(spec, _central(spec, AGES)))
    label, alpha, beta = drawn[0][0]
    assert label == "this release (Exponential mechanism, exact): ε = 1, δ = 0"
    np.testing.assert_allclose(beta, mechanism_curve("exponential", {"epsilon": 1.0}, 1,
                                                     alpha).curve.beta, atol=1e-12)
    assert np.all(beta >= epsilon_delta_tradeoff(1.0, 0.0, alpha).beta - 1e-12)
    assert np.any(beta > epsilon_delta_tradeoff(1.0, 0.0, alpha).beta + 1e-3)


def test_the_caption_says_the_first_curve_is_the_releases_own(qapp):
    spec = CENTRAL[1]
    html = render_report(_input(spec, _central(spec, AGES)))[0].decode("utf-8")
    assert "The first curve is this release&#x27;s own trade-off" in html


def _krr_vertices_curve(p, q, k, alpha):
    """K-RR between two values, by Neyman–Pearson: reject on the other value's answer
    (ratio e^ε), then on the k − 2 neutral answers, then on the true one."""
    xs = [0.0, q, (k - 1) * q, 1.0]
    ys = [1.0, 1.0 - p, q, 0.0]
    return np.interp(alpha, xs, ys)


CATEGORIES = ("a", "b", "c")


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_a_local_krr_histogram_counts_the_other_or_missing_cell(qapp, drawn, epsilon):
    d = len(CATEGORIES)
    spec = QuerySpec("histogram", "krr", epsilon, relation="replace", categories=CATEGORIES,
                     column="g")
    labels = np.array(["a", "b", "c", None, "z"] * 60, dtype=object)
    pub = run(AnalysisSpec("local", spec), labels, SecureSource()).public()
    params = pub["parameters"]
    assert params["k"] == d + 1  # the release itself randomized over d + 1 answers
    report_images(_input(spec, pub, trust_model="local"))
    label, alpha, beta = drawn[0][0]
    assert label == f"one person's report (krr, exact): ε = {epsilon:g}, δ = 0"
    np.testing.assert_allclose(beta, krr_tradeoff(epsilon, d + 1, alpha).beta, atol=1e-12)
    np.testing.assert_allclose(
        beta, _krr_vertices_curve(params["p"], params["q"], d + 1, alpha), atol=1e-9)
    assert np.max(np.abs(beta - krr_tradeoff(epsilon, d, alpha).beta)) > 0.03


def test_the_local_guarantee_calls_the_curve_exact(qapp):
    spec = QuerySpec("histogram", "krr", 1.0, relation="replace", categories=CATEGORIES,
                     column="g")
    labels = np.array(["a", "b", "c", "a"] * 50, dtype=object)
    pub = run(AnalysisSpec("local", spec), labels, SecureSource()).public()
    html = render_report(_input(spec, pub, trust_model="local"))[0].decode("utf-8")
    assert "the exact trade-off of this randomizer" in html
    assert "one person&#x27;s randomized report reveals" in html


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_the_local_error_figure_counts_the_other_or_missing_cell(epsilon):
    """The report's error at the released ε is the release's own standard error per cell:
    K-RR over d + 1 answers, averaged over every released cell (Wang et al. 2017's
    variance, written out here), not over the d declared ones alone."""
    from dpstudio.export.utility_series import local_utility_series

    d = len(CATEGORIES)
    spec = QuerySpec("histogram", "krr", epsilon, relation="replace", categories=CATEGORIES,
                     column="g")
    labels = np.array(["a", "b", "c", None, "z"] * 60, dtype=object)
    pub = run(AnalysisSpec("local", spec), labels, SecureSource()).public()
    n, k = int(pub["n"]), d + 1
    e = np.exp(epsilon)
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    counts = np.clip(np.array([float(v) for v in pub["unbiased"].values()]), 0.0, n)
    assert counts.size == k
    var = n * q * (1 - q) / (p - q) ** 2 + counts * (1 - p - q) / (p - q)
    series = local_utility_series(spec, pub)
    assert series[2] == pytest.approx(float(np.sqrt(var.mean())), rel=1e-9)
