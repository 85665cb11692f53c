"""A central release's curve reads its noise from the engine: one source of truth.

The σ (or Laplace scale) a curve is drawn for must be the one the engine calibrates and
draws for the same spec, read here off a real (seeded) run's noise components: for the
discrete Gaussian exactly (a sum of Δ > 1 steps was drawn for the continuous counterpart's
σ before), for the continuous Gaussian the family's own calibration, never below the σ
drawn per step of sensitivity (the curve errs on the private side by at most the discrete
check's raise, ~1e-8), and for the Laplace family exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstudio.engine.queries import QuerySpec, run_query
from dpstudio.engine.release_curve import release_tradeoff
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.tradeoff import mechanism_curve

A = np.linspace(0.0, 1.0, 65)
CATS = ("a", "b", "c")


def _drawn(spec):
    """(σ or scale in steps, Δ in steps, coordinates) of each noise a run of ``spec`` drew."""
    values = (np.array(["a", "b", "a"], dtype=object) if spec.categories is not None
              else np.array([1.0, 2.0, 3.0]))
    coords = 2 if spec.query == "histogram" and spec.relation == "replace" else 1
    out = []
    for c in run_query(values, spec, SimulationSource(7)).components:
        per = coords if c["family"] == "laplace" else math.sqrt(coords)
        out.append((c["scale_steps"], round(c["sensitivity"] / (c["grid"] * per)), coords))
    return out


@pytest.mark.parametrize("spec", [
    QuerySpec("count", "discrete_gaussian", 1.0, 1e-6),
    QuerySpec("histogram", "discrete_gaussian", 0.5, 1e-7, categories=CATS),
])
def test_one_step_discrete_gaussian_curve_is_that_of_the_sigma_drawn(spec):
    [(sigma, sens, coords)] = _drawn(spec)
    assert (sens, coords) == (1, 1)
    curve = release_tradeoff(spec, k=2)
    assert curve.attack == ("gaussian", {"sigma": sigma})
    params = {"sigma": sigma, "sensitivity": 1, "delta": spec.delta}
    np.testing.assert_allclose(curve.beta, mechanism_curve("discrete_gaussian", params, 1,
                                                           curve.alpha).curve.beta,
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("spec", [
    QuerySpec("sum", "discrete_gaussian", 1.0, 1e-6, bounds=(0.0, 10.0)),
    QuerySpec("mean", "discrete_gaussian", 1.0, 1e-6, bounds=(-2.0, 5.0)),
    QuerySpec("histogram", "discrete_gaussian", 1.0, 1e-6, categories=CATS,
              relation="replace"),
])
def test_discrete_gaussian_parts_use_the_drawn_sigmas(spec):
    noises = _drawn(spec)
    curve = release_tradeoff(spec)
    mu = math.sqrt(sum(c * (d / s) ** 2 for s, d, c in noises))
    assert curve.attack[0] == "gaussian"
    assert curve.attack[1]["sigma"] == pytest.approx(1.0 / mu, rel=1e-12)
    assert curve.mu == pytest.approx(mu, rel=1e-12)
    # The note lists the σ the engine draws, as it draws them.
    for s, d, _ in noises:
        assert f"σ = {s:.4g} (Δ = {d})" in curve.notes[0]


@pytest.mark.parametrize("spec", [
    QuerySpec("count", "gaussian", 1.0, 1e-6),
    QuerySpec("mean", "gaussian", 0.7, 1e-6, bounds=(0.0, 10.0)),
    QuerySpec("histogram", "gaussian", 1.0, 1e-5, categories=CATS, relation="replace"),
])
def test_continuous_gaussian_mu_is_never_below_the_drawn_noise(spec):
    noises = _drawn(spec)
    drawn = math.sqrt(sum(c * (d / s) ** 2 for s, d, c in noises))
    curve = release_tradeoff(spec)
    assert curve.exact and curve.attack == ("gaussian", {"sigma": 1.0 / curve.mu})
    # Pessimistic (the curve's μ is at least the drawn noise's) and tight.
    assert drawn <= curve.mu * (1 + 1e-15) and curve.mu <= drawn * (1 + 1e-6)


@pytest.mark.parametrize("spec,name", [
    (QuerySpec("count", "laplace", 0.8, 0.0), "laplace"),
    (QuerySpec("sum", "laplace", 1.3, 0.0, bounds=(-1.0, 4.0)), "laplace"),
    (QuerySpec("count", "discrete_laplace", 0.8, 0.0), "discrete_laplace"),
    (QuerySpec("sum", "discrete_laplace", 0.5, 0.0, bounds=(0.0, 12.0)), "discrete_laplace"),
])
def test_laplace_curve_scale_is_the_drawn_scale(spec, name):
    [(scale, sens, coords)] = _drawn(spec)
    curve = release_tradeoff(spec)
    kind, params = curve.attack
    assert kind == name
    if name == "laplace":  # in units of the sensitivity
        assert params["scale"] == pytest.approx(scale / (sens * coords), rel=1e-12)
    else:
        assert params["sensitivity"] == sens
        assert params["scale"] == pytest.approx(scale, rel=1e-12)
