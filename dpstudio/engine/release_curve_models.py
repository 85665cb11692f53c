"""The curve of a release in the local, shuffle and distributed models, and of the
selection and model mechanisms (from the catalog).

* Local model: one person's report — K-ary randomized response (its two output pmfs) or
  an additive-noise report whose built randomizer carries its ``noise``; other local
  randomizers from the catalog's curve of the built object
  (:func:`~dpstudio.engine.tradeoff.curve_for_object`), from its worst-case pair.
* Secure aggregation: the sum's integer noise, with the shares' σ_c (or the Skellam
  variance) the engine calibrates and Δ the value grid's steps.
* Shuffle protocols: only their (ε, δ) is known; the curve is that region's boundary.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.queries import (
    QuerySpec,
    histogram_bins,
)
from dpstudio.engine.registry import MechanismInfo
from dpstudio.engine.release_curve_base import ReleaseCurve
from dpstudio.engine.release_curve_central import _lattice_laplace
from dpstudio.engine.tradeoff import (
    MechanismCurve,
    compose_pair,
    compose_tradeoff,
    curve_for_object,
    epsilon_delta_pair,
    gaussian_tradeoff,
    krr_tradeoff,
    laplace_tradeoff,
    pair_tradeoff,
)

__all__ = ["MODEL_NOTES"]

def _accepted_kwargs(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``kwargs`` that ``fn`` accepts (all of them if it takes **kwargs)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in sig.parameters}


def _local_randomizer(spec: QuerySpec, info: MechanismInfo) -> Any:
    """The randomizer a local release of ``spec`` builds: ``k`` cells (the declared ones
    and, but for binary randomized response, the "other or missing" one), ``bounds``, or
    the sequence-fragment puzzle of a heavy-hitters query."""
    from dpstudio.engine.local.entries import sfp_from_params
    from dpstudio.engine.local.respond import has_other_cell

    kwargs = info.resolve(spec.mechanism_params())
    if spec.query == "heavy_hitters":
        return sfp_from_params(**kwargs)
    if spec.query == "histogram" or spec.categories is not None:
        kwargs["k"] = len(histogram_bins(spec)[0]) + int(has_other_cell(info.name))
    else:
        kwargs["bounds"] = spec.bounds
    return info.build(**_accepted_kwargs(info.factory, kwargs))


def _local_report(spec: QuerySpec, info: MechanismInfo, k: int, a: np.ndarray,
                  obj: Any) -> ReleaseCurve | None:
    """One person's local report, where its pair of output distributions is known: K-ary
    randomized response (its two output pmfs), or an additive-noise report whose built
    object carries its ``noise`` (Laplace or Gaussian). None otherwise."""
    eps = float(spec.epsilon)
    label = f"{info.label}: one report"
    kk = getattr(obj, "k", None)
    p, q = getattr(obj, "p", None), getattr(obj, "q", None)
    if kk is not None and p is not None and q is not None and math.isclose(
            p / q, math.exp(getattr(obj, "epsilon", eps)), rel_tol=1e-9) and (
            info.name in ("rr", "krr")):
        ck = compose_tradeoff("krr", {"epsilon": obj.epsilon, "k": kk}, k, a)
        return ReleaseCurve("local", spec.mechanism, label, a,
                            krr_tradeoff(obj.epsilon, kk, a).beta, True, k, ck.beta,
                            f"{k} reports", ck.exact,
                            attack=("krr" if kk > 2 else "rr",
                                    {"epsilon": obj.epsilon, "k": kk}))
    noise = getattr(obj, "noise", None)
    if noise is not None and getattr(noise, "family", "") == "laplace":
        e = noise.sensitivity * noise.coordinates / noise.scale
        composed, composed_exact = _lattice_laplace(e, k, None, a)
        return ReleaseCurve("local", spec.mechanism, label, a, laplace_tradeoff(e, a).beta,
                            True, k, composed, f"{k} reports", composed_exact,
                            part_epsilon=e, attack=("laplace", {"scale": 1.0 / e}))
    if noise is not None and getattr(noise, "family", "") == "gaussian":
        mu = noise.sensitivity / noise.scale
        return ReleaseCurve("local", spec.mechanism, label, a, gaussian_tradeoff(mu, a).beta,
                            True, k, gaussian_tradeoff(mu * math.sqrt(k), a).beta,
                            f"{k} reports (μ = {mu * math.sqrt(k):.2g})", True, mu,
                            attack=("gaussian", {"sigma": 1.0 / mu}))
    return None


def _catalog(trust_model: str, spec: QuerySpec, label: str, one: MechanismCurve,
             many: MechanismCurve, composed_label: str, a: np.ndarray) -> ReleaseCurve:
    """A release curve from the catalog's curves of one release and of k of them."""
    if one.curve.alpha.shape != a.shape or not np.array_equal(one.curve.alpha, a):
        raise ParameterError("the catalog's curve is not on the requested type I errors")
    notes = tuple(n for n in (one.curve.note,) if n and not one.region_only)
    return ReleaseCurve(
        trust_model, spec.mechanism, label, a, one.curve.beta, one.curve.exact,
        many.compositions, many.curve.beta, composed_label, many.curve.exact,
        notes=notes, region_only=one.region_only, region_note=one.region_note or None)


def _local_catalog(spec: QuerySpec, info: MechanismInfo, k: int, a: np.ndarray,
                   obj: Any) -> ReleaseCurve | None:
    """One person's report from the catalog's curve of the built randomizer (its own ε,
    cells, hash range, split of ε or grid noise); None for an object it does not know."""
    one = curve_for_object(obj, 1, a)
    if one is None:
        return None
    many = curve_for_object(obj, k, a)
    return _catalog("local", spec, f"{info.label}: one report", one, many, f"{k} reports", a)


def _region_curve(spec: QuerySpec, info: MechanismInfo, k: int, a: np.ndarray
                  ) -> ReleaseCurve:
    """The (ε, δ) region of a shuffled local randomizer (amplification bound only)."""
    eps, d = float(spec.epsilon), float(spec.delta)
    note = (f"Only the (ε, δ) guarantee of {info.label} after shuffling is known (from a "
            f"shuffle amplification bound): the curve is the boundary of the ({eps:g}, {d:g}) "
            "region, not the protocol's own curve, which lies above it.")
    one = pair_tradeoff(epsilon_delta_pair(eps, d), a)
    many = pair_tradeoff(compose_pair(epsilon_delta_pair(eps, d), k), a) if k > 1 else one
    return ReleaseCurve("shuffle", spec.mechanism, f"{info.label}: ({eps:g}, {d:g}) region",
                        a, one.beta, False, k, many.beta, f"{k} releases", False,
                        region_only=True, region_note=note)


def _secure_sum_params(spec: QuerySpec, info: MechanismInfo, clients: int | None
                       ) -> tuple[dict[str, Any], str]:
    """The curve parameters of a secure-aggregation release: the sum's noise as the
    engine plans it (Δ = the value grid's steps; σ_c or the Skellam variance for the
    honest clients sure to survive, or calibrated for one client when n is not known)."""
    obj = info.build(**info.resolve(spec.mechanism_params()))
    sens = int(obj.precision)
    if clients is None:
        return ({"epsilon": obj.epsilon, "delta": obj.delta, "clients": 1,
                 "sensitivity": sens},
                "the shares are calibrated so that the honest survivors' sum meets (ε, δ); "
                "shown for one honest client's share (more clients give the sum nearly the "
                "same curve)")
    noise = obj.plan_noise(int(clients)).noise
    params: dict[str, Any] = {"delta": obj.delta, "clients": noise.planned_clients,
                              "sensitivity": sens}
    if noise.family == "skellam":
        params["variance"] = noise.per_client * noise.planned_clients
    else:
        params["sigma"] = noise.per_client
    return params, (f"the noise of the {noise.planned_clients:,} honest clients sure to "
                    f"survive, out of {int(clients):,}")


def _catalog_params(spec: QuerySpec, info: MechanismInfo) -> dict[str, Any]:
    """ε (and δ where the catalog's curve takes it) of a release, by name."""
    resolved = info.resolve(spec.mechanism_params())
    params: dict[str, Any] = {"epsilon": float(resolved.get("epsilon", spec.epsilon))}
    if "delta" in resolved:
        params["delta"] = float(resolved["delta"])
    return params


#: What the curve describes in each trust model but the central one (the notes shown).
MODEL_NOTES = {
    "local": "local model: neighbours differ in one person's value; the curve is what the "
             "collector can infer from that person's report",
    "distributed": "secure aggregation: the server sees only the noisy sum, so the "
                   "guarantee is that of the sum (replace-one neighbours)",
    "shuffle": "shuffle model: the guarantee is that of the shuffled messages, what the "
               "analyst receives (replace-one neighbours)",
}

