"""``dpstudio tradeoff``: the hypothesis-testing trade-off curve β = f(α) of a mechanism.

An adversary who sees the release tests "the data was D" against "the data was D′"; f(α)
is the smallest miss rate β of any test with false-alarm rate α. Prints the curve of one
mechanism (optionally composed with itself) and the (ε, δ) bound it implies.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

from dpstudio.commands._common import EXIT_OK, CliError, Parser

__all__ = ["parser", "run"]

MECHANISMS = ("gaussian", "laplace", "rr", "krr")
MAX_POINTS = 100_000
DEFAULT_DELTA = 1e-5
# Flags each mechanism needs, and those it accepts besides --compose/--points/--json.
_REQUIRED = {"gaussian": ("sigma",), "laplace": ("scale",), "rr": ("epsilon",),
             "krr": ("epsilon", "k")}
_ALLOWED = {"gaussian": ("sigma", "sensitivity", "delta"), "laplace": ("scale", "sensitivity"),
            "rr": ("epsilon",), "krr": ("epsilon", "k")}
# α at which the human summary shows f(α).
_SUMMARY_ALPHA = (0.0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0)


def parser() -> argparse.ArgumentParser:
    from dpstudio.engine.entry import EPSILON

    p = Parser(
        prog="dpstudio tradeoff",
        description="Trade-off curve β = f(α) of a mechanism: the smallest type II error "
        "(missed detection) of any test of D against a neighbour D′ at type I error α.",
        epilog="Examples: --mechanism gaussian --sigma 1 --compose 10; --mechanism laplace "
        "--scale 2; --mechanism krr --epsilon 1 --k 4. Curves are exact except Laplace "
        "compositions (pessimistic, from privacy-loss distributions).",
    )
    p.add_argument("--mechanism", required=True, choices=MECHANISMS)
    p.add_argument("--sigma", type=float, help="Gaussian noise standard deviation σ > 0")
    p.add_argument("--scale", type=float, help="Laplace scale b > 0")
    p.add_argument("--epsilon", type=float,
                   help=f"{EPSILON.help} Used by rr and krr ({EPSILON.label} > 0).")
    p.add_argument("--k", type=int, help="number of values of k-ary randomized response, ≥ 2")
    p.add_argument("--sensitivity", type=float,
                   help="sensitivity Δ of the query (gaussian, laplace; default 1)")
    p.add_argument("--delta", type=float,
                   help=f"δ at which the Gaussian's ε is reported (default {DEFAULT_DELTA:g})")
    p.add_argument("--compose", type=int, default=1, metavar="N",
                   help="number of independent runs composed (default 1)")
    p.add_argument("--points", type=int, default=200,
                   help="number of type I errors α on the curve, 0 and 1 included (default 200)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _check_flags(args: argparse.Namespace) -> None:
    mech = args.mechanism
    for name in _REQUIRED[mech]:
        if getattr(args, name) is None:
            raise CliError(f"--mechanism {mech} needs --{name}")
    for name in ("sigma", "scale", "epsilon", "k", "sensitivity", "delta"):
        if getattr(args, name) is not None and name not in _ALLOWED[mech]:
            raise CliError(f"--{name} does not apply to --mechanism {mech}")
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


def run(argv: Sequence[str]) -> int:
    from dpstudio.engine.tradeoff import alpha_grid

    args = parser().parse_args(argv)
    _check_flags(args)
    info = _build(args, alpha_grid(args.points))
    curve, bound = info.pop("curve"), info.pop("bound")
    bound_eps, bound_delta = info.pop("bound_epsilon"), info.pop("bound_delta")
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
            out["knots"] = {"alpha": curve.knots[0].tolist(), "beta": curve.knots[1].tolist()}
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
    else:
        print(f"  ε = {info['epsilon_per_run']:.6g} per run")
    print(f"  (ε, δ) bound: ε = {bound_eps:.6g} at δ = {bound_delta:g}")
    print(f"  curve: {'exact' if curve.exact else 'pessimistic approximation'} — {curve.note}")
    alpha = np.array(_SUMMARY_ALPHA)
    beta = curve.at(alpha)  # closed form or exact knots (envelope for PLD curves)
    print("  α (false alarm)   β = f(α) (missed detection)")
    for a, b in zip(alpha, beta, strict=True):
        print(f"  {a:<17g} {b:.6g}")
