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
  of the σ the engine draws, other discrete Gaussian releases are shown as their
  continuous counterpart (flagged not exact).
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
"""

from __future__ import annotations

import inspect
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpstudio.engine.calibration import discrete_gaussian_sigma
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.queries import (
    QuerySpec,
    histogram_bins,
    noisy_statistics,
    sum_sensitivity,
)
from dpstudio.engine.registry import REGISTRY, MechanismInfo
from dpstudio.engine.special import ndtr, ndtri
from dpstudio.engine.tradeoff import (
    MechanismCurve,
    alpha_grid,
    compose_pair,
    compose_tradeoff,
    curve_for_object,
    curve_mechanisms,
    epsilon_delta_pair,
    gaussian_epsilon,
    gaussian_tradeoff,
    krr_tradeoff,
    laplace_tradeoff,
    mechanism_curve,
    pair_tradeoff,
)

__all__ = [
    "DEFAULT_ALPHA",
    "ReleaseCurve",
    "matching_mu",
    "release_parts",
    "release_tradeoff",
    "tightest_mu",
]

#: Type I errors of the curves by default (denser near 0, where curves are steep).
DEFAULT_ALPHA = alpha_grid(256)
#: Largest lattice (k·parts·steps) used to compose Laplace-type curves exactly.
LATTICE_BUDGET = 2_000
#: Largest exact lattice (steps × parts) of a discrete Laplace release.
_EXACT_LATTICE = 20_000


@dataclass(frozen=True, eq=False)
class ReleaseCurve:
    """The trade-off curve of one release (all its noisy statistics) and of k of them.

    Attributes
    ----------
    trust_model, mechanism : str
        What was asked for (the registry name of the mechanism).
    label : str
        Legend of the release's curve: the mechanism's label, ``"(n noisy sums)"`` when
        there are several; ``"<label>: one report"`` in the local model.
    alpha : numpy.ndarray
        Type I errors of both curves.
    beta : numpy.ndarray or None
        The release's trade-off curve at ``alpha``; None when there is no exact curve
        (the caller then draws the (ε, δ) guarantee).
    exact : bool
        False where ``beta`` is an approximation: a pessimistic lattice, or a discrete
        Gaussian shown as its continuous counterpart.
    compositions : int
        k, the number of releases of ``composed_beta``.
    composed_beta : numpy.ndarray or None
        The trade-off curve of k independent such releases (k reports in the local model).
    composed_label : str
        Its legend (``"k releases"``, ``"k releases (μ = …)"``, ``"k reports"``, …).
    composed_exact : bool
        Like ``exact``, for ``composed_beta``.
    mu : float or None
        Gaussian-DP μ of one release where it is exact (Gaussian noise), else None (see
        :func:`tightest_mu` for the tightest μ below another curve).
    parts : int
        Number of noisy statistics one release adds noise to (1 in the local model).
    part_epsilon : float or None
        ε of each Laplace-type part (``epsilon / parts``), else None.
    attack : tuple or None
        ``(mechanism, params)`` for :func:`dpstudio.engine.attack.simulate_attack` that
        reproduces the release's pair of output distributions, when one statistic (or one
        G_μ) describes it; None otherwise (e.g. several Laplace parts: simulate ``parts``
        independent Laplace(``part_epsilon``) statistics).
    notes : tuple of str
        What the curve is, in the analysis view's words.
    region_only : bool
        True when only the release's (ε, δ) is known and ``beta`` is the boundary of that
        region (then ``exact`` is False): shuffle protocols, permute-and-flip, model
        training.
    region_note : str or None
        One sentence saying so, for the plot's caption and the report (None otherwise).
    """

    trust_model: str
    mechanism: str
    label: str
    alpha: np.ndarray
    beta: np.ndarray | None
    exact: bool
    compositions: int
    composed_beta: np.ndarray | None = None
    composed_label: str = ""
    composed_exact: bool = False
    mu: float | None = None
    parts: int = 1
    part_epsilon: float | None = None
    attack: tuple[str, dict[str, float]] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    region_only: bool = False
    region_note: str | None = None

    @property
    def available(self) -> bool:
        """Whether the engine has this release's own curve (else: draw its (ε, δ) bound)."""
        return self.beta is not None


# ------------------------------------------------------------------------ the noise plan


def release_parts(spec: QuerySpec) -> int:
    """How many noisy statistics one central release adds noise to, each with ε/parts.

    The engine's own plan: a count or sum is one, a mean two (sum and count) and a
    variance three (sum of squares, sum, count), one fewer when the number of rows is
    public (:func:`~dpstudio.engine.queries.noisy_statistics`); a histogram is one noisy
    vector whose neighbours differ in one cell (``add-remove``) or two (``replace``).

    Parameters
    ----------
    spec : QuerySpec
        The release (its query, bounds, relation and missing-value treatment matter).

    Returns
    -------
    int
        The number of parts (1 for queries not built from noisy sums).
    """
    if spec.query == "histogram":
        return 2 if spec.relation == "replace" else 1
    if spec.query in ("count", "sum", "mean", "variance") and (
            spec.query == "count" or spec.bounds is not None):
        return len(noisy_statistics(spec))
    return 1


def _family(info: MechanismInfo, spec: QuerySpec) -> Any:
    return info.build(**info.resolve(spec.mechanism_params()))


def _effective_delta(info: MechanismInfo, spec: QuerySpec) -> float:
    """δ if the mechanism takes one, else 0 (pure ε-DP)."""
    return float(spec.delta) if info.needs_delta else 0.0


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


def _gaussian_mu(spec: QuerySpec, info: MechanismInfo, parts: int) -> tuple[float, bool]:
    """μ of the whole release (Gaussian family): exact for the continuous calibration."""
    fam = _family(info, spec)
    eps, dlt = float(spec.epsilon), _effective_delta(info, spec)
    discrete = spec.mechanism.startswith("discrete")
    if spec.query == "histogram":
        coords = 2 if spec.relation == "replace" else 1
        sigma = fam.continuous_scale(1.0, eps, dlt, coords)
        if discrete:
            sigma = max(sigma, discrete_gaussian_sigma(1, eps, dlt, coords, at_least=sigma))
        return math.sqrt(coords) / sigma, not discrete
    sigma = fam.continuous_scale(1.0, eps / parts, dlt / parts)
    return math.sqrt(parts) / sigma, not discrete


# ------------------------------------------------------------------------- Gaussian DP


def tightest_mu(beta: np.ndarray, alpha: np.ndarray = DEFAULT_ALPHA) -> float | None:
    """Smallest μ with G_μ ≤ f on the grid: the tightest Gaussian-DP curve under f.

    Parameters
    ----------
    beta : numpy.ndarray
        The curve f at ``alpha``.
    alpha : numpy.ndarray, optional
        Its type I errors (default :data:`DEFAULT_ALPHA`).

    Returns
    -------
    float or None
        μ to about 1e-12 relative (bisection, the upper end: G_μ ≤ f + 1e-12 at every
        α of the grid strictly between 0 and 1), or None when no μ ≤ 64 is.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    inner = (alpha > 0) & (alpha < 1)
    a, f = alpha[inner], np.asarray(beta)[inner]

    def below(mu: float) -> bool:
        return bool(np.all(ndtr(-ndtri(a) - mu) <= f + 1e-12))

    lo, hi = 0.0, 1.0
    while not below(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 64:
            return None
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if below(mid) else (mid, hi)
    return hi


def matching_mu(epsilon: float, delta: float) -> float:
    """μ of the Gaussian mechanism that is exactly (ε, δ)-DP.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        The μ (bisection, the lower end: G_μ is at least (ε, δ)-DP) with
        :func:`~dpstudio.engine.tradeoff.gaussian_epsilon` (μ, δ) = ε, at most 1024.

    Raises
    ------
    ParameterError
        If δ is not in (0, 1).
    """
    lo, hi = 0.0, 1.0
    while gaussian_epsilon(hi, delta) < epsilon and hi < 1e3:
        lo, hi = hi, 2.0 * hi
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gaussian_epsilon(mid, delta) < epsilon else (lo, mid)
    return lo


# -------------------------------------------------------------------------- the curves


def _central_additive(spec: QuerySpec, info: MechanismInfo, k: int, a: np.ndarray
                      ) -> ReleaseCurve:
    """A central additive release: all its noisy statistics composed."""
    eps = float(spec.epsilon)
    parts = release_parts(spec)
    notes: list[str] = []
    if _family(info, spec).family == "gaussian":
        mu, exact = _gaussian_mu(spec, info, parts)
        steps = _one_step_discrete(spec, info, parts)
        if steps is not None:
            return _discrete_gaussian_release(spec, info, k, a, steps)
        if not exact:
            notes.append("discrete Gaussian shown as its continuous counterpart "
                         "(the difference is far below what the plot resolves)")
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


def _one_step_discrete(spec: QuerySpec, info: MechanismInfo, parts: int) -> float | None:
    """σ in steps of a discrete Gaussian release whose neighbours move one integer
    coordinate by one step (a count, a histogram under add-remove), else None."""
    if info.name != "discrete_gaussian" or parts != 1:
        return None
    if spec.query not in ("count", "histogram") or (
            spec.query == "histogram" and spec.relation == "replace"):
        return None
    eps, dlt = float(spec.epsilon), _effective_delta(info, spec)
    cont = _family(info, spec).continuous_scale(1.0, eps, dlt)
    return discrete_gaussian_sigma(1, eps, dlt, 1, at_least=cont)


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
_MODEL_NOTES = {
    "local": "local model: neighbours differ in one person's value; the curve is what the "
             "collector can infer from that person's report",
    "distributed": "secure aggregation: the server sees only the noisy sum, so the "
                   "guarantee is that of the sum (replace-one neighbours)",
    "shuffle": "shuffle model: the guarantee is that of the shuffled messages, what the "
               "analyst receives (replace-one neighbours)",
}


def _check_k(k: Any) -> int:
    try:
        n = operator.index(k)
    except TypeError:
        raise ParameterError(f"the number of releases must be an integer ≥ 1, got {k!r}"
                             ) from None
    if isinstance(k, bool) or n < 1:
        raise ParameterError(f"the number of releases must be an integer ≥ 1, got {k!r}")
    return n


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
        curve = _central_additive(spec, info, kk, a)
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
            info.kind == "randomizer" and "shuffle" in info.trust_models):
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
    if trust_model in _MODEL_NOTES:
        notes.append(_MODEL_NOTES[trust_model])
    if curve is None:
        notes.append(f"no exact curve for {info.label}: its (ε, δ) guarantee is drawn")
        return ReleaseCurve(trust_model, spec.mechanism, info.label, a, None, False, kk,
                            notes=tuple(notes))
    return replace(curve, notes=tuple(notes))
