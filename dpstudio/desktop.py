"""Desktop integration on Linux and other freedesktop.org systems, for the current user.

:func:`install_desktop` puts DP Studio in the user's application menu: the launcher
(``.desktop``), the icon at every standard size in the ``hicolor`` theme, the MIME type of
``.dpstudio`` project files (so a double-click opens the project) and the AppStream
metainfo, all under ``$XDG_DATA_HOME`` (``~/.local/share``). No root, no system folder.

The files come from the package data (``dpstudio/resources/desktop`` and
``dpstudio/resources/icons``), so this works the same from a source checkout, a wheel and
the frozen bundle. The launcher's ``Exec`` is rewritten to the absolute path of the
``dpstudio`` that is running, because a virtual environment's ``bin`` or an unpacked
bundle is rarely on the ``PATH`` a desktop session starts programs with.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from dpstudio.resources import resource

__all__ = ["APP_ID", "ICON_SIZES", "install_desktop", "launcher_command"]

#: The application's reverse-DNS id: the launcher's, metainfo's and icon's file name.
APP_ID = "io.github.dpstudio.DPStudio"
#: The PNG renders shipped in ``dpstudio/resources/icons`` (``dpstudio-<size>.png``).
ICON_SIZES = (16, 32, 48, 64, 128, 256)

# Characters that oblige an Exec argument to be quoted (Desktop Entry spec, "The Exec key").
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def launcher_command() -> list[str]:
    """The command that starts this DP Studio, as absolute paths.

    Returns
    -------
    list of str
        The frozen executable when running from the PyInstaller bundle; otherwise the
        ``dpstudio`` script beside the running interpreter (a virtual environment's or
        a ``pip install --user``'s ``bin``), else the one on ``PATH``, else
        ``python -m dpstudio`` with this interpreter.
    """
    if getattr(sys, "frozen", False):
        return [str(Path(sys.executable).absolute())]
    # Not resolved: a venv's python is a symlink to the system one, and the script sits
    # beside the link, not beside its target.
    beside = Path(sys.executable).absolute().parent / "dpstudio"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("dpstudio")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "dpstudio"]


def _exec_argument(arg: str) -> str:
    """One Exec argument, quoted as the Desktop Entry spec asks, escaped for a value."""
    if any(c in _RESERVED for c in arg):
        arg = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
    # Then the rules of any string value (a backslash doubles) and of field codes (%%).
    return arg.replace("\\", "\\\\").replace("%", "%%")


def _launcher_text(command: list[str]) -> str:
    """The packaged launcher with ``Exec`` and ``TryExec`` pointing at ``command``."""
    template = resource("desktop", f"{APP_ID}.desktop").read_text(encoding="utf-8")
    exec_line = " ".join(_exec_argument(a) for a in command) + " %f"
    lines = []
    for line in template.splitlines():
        if line.startswith("Exec="):
            lines.append(f"Exec={exec_line}")
            # TryExec: the menu hides the entry if the program is removed (a deleted venv).
            # A plain string value: no Exec quoting, only the backslash escape.
            lines.append("TryExec=" + command[0].replace("\\", "\\\\"))
        elif not line.startswith("TryExec="):
            lines.append(line)
    return "\n".join(lines) + "\n"


def _data_home(prefix: Path | None) -> Path:
    """``prefix``, else ``$XDG_DATA_HOME`` if absolute (the spec ignores a relative one),
    else ``~/.local/share``."""
    if prefix is not None:
        return Path(prefix)
    env = os.environ.get("XDG_DATA_HOME", "")
    if env and Path(env).is_absolute():
        return Path(env)
    return Path.home() / ".local" / "share"


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _refresh_caches(home: Path) -> None:
    """Rebuild the menu's MIME-handler cache and the MIME database, if the tools exist.

    Both are optional: desktops rescan on their own, the caches only make a new launcher
    and file type take effect at once. Their output and failures are not the user's
    concern (the files are in place either way), so they are silent and time-bounded.
    """
    for tool, folder in (("update-desktop-database", home / "applications"),
                         ("update-mime-database", home / "mime")):
        exe = shutil.which(tool)
        if exe is None:
            continue
        try:
            subprocess.run([exe, str(folder)], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=60, check=False)
        except (OSError, subprocess.SubprocessError):
            pass


def install_desktop(prefix: Path | None = None) -> list[Path]:
    """Install the launcher, icons, MIME type and metainfo for the current user.

    Parameters
    ----------
    prefix : Path, optional
        The data folder to install into, laid out like ``~/.local/share``
        (``applications/``, ``icons/hicolor/``, ``mime/packages/``, ``metainfo/``).
        Default: ``$XDG_DATA_HOME`` when it is set to an absolute path, else
        ``~/.local/share``.

    Returns
    -------
    list of Path
        The files written, launcher first. Existing copies are replaced, so running it
        again (say, after moving the bundle) points the launcher at the new place.

    Notes
    -----
    Prints nothing. Afterwards runs ``update-desktop-database`` and
    ``update-mime-database`` on those folders when they are installed, quietly.
    Raises :class:`OSError` if a file cannot be written.
    """
    home = _data_home(prefix)
    written = [_write(home / "applications" / f"{APP_ID}.desktop",
                      _launcher_text(launcher_command()).encode("utf-8"))]
    hicolor = home / "icons" / "hicolor"
    for size in ICON_SIZES:
        png = resource("icons", f"dpstudio-{size}.png").read_bytes()
        written.append(_write(hicolor / f"{size}x{size}" / "apps" / f"{APP_ID}.png", png))
    written.append(_write(hicolor / "scalable" / "apps" / f"{APP_ID}.svg",
                          resource("icons", "dpstudio.svg").read_bytes()))
    written.append(_write(home / "mime" / "packages" / f"{APP_ID}.xml",
                          resource("desktop", f"{APP_ID}.mime.xml").read_bytes()))
    written.append(_write(home / "metainfo" / f"{APP_ID}.metainfo.xml",
                          resource("desktop", f"{APP_ID}.metainfo.xml").read_bytes()))
    _refresh_caches(home)
    return written
