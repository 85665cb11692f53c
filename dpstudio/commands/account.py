"""``dpstudio account``: the (ε, δ) spent by a mechanism run once or many times.

    dpstudio account --mechanism subsampled-gaussian --sigma 1.1 --sample-rate 0.01 \\
        --steps 1000 --delta 1e-5 [--method pld|rdp|gdp] [--json]
    dpstudio account --mechanism gaussian --sigma 2 [--sensitivity 1] --compose 10 --delta 1e-6
    dpstudio account --mechanism laplace --scale 2 [--sensitivity 1] --compose 5 [--delta 1e-6]

JSON keys: epsilon, delta, method, approximate, mechanism, and the parameters used.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

from dpstudio.commands._common import EXIT_OK, CliError, Parser

__all__ = ["parser", "run"]

MECHANISMS = ("subsampled-gaussian", "gaussian", "laplace")
METHODS = ("pld", "rdp", "gdp", "exact")
# The flags each mechanism reads; any other mechanism flag given is an error, so that,
# e.g., --compose is never silently ignored (which would understate ε).
_FLAGS = {
    "subsampled-gaussian": {"sigma", "sample_rate", "steps", "sensitivity"},
    "gaussian": {"sigma", "sensitivity", "compose"},
    "laplace": {"scale", "sensitivity", "compose"},
}
# Which accountants apply to which mechanism, the first being the default.
_ALLOWED = {
    "subsampled-gaussian": ("pld", "rdp", "gdp"),
    "gaussian": ("exact", "pld", "rdp", "gdp"),
    "laplace": ("exact", "pld", "rdp"),
}


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="dpstudio account",
        description="Privacy spent by a mechanism run once or composed many times: ε at a "
        "given δ, as an upper bound (or flagged as an approximation).",
        epilog="Accountants: pld (privacy-loss distribution; tight upper bound), rdp (Rényi "
        "DP; looser upper bound), gdp (Gaussian DP: exact for the Gaussian mechanism, a "
        "central-limit approximation for DP-SGD), exact (closed form where one exists).",
    )
    p.add_argument("--mechanism", required=True, choices=MECHANISMS)
    p.add_argument("--sigma", type=float, help="Gaussian noise std (noise multiplier for "
                   "subsampled-gaussian)")
    p.add_argument("--scale", type=float, help="Laplace scale b")
    p.add_argument("--sensitivity", type=float,
                   help="ℓ₂ (Gaussian) or ℓ₁ (Laplace) sensitivity (default 1)")
    p.add_argument("--sample-rate", type=float, help="Poisson sampling probability q in (0, 1]")
    p.add_argument("--steps", type=int, help="number of DP-SGD steps T ≥ 1")
    p.add_argument("--compose", type=int,
                   help="number of runs of a gaussian or laplace mechanism (default 1)")
    p.add_argument("--delta", type=float,
                   help="δ in (0, 1) at which to report ε (laplace: default 0, pure ε)")
    p.add_argument("--method", choices=METHODS,
                   help="accountant (default: pld for subsampled-gaussian, exact for "
                   "gaussian and for laplace with δ = 0, pld for laplace with δ > 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


# Counts above 2^53 are not even representable as floats, so no accountant's arithmetic
# could stay a proven upper bound there: refuse rather than print a number.
MAX_RUNS = 1 << 53


def _runs(flag: str, value: int) -> int:
    from dpstudio.engine.checks import count

    k = count(flag, value)
    if k > MAX_RUNS:
        raise CliError(f"{flag} must be at most 2^53 ≈ {MAX_RUNS:.3g} (got {k}): beyond it no "
                       "accountant here can state a proven bound")
    return k


def _need(args: argparse.Namespace, flag: str) -> Any:
    value = getattr(args, flag.replace("-", "_"))
    if value is None:
        raise CliError(f"--mechanism {args.mechanism} needs --{flag}")
    return value


def _account(args: argparse.Namespace) -> dict[str, Any]:
    from dpstudio.engine.accounting import (
        PLD,
        dpsgd_epsilon,
        gdp_epsilon,
        rdp_epsilon,
        rdp_gaussian,
        rdp_laplace,
    )
    from dpstudio.engine.calibration import validate_delta, validate_sensitivity
    from dpstudio.engine.checks import positive

    mech = args.mechanism
    for flag in sorted(set().union(*_FLAGS.values()) - _FLAGS[mech]):
        if getattr(args, flag) is not None:
            raise CliError(f"--{flag.replace('_', '-')} does not apply to --mechanism {mech}")
    sens = validate_sensitivity(1.0 if args.sensitivity is None else args.sensitivity)
    if mech == "subsampled-gaussian":
        sigma = positive("σ", _need(args, "sigma"))
        rate, steps = _need(args, "sample-rate"), _runs("--steps", _need(args, "steps"))
        delta = _need(args, "delta")
        method = args.method or "pld"
        if method not in _ALLOWED[mech]:
            raise CliError(f"--method {method} does not apply to {mech} "
                           f"(use {', '.join(_ALLOWED[mech])})")
        # The accountants take the noise multiplier σ/Δ.
        r = dpsgd_epsilon(sigma / sens, rate, steps, delta, method)
        return {"epsilon": r.epsilon, "delta": r.delta, "method": r.method,
                "approximate": r.approximate, "mechanism": mech, "sigma": sigma,
                "sensitivity": sens, "sample_rate": r.sample_rate, "steps": r.steps}

    k = _runs("--compose", 1 if args.compose is None else args.compose)
    if mech == "gaussian":
        sigma = positive("σ", _need(args, "sigma"))
        delta = validate_delta(_need(args, "delta"), required=True)
        method = args.method or "exact"
        if method not in _ALLOWED[mech]:
            raise CliError(f"--method {method} does not apply to {mech}")
        if method in ("exact", "gdp"):
            # k Gaussian runs are exactly one Gaussian with σ/√k: (√k·Δ/σ)-GDP.
            eps = gdp_epsilon(math.sqrt(k) * sens / sigma, delta)
        elif method == "pld":
            eps = PLD.gaussian(sigma, sens).self_compose(k).epsilon(delta)
        else:
            eps = rdp_epsilon(rdp_gaussian(sigma, sensitivity=sens) * k, delta)
        return {"epsilon": eps, "delta": delta, "method": method, "approximate": False,
                "mechanism": mech, "sigma": sigma, "sensitivity": sens, "compose": k}

    scale = positive("scale", _need(args, "scale"))
    delta = validate_delta(0.0 if args.delta is None else args.delta)
    method = args.method or ("exact" if delta == 0 else "pld")
    if method not in _ALLOWED[mech]:
        raise CliError(f"--method {method} does not apply to {mech}")
    if delta == 0 and method != "exact":
        raise CliError(f"--method {method} needs --delta > 0 (with δ = 0, ε = K·Δ/b exactly)")
    if method == "exact":
        if delta > 0:
            raise CliError("no closed form for composed Laplace at δ > 0: use --method pld")
        # Pure DP composes by adding ε: K·Δ/b, rounded up if the division is inexact.
        from fractions import Fraction

        exact = Fraction(k) * Fraction(sens) / Fraction(scale)
        eps = float(exact)
        if Fraction(eps) < exact:
            eps = math.nextafter(eps, math.inf)
    elif method == "pld":
        eps = PLD.laplace(scale, sens).self_compose(k).epsilon(delta)
    else:
        eps = rdp_epsilon(rdp_laplace(scale, sensitivity=sens) * k, delta)
    return {"epsilon": eps, "delta": delta, "method": method, "approximate": False,
            "mechanism": mech, "scale": scale, "sensitivity": sens, "compose": k}


def _summary(out: dict[str, Any]) -> str:
    mech = out["mechanism"]
    if mech == "subsampled-gaussian":
        what = (f"subsampled Gaussian (σ = {out['sigma']:g}, q = {out['sample_rate']:g}), "
                f"{out['steps']} steps")
    elif mech == "gaussian":
        what = (f"Gaussian (σ = {out['sigma']:g}, Δ = {out['sensitivity']:g}) "
                f"× {out['compose']}")
    else:
        what = f"Laplace (b = {out['scale']:g}, Δ = {out['sensitivity']:g}) × {out['compose']}"
    kind = ("APPROXIMATION, not a guarantee" if out["approximate"]
            else "closed form" if out["method"] == "exact" else "upper bound")
    return (f"{what}\n  ε = {out['epsilon']:.6g} at δ = {out['delta']:g}\n"
            f"  accountant: {out['method']} ({kind})")


def run(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    out = _account(args)
    if not math.isfinite(out["epsilon"]) and out["method"] == "pld":
        raise CliError(f"the PLD accountant cannot bound ε at δ = {out['delta']:g} here: the "
                       "tail mass its grid drops (up to 1e-15 per run) adds up to more than δ; "
                       "use --method rdp")
    if not math.isfinite(out["epsilon"]):
        raise CliError(f"ε is unbounded at δ = {out['delta']:g} for these parameters")
    if args.json:
        print(json.dumps(out, indent=2, allow_nan=False))
    else:
        print(_summary(out))
    return EXIT_OK
