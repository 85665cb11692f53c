"""Errors the engine raises for the user to read: one line, no traceback needed."""

from __future__ import annotations

__all__ = ["EngineError", "ParameterError", "QueryError"]


class EngineError(ValueError):
    """Base of the engine's user-facing errors; ``str(err)`` is a one-line message.

    Subclasses :class:`ValueError`, so callers that catch bad values catch these too.

    Parameters
    ----------
    message : str
        The one line shown to the user.
    """


class ParameterError(EngineError):
    """A privacy or mechanism parameter is out of range (ε ≤ 0, δ ∉ [0,1), …).

    Parameters
    ----------
    message : str
        The one line shown to the user, naming the parameter and the value given.
    """


class QueryError(EngineError):
    """A query cannot run on the given values or declaration (reversed bounds, empty column…).

    Parameters
    ----------
    message : str
        The one line shown to the user.
    """
