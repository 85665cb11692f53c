"""``dpstudio mechanisms``: list the mechanism registry."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from dpstudio.commands._common import EXIT_OK, Parser

__all__ = ["parser", "run"]


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="dpstudio mechanisms", description="List the mechanism registry.")
    p.add_argument("--trust-model", help="only mechanisms of this trust model")
    p.add_argument("--json", action="store_true", help="print JSON")
    return p


def run(argv: Sequence[str]) -> int:
    from dpstudio.engine.registry import REGISTRY

    args = parser().parse_args(argv)
    entries = [m for m in REGISTRY
               if args.trust_model is None or args.trust_model in m.trust_models]
    if args.json:
        print(json.dumps([m.to_dict() for m in entries], indent=2, ensure_ascii=False))
        return EXIT_OK
    for m in entries:
        print(f"{m.name:<18} [{', '.join(m.trust_models)}] {m.description}")
        for p in m.params:
            unit = f" {p.unit}" if p.unit else ""
            print(f"{'':<20}--{p.name} ({p.kind}, default {p.default}{unit}): {p.help}")
    return EXIT_OK


