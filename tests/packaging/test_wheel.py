"""The wheel works outside the checkout: built, installed in a fresh virtual environment,
and run from a folder that has nothing of the source tree.

Once per session the sources are copied to a temporary folder and ``python -m build
--no-isolation`` makes the sdist and then the wheel *from the sdist* (so the sdist holds
what the wheel needs); offline and a few seconds. The copy keeps ``build/`` and
``*.egg-info`` out of the checkout, which other runs may be using at the same time.

The wheel goes into a new virtual environment with ``--no-deps``. Its dependencies
(numpy, PySide6, …) are made visible without downloading them by a ``.pth`` line naming
this environment's site-packages. A folder added by a ``.pth`` line is not a site
directory, so the ``.pth`` files inside it — among them the editable install's hook that
maps ``dpstudio`` to the checkout — are not processed: ``dpstudio`` is the wheel's copy,
which the first test checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import venv
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

#: The source checkout: the folder above this file that holds pyproject.toml.
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
#: What the sdist is made from (MANIFEST.in): everything else is left behind.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "Makefile",
           "dpstudio", "tests", "docs", "packaging")
SKIP = shutil.ignore_patterns("__pycache__", "*.py[cod]", "*.egg-info", "build", "dist",
                              ".pytest_cache", ".ruff_cache")
#: Each command's own limit; the whole module takes about 20 s here.
TIMEOUT_S = 120

RELEASE_SPEC = """\
schema_version = 1
dataset = "survey.csv"
column = "age"
query = "mean"
mechanism = "laplace"
epsilon = 0.5
report = true
"""


class Installed:
    """The temporary virtual environment with the wheel installed, and a folder to run in.

    Attributes
    ----------
    venv : Path
        The environment.
    work : Path
        An empty folder outside the checkout, the current folder of every command.
    env : dict
        The environment variables commands run with (offscreen Qt, a private config).
    seconds : dict
        How long building and installing took.
    """

    def __init__(self, venv_dir: Path, work: Path, env: dict[str, str],
                 seconds: dict[str, float]) -> None:
        self.venv, self.work, self.env, self.seconds = venv_dir, work, env, seconds

    def run(self, program: str, *args: str) -> subprocess.CompletedProcess:
        """Run ``program`` from the environment's ``bin`` in :attr:`work`."""
        return subprocess.run([str(self.venv / "bin" / program), *args], cwd=self.work,
                              env=self.env, capture_output=True, text=True,
                              timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)


def _site_packages(python: Path) -> Path:
    """The site-packages folder of the environment of ``python`` (asked, not guessed)."""
    out = subprocess.run([str(python), "-c", "import sysconfig; "
                          "print(sysconfig.get_path('purelib'))"],
                         capture_output=True, text=True, timeout=TIMEOUT_S, check=True)
    return Path(out.stdout.strip())


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> Installed:
    """Build the wheel, install it in a new environment; once per session."""
    base = tmp_path_factory.mktemp("wheel")
    seconds = {}

    start = time.monotonic()
    src = base / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=SKIP)
        elif path.is_file():
            shutil.copy2(path, src / name)
    dist = base / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                            str(dist), str(src)], capture_output=True, text=True,
                           timeout=TIMEOUT_S, cwd=base)
    assert built.returncode == 0, (
        "python -m build failed (the dev extra brings build and setuptools: make test "
        f"installs it):\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}")
    wheels = list(dist.glob("dpstudio-*.whl"))
    assert len(wheels) == 1 and len(list(dist.glob("dpstudio-*.tar.gz"))) == 1
    seconds["build"] = time.monotonic() - start

    start = time.monotonic()
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # pip of this environment installs into the new one (no pip bootstrap there).
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                          "--no-deps", "--no-index", "--quiet", "--disable-pip-version-check",
                          str(wheels[0])], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert pip.returncode == 0, pip.stderr
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (_site_packages(python) / "dpstudio-test-dependencies.pth").write_text(
        "".join(f"{p}\n" for p in sorted(ours)), encoding="utf-8")
    seconds["install"] = time.monotonic() - start

    work = base / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(QT_QPA_PLATFORM="offscreen", DPSTUDIO_CONFIG_DIR=str(base / "config"),
               XDG_DATA_HOME=str(base / "share"), PYTHONNOUSERSITE="1")
    env["PATH"] = os.pathsep.join([str(env_dir / "bin"), env.get("PATH", "")])
    return Installed(env_dir, work, env, seconds)


def test_dpstudio_is_the_wheels_copy(installed):
    probe = installed.run("python", "-c", "import dpstudio, dpstudio.resources as r; "
                          "print(dpstudio.__file__); print(r.resource_path('samples'))")
    assert probe.returncode == 0, probe.stderr
    module, samples = (Path(line) for line in probe.stdout.splitlines())
    assert installed.venv in module.parents and ROOT not in module.parents
    assert installed.venv in samples.parents and samples.is_dir()
    assert not (samples / "make_samples.py").exists()  # a developer's tool, not shipped
    # Every other file under dpstudio/resources is in the wheel (package-data's patterns).
    source = ROOT / "dpstudio" / "resources"
    wanted = {p.relative_to(source) for p in source.rglob("*") if p.is_file()
              and "__pycache__" not in p.parts and p.suffix != ".pyc"
              and p.name != "make_samples.py"}
    shipped = samples.parent
    assert sorted(str(p) for p in wanted if not (shipped / p).is_file()) == []


def test_screenshot_renders_the_window_on_the_bundled_sample(installed):
    start = time.monotonic()
    shot = installed.work / "shot.png"
    done = installed.run("dpstudio", "--screenshot", "shot.png", "--size", "900x600")
    assert done.returncode == 0, done.stderr
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (900, 600)
    pixels = np.frombuffer(image.convertToFormat(QImage.Format.Format_RGB32).constBits(),
                           dtype=np.uint32)[: 900 * 600]
    assert len(np.unique(pixels)) > 50  # text, the table, plots and the icon: not blank
    print(f"screenshot {time.monotonic() - start:.1f} s; {installed.seconds}")


def test_query_on_a_bundled_sample_by_name(installed):
    done = installed.run("dpstudio", "query", "sample:survey", "--column", "age", "--query",
                         "mean", "--mechanism", "laplace", "--epsilon", "1", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["query"] == "mean" and 18 <= out["ci_low"] <= out["ci_high"] <= 100


def test_release_with_a_report_writes_html_and_pdf(installed):
    start = time.monotonic()
    folder = installed.work / "release"
    folder.mkdir()
    probe = installed.run("python", "-c", "from dpstudio.data import sample_path; "
                          "print(sample_path('survey'))")
    assert probe.returncode == 0, probe.stderr
    sample = Path(probe.stdout.strip())  # the wheel's copy: the analyst's own data here
    for path in (sample, sample.with_name(sample.name + ".schema.json")):
        shutil.copyfile(path, folder / path.name)
    (folder / "spec.toml").write_text(RELEASE_SPEC, encoding="utf-8")
    init = installed.run("dpstudio", "project", "init", str(folder / "P.dpstudio"),
                         "--epsilon", "3", "--delta", "1e-5")
    assert init.returncode == 0, init.stderr
    done = installed.run("dpstudio", "release", str(folder / "spec.toml"), "--project",
                         str(folder / "P.dpstudio"), "--out", str(folder / "out"))
    assert done.returncode == 0, done.stderr
    html = list((folder / "out").glob("*.report.html"))
    pdf = list((folder / "out").glob("*.report.pdf"))
    assert len(html) == 1 and len(pdf) == 1
    assert "<html" in html[0].read_text(encoding="utf-8").lower()
    assert pdf[0].read_bytes().startswith(b"%PDF") and pdf[0].stat().st_size > 10_000
    print(f"release {time.monotonic() - start:.1f} s")


def test_version_from_the_wheel(installed):
    done = installed.run("dpstudio", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dpstudio ") and "OS CSPRNG" in done.stdout
