"""The one error type the data layer raises for problems with the user's files, and the
helper that keeps user text echoed in any message short and on one line."""

from __future__ import annotations

import re

__all__ = ["MAX_ECHO", "MAX_MESSAGE", "DataError", "cap_message", "one_line", "shorten"]

#: Characters of one piece of user text (a column name, a value, a path) echoed in a
#: message. A file whose header is one 100,000-character name must not give a 100 KB
#: "one-line" error.
MAX_ECHO = 80
#: Characters of a whole one-line message, the last resort for texts nobody shortened.
MAX_MESSAGE = 1000

# Line breaks and other control characters would break the one-line promise (and a
# terminal can be steered by escape sequences): each shows as one space.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: object) -> str:
    """``text`` as a string with every line break or control character made a space."""
    return _CONTROL.sub(" ", str(text))


def shorten(text: object, limit: int = MAX_ECHO) -> str:
    """User text as echoed in a one-line message: on one line, at most ``limit``
    characters (plus a note of the full length when cut).

    Parameters
    ----------
    text : the user's text (any object; ``str()`` of it is shown).
    limit : most characters kept, ≥ 2.

    Returns
    -------
    str
        ``text`` itself when short; else its start, ``…`` and ``(N characters)``.

    Examples
    --------
    >>> shorten("x" * 100_000, 10)
    'xxxxxxxxx… (100,000 characters)'
    """
    s = one_line(text)
    if len(s) <= limit:
        return s
    return f"{s[:max(limit - 1, 1)]}… ({len(s):,} characters)"


def cap_message(message: str, limit: int = MAX_MESSAGE) -> str:
    """A whole message capped at ``limit``: its start and its end, with the middle cut
    (the end usually says what to do). Messages anywhere in the program use this one rule."""
    if len(message) <= limit:
        return message
    tail = limit // 4
    return f"{message[:limit - tail - 3]} … {message[-tail:]}"


class DataError(Exception):
    """A problem with the user's data, described in one line they can act on.

    The message says what is wrong and where (file, line, column), e.g.
    ``"survey.csv: line 14 has 7 fields, expected 5"``. It is shown to the user
    as is, so it never contains a traceback or a newline, and never more than
    :data:`MAX_MESSAGE` characters.
    """

    def __init__(self, message: str) -> None:
        super().__init__(cap_message(one_line(message).strip()))

    @property
    def message(self) -> str:
        return str(self)
