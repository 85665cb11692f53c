"""Errors of the project layer; ``str(err)`` is one line for the user."""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "DatasetChangedError",
    "LedgerTamperedError",
    "NotAProjectError",
    "ProjectBusyError",
    "ProjectError",
    "SpecError",
]


class ProjectError(Exception):
    """A project, spec or release problem the user can act on (exit code 2 on the CLI)."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).splitlines()).strip())


class NotAProjectError(ProjectError):
    """The file is not a DP Studio project (or is from a newer DP Studio)."""


class SpecError(ProjectError):
    """A release spec file is missing, malformed or inconsistent."""


class DatasetChangedError(ProjectError):
    """The dataset's bytes differ from the ones it was registered with."""


class DatasetVersionError(DatasetChangedError):
    """The file looks like a version of a registered dataset: the analyst must say whose
    budget it spends. ``budget_of``: the id whose budget it would share; ``registered``:
    the registered dataset's id and name; ``separable``: whether declaring it to hold
    other people (a budget of its own) is offered (not for the registered path itself)."""

    def __init__(self, message: str, *, budget_of: int, registered: tuple[int, str],
                 separable: bool) -> None:
        super().__init__(message)
        self.budget_of, self.registered, self.separable = budget_of, registered, separable


class LedgerTamperedError(ProjectError):
    """The ledger was changed outside DP Studio (rows deleted, ε lowered, a budget raised…);
    releases are refused until the change is acknowledged. ``problems``: one line each."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class ProjectBusyError(ProjectError):
    """Another process is releasing from this project right now."""


class BudgetExceededError(ProjectError):
    """The release would exceed the dataset's privacy budget (exit code 3 on the CLI).

    ``remaining_epsilon`` and ``remaining_delta`` are the exact amounts left (Decimal).
    """

    def __init__(self, message: str, remaining_epsilon=None, remaining_delta=None) -> None:
        super().__init__(message)
        self.remaining_epsilon = remaining_epsilon
        self.remaining_delta = remaining_delta
