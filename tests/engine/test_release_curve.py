"""The privacy curve of a whole release, checked against independent computations.

Each release's curve is recomputed here without the engine's composition code: the
Laplace parts by Neyman–Pearson on a binned product of their privacy-loss distributions
(a coarsening, hence never below the true curve, while the engine's lattice is never
above it), the discrete Laplace on its explicit output pmfs, the Gaussian from the noise
the release actually draws and the Balle–Wang profile. The noise plan itself is read
off a release run through :func:`~dpstudio.engine.queries.run_query`.
"""

import math

import numpy as np
import pytest
from scipy.special import ndtr, ndtri
from scipy.stats import binom, norm

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.queries import QuerySpec, run_query
from dpstudio.engine.release_curve import (
    DEFAULT_ALPHA,
    matching_mu,
    release_parts,
    release_tradeoff,
    tightest_mu,
)
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.tradeoff import compose_tradeoff, gaussian_epsilon

A = DEFAULT_ALPHA
VALUES = np.array([1.0, 2.5, 7.0, np.nan, 3.0, 9.5])


def _components(spec):
    """The noisy statistics a real run of ``spec`` drew noise for (seeded simulation)."""
    return run_query(VALUES, spec, SimulationSource(3)).components


def _np_curve(p, q, alpha):
    """Neyman–Pearson curve of two pmfs on the same outputs (reject where q/p is largest)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p > 0, q / np.where(p > 0, p, 1.0), np.inf)
    order = np.argsort(-ratio, kind="stable")
    ka = np.concatenate([[0.0], np.cumsum(p[order])])
    kb = np.concatenate([np.cumsum(q[order][::-1])[::-1], [0.0]])
    ka = np.minimum(ka, 1.0)
    ka[-1] = 1.0
    keep = np.append(ka[1:] > ka[:-1], True)
    return np.interp(alpha, ka[keep], kb[keep])


def _laplace_parts_upper(eps_part, parts, alpha, bins=1500):
    """Curve of ``parts`` independent Laplace(ε_part) statistics, from above.

    One Laplace statistic's privacy loss L = (|x| − |x − 1|)·ε has atoms at −ε (P-mass ½)
    and +ε (½e^−ε) and density ¼e^{−(l+ε)/2} between; Q = e^L·P. Binning L (exact P- and
    Q-masses per bin) and grouping products by the sum of bin indices are garblings, so
    the Neyman–Pearson curve computed here lies on or above the true one, converging as
    the bins shrink.
    """
    e = eps_part
    edges = np.linspace(-e, e, bins + 1)
    cdf_p = -0.5 * np.exp(-(edges + e) / 2.0)  # ∫ ¼e^{−(l+ε)/2} dl
    cdf_q = 0.5 * np.exp((edges - e) / 2.0)  # ∫ ¼e^{(l−ε)/2} dl
    p = np.concatenate([[0.5], np.diff(cdf_p), [0.5 * math.exp(-e)]])
    q = np.concatenate([[0.5 * math.exp(-e)], np.diff(cdf_q), [0.5]])
    assert math.isclose(p.sum(), 1.0, rel_tol=1e-12) and math.isclose(q.sum(), 1.0,
                                                                       rel_tol=1e-12)
    pk, qk = p, q
    for _ in range(parts - 1):
        pk, qk = np.convolve(pk, p), np.convolve(qk, q)
    return _np_curve(pk, qk, alpha)


def _dlap_pair(scale, shift, reach=4000):
    """P(k) ∝ e^{−|k|/scale} and Q(k) = P(k − shift) on [−reach, reach + shift], each tail
    beyond lumped into one output (its likelihood ratio is constant there)."""
    k = np.arange(-reach, reach + shift + 1)
    r = math.exp(-1.0 / scale)
    z = (1.0 + r) / (1.0 - r)
    p = np.exp(-np.abs(k) / scale) / z
    q = np.exp(-np.abs(k - shift) / scale) / z
    tail_lo_p, tail_lo_q = r ** (reach + 1) / (1 - r) / z, r ** (reach + shift + 1) / (1 - r) / z
    tail_hi_p = r ** (reach + shift + 1) / (1 - r) / z
    tail_hi_q = r ** (reach + 1) / (1 - r) / z
    return (np.concatenate([[tail_lo_p], p, [tail_hi_p]]),
            np.concatenate([[tail_lo_q], q, [tail_hi_q]]))


# ------------------------------------------------------------------- the noise plan


@pytest.mark.parametrize(("query", "relation", "missing", "parts"), [
    ("count", "add-remove", "drop", 1),
    ("sum", "replace", "drop", 1),
    ("mean", "add-remove", "drop", 2),
    ("mean", "replace", "impute", 1),  # n public: the mean is one noisy sum
    ("variance", "add-remove", "drop", 3),
    ("variance", "replace", "impute", 2),
])
def test_parts_are_the_noisy_statistics_a_release_draws(query, relation, missing, parts):
    spec = QuerySpec(query, "laplace", 1.0, bounds=(0.0, 10.0), relation=relation,
                     missing=missing)
    assert release_parts(spec) == len(_components(spec)) == parts
    assert release_tradeoff(spec).parts == parts


def test_histogram_parts_are_the_cells_one_record_moves():
    add = QuerySpec("histogram", "laplace", 1.0, categories=("a", "b", "c"))
    rep = QuerySpec("histogram", "laplace", 1.0, categories=("a", "b", "c"),
                    relation="replace")
    assert (release_parts(add), release_parts(rep)) == (1, 2)


# --------------------------------------------------------------- Laplace compositions


def test_variance_release_is_three_laplace_parts_composed():
    eps = 1.2
    spec = QuerySpec("variance", "laplace", eps, bounds=(0.0, 10.0))
    comps = _components(spec)
    assert len(comps) == 3 and all(math.isclose(c["sensitivity"] / c["noise_scale"], eps / 3)
                                   for c in comps)
    curve = release_tradeoff(spec)
    assert curve.available and not curve.exact  # the lattice is pessimistic
    upper = _laplace_parts_upper(eps / 3, 3, A)
    assert np.all(curve.beta <= upper + 1e-9)  # never more private than the mechanism
    assert np.max(upper - curve.beta) < 2e-3
    pld = compose_tradeoff("laplace", {"scale": 3.0 / eps}, 3, A, method="pld")
    assert np.max(np.abs(curve.beta - pld.beta)) < 3e-3
    # Power: one part fewer (the count forgotten) is a clearly different curve.
    two = _laplace_parts_upper(eps / 2, 2, A)
    assert np.max(np.abs(curve.beta - two)) > 0.02
    assert "ε/3 on each of 3 noisy statistics" in " ".join(curve.notes)


def test_replace_one_laplace_histogram_is_two_cells_of_half_the_budget():
    eps = 0.8
    spec = QuerySpec("histogram", "laplace", eps, categories=("a", "b", "c"),
                     relation="replace")
    curve = release_tradeoff(spec)
    upper = _laplace_parts_upper(eps / 2, 2, A)
    assert np.all(curve.beta <= upper + 1e-9) and np.max(upper - curve.beta) < 2e-3
    # Power: one cell with the whole budget (the add-remove plan) is another curve.
    assert np.max(np.abs(curve.beta - _laplace_parts_upper(eps, 1, A))) > 0.02
    # Both cells together still meet the release's ε: above the ε-DP bound.
    bound = np.maximum(np.maximum(1 - np.exp(eps) * A, (1 - A) / np.exp(eps)), 0.0)
    assert np.all(curve.beta >= bound - 1e-12)


def test_one_laplace_count_is_the_closed_form():
    eps = 0.7
    curve = release_tradeoff(QuerySpec("count", "laplace", eps))
    assert curve.exact and curve.parts == 1
    upper = _laplace_parts_upper(eps, 1, A, bins=4000)
    assert np.all(curve.beta <= upper + 1e-12) and np.max(upper - curve.beta) < 5e-4
    assert curve.attack == ("laplace", {"scale": 1.0 / eps})


@pytest.mark.parametrize("k", [2, 5])
def test_k_laplace_releases_match_compose_tradeoff(k):
    eps = 1.0
    spec = QuerySpec("mean", "laplace", eps, bounds=(0.0, 10.0))  # two parts
    curve = release_tradeoff(spec, k=k)
    assert curve.compositions == k and curve.composed_label == f"{k} releases"
    reference = compose_tradeoff("laplace", {"scale": 2.0 / eps}, 2 * k, A, method="pld")
    assert np.max(np.abs(curve.composed_beta - reference.beta)) < 3e-3
    upper = _laplace_parts_upper(eps / 2, 2 * k, A, bins=600)
    assert np.all(curve.composed_beta <= upper + 1e-9)
    assert np.max(np.abs(curve.composed_beta - curve.beta)) > 0.05  # k releases leak more


# ------------------------------------------------------------------- discrete Laplace


@pytest.mark.parametrize(("eps", "bounds", "relation"), [
    (1.0, (0.0, 10.0), "add-remove"),
    (0.6, (-2.5, 7.0), "replace"),
])
def test_discrete_laplace_sum_is_exact_on_its_lattice(eps, bounds, relation):
    spec = QuerySpec("sum", "discrete_laplace", eps, bounds=bounds, relation=relation)
    (comp,) = _components(spec)
    steps = round(comp["sensitivity"] / comp["grid"])
    scale = comp["scale_steps"]
    assert steps > 1 and math.isclose(steps / scale, eps, rel_tol=1e-12)
    curve = release_tradeoff(spec)
    assert curve.exact and curve.attack == ("discrete_laplace",
                                            {"scale": steps / eps, "sensitivity": steps})
    p, q = _dlap_pair(scale, steps)
    assert np.max(np.abs(curve.beta - _np_curve(p, q, A))) < 1e-9


def test_discrete_laplace_count_composed_is_randomized_response_composed():
    eps, k = 0.9, 4
    curve = release_tradeoff(QuerySpec("count", "discrete_laplace", eps), k=k)
    # Δ = 1: the pair is binary randomized response; k of them compose on the binomial.
    ee = math.exp(eps)
    bound = np.maximum(np.maximum(1 - ee * A, (1 - A) / ee), 0.0)
    assert curve.exact and np.max(np.abs(curve.beta - bound)) < 1e-12
    j = np.arange(k + 1)
    p, q = binom.pmf(j, k, 1 / (1 + ee)), binom.pmf(j, k, ee / (1 + ee))
    assert curve.composed_exact
    assert np.max(np.abs(curve.composed_beta - _np_curve(p, q, A))) < 1e-12


# ------------------------------------------------------------------------- Gaussian


def _balle_wang_delta(mu, eps):
    return ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2)


def test_gaussian_mean_mu_is_the_closed_form_of_its_two_sums():
    eps, delta = 1.0, 1e-6
    spec = QuerySpec("mean", "gaussian", eps, delta, bounds=(0.0, 10.0))
    curve = release_tradeoff(spec, k=3)
    # Each of the two sums is analytic-Gaussian calibrated to (ε/2, δ/2) exactly.
    part = curve.mu / math.sqrt(2)
    assert math.isclose(_balle_wang_delta(part, eps / 2), delta / 2, rel_tol=1e-6)
    # ... and the release's own noise gives the same μ: √Σ (Δᵢ/σᵢ)².
    comps = _components(spec)
    drawn = math.sqrt(sum((c["sensitivity"] / c["noise_scale"]) ** 2 for c in comps))
    assert len(comps) == 2 and math.isclose(curve.mu, drawn, rel_tol=1e-6)
    assert curve.exact and np.allclose(curve.beta, norm.cdf(norm.ppf(1 - A) - curve.mu),
                                       atol=1e-12)
    assert np.allclose(curve.composed_beta,
                       norm.cdf(norm.ppf(1 - A) - curve.mu * math.sqrt(3)), atol=1e-12)
    assert curve.composed_label == f"3 releases (μ = {curve.mu * math.sqrt(3):.2g})"
    # Power: a one-sum plan (n public) spends the whole budget on the sum: another curve.
    one = release_tradeoff(QuerySpec("mean", "gaussian", eps, delta, bounds=(0.0, 10.0),
                                     relation="replace", missing="impute"))
    assert one.parts == 1 and one.mu > 1.3 * curve.mu
    assert np.max(np.abs(one.beta - curve.beta)) > 0.015


def test_replace_one_gaussian_histogram_has_mu_root_two_over_sigma():
    eps, delta = 1.0, 1e-5
    spec = QuerySpec("histogram", "gaussian", eps, delta, categories=("a", "b", "c"),
                     relation="replace")
    rel = run_query(np.array(["a", "b", "c", "a"], dtype=object), spec, SimulationSource(1))
    curve = release_tradeoff(spec)
    assert math.isclose(curve.mu, math.sqrt(2) / rel.noise_scale, rel_tol=1e-6)
    # The two coordinates' joint guarantee is exactly (ε, δ).
    assert math.isclose(_balle_wang_delta(curve.mu, eps), delta, rel_tol=1e-6)
    add = release_tradeoff(QuerySpec("histogram", "gaussian", eps, delta,
                                     categories=("a", "b", "c")))
    assert math.isclose(add.mu, curve.mu, rel_tol=1e-9)  # same (ε, δ), one coordinate


def test_discrete_gaussian_sum_is_its_drawn_noise_composed_not_a_stand_in():
    """A sum of Δ = 10 steps: the curve is the drawn N_Z(σ) shifted by 10, pessimistic
    (never above the exact Neyman–Pearson curve of that pair) and within 1e-4 of it."""
    from dpstudio.engine.tradeoff import mechanism_curve

    spec = QuerySpec("sum", "discrete_gaussian", 1.0, 1e-6, bounds=(0.0, 10.0))
    rel = run_query(np.array([1.0]), spec, SimulationSource(1))
    (noise,) = rel.loss_description().leaves()
    assert noise.sensitivity == 10
    curve = release_tradeoff(spec, k=3)
    assert curve.available and not curve.exact and not curve.region_only
    assert any("composed as privacy-loss distributions" in n for n in curve.notes)
    params = {"sigma": noise.scale, "sensitivity": 10, "delta": 1e-6}
    for k, beta in ((1, curve.beta), (3, curve.composed_beta)):
        exact = mechanism_curve("discrete_gaussian", params, k, A).curve.beta
        assert np.all(beta <= exact + 1e-12) and np.max(exact - beta) < 1e-4


@pytest.mark.parametrize(("query", "kw"), [
    ("mean", {"bounds": (18.0, 100.0)}),
    ("variance", {"bounds": (0.0, 1.0)}),
    ("histogram", {"categories": ("a", "b", "c"), "relation": "replace"})])
def test_multi_part_discrete_gaussian_curves_compose_the_drawn_noises(query, kw):
    """Several discrete Gaussian noises: above the release's claimed (ε, δ) region (it
    is (ε, δ)-DP), and within 1e-4 of the Gaussian curve of the same noises, G_μ with
    μ² = Σ c(Δ/σ)² (σᵢ ≥ 10 steps: the discrete and continuous laws differ by far less)."""
    eps, delta = 0.5, 1e-6
    spec = QuerySpec(query, "discrete_gaussian", eps, delta, **kw)
    rel = run_query(np.array([str(kw["categories"][0])], dtype=object) if "categories" in kw
                    else np.array([kw["bounds"][0]]), spec, SimulationSource(1))
    leaves = rel.loss_description().leaves()
    mu = math.sqrt(math.fsum(d.coordinates * (d.sensitivity / d.scale) ** 2 for d in leaves))
    curve = release_tradeoff(spec)
    assert not curve.exact and not curve.region_only
    assert any("composed as privacy-loss distributions" in n for n in curve.notes)
    region = np.maximum.reduce([np.zeros_like(A), 1 - delta - math.exp(eps) * A,
                                math.exp(-eps) * (1 - delta - A)])
    assert np.all(curve.beta >= region - 1e-9)
    gauss = ndtr(ndtri(1 - A) - mu)
    assert np.max(np.abs(curve.beta - gauss)) < 1e-4


def test_a_discrete_gaussian_too_wide_for_its_pair_says_region(monkeypatch):
    from dpstudio.engine import release_curve_dg

    def too_wide(sigma):
        raise ParameterError(f"σ = {sigma:g} steps is too wide")

    monkeypatch.setattr(release_curve_dg, "discrete_gaussian_law", too_wide)
    curve = release_tradeoff(QuerySpec("mean", "discrete_gaussian", 0.5, 1e-6,
                                       bounds=(0.0, 1.0)), k=2)
    assert curve.region_only and not curve.exact and "(0.5, 1e-06) region" in curve.label
    assert "too wide" in curve.region_note
    region = np.maximum.reduce([np.zeros_like(A), 1 - 1e-6 - math.exp(0.5) * A,
                                math.exp(-0.5) * (1 - 1e-6 - A)])
    assert np.max(np.abs(curve.beta - region)) < 1e-9


# ---------------------------------------------------------------------- local model


@pytest.mark.parametrize(("mechanism", "categories"), [("krr", ("a", "b", "c")),
                                                       ("rr", ("no", "yes"))])
def test_local_report_is_randomized_response_over_the_cells_sent(mechanism, categories):
    eps = 1.3
    spec = QuerySpec("histogram", mechanism, eps, categories=categories, relation="replace")
    curve = release_tradeoff(spec, "local", k=3)
    # Every cell a device can send: the declared ones and, but for rr, "other or missing".
    cells = len(categories) + (mechanism != "rr")
    ee = math.exp(eps)
    p = np.array([ee] + [1.0] * (cells - 1)) / (ee + cells - 1)
    q = np.array([1.0, ee] + [1.0] * (cells - 2)) / (ee + cells - 1)
    assert curve.exact and np.max(np.abs(curve.beta - _np_curve(p, q, A))) < 1e-12
    grid = np.array(np.meshgrid(*[np.arange(cells)] * 3)).reshape(3, -1)
    pk = np.prod(p[grid], axis=0)
    qk = np.prod(q[grid], axis=0)
    assert np.max(np.abs(curve.composed_beta - _np_curve(pk, qk, A))) < 1e-12
    assert any(n.startswith("local model:") for n in curve.notes)


def test_local_gaussian_report_mu_is_sensitivity_over_sigma():
    spec = QuerySpec("mean", "local_gaussian", 1.0, 1e-6, bounds=(0.0, 5.0),
                     relation="replace")
    curve = release_tradeoff(spec, "local", k=4)
    # The report's noise, from what the randomizer says it is.
    from dpstudio.engine.registry import REGISTRY

    info = REGISTRY.get("local_gaussian")
    obj = info.build(**info.resolve(spec.mechanism_params()), bounds=(0.0, 5.0))
    mu = obj.noise.sensitivity / obj.noise.scale
    assert math.isclose(curve.mu, mu, rel_tol=1e-12)
    assert math.isclose(_balle_wang_delta(mu, 1.0), 1e-6, rel_tol=1e-3)
    assert np.allclose(curve.composed_beta, norm.cdf(norm.ppf(1 - A) - 2 * mu), atol=1e-12)


# ------------------------------------------- every trust model: own curve or (ε, δ) region


@pytest.mark.parametrize(("spec", "trust_model", "note", "region"), [
    (QuerySpec("median", "exponential", 1.0, bounds=(0.0, 10.0)), "central", None, False),
    (QuerySpec("median", "permute_and_flip", 1.0, bounds=(0.0, 10.0)), "central", None, True),
    (QuerySpec("mean", "cloak", 1.0, 1e-6, bounds=(0.0, 5.0)), "shuffle", "shuffle model",
     True),
    (QuerySpec("sum", "skellam", 1.0, 1e-6, bounds=(0.0, 5.0)), "distributed",
     "secure aggregation", False),
    (QuerySpec("histogram", "oue", 1.0, categories=("a", "b", "c")), "local", "local model",
     False),
])
def test_every_release_has_a_curve_or_says_it_is_the_region(spec, trust_model, note, region):
    # Once "no exact curve" for these; now the catalog's (issue 14), the region flagged.
    curve = release_tradeoff(spec, trust_model, k=2)
    assert curve.available and curve.composed_beta is not None
    assert curve.region_only is region and (curve.region_note is not None) is region
    assert not (region and curve.exact)
    assert note is None or any(n.startswith(note) for n in curve.notes)


def test_bad_number_of_releases():
    spec = QuerySpec("count", "laplace", 1.0)
    for k in (0, -1, 1.5, True):
        with pytest.raises(ParameterError):
            release_tradeoff(spec, k=k)


# ---------------------------------------------------------------------- Gaussian DP


def test_tightest_mu_of_a_gaussian_curve_is_its_mu():
    for mu in (0.3, 1.0, 2.5):
        got = tightest_mu(ndtr(-ndtri(A) - mu), A)
        assert math.isclose(got, mu, rel_tol=1e-9)
    # The (1, 1e-3) bound: the μ found is below it on the grid, and no smaller one is.
    f = np.maximum(np.maximum(0.999 - math.e * A, (0.999 - A) / math.e), 0.0)
    mu = tightest_mu(f, A)
    inner = (A > 0) & (A < 1)
    assert np.all(ndtr(-ndtri(A[inner]) - mu) <= f[inner] + 1e-12)
    assert np.any(ndtr(-ndtri(A[inner]) - 0.999 * mu) > f[inner] + 1e-12)


@pytest.mark.parametrize(("eps", "delta"), [(0.5, 1e-6), (1.0, 1e-5), (3.0, 1e-3)])
def test_matching_mu_is_exactly_eps_delta(eps, delta):
    mu = matching_mu(eps, delta)
    assert math.isclose(_balle_wang_delta(mu, eps), delta, rel_tol=1e-6)
    assert gaussian_epsilon(mu, delta) <= eps * (1 + 1e-9)
