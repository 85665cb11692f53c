"""Desktop integration: the launcher, metainfo, MIME type and icons, and their installation.

The freedesktop validators run where they are installed (``.ci/run`` installs them) and
skip with the reason otherwise. Nothing here builds the PyInstaller bundle: that is
``make package`` and its smoke test, after ``make test`` in ``.ci/run``.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import shlex
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import dpstudio
from dpstudio import desktop
from dpstudio.desktop import APP_ID, ICON_SIZES, install_desktop

ROOT = Path(__file__).resolve().parents[2]
DESKTOP_DIR = ROOT / "dpstudio" / "resources" / "desktop"
ICONS = ROOT / "dpstudio" / "resources" / "icons"
LAUNCHER = DESKTOP_DIR / f"{APP_ID}.desktop"
METAINFO = DESKTOP_DIR / f"{APP_ID}.metainfo.xml"
MIME_XML = DESKTOP_DIR / f"{APP_ID}.mime.xml"
MIME_NS = "{http://www.freedesktop.org/standards/shared-mime-info}"
PROJECT_TYPE = "application/x-dpstudio-project"


def _entry(path: Path) -> configparser.SectionProxy:
    """The ``[Desktop Entry]`` group of a launcher, keys case kept, no interpolation."""
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(path.read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def _validate_launcher(path: Path) -> None:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.skip("desktop-file-validate is not installed (apt-get install desktop-file-utils)")
    done = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=60)
    # It exits 0 on warnings too; a warning is a defect of ours all the same.
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (the first, by the PNG standard)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def _installed(tmp_path: Path) -> tuple[Path, list[Path]]:
    home = tmp_path / "share"
    return home, install_desktop(prefix=home)


# ------------------------------------------------------------------ the packaged files


def test_launcher_validates():
    _validate_launcher(LAUNCHER)


def test_launcher_opens_projects_with_a_file_argument():
    entry = _entry(LAUNCHER)
    assert entry["Exec"].split()[-1] == "%f"
    assert PROJECT_TYPE in entry["MimeType"].split(";")
    assert entry["Icon"] == APP_ID


def test_metainfo_validates():
    tool = shutil.which("appstreamcli")
    if tool is None:
        pytest.skip("appstreamcli is not installed (apt-get install appstream)")
    done = subprocess.run([tool, "validate", "--no-net", "--no-color", str(METAINFO)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_metainfo_names_the_launcher_and_this_version():
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable[@type='desktop-id']") == LAUNCHER.name
    assert root.findtext("icon[@type='stock']") == APP_ID
    assert PROJECT_TYPE in [m.text for m in root.iterfind("provides/mediatype")]
    # The newest release listed first, as AppStream orders them: bumping the version
    # without a release entry would show stale news in software centres.
    assert root.find("releases/release").get("version") == dpstudio.__version__


def test_mime_type_declares_project_files():
    root = ET.parse(MIME_XML).getroot()
    types = {t.get("type"): t for t in root.iterfind(f"{MIME_NS}mime-type")}
    assert PROJECT_TYPE in types
    globs = [g.get("pattern") for g in types[PROJECT_TYPE].iterfind(f"{MIME_NS}glob")]
    assert globs == ["*.dpstudio"]
    assert types[PROJECT_TYPE].findtext(f"{MIME_NS}comment")
    # A project is SQLite: without sub-class-of, SQLite's magic bytes would win.
    parents = [s.get("type") for s in types[PROJECT_TYPE].iterfind(f"{MIME_NS}sub-class-of")]
    assert parents == ["application/vnd.sqlite3"]


@pytest.mark.parametrize("size", ICON_SIZES)
def test_icon_png_at_every_size(size):
    path = ICONS / f"dpstudio-{size}.png"
    assert path.is_file(), f"missing {path.name}: run `make icons`"
    assert _png_size(path) == (size, size)


def test_icon_pngs_are_renders_of_the_svg(qapp):
    """Each committed PNG matches a fresh render of the SVG (so they cannot drift)."""
    spec = importlib.util.spec_from_file_location(
        "render_icons", ROOT / "packaging" / "render_icons.py")
    render_icons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render_icons)
    from PySide6.QtGui import QImage

    for size in ICON_SIZES:
        fresh = render_icons.render(size).convertToFormat(QImage.Format.Format_ARGB32)
        kept = QImage(str(ICONS / f"dpstudio-{size}.png")).convertToFormat(
            QImage.Format.Format_ARGB32)
        # Antialiasing may differ by a unit between Qt versions; a changed drawing does not.
        worst = max(abs(((fresh.pixel(x, y) >> s) & 255) - ((kept.pixel(x, y) >> s) & 255))
                    for x in range(size) for y in range(size) for s in (0, 8, 16, 24))
        assert worst <= 8, f"dpstudio-{size}.png differs from dpstudio.svg: run `make icons`"


# ------------------------------------------------------------------ install_desktop


def test_install_desktop_writes_every_file(tmp_path):
    home, written = _installed(tmp_path)
    expected = [home / "applications" / f"{APP_ID}.desktop"]
    expected += [home / "icons" / "hicolor" / f"{n}x{n}" / "apps" / f"{APP_ID}.png"
                 for n in ICON_SIZES]
    expected += [home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
                 home / "mime" / "packages" / f"{APP_ID}.xml",
                 home / "metainfo" / f"{APP_ID}.metainfo.xml"]
    assert written == expected
    for path in written:
        assert path.is_file() and path.stat().st_size > 0, path
    for n in ICON_SIZES:
        assert _png_size(home / "icons" / "hicolor" / f"{n}x{n}" / "apps" / f"{APP_ID}.png") \
            == (n, n)


def test_installed_launcher_runs_this_dpstudio(tmp_path):
    home, _ = _installed(tmp_path)
    launcher = home / "applications" / f"{APP_ID}.desktop"
    if shutil.which("desktop-file-validate"):
        _validate_launcher(launcher)
    entry = _entry(launcher)
    # The string-value escape (a doubled backslash) first, then the Exec quoting, which
    # is the shell's for the characters a path may hold.
    program, *rest = shlex.split(entry["Exec"].replace("\\\\", "\\"))
    assert rest[-1] == "%f"
    assert Path(program).is_absolute() and os.access(program, os.X_OK), program
    assert entry["TryExec"] == program
    done = subprocess.run([program, *rest[:-1], "--version"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and f"dpstudio {dpstudio.__version__}" in done.stdout


def test_install_desktop_default_is_xdg_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(desktop, "_refresh_caches", lambda home: None)
    written = install_desktop()
    assert written and all(p.is_relative_to(tmp_path / "data") for p in written)


def test_install_desktop_default_without_xdg_is_local_share(tmp_path, monkeypatch):
    # The XDG spec: an unset or relative XDG_DATA_HOME means ~/.local/share.
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # were it followed, the relative path would land here
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setattr(desktop, "_refresh_caches", lambda home: None)
    written = install_desktop()
    assert written[0] == tmp_path / ".local" / "share" / "applications" / f"{APP_ID}.desktop"


def test_install_desktop_prints_nothing(tmp_path, capfd):
    _installed(tmp_path)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_caches_refreshed_only_with_the_tools(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(desktop.subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    monkeypatch.setattr(desktop.shutil, "which", lambda name: None)
    install_desktop(prefix=tmp_path)
    assert calls == []
    monkeypatch.setattr(desktop.shutil, "which", lambda name: f"/usr/bin/{name}")
    install_desktop(prefix=tmp_path)
    assert [Path(c[0]).name for c in calls] == ["update-desktop-database",
                                                "update-mime-database"]
    assert calls[0][1] == str(tmp_path / "applications") and calls[1][1] == str(tmp_path / "mime")


def test_mime_database_knows_project_files(tmp_path):
    if shutil.which("update-mime-database") is None:
        pytest.skip("update-mime-database is not installed (apt-get install shared-mime-info)")
    home, _ = _installed(tmp_path)
    globs = (home / "mime" / "globs2").read_text(encoding="utf-8")
    assert f"{PROJECT_TYPE}:*.dpstudio" in globs


def test_frozen_bundle_launcher_points_at_the_executable(tmp_path, monkeypatch):
    """From the PyInstaller bundle, Exec is the bundle's executable, quoted per the spec."""
    exe = tmp_path / "My Apps" / "dpstudio" / "dpstudio"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(exe))
    home = tmp_path / "share"
    install_desktop(prefix=home)
    launcher = home / "applications" / f"{APP_ID}.desktop"
    assert _entry(launcher)["Exec"] == f'"{exe}" %f'
    assert _entry(launcher)["TryExec"] == str(exe)  # a string value: never quoted
    _validate_launcher(launcher)


def test_exec_quoting_escapes_reserved_characters():
    quote = desktop._exec_argument
    assert quote("/opt/dpstudio/dpstudio") == "/opt/dpstudio/dpstudio"
    assert quote("/a b/dpstudio") == '"/a b/dpstudio"'
    # `$` and `"` are escaped inside the quotes; then the string value doubles backslashes.
    assert quote('/a$b"c/x') == '"/a\\\\$b\\\\"c/x"'
    assert quote("/100%/x") == "/100%%/x"
