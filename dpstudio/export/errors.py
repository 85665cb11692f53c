"""The export layer's one user-facing error."""

from __future__ import annotations


class ExportError(Exception):
    """An export could not be produced or checked; ``str(err)`` is one line for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).splitlines()).strip())
