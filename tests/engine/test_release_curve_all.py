"""Every mechanism the application offers has the release's own trade-off curve (issue 14).

For each registry entry of each trust model the analysis view offers, the curve
:func:`~dpstudio.engine.release_curve.release_tradeoff` gives (what the privacy view and
the report draw) is a trade-off function (convex, non-increasing, at most 1 − α), lies
above the (ε, δ) the release claims (and k releases above basic composition's), is flagged
exact exactly where the catalog's is, and equals the catalog's curve computed by another
path: :func:`~dpstudio.engine.tradeoff.mechanism_curve` by name, with the noise read off a
real (seeded) run of the query or the engine's own calibration rules, not off the
release curve. Shuffle protocols are only their (ε, δ) region, and say so. A wrong ε gives
a curve visibly different (the comparison has power).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstudio.analysis.capabilities import CAPABILITIES
from dpstudio.analysis.choices import VIEW_TRUST_MODELS
from dpstudio.engine.distributed.encoding import auto_precision_bits
from dpstudio.engine.queries import QuerySpec, run_query
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.release_curve import DEFAULT_ALPHA, release_tradeoff
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.tradeoff import epsilon_delta_tradeoff, mechanism_curve

A = DEFAULT_ALPHA
EPS, DELTA, K = 1.0, 1e-6, 3
#: Categories of a local histogram: the built randomizer adds the "other or missing"
#: cell (but for binary randomized response, which takes exactly two).
CELLS = ("a", "b", "c")
_LOCAL_MEANS = ("local_laplace", "local_gaussian", "duchi")


def _offered() -> list[tuple[str, str]]:
    """(trust model, registry name) of every entry the analysis view offers."""
    out = []
    for tm in VIEW_TRUST_MODELS:
        kinds = CAPABILITIES[tm].mechanism_kinds
        out += [(tm, n) for n in REGISTRY.names()
                if tm in REGISTRY.get(n).trust_models and REGISTRY.get(n).kind in kinds]
    return out


OFFERED = _offered()
#: Local frequency oracles run shuffled: only their amplified (ε, δ) region is known.
SHUFFLED_LOCAL = [(t, n) for t, n in OFFERED
                  if t == "shuffle" and "local" in REGISTRY.get(n).trust_models]
OFFERED = [o for o in OFFERED if o not in SHUFFLED_LOCAL]


def _spec(tm: str, name: str, eps: float = EPS) -> QuerySpec:
    info = REGISTRY.get(name)
    d = DELTA if info.needs_delta else 0.0
    if tm == "central":
        if info.kind == "selection":
            return QuerySpec("median", name, eps, d, bounds=(0.0, 10.0))
        return QuerySpec("count", name, eps, d)  # one noisy statistic, Δ = 1
    if tm == "local":
        if name == "sfp":
            return QuerySpec("heavy_hitters", name, eps, d)
        if name in _LOCAL_MEANS:
            return QuerySpec("mean", name, eps, d, bounds=(0.0, 10.0), relation="replace")
        cells = ("yes", "no") if name == "rr" else CELLS
        return QuerySpec("histogram", name, eps, d, categories=cells, relation="replace")
    if tm == "shuffle" and "local" in info.trust_models:  # a histogram, (ε, δ) central
        return QuerySpec("histogram", name, eps, DELTA, categories=CELLS, relation="replace")
    query = "mean" if tm == "shuffle" else "sum"
    return QuerySpec(query, name, eps, d, bounds=(0.0, 10.0), relation="replace")


def _independent(tm: str, name: str, eps: float = EPS) -> dict:
    """The catalog parameters of the release, found without the release-curve code."""
    spec = _spec(tm, name, eps)
    d = spec.delta
    if tm == "central" and REGISTRY.get(name).kind == "additive":
        # The noise a real (seeded) run of the count draws, in integer steps.
        # Continuous ones in the count's units; discrete ones in integer steps.
        comp = run_query(np.arange(7.0), spec, SimulationSource(5)).components[0]
        discrete = name.startswith("discrete")
        scale = comp["scale_steps"] if discrete else comp["noise_scale"]
        key = "sigma" if comp["family"] == "gaussian" else "scale"
        params = {key: scale, "sensitivity": 1 if discrete else comp["sensitivity"]}
        return params | ({"delta": d} if key == "sigma" else {})
    if tm == "distributed":
        # The value grid's steps across the bounds, as the engine chooses them.
        return {"epsilon": eps, "delta": d, "clients": 1,
                "sensitivity": 2 ** auto_precision_bits(eps, d)}
    params = {"epsilon": eps}
    if name == "krr":
        params["k"] = len(CELLS) + 1
    if name in ("local_gaussian", "cloak", "blanket"):
        params["delta"] = d
    return params


def _is_tradeoff(beta: np.ndarray) -> None:
    assert np.all(np.isfinite(beta)) and np.all((beta >= -1e-12) & (beta <= 1 - A + 1e-9))
    assert np.all(np.diff(beta) <= 1e-12), "not non-increasing"
    slopes = np.diff(beta) / np.diff(A)
    assert np.all(np.diff(slopes) >= -1e-6 * np.maximum(1.0, np.abs(slopes[1:]))), \
        "not convex"


@pytest.mark.parametrize(("tm", "name"), OFFERED, ids=[f"{t}-{n}" for t, n in OFFERED])
def test_release_curve_is_the_catalogs_and_a_tradeoff_above_its_bound(tm, name):
    rc = release_tradeoff(_spec(tm, name), tm, K, A)
    assert rc.available and rc.composed_beta is not None, rc.notes
    _is_tradeoff(rc.beta)
    _is_tradeoff(rc.composed_beta)
    d = _spec(tm, name).delta
    assert np.all(rc.beta >= epsilon_delta_tradeoff(EPS, d, A).beta - 1e-9)
    assert np.all(rc.composed_beta >= epsilon_delta_tradeoff(K * EPS, K * d, A).beta - 1e-9)

    params = _independent(tm, name)
    one, many = mechanism_curve(name, params, 1, A), mechanism_curve(name, params, K, A)
    assert rc.exact is one.exact and rc.composed_exact is many.exact
    assert rc.region_only is one.region_only
    np.testing.assert_allclose(rc.beta, one.curve.beta, atol=1e-9)
    # k reports of the local Laplace: a fine lattice vs the grid's exact classes.
    np.testing.assert_allclose(rc.composed_beta, many.curve.beta, atol=1e-6)


@pytest.mark.parametrize(("tm", "name"), OFFERED, ids=[f"{t}-{n}" for t, n in OFFERED])
def test_a_wrong_epsilon_gives_another_curve(tm, name):
    """Power: the comparison above would catch a release curve drawn at the wrong ε."""
    rc = release_tradeoff(_spec(tm, name), tm, 1, A)
    wrong = mechanism_curve(name, _independent(tm, name, 0.7 * EPS), 1, A)  # blanket: ε ≤ 1
    assert np.max(np.abs(rc.beta - wrong.curve.beta)) > 5e-3


@pytest.mark.parametrize("name", [n for t, n in OFFERED + SHUFFLED_LOCAL if t == "shuffle"])
def test_shuffle_protocols_are_their_region_and_say_so(name):
    rc = release_tradeoff(_spec("shuffle", name), "shuffle", K, A)
    assert rc.region_only and not rc.exact and not rc.composed_exact
    assert rc.region_note.startswith("Only the (ε, δ) guarantee")
    np.testing.assert_allclose(rc.beta, epsilon_delta_tradeoff(EPS, DELTA, A).beta, atol=1e-12)


def test_exact_curves_are_not_flagged_as_regions():
    exact = [(t, n) for t, n in OFFERED
             if not release_tradeoff(_spec(t, n), t, 1, A).region_only]
    # Everything but the shuffle protocols and permute-and-flip has its own curve.
    assert {n for _t, n in OFFERED} - {n for _t, n in exact} == {
        "cloak", "blanket", "permute_and_flip"}


@pytest.mark.parametrize("name", ["secagg_gaussian", "skellam"])
def test_secure_sum_with_its_clients_is_the_planned_noise(name):
    """With n known, the curve is that of the noise the engine plans for the honest
    clients sure to survive; without, one client's calibration, nearly the same curve."""
    spec = _spec("distributed", name)
    info = REGISTRY.get(name)
    plan = info.build(**info.resolve(spec.mechanism_params())).plan_noise(1000)
    noise = plan.noise
    key, value = (("variance", noise.per_client * noise.planned_clients)
                  if name == "skellam" else ("sigma", noise.per_client))
    rc = release_tradeoff(spec, "distributed", 1, A, clients=1000)
    mc = mechanism_curve(name, {key: value, "delta": DELTA, "clients": plan.honest,
                                "sensitivity": noise.sensitivity}, 1, A)
    np.testing.assert_allclose(rc.beta, mc.curve.beta, atol=1e-9)
    assert any(f"{plan.honest:,} honest clients" in n for n in rc.notes)
    one = release_tradeoff(spec, "distributed", 1, A)
    assert np.max(np.abs(one.beta - rc.beta)) < 1e-3
