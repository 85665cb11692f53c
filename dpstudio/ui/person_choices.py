"""The session's choices made user-level when the schema declares an identifier column.

Releases on such a dataset protect people (each person's rows beyond the declared k are
dropped at random, every noise k × a row's), so the preview and the curves must show the
user-level numbers, not far narrower per-row ones: the snapshot the jobs get is then a
:class:`~dpstudio.analysis.contribution.PersonChoices` carrying each row's identifier.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from dpstudio.analysis.choices import Choices
from dpstudio.analysis.contribution import PersonChoices, bounds_people, declared_identifier
from dpstudio.data.columns import category_column
from dpstudio.data.errors import DataError
from dpstudio.data.schema import ColumnType

__all__ = ["identifier_problem", "is_identifier", "person_choices"]

#: The identifier column as read, by name, with the frame it was read from: read once per
#: dataset, not per job.
_IDS: dict[str, tuple[Any, Any]] = {}


def is_identifier(spec: Any) -> bool:
    """Whether a column declaration identifies a person (never a column to analyse)."""
    return getattr(spec, "type", None) is ColumnType.IDENTIFIER


def _declared(session: Any) -> tuple[str | None, int | None]:
    name = declared_identifier(session.schema)
    if name is None:
        return None, None
    return name, session.schema[name].max_rows


def identifier_problem(session: Any) -> str | None:
    """Why a central preview cannot be drawn user-level yet (k undeclared), or None."""
    name, k = _declared(session)
    if name is None or k is not None or not bounds_people(session.trust_model):
        return None
    return (f"declare the rows per person of '{name}' (Columns panel): releases on this "
            "dataset protect people, and their noise follows it")


def person_choices(session: Any, choices: Choices) -> Choices:
    """``choices`` as :class:`PersonChoices` on a dataset with a declared identifier and
    k (central model); unchanged otherwise or when the identifier cannot be read."""
    name, k = _declared(session)
    if name is None or k is None or not bounds_people(choices.trust_model):
        return choices
    frame = getattr(session.dataset, "frame", None)
    if frame is None:
        return choices
    cached = _IDS.get(name)
    if cached is not None and cached[0] is frame:  # the frame held: its id is not reused
        ids = cached[1]
    else:
        try:
            ids = category_column(frame, name)
        except (DataError, KeyError):
            return choices
        _IDS.clear()  # one dataset at a time: the previous one's column is let go
        _IDS[name] = (frame, ids)
    base = {f.name: getattr(choices, f.name) for f in fields(Choices)}
    return PersonChoices(**base, identifier=name, max_rows=int(k), ids=ids)
