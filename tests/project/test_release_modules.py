"""The release modules' structure: one charging path, and no import circle through the
transaction module (dpstudio/project/release.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import dpstudio.project

PROJECT = Path(dpstudio.project.__file__).parent
HELPERS = sorted(p for p in PROJECT.glob("release_*.py"))


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_the_helpers_of_a_release_never_import_the_transaction_module():
    # release.py imports release_model and release_plan; either importing it back (even
    # inside a function) is the circle this split removed.
    back = {p.name for p in HELPERS
            if "dpstudio.project.release" in _imported_modules(p)}
    assert back == set()
    assert {p.name for p in HELPERS} >= {"release_charge.py", "release_checks.py",
                                         "release_model.py", "release_output.py",
                                         "release_plan.py", "release_prepare.py"}


def test_every_release_is_charged_through_one_module():
    # The charge's ledger statements (register the dataset, audit the chain, record the
    # release as pending, record its files) are written once, in release_charge.py: the
    # statistic's, the model's and the plan's charge call them.
    statements = ("._insert_dataset(", "._audit_locked(", "INSERT INTO releases",
                  "INSERT INTO release_files", "_chain.record_release(")
    for statement in statements:
        where = [p.name for p in [PROJECT / "release.py", *HELPERS]
                 if statement in p.read_text(encoding="utf-8")]
        assert where == ["release_charge.py"], (statement, where)


def test_the_transaction_module_stays_small():
    for path in [PROJECT / "release.py", *HELPERS]:
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines < 600, (path.name, lines)  # small modules named for what they hold
