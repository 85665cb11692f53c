"""The trade-off curve of every mechanism the application offers, by registry name.

:func:`mechanism_curve` gives, for a registry name and the parameters that shape its
curve, the curve of one run (or of k independent runs) and the (ε, δ) it implies:

=====================  ==================================================================
mechanisms             curve
=====================  ==================================================================
gaussian, laplace      closed forms (Dong, Roth & Su 2019)
rr, krr, duchi         K-ary randomized response's pair (Duchi's bit: binary RR at ε)
sue, oue, olh,         their worst-case pairs of report distributions
hadamard, cms, sfp     (:mod:`~dpstudio.engine.tradeoff.pairs`), exact
exponential            the ε-bounded-range envelope, exact in the worst case over scores
discrete_laplace,      the discrete Laplace's loss classes (on its grid for the local one)
local_laplace
discrete_gaussian,     shifted integer noise (:mod:`~dpstudio.engine.tradeoff.integer_noise`),
local_gaussian,        exact up to a 1e-12 pessimistic cut of the support
secagg_gaussian,
skellam
cloak, blanket,        *region only*: their (ε, δ) come from bounds (shuffle amplification,
permute_and_flip,      the privacy blanket, the sensitivity analysis of a model's
dp_erm_logistic,       training), not from a known pair of output distributions; the curve
dp_objective_logistic, drawn is the boundary of the (ε, δ) region, composed optimally
dp_sgd                 (Kairouz, Oh & Viswanath) when k > 1
=====================  ==================================================================

A curve that is only the (ε, δ) region says so: :attr:`MechanismCurve.region_only` is
True and :attr:`MechanismCurve.region_note` is the sentence to show beside the plot.
Parameters named like a registry parameter (``epsilon``, ``delta``, ``g``,
``fragment_share``) take that parameter's range and help; the others (``sigma``,
``scale``, ``variance``, ``sensitivity``, ``clients``, ``k``) are declared here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstudio.engine.entry import DELTA, EPSILON, Param
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.tradeoff.compose import compose_gaussian, compose_tradeoff
from dpstudio.engine.tradeoff.curves import (
    TradeoffCurve,
    _check_alpha,
    _check_int,
    discrete_laplace_tradeoff,
    krr_tradeoff,
    laplace_tradeoff,
)
from dpstudio.engine.tradeoff.integer_noise import (
    IntegerLaw,
    discrete_gaussian_law,
    integer_noise_pld,
    integer_noise_tradeoff,
    skellam_law,
    sum_of_shares,
)
from dpstudio.engine.tradeoff.pairs import (
    LossPair,
    compose_pair,
    count_mean_sketch_pair,
    epsilon_delta_pair,
    exponential_mechanism_tradeoff,
    hadamard_pair,
    local_hashing_pair,
    pair_tradeoff,
    product_pair,
    unary_encoding_pair,
)
from dpstudio.engine.tradeoff.profiles import (
    _default_eps_grid,
    gaussian_epsilon,
    knots_epsilon,
    profile_to_tradeoff,
)

__all__ = ["CURVE_PARAMS", "MechanismCurve", "curve_example", "curve_for_object",
           "curve_mechanisms", "curve_params", "mechanism_curve"]

#: Parameters that shape a curve but are not registry parameters (the registry's own
#: ``epsilon``, ``delta``, ``g``, ``fragment_share`` are used as declared there).
CURVE_PARAMS: dict[str, Param] = {p.name: p for p in (
    Param("sigma", "float", 1.0, "Noise standard deviation σ > 0 (discrete Gaussians: in "
          "integer steps; secagg_gaussian: each client's share).", low=0.0, low_open=True),
    Param("scale", "float", 1.0, "Laplace scale b > 0 (discrete Laplace: in integer steps).",
          low=0.0, low_open=True),
    Param("variance", "float", 1.0, "Total variance of the Skellam noise of the sum, in "
          "integer steps squared.", low=0.0, low_open=True, high=1e9),
    Param("sensitivity", "float", 1.0, "Sensitivity Δ of the statistic (an integer number "
          "of steps for integer noise; default 1).", low=0.0, low_open=True),
    Param("clients", "int", 1, "Clients whose noise shares reach the sum and stay unknown "
          "to the server (distributed; default 1).", low=1, high=1 << 30),
    Param("k", "int", 2, "Number of values of k-ary randomized response, ≥ 2.", low=2,
          high=2**31 - 2),
)}


@dataclass(frozen=True)
class MechanismCurve:
    """A mechanism's trade-off curve (of k runs) and what goes with it.

    Attributes
    ----------
    mechanism : str
        The registry name.
    curve : TradeoffCurve
        The curve of ``compositions`` independent runs.
    compositions : int
        k.
    region_only : bool
        True when only the mechanism's (ε, δ) is known and ``curve`` is the boundary of
        that region (then ``curve.exact`` is False).
    bound_epsilon, bound_delta : float
        An (ε, δ) the k runs satisfy: k·ε with δ = 0 for pure mechanisms; otherwise the
        smallest ε at the given δ the exact curve implies, or basic composition of the
        declared (ε, δ) for region-only curves.
    params : dict
        The parameters used, given and derived (e.g. the σ the engine calibrates).
    region_note : str
        One sentence for the plot when ``region_only`` (empty otherwise).
    """

    mechanism: str
    curve: TradeoffCurve
    compositions: int
    region_only: bool
    bound_epsilon: float
    bound_delta: float
    params: dict[str, Any] = field(default_factory=dict)
    region_note: str = ""

    @property
    def exact(self) -> bool:
        """Whether the curve is the mechanism's own (up to rounding), not a lower bound."""
        return self.curve.exact


@dataclass(frozen=True)
class _Spec:
    params: tuple[str, ...]  # accepted parameter names
    build: Callable[[str, dict[str, Any], int, np.ndarray], MechanismCurve]
    optional: tuple[str, ...] = ()  # may be left out: derived from the others
    example: tuple[tuple[str, Any], ...] = ()  # values for the examples and the tests


# --------------------------------------------------------------------------- helpers


def _relabel(curve: TradeoffCurve, label: str, exact: bool | None = None,
             note: str | None = None) -> TradeoffCurve:
    return TradeoffCurve(curve.alpha, curve.beta, label,
                         curve.exact if exact is None else exact,
                         curve.note if note is None else note, curve.knots, curve.evaluator)


def _times(k: int) -> str:
    return f", composed {k}×" if k > 1 else ""


def _pair_curve(name: str, pair: LossPair, k: int, a: np.ndarray, label: str,
                eps: float, params: dict[str, Any], how: str) -> MechanismCurve:
    composed = compose_pair(pair, k) if k > 1 else pair
    note = f"{how}; Neyman–Pearson on {composed.p.size} likelihood-ratio classes"
    if k > 1:
        note += f" of the {k}-fold product"
    curve = pair_tradeoff(composed, a, f"{label}{_times(k)}", note)
    return MechanismCurve(name, curve, k, False, k * eps, 0.0, params)


def _integer_int(value: float, what: str = "the sensitivity") -> int:
    if value != math.floor(value):
        raise ParameterError(f"{what} must be a whole number of integer steps, got {value:g}")
    return int(value)


def _noise_curve(name: str, law: IntegerLaw, shift: int, k: int, a: np.ndarray,
                 delta: float, params: dict[str, Any], label: str) -> MechanismCurve:
    if k == 1 or law.affine_loss:
        curve = integer_noise_tradeoff(law, shift, k, a, label=label)
        return MechanismCurve(name, curve, k, False, knots_epsilon(curve, delta), delta,
                              params)
    # Composed through the PLD: its own ε at δ (pessimistic), and that ε among the lines
    # of the drawn envelope, so the curve lies above the (ε, δ) it reports.
    pld = integer_noise_pld(law, shift, k)
    eps = pld.epsilon(delta)
    grid = np.union1d(_default_eps_grid(pld.delta), [eps])
    curve = profile_to_tradeoff(pld.delta, a, grid, label=f"{label}{_times(k)}")
    curve = _relabel(curve, curve.label, False, "privacy-loss distribution of the windowed "
                     "pair composed, then " + curve.note)
    return MechanismCurve(name, curve, k, False, eps, delta, params)


# ------------------------------------------------------------------------- builders


def _gaussian(name, v, k, a):
    sens, sigma = v["sensitivity"], v["sigma"]
    mu = sens / sigma
    curve = compose_gaussian(mu, k, a)
    return MechanismCurve(name, curve, k, False, gaussian_epsilon(mu * math.sqrt(k),
                                                                  v["delta"]), v["delta"],
                          {**v, "mu": mu * math.sqrt(k)})


def _laplace(name, v, k, a):
    eps = v["sensitivity"] / v["scale"]
    curve = (laplace_tradeoff(eps, a) if k == 1 else
             compose_tradeoff("laplace", {"scale": v["scale"], "sensitivity": v["sensitivity"]},
                              k, a))
    return MechanismCurve(name, curve, k, False, k * eps, 0.0, {**v, "epsilon": eps})


def _krr(name, v, k, a):
    kk = 2 if name in ("rr", "duchi") else v["k"]
    if k == 1:
        curve = krr_tradeoff(v["epsilon"], kk, a)
    else:
        curve = compose_tradeoff("krr", {"epsilon": v["epsilon"], "k": kk}, k, a)
    if name == "duchi":
        curve = _relabel(curve, f"Duchi et al. mean, ε = {v['epsilon']:g}{_times(k)}",
                         note="one bit, 1 w.p. k(1+x)/2 + (1−k)(1−x)/2: the inputs ±1 give "
                         "binary randomized response at ε; " + curve.note)
    return MechanismCurve(name, curve, k, False, k * v["epsilon"], 0.0, dict(v))


def _unary(name, v, k, a):
    eps = v["epsilon"]
    label = "optimized" if name == "oue" else "symmetric"
    return _pair_curve(name, unary_encoding_pair(eps, name == "oue"), k, a,
                       f"{label} unary encoding, ε = {eps:g}", eps, dict(v),
                       "the two bits of the cells x and x′ (the other bits agree)")


def _olh(name, v, k, a):
    from dpstudio.engine.local.frequency import OptimalLocalHashing

    eps = v["epsilon"]
    olh = OptimalLocalHashing(eps, 2, v["g"] or None)  # the collision does not depend on k
    return _pair_curve(name, local_hashing_pair(eps, olh.g, olh.collision), k, a,
                       f"optimal local hashing, ε = {eps:g}, g = {olh.g}", eps,
                       {**v, "g": olh.g, "collision": olh.collision},
                       f"seed and bucket; x, x′ collide w.p. {olh.collision:.6g}")


def _hadamard(name, v, k, a):
    eps = v["epsilon"]
    return _pair_curve(name, hadamard_pair(eps), k, a, f"Hadamard response, ε = {eps:g}",
                       eps, dict(v), "columns of C_x ∖ C_x′, C_x′ ∖ C_x and the rest")


def _cms(name, v, k, a):
    eps = v["epsilon"]
    return _pair_curve(name, count_mean_sketch_pair(eps), k, a,
                       f"count-mean sketch, ε = {eps:g}", eps, dict(v),
                       "two values no hash maps together (the worst case): two ±1 entries, "
                       "each an e^(ε/2) randomized response")


def _sfp(name, v, k, a):
    eps, share = v["epsilon"], v["fragment_share"]
    pair = product_pair([count_mean_sketch_pair(eps * share),
                         count_mean_sketch_pair(eps * (1.0 - share))])
    return _pair_curve(name, pair, k, a, f"sequence-fragment puzzle, ε = {eps:g}", eps,
                       dict(v), "the fragment and word sketches of two words whose keys "
                       "differ in both (the worst case)")


def _exponential(name, v, k, a):
    eps = v["epsilon"]
    if k == 1:
        return MechanismCurve(name, exponential_mechanism_tradeoff(eps, a), 1, False, eps,
                              0.0, dict(v))
    # No exact composed pair here (the worst t may differ between runs): the composed
    # pure ε-DP region, which every ε-DP mechanism's composition lies above.
    curve = pair_tradeoff(compose_pair(epsilon_delta_pair(eps, 0.0), k), a)
    return MechanismCurve(
        name, _relabel(curve, f"exponential mechanism, ε = {eps:g}{_times(k)}", False,
                       f"pessimistic: the {k}-fold composition of the pure ε-DP region "
                       "(the exponential mechanism is ε-DP); its own composed curve, above "
                       "this one, is not computed"), k, False, k * eps, 0.0, dict(v))


def _discrete_laplace(name, v, k, a):
    if name == "local_laplace":
        from dpstudio.engine.local.mean import LocalLaplace

        noise = LocalLaplace(v["epsilon"], (0.0, 1.0)).noise
        scale, sens = noise.scale, noise.sensitivity
        params = {**v, "scale_steps": scale, "sensitivity_steps": sens}
    else:
        sens = _integer_int(v["sensitivity"])
        scale = v["scale"] if v["scale"] is not None else sens / v["epsilon"]
        params = {**v, "scale": scale, "sensitivity": sens}
    curve = (discrete_laplace_tradeoff(scale, sens, a) if k == 1 else
             compose_tradeoff("discrete_laplace", {"scale": scale, "sensitivity": sens}, k, a))
    if name == "local_laplace":
        curve = _relabel(curve, f"local Laplace, ε = {v['epsilon']:g}{_times(k)}",
                         note=f"discrete Laplace on the grid ({sens} steps); " + curve.note)
    return MechanismCurve(name, curve, k, False, k * sens / scale, 0.0, params)


def _discrete_gaussian(name, v, k, a):
    from dpstudio.engine.calibration import discrete_gaussian_sigma

    if name == "local_gaussian":
        from dpstudio.engine.local.mean import LocalGaussian

        noise = LocalGaussian(v["epsilon"], (0.0, 1.0), v["delta"]).noise
        sigma, sens = noise.scale, noise.sensitivity
        params = {**v, "sigma_steps": sigma, "sensitivity_steps": sens}
        label = f"local Gaussian, ε = {v['epsilon']:g}, δ = {v['delta']:g}"
    else:
        sens = _integer_int(v["sensitivity"])
        sigma = v["sigma"]
        if sigma is None:  # what the engine draws for (ε, δ)
            sigma = discrete_gaussian_sigma(sens, v["epsilon"], v["delta"])
        params = {**v, "sigma": sigma, "sensitivity": sens}
        label = f"discrete Gaussian, σ = {sigma:.6g}, Δ = {sens}"
    return _noise_curve(name, discrete_gaussian_law(sigma), sens, k, a, v["delta"], params,
                        label)


def _distributed(name, v, k, a):
    from dpstudio.engine.distributed.noise import calibrate_noise

    sens = _integer_int(v["sensitivity"])
    clients = v["clients"]
    if name == "secagg_gaussian":
        sigma = v["sigma"]
        if sigma is None:
            sigma = calibrate_noise("gaussian", sens, v["epsilon"], v["delta"],
                                    clients).per_client
        law = sum_of_shares(discrete_gaussian_law(sigma), clients, reach=sens)
        params = {**v, "sigma": sigma, "sensitivity": sens}
        label = (f"secure aggregation: {clients} discrete Gaussian share"
                 f"{'s' if clients > 1 else ''}, σ_c = {sigma:.6g}, Δ = {sens}")
    else:
        var = v["variance"]
        if var is None:
            noise = calibrate_noise("skellam", sens, v["epsilon"], v["delta"], clients)
            var = noise.per_client * clients
        law = skellam_law(var)
        params = {**v, "variance": var, "sensitivity": sens}
        label = f"secure aggregation: Skellam sum, variance {var:.6g}, Δ = {sens}"
    return _noise_curve(name, law, sens, k, a, v["delta"], params, label)


def _region(name, v, k, a):
    from dpstudio.engine.registry import REGISTRY

    eps, d = v["epsilon"], v.get("delta", 0.0) or 0.0
    info = REGISTRY.get(name)
    why = {"cloak": "a shuffle amplification bound", "blanket": "the privacy blanket bound",
           "permute_and_flip": "its pure ε-DP proof"}.get(name, "its training's privacy "
                                                          "analysis")
    curve = pair_tradeoff(compose_pair(epsilon_delta_pair(eps, d), k), a)
    comp = (f", composed {k} times by the optimal composition of (ε, δ)-DP mechanisms "
            "(Kairouz, Oh & Viswanath)" if k > 1 else "")
    note = (f"Only the (ε, δ) guarantee of {info.label} is known (from {why}): the curve is "
            f"the boundary of the ({eps:g}, {d:g}) region{comp}, not the mechanism's own "
            "curve, which lies above it.")
    curve = _relabel(curve, f"{info.label}: ({eps:g}, {d:g}) region{_times(k)}", False, note)
    return MechanismCurve(name, curve, k, True, k * eps, min(k * d, 1.0), dict(v), note)


@functools.lru_cache(maxsize=1)
def _specs() -> dict[str, _Spec]:
    eps, ed = ("epsilon",), ("epsilon", "delta")
    one = (("epsilon", 1.0),)
    table = {
        "gaussian": _Spec(("sigma", "sensitivity", "delta"), _gaussian,
                          example=(("sigma", 1.0),)),
        "laplace": _Spec(("scale", "sensitivity"), _laplace, example=(("scale", 1.0),)),
        "discrete_laplace": _Spec(("scale", "epsilon", "sensitivity"), _discrete_laplace,
                                  optional=("scale", "epsilon"), example=(("scale", 2.0),)),
        "discrete_gaussian": _Spec(("sigma", "epsilon", "delta", "sensitivity"),
                                   _discrete_gaussian, optional=("sigma",), example=one),
        "exponential": _Spec(eps, _exponential, example=one),
        "permute_and_flip": _Spec(eps, _region, example=one),
        "dp_erm_logistic": _Spec(ed, _region, example=one),
        "dp_objective_logistic": _Spec(ed, _region, example=one),
        "dp_sgd": _Spec(ed, _region, example=one),
        "rr": _Spec(eps, _krr, example=one),
        "krr": _Spec(("epsilon", "k"), _krr, example=(("epsilon", 1.0), ("k", 4))),
        "sue": _Spec(eps, _unary, example=one),
        "oue": _Spec(eps, _unary, example=one),
        "olh": _Spec(("epsilon", "g"), _olh, example=one),
        "hadamard": _Spec(eps, _hadamard, example=one),
        "cms": _Spec(eps, _cms, example=one),
        "sfp": _Spec(("epsilon", "fragment_share"), _sfp, example=one),
        "local_laplace": _Spec(eps, _discrete_laplace, example=one),
        "local_gaussian": _Spec(ed, _discrete_gaussian, example=one),
        "duchi": _Spec(eps, _krr, example=one),
        "cloak": _Spec(ed, _region, example=one),
        "blanket": _Spec(ed, _region, example=one),
        "secagg_gaussian": _Spec(("sigma", "epsilon", "delta", "clients", "sensitivity"),
                                 _distributed, optional=("sigma",), example=one),
        "skellam": _Spec(("variance", "epsilon", "delta", "clients", "sensitivity"),
                         _distributed, optional=("variance",), example=one),
    }
    return table


def curve_mechanisms() -> tuple[str, ...]:
    """The registry names :func:`mechanism_curve` knows, in the registry's order.

    Returns
    -------
    tuple of str
    """
    from dpstudio.engine.registry import REGISTRY

    specs = _specs()
    return tuple(n for n in REGISTRY.names() if n in specs)


def _param(mechanism: str, name: str) -> Param:
    """The declaration of a curve parameter: the registry entry's own, else ours."""
    from dpstudio.engine.registry import REGISTRY

    if mechanism in REGISTRY:
        for p in REGISTRY.get(mechanism).params:
            if p.name == name:
                return p
    if name in CURVE_PARAMS:
        return CURVE_PARAMS[name]
    return {"epsilon": EPSILON, "delta": DELTA}[name]


def curve_params(mechanism: str) -> tuple[tuple[Param, bool], ...]:
    """The parameters that shape ``mechanism``'s curve, each with whether it may be left
    out without a default (derived from the others, e.g. σ from ε and δ).

    Parameters
    ----------
    mechanism : str
        A name from :func:`curve_mechanisms`.

    Returns
    -------
    tuple of (Param, bool)

    Raises
    ------
    ParameterError
        For a name without a curve.
    """
    spec = _spec(mechanism)
    return tuple((_param(mechanism, n), n in spec.optional) for n in spec.params)


def curve_example(mechanism: str) -> dict[str, Any]:
    """Parameters that give ``mechanism`` a curve (for examples and tests).

    Parameters
    ----------
    mechanism : str
        A name from :func:`curve_mechanisms`.

    Returns
    -------
    dict
    """
    return dict(_spec(mechanism).example)


def _spec(mechanism: str) -> _Spec:
    specs = _specs()
    if mechanism not in specs:
        raise ParameterError(f"no trade-off curve for mechanism {mechanism!r} (known: "
                             + ", ".join(curve_mechanisms()) + ")")
    return specs[mechanism]


_REQUIRED = {"gaussian": ("sigma",), "laplace": ("scale",), "krr": ("k",)}
# Pairs of which exactly one is given (the other is derived), and the default when neither.
_EITHER = {"discrete_laplace": ("scale", "epsilon")}


def _resolve(mechanism: str, params: Mapping[str, Any]) -> dict[str, Any]:
    spec = _spec(mechanism)
    unknown = sorted(set(params) - set(spec.params))
    if unknown:
        raise ParameterError(f"{unknown[0]} does not apply to the {mechanism} curve "
                             f"(it takes {', '.join(spec.params)})")
    for name in _REQUIRED.get(mechanism, ()):
        if params.get(name) is None:
            raise ParameterError(f"the {mechanism} curve needs {name}")
    values: dict[str, Any] = {}
    for name in spec.params:
        p = _param(mechanism, name)
        given = params.get(name)
        if given is None:
            values[name] = None if (name in spec.optional or name in _REQUIRED.get(
                mechanism, ())) else p.default
        else:
            values[name] = p.validate(given)
    derived = {"sigma": ("epsilon",), "variance": ("epsilon",)}
    for name in spec.optional:
        if params.get(name) is not None:
            clash = [o for o in derived.get(name, ()) if params.get(o) is not None]
            if clash:
                raise ParameterError(f"give {name} or {clash[0]}, not both: {name} fixes the "
                                     f"noise, {clash[0]} calibrates it")
            for other in derived.get(name, ()):
                values[other] = None  # not used: the noise is given
    if mechanism in _EITHER:
        first, second = _EITHER[mechanism]
        if params.get(first) is not None and params.get(second) is not None:
            raise ParameterError(f"give {first} or {second}, not both")
        if values[first] is None and values[second] is None:
            values[second] = _param(mechanism, second).default
    if "delta" in values and values["delta"] is None:
        values["delta"] = 0.0
    return values


def mechanism_curve(mechanism: str, params: Mapping[str, Any] | None = None,
                    compositions: int = 1, alpha=None) -> MechanismCurve:
    """The trade-off curve of ``compositions`` runs of a registry mechanism.

    Parameters
    ----------
    mechanism : str
        A name from :func:`curve_mechanisms` (every entry of the central, local, shuffle
        and distributed trust models).
    params : mapping, optional
        Its curve parameters (:func:`curve_params`); left-out ones take the registry's
        defaults (ε = 1, δ = 10⁻⁶, …) or are derived: the discrete Gaussian's σ, the
        secure-aggregation shares' σ_c and the Skellam variance are calibrated by the
        engine for ε and δ (with ``clients`` and ``sensitivity``) when not given.
    compositions : int
        k ≥ 1.
    alpha : array_like, optional
        Type I errors (default :func:`~dpstudio.engine.tradeoff.alpha_grid`).

    Returns
    -------
    MechanismCurve

    Raises
    ------
    ParameterError
        For an unknown mechanism, a parameter it does not take, a missing one, or one out
        of range (one sentence).
    """
    k = _check_int(compositions, "the number of compositions", 1)
    a = _check_alpha(alpha)
    values = _resolve(mechanism, dict(params or {}))
    return _specs()[mechanism].build(mechanism, values, k, a)


def curve_for_object(obj: Any, compositions: int = 1, alpha=None) -> MechanismCurve | None:
    """The curve of a built local randomizer, from its own parameters (one person's report).

    For the application's privacy view and the report: what a local release of ``obj``
    lets the collector infer about one person. Reads the object's ``name`` and its ε,
    ``k``, ``g`` (OLH), the split of ε (the sequence-fragment puzzle) or its grid
    ``noise`` (local Laplace and Gaussian).

    Parameters
    ----------
    obj : LocalRandomizer
        A randomizer built by a registry entry (``info.build(...)``).
    compositions : int
        Reports of the same person, ≥ 1.
    alpha : array_like, optional
        Type I errors (default :func:`~dpstudio.engine.tradeoff.alpha_grid`).

    Returns
    -------
    MechanismCurve or None
        None for an object this catalog does not know.

    Raises
    ------
    ParameterError
        For a bad ``compositions`` or ``alpha``.
    """
    k = _check_int(compositions, "the number of compositions", 1)
    a = _check_alpha(alpha)
    name = getattr(obj, "name", "")
    eps = getattr(obj, "epsilon", None)
    if name in ("sue", "oue", "hadamard", "cms", "duchi", "rr"):
        return mechanism_curve(name, {"epsilon": eps}, k, a)
    if name == "krr":
        return mechanism_curve(name, {"epsilon": eps, "k": obj.k}, k, a)
    if name == "olh":
        return _pair_curve(name, local_hashing_pair(eps, obj.g, obj.collision), k, a,
                           f"optimal local hashing, ε = {eps:g}, g = {obj.g}", eps,
                           {"epsilon": eps, "g": obj.g, "collision": obj.collision},
                           f"seed and bucket; x, x′ collide w.p. {obj.collision:.6g}")
    if name == "sfp":
        return mechanism_curve(name, {"epsilon": eps,
                                      "fragment_share": obj.eps_fragment / eps}, k, a)
    noise = getattr(obj, "noise", None)
    if name in ("local_laplace", "local_gaussian") and noise is not None:
        steps = {"scale_steps": noise.scale, "sensitivity_steps": noise.sensitivity}
        if noise.family == "laplace":
            curve = (discrete_laplace_tradeoff(noise.scale, noise.sensitivity, a) if k == 1
                     else compose_tradeoff("discrete_laplace", {
                         "scale": noise.scale, "sensitivity": noise.sensitivity}, k, a))
            return MechanismCurve(name, curve, k, False,
                                  k * noise.sensitivity / noise.scale, 0.0,
                                  {"epsilon": eps, **steps})
        return _noise_curve(name, discrete_gaussian_law(noise.scale), noise.sensitivity, k,
                            a, noise.delta, {"epsilon": eps, "delta": noise.delta, **steps},
                            f"local Gaussian, ε = {eps:g}, δ = {noise.delta:g}")
    return None
