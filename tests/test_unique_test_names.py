"""Test modules have unique basenames: pytest imports them by basename (no packages under
tests/), so two files of the same name stop the whole collection."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_name():
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    twice = sorted(name for name, count in names.items() if count > 1)
    assert twice == [], f"test modules sharing a name (rename one): {', '.join(twice)}"
