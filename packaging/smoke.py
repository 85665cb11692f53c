"""Smoke test of the frozen application: what ``make package-smoke`` and ``.ci/run`` run.

    .venv/bin/python packaging/smoke.py [dist/dpstudio] [--timeout 180]

Starts the bundle's executable as a user would, from an empty temporary folder with a
clean environment (no virtual environment, no PYTHONPATH, no source tree on the way), and
checks:

1. ``dpstudio --version`` exits 0 and prints ``dpstudio <version>`` (this checkout's);
2. ``dpstudio --screenshot shot.png`` (offscreen Qt) writes a PNG of a rendered window:
   the size asked for, and not one flat colour;
3. ``dpstudio query`` on a Parquet copy of the bundled survey sample prints a released
   mean (numpy, scipy, pandas and pyarrow's Parquet reader all work frozen, which the
   excludes in ``dpstudio.spec`` could otherwise break unnoticed).

Each run is time-bounded. Exit status 0 when all pass; 1 with the failed check's output.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE = (800, 600)


class SmokeFailure(Exception):
    """A check of the frozen application failed; the message says which and why."""


def clean_env(home: Path) -> dict[str, str]:
    """The environment a desktop session would give the program, and nothing of ours.

    Parameters
    ----------
    home : Path
        A temporary folder used as HOME, so that settings and caches written by the run
        do not touch the user's.

    Returns
    -------
    dict
        PATH with only the system folders, offscreen Qt, HOME, and the locale.
    """
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "QT_QPA_PLATFORM": "offscreen",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    if sys.platform == "win32":  # Windows needs its system folders to start anything
        env.update({k: os.environ[k] for k in ("SYSTEMROOT", "TEMP", "TMP") if k in os.environ})
    return env


def run(exe: Path, args: list[str], cwd: Path, env: dict[str, str],
        timeout: float) -> subprocess.CompletedProcess[str]:
    """Run the frozen executable once, time-bounded; fail on a non-zero exit.

    Parameters
    ----------
    exe : Path
        The bundle's executable.
    args : list of str
        Its arguments.
    cwd : Path
        The folder to run in.
    env : dict
        The environment (see :func:`clean_env`).
    timeout : float
        Seconds before the run is killed and the check fails.

    Returns
    -------
    subprocess.CompletedProcess
        The finished run, with its text output.
    """
    shown = " ".join(["dpstudio", *args])
    started = time.monotonic()
    try:
        done = subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise SmokeFailure(f"{shown}: no answer within {timeout:.0f} s") from None
    if done.returncode != 0:
        raise SmokeFailure(f"{shown}: exit {done.returncode}\n{done.stdout}{done.stderr}")
    print(f"ok  {shown}  ({time.monotonic() - started:.1f} s)")
    return done


def check_png(path: Path, size: tuple[int, int]) -> None:
    """Fail unless ``path`` is a PNG of ``size`` with more than a few colours.

    Parameters
    ----------
    path : Path
        The screenshot.
    size : tuple of int
        The (width, height) it was asked for.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QImage  # the build environment's Qt, only to read the file

    image = QImage(str(path))
    if image.isNull():
        raise SmokeFailure(f"{path.name} is not a readable image")
    if (image.width(), image.height()) != size:
        raise SmokeFailure(f"{path.name} is {image.width()}×{image.height()}, not "
                           f"{size[0]}×{size[1]}")
    # A window shows text, plots and controls: many colours. A blank or failed render is
    # one flat colour (or two, with a border). Sample a grid rather than every pixel.
    colours = {image.pixel(x, y) for x in range(0, size[0], 7) for y in range(0, size[1], 7)}
    if len(colours) < 16:
        raise SmokeFailure(f"{path.name} has {len(colours)} colours: not a rendered window")
    print(f"ok  {path.name}: {size[0]}×{size[1]}, {len(colours)} colours sampled")


def write_parquet(folder: Path) -> Path:
    """A Parquet copy of the bundled survey sample, with its schema sidecar, in ``folder``.

    Parameters
    ----------
    folder : Path
        Where to write ``survey.parquet`` and ``survey.parquet.schema.json``.

    Returns
    -------
    Path
        The Parquet file.
    """
    import pandas as pd

    samples = ROOT / "dpstudio" / "resources" / "samples"
    target = folder / "survey.parquet"
    pd.read_csv(samples / "survey.csv").to_parquet(target)
    sidecar = (samples / "survey.csv.schema.json").read_text(encoding="utf-8")
    target.with_name(target.name + ".schema.json").write_text(sidecar, encoding="utf-8")
    return target


def smoke(bundle: Path, timeout: float) -> None:
    """Run every check against ``bundle``; raise :class:`SmokeFailure` at the first miss.

    Parameters
    ----------
    bundle : Path
        The one-folder application (``dist/dpstudio``).
    timeout : float
        Seconds allowed for each run of the executable.
    """
    exe = bundle / ("dpstudio.exe" if sys.platform == "win32" else "dpstudio")
    if not exe.is_file():
        raise SmokeFailure(f"no executable at {exe}: run `make package` first")
    sys.path.insert(0, str(ROOT))
    from dpstudio import __version__

    with tempfile.TemporaryDirectory(prefix="dpstudio-smoke-") as tmp:
        work, home = Path(tmp) / "work", Path(tmp) / "home"
        work.mkdir()
        home.mkdir()
        env = clean_env(home)

        out = run(exe, ["--version"], work, env, timeout).stdout
        if f"dpstudio {__version__}" not in out:
            raise SmokeFailure(f"dpstudio --version printed {out!r}, expected "
                               f"'dpstudio {__version__}'")

        shot = work / "shot.png"
        run(exe, ["--screenshot", shot.name, "--size", f"{SIZE[0]}x{SIZE[1]}"], work, env,
            timeout)
        if not shot.is_file():
            raise SmokeFailure("dpstudio --screenshot wrote no file")
        check_png(shot, SIZE)

        data = write_parquet(work)
        out = run(exe, ["query", data.name, "--column", "age", "--query", "mean",
                        "--mechanism", "laplace", "--epsilon", "1", "--json"],
                  work, env, timeout).stdout
        try:
            value = float(json.loads(out)["value"])
        except (ValueError, KeyError, TypeError):
            raise SmokeFailure(f"dpstudio query printed no released value:\n{out}") from None
        if not math.isfinite(value):
            raise SmokeFailure(f"dpstudio query released {value}")
        print(f"ok  released mean of age: {value:.2f}")


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run the checks, report; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", nargs="?", type=Path, default=ROOT / "dist" / "dpstudio",
                        help="the one-folder application (default: dist/dpstudio)")
    parser.add_argument("--timeout", type=float, default=180,
                        help="seconds allowed for each run (default 180)")
    args = parser.parse_args(argv)
    try:
        smoke(args.bundle.resolve(), args.timeout)  # the runs happen in another folder
    except SmokeFailure as failure:
        print(f"FAIL {failure}", file=sys.stderr)
        return 1
    print(f"Smoke test passed: {args.bundle}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
