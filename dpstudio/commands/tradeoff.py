"""``dpstudio tradeoff``: the hypothesis-testing trade-off curve β = f(α) of a mechanism.

An adversary who sees the release tests "the data was D" against "the data was D′"; f(α)
is the smallest miss rate β of any test with false-alarm rate α. Prints the curve of one
mechanism (optionally composed with itself) and the (ε, δ) bound it implies.

``gaussian``, ``laplace``, ``rr`` and ``krr`` take the flags they always took; every other
mechanism of the registry (central, local, shuffle, distributed) is drawn by
:func:`dpstudio.engine.tradeoff.mechanism_curve`, its flags generated from the parameters
that shape its curve (registry parameters keep their registry help). A mechanism known
only by its (ε, δ) (the shuffle protocols, permute-and-flip, the models) prints that
region with ``"region_only": true`` and a ``region_note`` sentence.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

from dpstudio.commands._common import EXIT_OK, CliError, Parser

__all__ = ["parser", "run"]

#: The mechanisms with their own flags since the first version (kept exactly).
CLASSIC = ("gaussian", "laplace", "rr", "krr")
MAX_POINTS = 100_000
# Knots listed in the JSON up to this many (a wide discrete Gaussian has ~10⁶).
MAX_JSON_KNOTS = 50_000
# Flags of the classic mechanisms; the catalog's other parameters get flags of their own.
_CLASSIC_FLAGS = ("sigma", "scale", "epsilon", "k", "sensitivity", "delta")
DEFAULT_DELTA = 1e-5
# Flags each mechanism needs, and those it accepts besides --compose/--points/--json.
_REQUIRED = {"gaussian": ("sigma",), "laplace": ("scale",), "rr": ("epsilon",),
             "krr": ("epsilon", "k")}
_ALLOWED = {"gaussian": ("sigma", "sensitivity", "delta"), "laplace": ("scale", "sensitivity"),
            "rr": ("epsilon",), "krr": ("epsilon", "k")}
# α at which the human summary shows f(α).
_SUMMARY_ALPHA = (0.0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0)


def _mechanisms() -> tuple[str, ...]:
    """The classic four, then every other mechanism with a curve, in the registry's order."""
    from dpstudio.engine.tradeoff import curve_mechanisms

    return CLASSIC + tuple(n for n in curve_mechanisms() if n not in CLASSIC)


def _extra_params() -> dict[str, tuple[Any, list[str]]]:
    """Curve parameters without a classic flag: name → (Param, mechanisms using it)."""
    from dpstudio.engine.tradeoff import curve_params

    found: dict[str, tuple[Any, list[str]]] = {}
    for mech in _mechanisms():
        if mech in CLASSIC:
            continue
        for param, _ in curve_params(mech):
            if param.name not in _CLASSIC_FLAGS:
                found.setdefault(param.name, (param, []))[1].append(mech)
    return found


def parser() -> argparse.ArgumentParser:
    from dpstudio.engine.entry import EPSILON

    p = Parser(
        prog="dpstudio tradeoff",
        description="Trade-off curve β = f(α) of a mechanism: the smallest type II error "
        "(missed detection) of any test of D against a neighbour D′ at type I error α.",
        epilog="Examples: --mechanism gaussian --sigma 1 --compose 10; --mechanism laplace "
        "--scale 2; --mechanism krr --epsilon 1 --k 4; --mechanism oue --epsilon 2; "
        "--mechanism secagg_gaussian --epsilon 1 --delta 1e-6 --clients 100. Curves are "
        "exact except some compositions (pessimistic, from privacy-loss distributions) and "
        "mechanisms known only by their (ε, δ) (the shuffle protocols, permute-and-flip, "
        "the models), whose region is drawn and said to be so.",
    )
    p.add_argument("--mechanism", required=True, choices=_mechanisms(),
                   help="registry name of the mechanism (dpstudio mechanisms lists them)")
    p.add_argument("--sigma", type=float,
                   help="Gaussian noise standard deviation σ > 0 (gaussian; discrete_gaussian "
                   "in integer steps; secagg_gaussian: each client's share; the last two "
                   "calibrate it from --epsilon and --delta when it is left out)")
    p.add_argument("--scale", type=float,
                   help="Laplace scale b > 0 (laplace; discrete_laplace in integer steps, or "
                   "give --epsilon)")
    p.add_argument("--epsilon", type=float,
                   help=f"{EPSILON.help} Used by rr, krr and the registry's other "
                   f"mechanisms ({EPSILON.label} > 0; default 1 for those).")
    p.add_argument("--k", type=int, help="number of values of k-ary randomized response, ≥ 2")
    p.add_argument("--sensitivity", type=float,
                   help="sensitivity Δ of the query (gaussian, laplace; integer steps for "
                   "discrete and distributed noise; default 1)")
    p.add_argument("--delta", type=float,
                   help=f"δ at which the Gaussian's ε is reported (default {DEFAULT_DELTA:g}); "
                   "the δ of the mechanisms that take one (default the registry's 1e-6)")
    group = p.add_argument_group("other curve parameters (from the registry where it has them)")
    for name, (param, users) in _extra_params().items():
        group.add_argument("--" + name.replace("_", "-"), dest=name,
                           type=int if param.kind == "int" else float,
                           metavar=param.kind.upper(),
                           help=f"{param.help} [{', '.join(users)}]")
    p.add_argument("--compose", type=int, default=1, metavar="N",
                   help="number of independent runs composed (default 1)")
    p.add_argument("--points", type=int, default=200,
                   help="number of type I errors α on the curve, 0 and 1 included (default 200)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _flag_names() -> tuple[str, ...]:
    return _CLASSIC_FLAGS + tuple(_extra_params())


def _check_flags(args: argparse.Namespace) -> None:
    mech = args.mechanism
    if mech in CLASSIC:
        for name in _REQUIRED[mech]:
            if getattr(args, name) is None:
                raise CliError(f"--mechanism {mech} needs --{name}")
        allowed: tuple[str, ...] = _ALLOWED[mech]
    else:
        from dpstudio.engine.tradeoff import curve_params

        allowed = tuple(param.name for param, _ in curve_params(mech))
    for name in _flag_names():
        if getattr(args, name, None) is not None and name not in allowed:
            flag = name.replace("_", "-")
            raise CliError(f"--{flag} does not apply to --mechanism {mech}")
    if args.compose < 1:
        raise CliError(f"--compose must be at least 1, got {args.compose}")
    if not 2 <= args.points <= MAX_POINTS:
        raise CliError(f"--points must be between 2 and {MAX_POINTS}, got {args.points}")


def _build(args: argparse.Namespace, alpha) -> dict[str, Any]:
    """Curve, bound and parameters of the requested mechanism on ``alpha``."""
    from dpstudio.engine import tradeoff as T
    from dpstudio.engine.calibration import validate_epsilon, validate_sensitivity

    k, mech = args.compose, args.mechanism
    info: dict[str, Any] = {"mechanism": mech, "compositions": k}
    if mech == "gaussian":
        sigma = args.sigma
        if not (math.isfinite(sigma) and sigma > 0):
            raise CliError(f"--sigma must be a finite number greater than 0, got {sigma:g}")
        sens = validate_sensitivity(1.0 if args.sensitivity is None else args.sensitivity)
        delta = DEFAULT_DELTA if args.delta is None else args.delta
        mu = sens / sigma
        curve = T.compose_gaussian(mu, k, alpha)
        eps = T.gaussian_epsilon(mu * math.sqrt(k), delta)
        info.update(sigma=sigma, sensitivity=sens, mu=mu * math.sqrt(k), mu_per_run=mu)
        bound_eps, bound_delta = eps, delta
    else:
        if mech == "laplace":
            scale = args.scale
            if not (math.isfinite(scale) and scale > 0):
                raise CliError(f"--scale must be a finite number greater than 0, got {scale:g}")
            sens = validate_sensitivity(1.0 if args.sensitivity is None else args.sensitivity)
            eps = sens / scale
            params: dict[str, Any] = {"scale": scale, "sensitivity": sens}
            single = T.laplace_tradeoff
        else:
            eps = validate_epsilon(args.epsilon)
            params = {"epsilon": eps}
            if mech == "krr":
                if args.k < 2:
                    raise CliError(f"--k must be at least 2, got {args.k}")
                params["k"] = args.k

                def single(e, a):
                    return T.krr_tradeoff(e, args.k, a)
            else:
                single = T.randomized_response_tradeoff
        if k == 1:
            curve = single(eps, alpha)
        else:
            try:
                curve = T.compose_tradeoff(mech, params, k, alpha)
            except NotImplementedError as err:
                raise CliError(f"cannot compose {mech} yet: {err}") from None
        info.update(params, epsilon_per_run=eps)
        # Pure ε-DP composes to exactly kε with δ = 0: the extreme outputs (ratio e^{±ε})
        # have positive probability, so no smaller ε holds at δ = 0.
        bound_eps, bound_delta = k * eps, 0.0
    bound = T.epsilon_delta_tradeoff(bound_eps, bound_delta, alpha)
    info.update(curve=curve, bound=bound, bound_epsilon=bound_eps, bound_delta=bound_delta)
    return info


def _build_catalog(args: argparse.Namespace, alpha) -> dict[str, Any]:
    """Curve, bound and parameters of a registry mechanism drawn by the catalog."""
    from dpstudio.engine import tradeoff as T

    params = {param.name: getattr(args, param.name)
              for param, _ in T.curve_params(args.mechanism)
              if getattr(args, param.name, None) is not None}
    mc = T.mechanism_curve(args.mechanism, params, args.compose, alpha)
    bound = T.epsilon_delta_tradeoff(mc.bound_epsilon, mc.bound_delta, alpha)
    info: dict[str, Any] = {"mechanism": args.mechanism, "compositions": mc.compositions,
                            "region_only": mc.region_only, "params": mc.params}
    if mc.region_only:
        info["region_note"] = mc.region_note
    info.update(curve=mc.curve, bound=bound, bound_epsilon=mc.bound_epsilon,
                bound_delta=mc.bound_delta)
    return info


def run(argv: Sequence[str]) -> int:
    from dpstudio.engine.tradeoff import alpha_grid

    args = parser().parse_args(argv)
    _check_flags(args)
    if args.mechanism in CLASSIC:
        info = _build(args, alpha_grid(args.points))
        info["region_only"] = False
    else:
        info = _build_catalog(args, alpha_grid(args.points))
    curve, bound = info.pop("curve"), info.pop("bound")
    bound_eps, bound_delta = info.pop("bound_epsilon"), info.pop("bound_delta")
    if not math.isfinite(bound_eps):
        raise CliError(f"no finite ε reaches δ = {bound_delta:g} for this curve; raise --delta")
    if args.json:
        out = {
            "mechanism": args.mechanism,
            "alpha": curve.alpha.tolist(),
            "beta": curve.beta.tolist(),
            "exact": curve.exact,
            "label": curve.label,
            "note": curve.note,
            "epsilon_delta_bound": {"epsilon": bound_eps, "delta": bound_delta,
                                    "alpha": bound.alpha.tolist(),
                                    "beta": bound.beta.tolist()},
        }
        if curve.knots is not None:  # exact corners of a piecewise-linear curve, to draw
            if curve.knots[0].size <= MAX_JSON_KNOTS:
                out["knots"] = {"alpha": curve.knots[0].tolist(),
                                "beta": curve.knots[1].tolist()}
            else:
                out["knots_omitted"] = int(curve.knots[0].size)
        out.update((k, v) for k, v in info.items() if k != "mechanism")
        print(json.dumps(out, indent=2, allow_nan=False, ensure_ascii=False))
        return EXIT_OK
    _print_summary(args, info, curve, bound_eps, bound_delta)
    return EXIT_OK


def _print_summary(args, info, curve, bound_eps: float, bound_delta: float) -> None:
    import numpy as np

    print(curve.label)
    if args.mechanism == "gaussian":
        print(f"  μ = {info['mu']:.6g} (σ = {info['sigma']:g}, Δ = {info['sensitivity']:g})")
    elif args.mechanism in CLASSIC:
        print(f"  ε = {info['epsilon_per_run']:.6g} per run")
    else:
        shown = ", ".join(f"{k} = {v:.6g}" if isinstance(v, float) else f"{k} = {v}"
                          for k, v in info["params"].items() if v is not None)
        print(f"  parameters: {shown}")
    print(f"  (ε, δ) bound: ε = {bound_eps:.6g} at δ = {bound_delta:g}")
    if info.get("region_only"):
        print(f"  curve: region only — {info['region_note']}")
    else:
        kind = "exact" if curve.exact else "pessimistic approximation"
        print(f"  curve: {kind} — {curve.note}")
    alpha = np.array(_SUMMARY_ALPHA)
    beta = curve.at(alpha)  # closed form or exact knots (envelope for PLD curves)
    print("  α (false alarm)   β = f(α) (missed detection)")
    for a, b in zip(alpha, beta, strict=True):
        print(f"  {a:<17g} {b:.6g}")
