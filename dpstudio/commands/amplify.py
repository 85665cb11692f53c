"""``dpstudio amplify``: the central (ε, δ) of n shuffled ε₀-LDP reports.

    dpstudio amplify --epsilon0 2 --n 10000 --delta 1e-6 [--bound fmt21|ebh19] [--json]
    dpstudio amplify --target-epsilon 0.5 --n 10000 --delta 1e-6 [--bound ...] [--json]

The first form prints the amplified ε; the second the largest local ε₀ whose amplified
ε meets the target. JSON keys: epsilon, delta, epsilon0, n, bound (and target_epsilon for
the second form).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence

from dpstudio.commands._common import EXIT_OK, Parser

__all__ = ["parser", "run"]


def _count(text: str) -> int:
    """A number of users: 10000 or 1e4, but a whole number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of users, got {text!r}"
                                         ) from None
    if not math.isfinite(value) or value != math.floor(value):
        raise argparse.ArgumentTypeError(f"expected a whole number of users, got {text!r}")
    return int(value)


def parser() -> argparse.ArgumentParser:
    from dpstudio.engine.shuffle.amplification import BOUNDS

    p = Parser(
        prog="dpstudio amplify",
        description="Privacy amplification by shuffling: n users each apply an ε₀-LDP "
        "randomizer and a trusted shuffler permutes their reports; prints the central "
        "(ε, δ) of the shuffled reports (or, with --target-epsilon, the largest ε₀).",
        epilog="Bounds: fmt21 (Feldman, McMillan & Talwar 2021, numerical; any ε₀, n ≥ 2, "
        "δ ≥ 1e-12; the default) and ebh19 (Erlingsson et al. 2019, closed form "
        "12·ε₀·√(ln(1/δ)/n); only for ε₀ < 1/2, n ≥ 1000, δ < 0.01).",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--epsilon0", type=float, help="local ε₀ > 0 of each user's randomizer")
    what.add_argument("--target-epsilon", type=float,
                      help="central ε to meet: print the largest local ε₀ that meets it")
    p.add_argument("--n", type=_count, required=True, help="number of users n ≥ 2")
    p.add_argument("--delta", type=float, required=True, help="central δ in (0, 1)")
    p.add_argument("--bound", choices=BOUNDS, default="fmt21",
                   help="amplification bound (default fmt21)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(argv: Sequence[str]) -> int:
    from dpstudio.engine.shuffle.amplification import largest_local_epsilon, shuffle_epsilon

    args = parser().parse_args(argv)
    if args.target_epsilon is not None:
        eps0 = largest_local_epsilon(args.target_epsilon, args.n, args.delta, args.bound)
        eps, delta = shuffle_epsilon(eps0, args.n, args.delta, args.bound)
        out = {"epsilon": eps, "delta": delta, "epsilon0": eps0, "n": args.n,
               "bound": args.bound, "target_epsilon": args.target_epsilon}
    else:
        eps, delta = shuffle_epsilon(args.epsilon0, args.n, args.delta, args.bound)
        out = {"epsilon": eps, "delta": delta, "epsilon0": args.epsilon0, "n": args.n,
               "bound": args.bound}
    if args.json:
        print(json.dumps(out, indent=2, allow_nan=False))
        return EXIT_OK
    if args.target_epsilon is not None:
        print(f"largest local ε₀ = {out['epsilon0']:.6g} for central ε ≤ "
              f"{args.target_epsilon:g} at δ = {delta:g} with n = {args.n} users")
    print(f"n = {args.n} shuffled ε₀ = {out['epsilon0']:.6g} reports are "
          f"(ε = {eps:.6g}, δ = {delta:g})-DP  [bound: {args.bound}]")
    return EXIT_OK
