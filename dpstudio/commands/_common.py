"""What every command shares: one-line errors and an argparse that exits with code 2."""

from __future__ import annotations

import argparse
import sys

__all__ = ["EXIT_BUDGET", "EXIT_OK", "EXIT_USAGE", "CliError", "Parser", "fail"]

EXIT_OK, EXIT_USAGE = 0, 2
#: A release the budget cannot pay for: nothing drawn, charged or written.
EXIT_BUDGET = 3


class CliError(Exception):
    """A user-facing one-line error; exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line, prefixed with the program name."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {_capped(message)}\n")


def fail(message: str) -> int:
    """Print ``dpstudio: error: message`` on stderr; return exit code 2.

    The message is kept to one line of at most ``MAX_MESSAGE`` characters, whatever user
    text (a 100,000-character column name, an argument) it echoes.
    """
    print(f"dpstudio: error: {_capped(message)}", file=sys.stderr)
    return EXIT_USAGE


def _capped(message: object) -> str:
    # Imported here: dpstudio.data pulls in pandas, which a successful command may not need.
    from dpstudio.data.errors import cap_message, one_line

    return cap_message(one_line(message).strip())  # one line, capped (the one rule)
