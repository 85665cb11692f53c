"""The curve of a central additive release: all its noisy statistics composed.

* Gaussian family: the parts compose to G_μ exactly, μ = √parts·Δ/σ (Dong, Roth & Su
  2019); a one-step discrete Gaussian (a count, an add-remove histogram) is the catalog's
  exact curve of the σ the engine draws; other discrete Gaussian releases (a sum of Δ > 1
  steps, a mean's or variance's several sums, a replace-one histogram's two cells) compose
  the privacy-loss distributions of the integer noises the engine draws
  (:func:`_discrete_gaussian_parts`: pessimistic, tight to the loss grid), or, where a
  noise is too wide for that, show the boundary of the release's (ε, δ) region and say so.
* Laplace family: one continuous part is the closed form; several parts, or discrete
  Laplace parts, are composed on a lattice of privacy losses — exact on the discrete
  mechanism's own lattice, otherwise a fine discrete Laplace lattice that is slightly
  *pessimistic* (never more private than the mechanism; flagged not exact).
"""

from __future__ import annotations

import math

import numpy as np

from dpstudio.engine.errors import EngineError
from dpstudio.engine.queries import (
    QuerySpec,
    noisy_statistics,
    sum_sensitivity,
)
from dpstudio.engine.registry import MechanismInfo
from dpstudio.engine.release_curve_base import (
    _EXACT_LATTICE,
    LATTICE_BUDGET,
    ReleaseCurve,
    _effective_delta,
    _family,
    release_parts,
)
from dpstudio.engine.release_curve_dg import discrete_gaussian_noises, discrete_gaussian_parts
from dpstudio.engine.tradeoff import (
    compose_tradeoff,
    gaussian_tradeoff,
    laplace_tradeoff,
    mechanism_curve,
)

__all__ = ["central_additive"]

def _lattice_laplace(eps_part: float, parts: int, steps: int | None, alpha: np.ndarray
                     ) -> tuple[np.ndarray, bool]:
    """Composition of ``parts`` Laplace-type mechanisms with ε_part each, on a lattice.

    With ``steps`` (the discrete mechanism's integer sensitivity) the lattice is the
    mechanism's own: exact. Without, the continuous Laplace is approximated by a discrete
    Laplace of m steps: a slightly *lower* (pessimistic) curve, converging as m grows.
    Returns (β, exact).
    """
    if parts == 1 and steps is None:
        return laplace_tradeoff(eps_part, alpha).beta, True
    exact = steps is not None and steps * parts <= _EXACT_LATTICE
    m = steps if exact else int(np.clip(LATTICE_BUDGET // parts, 20, 400))
    c = compose_tradeoff("discrete_laplace", {"scale": m / eps_part, "sensitivity": m}, parts,
                         alpha)
    return c.beta, exact


def _discrete_steps(spec: QuerySpec, info: MechanismInfo, eps_part: float) -> int | None:
    """Integer sensitivity (grid steps) of each part of a discrete-Laplace release, if equal."""
    if spec.query in ("count", "histogram"):
        return 1
    if spec.query in ("sum", "mean") and spec.bounds is not None:
        parts = noisy_statistics(spec)
        if len(parts) != 1:
            return None  # mean / variance mix parts of different sensitivities
        fam = _family(info, spec)
        _, lo, hi, sens = parts[0]
        grid = fam.grid(sens, eps_part, 0.0)
        lo_s, hi_s = math.floor(lo / grid), math.ceil(hi / grid)
        # The engine's rule on the grid (missing ↔ present included under replace).
        return int(sum_sensitivity(lo_s, hi_s, spec.relation, spec.missing))
    return None


def _continuous_mu(spec: QuerySpec, info: MechanismInfo, parts: int) -> float:
    """μ of a continuous Gaussian release: the family's own calibration (G_μ exactly)."""
    fam = _family(info, spec)
    eps, dlt = float(spec.epsilon), _effective_delta(info, spec)
    if spec.query == "histogram":
        coords = 2 if spec.relation == "replace" else 1
        return math.sqrt(coords) / fam.continuous_scale(1.0, eps, dlt, coords)
    return math.sqrt(parts) / fam.continuous_scale(1.0, eps / parts, dlt / parts)


def _drawn_mu(noises: list[tuple[float, int, int]]) -> float:
    """μ of the continuous counterpart of the integer noises the engine draws:
    √Σ cᵢ·(Δᵢ/σᵢ)², each noise N_Z(0, σᵢ²) shifted by Δᵢ steps in cᵢ coordinates."""
    return math.sqrt(math.fsum(c * (d / s) ** 2 for s, d, c in noises))



# -------------------------------------------------------------------------- the curves


def central_additive(spec: QuerySpec, info: MechanismInfo, k: int, a: np.ndarray
                      ) -> ReleaseCurve:
    """A central additive release: all its noisy statistics composed.

    Parameters
    ----------
    spec : QuerySpec
        The release.
    info : MechanismInfo
        Its additive mechanism's registry entry.
    k : int
        Releases of the composed curve.
    a : numpy.ndarray
        Type I errors.

    Returns
    -------
    ReleaseCurve
    """
    eps = float(spec.epsilon)
    parts = release_parts(spec)
    notes: list[str] = []
    if _family(info, spec).family == "gaussian":
        if spec.mechanism.startswith("discrete"):
            # σ and Δ of every noise as the engine calibrates them for this spec (the one
            # source of truth), then its exact one-step curve or the noises composed.
            try:
                noises = discrete_gaussian_noises(spec)
            except EngineError:  # discrete_gaussian_parts meets it again and says so
                noises = []
            if _one_step_discrete(spec, info, parts) and [n[1:] for n in noises] == [(1, 1)]:
                return _discrete_gaussian_release(spec, info, k, a, noises[0][0])
            mu = _drawn_mu(noises) if noises else _continuous_mu(spec, info, parts)
            return discrete_gaussian_parts(spec, info, k, a, parts, mu)
        mu, exact = _continuous_mu(spec, info, parts), True
        return ReleaseCurve(
            "central", spec.mechanism,
            f"{info.label}" + (f" ({parts} noisy sums)" if parts > 1 else ""), a,
            gaussian_tradeoff(mu, a).beta, exact, k,
            gaussian_tradeoff(mu * math.sqrt(k), a).beta,
            f"{k} releases (μ = {mu * math.sqrt(k):.2g})", exact, mu, parts, None,
            ("gaussian", {"sigma": 1.0 / mu}), tuple(notes))
    eps_part = eps / parts
    steps = _discrete_steps(spec, info, eps_part) if info.name.startswith("discrete") else None
    label = info.label if parts == 1 else f"{info.label} ({parts} noisy sums)"
    beta, exact = _lattice_laplace(eps_part, parts, steps, a)
    composed, composed_exact = _lattice_laplace(eps_part, parts * k, steps, a)
    attack: tuple[str, dict[str, float]] | None = None
    if parts == 1 and steps is not None:
        attack = ("discrete_laplace", {"scale": steps / eps_part, "sensitivity": steps})
    elif parts == 1:
        attack = ("laplace", {"scale": 1.0 / eps_part})
    if not exact:
        notes.append("Laplace curves composed on a fine lattice: slightly pessimistic "
                     "(never more private than the mechanism)")
    if parts > 1:
        notes.append(f"one {spec.query} spends ε/{parts} on each of {parts} noisy statistics; "
                     "the curve is their composition")
    return ReleaseCurve("central", spec.mechanism, label, a, beta, exact, k, composed,
                        f"{k} releases", composed_exact, None, parts, eps_part, attack,
                        tuple(notes))


def _one_step_discrete(spec: QuerySpec, info: MechanismInfo, parts: int) -> bool:
    """Whether this is a discrete Gaussian release whose neighbours move one integer
    coordinate by one step (a count, a histogram under add-remove): one noise."""
    if info.name != "discrete_gaussian" or parts != 1:
        return False
    return spec.query == "count" or (spec.query == "histogram"
                                     and spec.relation != "replace")


def _discrete_gaussian_release(spec: QuerySpec, info: MechanismInfo, k: int, a: np.ndarray,
                               sigma: float) -> ReleaseCurve:
    """A one-step discrete Gaussian release: the catalog's exact curve of the σ the
    engine draws (the simulated attack draws a continuous Gaussian of that σ)."""
    params = {"sigma": sigma, "sensitivity": 1, "delta": _effective_delta(info, spec)}
    one = mechanism_curve("discrete_gaussian", params, 1, a)
    many = mechanism_curve("discrete_gaussian", params, k, a)
    return ReleaseCurve("central", spec.mechanism, info.label, a, one.curve.beta,
                        one.curve.exact, k, many.curve.beta, f"{k} releases",
                        many.curve.exact, None, 1, None, ("gaussian", {"sigma": sigma}),
                        (f"discrete Gaussian of σ = {sigma:.4g} steps, from its shifted "
                         "output distributions",))

