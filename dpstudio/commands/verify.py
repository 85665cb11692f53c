"""``dpstudio verify``: re-check a release's files against its manifest's SHA-256."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from dpstudio.commands._common import EXIT_OK, Parser, fail

__all__ = ["EXIT_MISMATCH", "parser", "run"]

EXIT_MISMATCH = 1


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="dpstudio verify",
               description="Check that every file a release manifest lists is present and "
               "unaltered (size and SHA-256). Exit 0 if so, 1 if not, 2 for a bad manifest.")
    p.add_argument("manifest", metavar="MANIFEST.json", help="a release's .manifest.json")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(argv: Sequence[str]) -> int:
    from dpstudio.export import ExportError, verify_manifest

    args = parser().parse_args(argv)
    try:
        check = verify_manifest(args.manifest)
    except ExportError as err:
        return fail(str(err))
    from dpstudio.export.manifest_contributions import contributions_problems

    # The manifest is not among the files it hashes: its unit of privacy must agree with
    # itself (a k edited in one place fails).
    check.problems += contributions_problems(check.manifest)
    check.ok = not check.problems
    if args.json:
        print(json.dumps({"manifest": str(check.path), "ok": check.ok,
                          "checked": check.checked, "problems": check.problems}, indent=2))
    else:
        for name in check.checked:
            print(f"ok        {name}")
        for problem in check.problems:
            print(f"FAILED    {problem}")
    return EXIT_OK if check.ok else EXIT_MISMATCH
