"""A user-level release's manifest section and report sentence, and their check.

A release on a dataset with a declared identifier column protects people, not rows
(:mod:`dpstudio.engine.contribution`): its manifest says so three times — the query's and
the privacy section's ``relation`` ("add or remove one person (up to k rows)") and a
``contributions`` section ``{"identifier": ..., "max_rows": k}``. :func:`contributions_problems`
checks that the three agree, so that ``dpstudio verify`` fails a manifest whose k was
edited in one place (the manifest is not among the files it hashes). The number of rows
dropped is in none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpstudio.engine.contribution import person_relation

__all__ = ["contributions_problems", "contributions_section", "contributions_sentence"]

#: What every relation of a user-level release starts with.
_PERSON = "add or remove one person"


def contributions_section(identifier: str | None, max_rows: int | None
                          ) -> dict[str, Any] | None:
    """The manifest's ``contributions`` section, or None for a row-level release."""
    if identifier is None or max_rows is None:
        return None
    return {"identifier": str(identifier), "max_rows": int(max_rows)}


def contributions_sentence(max_rows: int) -> str:
    """The report's sentence on how each person's rows were bounded (never how many)."""
    k = int(max_rows)
    return (f"Each person contributes at most {k} row{'s' if k != 1 else ''}; rows beyond "
            f"{k} were dropped at random before anything was computed; how many were "
            "dropped is not released.")


def contributions_problems(manifest: Mapping[str, Any]) -> list[str]:
    """Where a manifest's unit of privacy disagrees with itself (empty: it agrees).

    The ``contributions`` section's ``max_rows`` must be a whole number ≥ 1 and both
    relations must read ``person_relation(max_rows)``; a relation naming a person
    without the section (or the section beside a row-level relation) is a problem too.
    """
    section = manifest.get("contributions")
    relations = {where: (manifest.get(where) or {}).get("relation")
                 for where in ("query", "privacy")}
    if section is None:
        return [f"{where}.relation says {rel!r} but the manifest has no contributions "
                "section" for where, rel in relations.items()
                if isinstance(rel, str) and rel.startswith(_PERSON)]
    k = section.get("max_rows") if isinstance(section, Mapping) else None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        return [f"contributions.max_rows is {k!r}, not a whole number of rows ≥ 1"]
    if not isinstance(section.get("identifier"), str) or not section["identifier"]:
        return ["contributions.identifier names no column"]
    expected = person_relation(k)
    return [f"{where}.relation says {rel!r} but contributions.max_rows is {k} "
            f"({expected!r})" for where, rel in relations.items() if rel != expected]
