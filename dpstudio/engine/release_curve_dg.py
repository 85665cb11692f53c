"""The curve of a discrete Gaussian release with several noises, from the noises drawn.

A discrete Gaussian sum of Δ > 1 grid steps, a mean's or variance's several sums (each at
ε/parts, δ/parts), or a replace-one histogram's two changed cells: each is integer noise
N_Z(0, σᵢ²) shifted by Δᵢ steps between neighbours. Unlike continuous Gaussians, these
do not compose to one G_μ, so the release's curve is computed from the noises themselves:
each noise's windowed pessimistic pair (:func:`~dpstudio.engine.tradeoff.integer_noise_pld`)
as a privacy-loss distribution, the parts composed by FFT, and the curve read off the
composed privacy profile (:func:`~dpstudio.engine.tradeoff.profile_to_tradeoff`, Dong,
Roth & Su 2019 Prop. 2.12). Every step errs on the private side, so the curve drawn lies
at or below the release's own (within the loss grid, 10⁻⁴ in ε): flagged not exact, but
never more private than the mechanism.

The noises are the engine's own, read off a release of the spec on a one-value stand-in
(the calibration never reads the data: :meth:`~dpstudio.engine.queries.Release.loss_description`).
Where a noise is too wide for its exact pair, the curve is the boundary of the release's
(ε, δ) region, and the note says so.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from dpstudio.engine.errors import EngineError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import MechanismInfo
from dpstudio.engine.release_curve_base import ReleaseCurve
from dpstudio.engine.tradeoff import (
    compose_pair,
    epsilon_delta_pair,
    pair_tradeoff,
    profile_to_tradeoff,
)
from dpstudio.engine.tradeoff.integer_noise import discrete_gaussian_law, integer_noise_pld

__all__ = ["discrete_gaussian_noises", "discrete_gaussian_parts"]


def discrete_gaussian_noises(spec: QuerySpec) -> list[tuple[float, int, int]]:
    """The integer noises a discrete Gaussian release of ``spec`` draws.

    Parameters
    ----------
    spec : QuerySpec
        A central count, sum, mean, variance or histogram with the discrete Gaussian.

    Returns
    -------
    list of (float, int, int)
        (σ in steps, Δ in steps, coordinates) of each noisy statistic, as the engine
        calibrates them from the spec alone.

    Raises
    ------
    EngineError
        When the spec does not release (bad bounds, …) or its noises are not discrete
        Gaussian.
    """
    from dpstudio.engine.queries import run_query
    from dpstudio.engine.rng import SimulationSource

    if spec.categories is not None:
        stand_in = np.array([str(spec.categories[0])], dtype=object)
    else:
        low = float(spec.bounds[0]) if spec.bounds is not None else 0.0
        stand_in = np.array([low], dtype=np.float64)
    leaves = run_query(stand_in, spec, SimulationSource(0)).loss_description().leaves()
    if any(d.mechanism != "discrete_gaussian" for d in leaves):
        raise EngineError("this release's noises are not all discrete Gaussian")
    return [(float(d.scale), int(d.sensitivity), int(d.coordinates)) for d in leaves]


def _pld(noises: list[tuple[float, int, int]]):
    total = None
    for (sigma, sens, coords), count in Counter(noises).items():
        one = integer_noise_pld(discrete_gaussian_law(sigma), sens, coords * count)
        total = one if total is None else total.compose(one)
    return total


#: Lines of the envelope (ε from 0 to where δ(ε) has fallen to the mass at +∞): the curve
#: is within ~1e-6 of the composed pair's own at this density.
_EPS_LINES = 4001


def _beta(pld, a: np.ndarray) -> np.ndarray:
    # The windowed pairs put ~1e-12 at +∞, so δ(ε) never falls below that: stop the grid
    # where δ(ε) reaches it (a wider grid spends its lines where they add nothing).
    top, floor = 1.0, pld.infinity_mass + 1e-12
    while top < 256.0 and float(pld.delta(np.array([top]))[0]) > floor:
        top *= 2.0
    return profile_to_tradeoff(pld.delta, a, np.linspace(0.0, top, _EPS_LINES)).beta


def discrete_gaussian_parts(spec: QuerySpec, info: MechanismInfo, k: int, a: np.ndarray,
                            parts: int, mu: float) -> ReleaseCurve:
    """The curve of a discrete Gaussian release with several noises (module docstring).

    Parameters
    ----------
    spec : QuerySpec
        The release.
    info : MechanismInfo
        The discrete Gaussian's registry entry.
    k : int
        Releases of the composed curve.
    a : numpy.ndarray
        Type I errors.
    parts : int
        Noisy statistics of one release (:func:`~dpstudio.engine.release_curve.release_parts`).
    mu : float
        μ of the continuous counterpart, for the simulated attack (an approximation of
        the pair the attack draws, as before).

    Returns
    -------
    ReleaseCurve
        Not exact (pessimistic numerics), or ``region_only`` when a noise is too wide.
    """
    label = info.label + (f" ({parts} noisy sums)" if parts > 1 else "")
    eps, dlt = float(spec.epsilon), float(spec.delta)
    try:
        noises = discrete_gaussian_noises(spec)
        one = _pld(noises)
        beta = _beta(one, a)
        many = _beta(one.self_compose(k), a) if k > 1 else beta
    except EngineError:
        note = (f"Only the (ε, δ) guarantee of this {info.label} release is drawn: its "
                f"integer noises are too wide for their exact curve, so the curve is the "
                f"boundary of the ({eps:g}, {dlt:g}) region, which the release's own curve "
                "lies above.")
        region = epsilon_delta_pair(eps, dlt)
        many = pair_tradeoff(compose_pair(region, k), a).beta if k > 1 else None
        beta = pair_tradeoff(region, a).beta
        return ReleaseCurve("central", spec.mechanism, f"{label}: ({eps:g}, {dlt:g}) region",
                            a, beta, False, k, beta if many is None else many,
                            f"{k} releases", False, None, parts, None,
                            ("gaussian", {"sigma": 1.0 / mu}), region_only=True,
                            region_note=note)
    sigmas = ", ".join(f"σ = {s:.4g} (Δ = {d})" for s, d, _ in sorted(set(noises)))
    note = (f"the discrete Gaussian noises the engine draws, in grid steps ({sigmas}), "
            "composed as privacy-loss distributions: pessimistic, within 1e-4 in ε")
    return ReleaseCurve("central", spec.mechanism, label, a, beta, False, k, many,
                        f"{k} releases", False, mu, parts, None,
                        ("gaussian", {"sigma": 1.0 / mu}), (note,))
