"""``dpstudio project init``: create a project file with default budgets."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from dpstudio.commands._common import EXIT_OK, EXIT_USAGE, Parser, fail

__all__ = ["parser", "run"]


def parser() -> argparse.ArgumentParser:
    from dpstudio.engine.queries import RELATIONS
    from dpstudio.project.accountant import ACCOUNTANTS

    p = Parser(
        prog="dpstudio project",
        description="Create and inspect DP Studio project files (.dpstudio).",
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    init = sub.add_parser(
        "init", help="create a project with a default budget for each dataset",
        description="Create a project file. Each dataset's first release registers it with "
        "this default total budget (a spec's [budget] table overrides it).")
    init.add_argument("project", metavar="P.dpstudio", help="project file to create")
    init.add_argument("--epsilon", type=float, help="default total ε per dataset")
    init.add_argument("--delta", type=float, default=None,
                      help="default total δ per dataset (default 0)")
    init.add_argument("--relation", choices=RELATIONS, default="add-remove",
                      help="neighbouring relation of the budgets (default add-remove)")
    init.add_argument("--accountant", choices=tuple(ACCOUNTANTS), default="basic",
                      help="how each dataset's releases compose against its budget: basic "
                      "(ε and δ add up), advanced (Kairouz, Oh & Viswanath's optimal "
                      "composition), zcdp (ρ adds up for Gaussian releases) or pld "
                      "(privacy-loss distributions, the tightest); fixed for a dataset from "
                      "its first release (default basic)")
    return p


def run(argv: Sequence[str]) -> int:
    from dpstudio.project import Project, ProjectError

    p = parser()
    args = p.parse_args(argv)
    if args.action != "init":
        p.print_usage()
        return EXIT_USAGE
    try:
        with Project.create(args.project, epsilon=args.epsilon, delta=args.delta,
                            relation=args.relation, accountant=args.accountant) as project:
            d = project.defaults()
    except ProjectError as err:
        return fail(str(err))
    if d["epsilon"] is None:
        print(f"created {args.project} (no default budget: give each dataset's first release "
              "a [budget] table)")
    else:
        print(f"created {args.project}: default budget ε = {d['epsilon']}, δ = {d['delta']} per "
              f"dataset ({d['relation']}, {d['accountant']} accountant)")
    return EXIT_OK
