"""The ``dpstudio`` command line: the GUI by default, headless commands by name.

    dpstudio [DATASET] [--screenshot FILE.png] [--size 1400x900] [--view analysis|data|...]
    dpstudio query DATA --column C --query mean --bounds 0,100 --mechanism laplace --epsilon 1
    dpstudio mechanisms [--json]
    dpstudio tradeoff --mechanism gaussian --sigma 1 [--compose 10] [--json]
    dpstudio account --mechanism subsampled-gaussian --sigma 1.1 --sample-rate 0.01 ...
    dpstudio amplify --epsilon0 2 --n 10000 --delta 1e-6 [--bound fmt21|ebh19] [--json]

Errors are one line on stderr with exit code 2; no tracebacks for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from dpstudio.commands._common import EXIT_OK, EXIT_USAGE, CliError, Parser, fail

__all__ = ["COMMANDS", "main"]

# Command name → module in dpstudio.commands with parser() and run(argv).
COMMANDS = {
    "query": "query",
    "mechanisms": "mechanisms",
    "account": "account",
    "tradeoff": "tradeoff",
    "amplify": "amplify",
    "release": "release",
    "ledger": "ledger",
    "project": "project",
    "verify": "verify",
}


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected WIDTHxHEIGHT (e.g. 1400x900), got {text!r}") from None
    if not (100 <= w <= 10000 and 100 <= h <= 10000):
        raise argparse.ArgumentTypeError(f"size out of range: {text!r}")
    return w, h


def _gui_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="dpstudio",
        description="DP Studio: differential privacy across trust models. Starts the "
        "application; headless commands: " + ", ".join(COMMANDS) + " (dpstudio COMMAND -h).",
    )
    p.add_argument("dataset", nargs="?", help="dataset to open (default: the survey sample)")
    p.add_argument("--screenshot", metavar="FILE.png",
                   help="render the main window offscreen to a PNG and exit")
    p.add_argument("--size", type=_size, default=(1400, 900), metavar="WxH",
                   help="window size for --screenshot (default 1400x900)")
    p.add_argument("--view", choices=("analysis", "data", "ledger", "utility", "tradeoff"),
                   help="view to render with --screenshot (default analysis)")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


# ---------------------------------------------------------------------------- commands


def _cmd_gui(argv: Sequence[str]) -> int:
    args = _gui_parser().parse_args(argv)
    if args.version:
        from dpstudio import __version__

        print(f"dpstudio {__version__}")
        return EXIT_OK
    from dpstudio.ui.app import run_app

    return run_app(args.dataset, screenshot=args.screenshot, size=args.size, view=args.view)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``dpstudio``; returns the exit code."""
    from dpstudio.data.errors import DataError
    from dpstudio.engine.errors import EngineError

    argv = list(sys.argv[1:] if argv is None else argv)
    name = COMMANDS.get(argv[0]) if argv else None
    try:
        if name is not None:
            return importlib.import_module(f"dpstudio.commands.{name}").run(argv[1:])
        return _cmd_gui(argv)
    except (EngineError, DataError, CliError) as err:
        return fail(str(err))
    except SystemExit as stop:  # argparse's own exits (--help, usage errors)
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        return fail("interrupted")
    except OSError as err:
        return fail(f"{err.strerror or err}: {err.filename}" if err.filename else str(err))
