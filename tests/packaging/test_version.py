"""``dpstudio --version``, ``--install-desktop`` and bundled samples named on the command
line (``sample:NAME``): what an installed copy is asked first."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import PySide6
from PySide6.QtCore import qVersion

from dpstudio import __version__
from dpstudio.cli import main
from dpstudio.engine.rng import SecureSource


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_version_names_the_randomness_source_and_the_versions_underneath(capsys):
    code, out, err = run(capsys, "--version")
    assert code == 0 and err == ""
    lines = [line.strip() for line in out.splitlines()]
    assert lines[0] == f"dpstudio {__version__}"
    assert f"Release randomness: {SecureSource.label}" in lines
    assert "OS CSPRNG" in out
    assert f"Qt {qVersion()} (PySide6 {PySide6.__version__})" in lines
    assert f"numpy {np.__version__}" in lines
    assert any(line.startswith(f"Python {platform.python_version()} ") for line in lines)


def test_version_does_not_load_qt_widgets():
    """``--version`` answers quickly and without a display: Qt's core module only."""
    probe = ("import sys\nfrom dpstudio.cli import main\nassert main(['--version']) == 0\n"
             "print([m for m in ('PySide6.QtWidgets', 'PySide6.QtGui', 'pyqtgraph') "
             "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.splitlines()[-1] == "[]"


def test_install_desktop_installs_for_this_user_and_lists_the_files(capsys, tmp_path,
                                                                    monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    code, out, err = run(capsys, "--install-desktop")
    assert code == 0, err
    listed = [Path(line.strip()) for line in out.splitlines()[1:]]
    assert listed and all(p.is_file() and tmp_path in p.parents for p in listed)
    assert any(p.suffix == ".desktop" and p.parent.name == "applications" for p in listed)
    assert f"({len(listed)} files)" in out.splitlines()[0]


def test_query_reads_a_bundled_sample_by_name(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the checkout: the sample comes from the package
    code, out, err = run(capsys, "query", "sample:survey", "--column", "age", "--query",
                         "mean", "--mechanism", "laplace", "--epsilon", "1", "--json")
    assert code == 0, err
    assert '"sensitivity": 100.0' in out  # the bounds 18–100 of the sample's sidecar


def test_an_unknown_sample_is_one_line(capsys):
    code, out, err = run(capsys, "query", "sample:nope", "--column", "age", "--query", "mean",
                         "--mechanism", "laplace", "--epsilon", "1")
    assert code == 2 and out == ""
    assert err.strip() == "dpstudio: error: no sample dataset 'nope' (available: survey, health)"


def test_the_application_takes_a_sample_name_too(capsys, tmp_path):
    code, out, err = run(capsys, "sample:nope", "--screenshot", tmp_path / "shot.png")
    assert code == 2 and out == "" and not (tmp_path / "shot.png").exists()
    assert "no sample dataset 'nope' (available: survey, health)" in err
