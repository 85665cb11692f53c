"""What every command shares: one-line errors and an argparse that exits with code 2."""

from __future__ import annotations

import argparse
import sys

__all__ = ["EXIT_OK", "EXIT_USAGE", "CliError", "Parser", "fail"]

EXIT_OK, EXIT_USAGE = 0, 2


class CliError(Exception):
    """A user-facing one-line error; exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line, prefixed with the program name."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def fail(message: str) -> int:
    """Print ``dpstudio: error: message`` on stderr; return exit code 2."""
    print(f"dpstudio: error: {message}", file=sys.stderr)
    return EXIT_USAGE
