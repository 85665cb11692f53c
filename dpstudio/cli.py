"""The ``dpstudio`` command line: the GUI by default, headless commands by name.

    dpstudio [DATASET] [--screenshot FILE.png] [--size 1400x900] [--view analysis|data|...]
    dpstudio --version | --install-desktop
    dpstudio query DATA --column C --query mean --bounds 0,100 --mechanism laplace --epsilon 1
    dpstudio compare DATA --column C --query mean --bounds 0,100 --epsilon 1 [--json]
    dpstudio mechanisms [--json]
    dpstudio tradeoff --mechanism gaussian --sigma 1 [--compose 10] [--json]
    dpstudio account --mechanism subsampled-gaussian --sigma 1.1 --sample-rate 0.01 ...
    dpstudio amplify --epsilon0 2 --n 10000 --delta 1e-6 [--bound fmt21|ebh19] [--json]

Errors are one line on stderr with exit code 2; no tracebacks for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from dpstudio.commands._common import EXIT_OK, EXIT_USAGE, CliError, Parser, fail

__all__ = ["COMMANDS", "main"]

# Command name → module in dpstudio.commands with parser() and run(argv).
COMMANDS = {
    "query": "query",
    "train": "train",
    "compare": "compare",
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
    p.add_argument("dataset", nargs="?", help="dataset to open, or sample:NAME for a bundled "
                   "sample (default: sample:survey)")
    p.add_argument("--screenshot", metavar="FILE.png",
                   help="render the main window offscreen to a PNG and exit")
    p.add_argument("--size", type=_size, default=(1400, 900), metavar="WxH",
                   help="window size for --screenshot (default 1400x900)")
    p.add_argument("--view", choices=("analysis", "data", "ledger", "utility", "tradeoff",
                                      "models"),
                   help="view to render with --screenshot (default analysis)")
    p.add_argument("--version", action="store_true",
                   help="print the version, the release randomness source and the versions "
                   "of Qt, numpy and Python, and exit")
    p.add_argument("--install-desktop", action="store_true",
                   help="add DP Studio to this user's application menu (launcher, icons, "
                   "the .dpstudio file type) under ~/.local/share, and exit")
    return p


# ---------------------------------------------------------------------------- commands


def _cmd_gui(argv: Sequence[str]) -> int:
    args = _gui_parser().parse_args(argv)
    if args.version:
        from dpstudio.about import about_lines, version_line

        print(version_line())
        for line in about_lines():
            print(f"  {line}")
        return EXIT_OK
    if args.install_desktop:
        from dpstudio.desktop import install_desktop

        written = install_desktop()
        print(f"DP Studio is in this user's application menu ({len(written)} files):")
        for path in written:
            print(f"  {path}")
        return EXIT_OK
    from dpstudio.data.samples import data_argument
    from dpstudio.ui.app import run_app

    dataset = data_argument(args.dataset) if args.dataset is not None else None
    return run_app(dataset, screenshot=args.screenshot, size=args.size, view=args.view)


def _pipe_closed() -> int:
    """The reader of our output went away (``dpstudio ledger --json | head``): not an
    error of ours. As the Python documentation advises (signal module, "Note on
    SIGPIPE"), point stdout at devnull so that the interpreter's final flush cannot
    fail again, and exit quietly with code 1."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (embedded, tests)
        pass
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``dpstudio``; returns the exit code.

    Called without ``argv`` it is the program itself (the ``dpstudio`` script, ``python -m
    dpstudio``): it then ends the process with :func:`_end_process` and never returns.
    """
    code = _run(argv)
    if argv is None:
        _end_process(code)
    return code


def _end_process(code: int) -> None:
    """Flush our output and end the process at once, skipping interpreter finalization.

    Why: loading a table starts pyarrow's C++ thread pools (its CPU pool and its IO pool,
    ``std::thread`` workers that Python never joins). At a normal exit they are torn down
    by C++ static destructors that race the still-running workers; on a loaded machine a
    worker is now and then still joinable when its ``std::thread`` is destroyed, and the
    C++ runtime aborts: "terminate called without an active exception", SIGABRT, exit
    134, after the command had done all its work (about 1 run in 150 under load; the
    same race as apache/arrow#34314). Every file a command writes is closed (and
    fsynced) before it returns, and a project's ledger is SQLite, durable at each
    commit, so nothing is left for finalization to do but that teardown.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            code = _pipe_closed() if stream is sys.stdout else code
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def _run(argv: Sequence[str] | None) -> int:
    from dpstudio.data.errors import DataError
    from dpstudio.engine.errors import EngineError

    argv = list(sys.argv[1:] if argv is None else argv)
    name = COMMANDS.get(argv[0]) if argv else None
    try:
        if name is not None:
            code = importlib.import_module(f"dpstudio.commands.{name}").run(argv[1:])
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
            return code
        return _cmd_gui(argv)
    except BrokenPipeError:
        return _pipe_closed()
    except (EngineError, DataError, CliError) as err:
        return fail(str(err))
    except SystemExit as stop:  # argparse's own exits (--help, usage errors)
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        return fail("interrupted")
    except OSError as err:
        return fail(f"{err.strerror or err}: {err.filename}" if err.filename else str(err))
