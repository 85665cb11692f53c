"""The privacy curve of one release: its exact trade-off function, from its own noise plan.

A release adds noise to one or more statistics. A central count or sum is one noisy sum; a
mean is two (sum and count) unless the number of rows is public, a variance three; a
histogram under ``replace`` moves two cells. Each statistic spends ε/parts (and δ/parts),
so what an attacker sees is the composition of the parts' trade-off curves: that is the
release's curve, computed here once (:func:`release_tradeoff`) from the engine's own plan
(:func:`~dpstudio.engine.queries.noisy_statistics` and the registry entry's built noise
family). The analysis view and the stakeholder report both draw it.

* Gaussian family: the parts compose to G_μ exactly, μ = √parts·Δ/σ (Dong, Roth & Su
  2019); a discrete Gaussian count (or add-remove histogram) is the catalog's exact curve
  of the σ the engine draws; other discrete Gaussian releases compose the privacy-loss
  distributions of the integer noises drawn (:mod:`~dpstudio.engine.release_curve_dg`:
  pessimistic, within 1e-4 in ε; flagged not exact), or show their (ε, δ) region.
* Laplace family: one continuous part is the closed form; several parts, or discrete
  Laplace parts, are composed on a lattice of privacy losses — exact on the discrete
  mechanism's own lattice, otherwise a fine discrete Laplace lattice that is slightly
  *pessimistic* (never more private than the mechanism; flagged not exact).
* Local model: one person's report — K-ary randomized response (its two output pmfs) or
  an additive-noise report whose built randomizer carries its ``noise``.
* Other local randomizers (unary encoding, local hashing, Hadamard, count-mean sketch,
  the sequence-fragment puzzle, Duchi's bit, the local Laplace/Gaussian on their grid):
  the catalog's curve of the built object
  (:func:`~dpstudio.engine.tradeoff.curve_for_object`), from its worst-case pair.
* Secure aggregation (``secagg_gaussian``, ``skellam``): the sum's integer noise, with
  the shares' σ_c (or the Skellam variance) the engine calibrates and Δ the value grid's
  steps (:func:`~dpstudio.engine.tradeoff.mechanism_curve`).
* Selection and model-training mechanisms: the catalog's curve by name (exact for the
  exponential mechanism).
* Shuffle protocols, permute-and-flip and model training: only their (ε, δ) is known; the
  curve is the boundary of that region (:attr:`ReleaseCurve.region_only`, with
  :attr:`ReleaseCurve.region_note` the sentence to show beside the plot).

:func:`tightest_mu` and :func:`matching_mu` give the Gaussian-DP curve that goes with a
curve or an (ε, δ) pair.

The curves live in modules named for what they hold — :mod:`.release_curve_base` (the
result type, the noise plan), :mod:`.release_curve_central`, :mod:`.release_curve_dg`,
:mod:`.release_curve_models` (local, shuffle, distributed, catalog) and
:mod:`.release_curve_gdp` (Gaussian-DP μ) — and every public name is importable from here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.release_curve_base import (
    DEFAULT_ALPHA,
    ReleaseCurve,
    _check_k,
    release_parts,
)
from dpstudio.engine.release_curve_central import (  # noqa: F401 - re-exported for callers
    _discrete_steps,
    central_additive,
)
from dpstudio.engine.release_curve_gdp import matching_mu, tightest_mu
from dpstudio.engine.release_curve_models import (
    MODEL_NOTES,
    _catalog,
    _catalog_params,
    _local_catalog,
    _local_randomizer,
    _local_report,
    _region_curve,
    _secure_sum_params,
)
from dpstudio.engine.tradeoff import curve_mechanisms, mechanism_curve

__all__ = [
    "DEFAULT_ALPHA",
    "ReleaseCurve",
    "matching_mu",
    "release_parts",
    "release_tradeoff",
    "tightest_mu",
]


def release_tradeoff(spec: QuerySpec, trust_model: str = "central", k: int = 1,
                     alpha: np.ndarray | None = None, randomizer: Any = None,
                     clients: int | None = None) -> ReleaseCurve:
    """The exact trade-off curve of one release of ``spec``, and of k of them.

    Central additive releases (Laplace and Gaussian families, continuous or discrete)
    compose the curves of all their noisy statistics (:func:`release_parts`), each with
    ε/parts. In the local model the curve is one person's report (neighbours differ in
    that person's value), from the built randomizer. Secure aggregation draws the sum's
    integer noise as the engine plans it; selection and model mechanisms take the
    catalog's curve (:func:`~dpstudio.engine.tradeoff.mechanism_curve`). Where only the
    (ε, δ) is known (shuffle protocols, permute-and-flip, model training) the curve is
    the region's boundary and :attr:`~ReleaseCurve.region_only` is True. A mechanism the
    catalog does not know has no curve: the result is not
    :attr:`~ReleaseCurve.available` and its notes say so.

    Parameters
    ----------
    spec : QuerySpec
        The release: query, mechanism, ε, δ, declared domain, relation, missing values.
        In the local model, ``categories`` (or ``bounds`` and ``bins``) give a
        histogram's declared cells and ``bounds`` a mean's domain.
    trust_model : str, optional
        ``"central"`` (default), ``"local"``, ``"shuffle"`` or ``"distributed"``.
    k : int, optional
        Number of independent releases for ``composed_beta`` (default 1).
    alpha : array_like, optional
        Type I errors (default :data:`DEFAULT_ALPHA`).
    randomizer : object, optional
        Local model: the built randomizer of the release (as its ``k``, ``p``, ``q``,
        ``epsilon`` or ``noise`` describe it). Default: built from ``spec`` as a local
        release builds it (the declared cells plus the "other or missing" one).
    clients : int, optional
        Secure aggregation: the release's number of clients n, for the noise the engine
        plans (for the honest clients sure to survive). Default: the shares calibrated
        for one honest client (the sum's curve barely depends on n).

    Returns
    -------
    ReleaseCurve
        The curves, μ where Gaussian, the number of parts and the notes.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ≥ 1, or a parameter of ``spec`` is invalid.
    QueryError
        If ``spec`` lacks what its query needs (e.g. bounds of a sum).
    """
    kk = _check_k(k)
    a = DEFAULT_ALPHA if alpha is None else np.asarray(alpha, dtype=np.float64)
    info = REGISTRY.get(spec.mechanism)
    curve: ReleaseCurve | None = None
    extra: list[str] = []
    if trust_model == "central" and info.kind == "additive":
        curve = central_additive(spec, info, kk, a)
    elif trust_model == "local":
        obj = randomizer if randomizer is not None else _local_randomizer(spec, info)
        curve = _local_report(spec, info, kk, a, obj) or _local_catalog(spec, info, kk, a,
                                                                        obj)
    elif trust_model == "distributed" and info.name in ("secagg_gaussian", "skellam"):
        params, why = _secure_sum_params(spec, info, clients)
        extra.append(why)
        curve = _catalog(trust_model, spec, info.label, mechanism_curve(info.name, params, 1, a),
                         mechanism_curve(info.name, params, kk, a), f"{kk} releases", a)
    elif trust_model == "shuffle" and info.name in curve_mechanisms() and (
            info.kind == "randomizer" and "shuffle" in info.trust_models
            and "local" not in info.trust_models):  # a shuffled local randomizer: region
        curve = _catalog(trust_model, spec, info.label,
                         mechanism_curve(info.name, _catalog_params(spec, info), 1, a),
                         mechanism_curve(info.name, _catalog_params(spec, info), kk, a),
                         f"{kk} releases", a)
    elif trust_model == "shuffle" and info.kind == "randomizer":
        curve = _region_curve(spec, info, kk, a)  # a local randomizer, amplified
    elif trust_model == "central" and info.name in curve_mechanisms():
        params = _catalog_params(spec, info)
        curve = _catalog(trust_model, spec, info.label, mechanism_curve(info.name, params, 1, a),
                         mechanism_curve(info.name, params, kk, a), f"{kk} releases", a)
    notes = list(curve.notes) if curve is not None else []
    notes.extend(extra)
    if trust_model in MODEL_NOTES:
        notes.append(MODEL_NOTES[trust_model])
    if curve is None:
        notes.append(f"no exact curve for {info.label}: its (ε, δ) guarantee is drawn")
        return ReleaseCurve(trust_model, spec.mechanism, info.label, a, None, False, kk,
                            notes=tuple(notes))
    return replace(curve, notes=tuple(notes))

