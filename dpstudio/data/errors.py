"""The one error type the data layer raises for problems with the user's files."""

from __future__ import annotations


class DataError(Exception):
    """A problem with the user's data, described in one line they can act on.

    The message says what is wrong and where (file, line, column), e.g.
    ``"survey.csv: line 14 has 7 fields, expected 5"``. It is shown to the user
    as is, so it never contains a traceback or a newline.
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).splitlines()).strip())

    @property
    def message(self) -> str:
        return str(self)
