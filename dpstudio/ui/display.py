"""Detect, before Qt aborts, that there is no display to open a window on, and say in one
line what works on this machine instead."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

#: Qt platform plugins that need an X11 or Wayland server.
_DISPLAY_PLATFORMS = frozenset({"xcb", "wayland", "wayland-egl", "wayland-brcm"})

#: How to install Xvfb (which brings ``xvfb-run``), by the package manager found on PATH.
_XVFB_INSTALL = (
    ("apt-get", "sudo apt-get install xvfb"),
    ("dnf", "sudo dnf install xorg-x11-server-Xvfb"),
    ("zypper", "sudo zypper install xvfb-run"),
    ("pacman", "sudo pacman -S xorg-server-xvfb"),
)


def display_problem() -> str | None:
    """The one-line message to print when no window can be shown, else ``None``.

    On Linux, without ``DISPLAY`` or ``WAYLAND_DISPLAY``, Qt's default (xcb) or a
    chosen xcb/wayland platform would abort with a long plugin error; other
    platforms (``offscreen``, ``vnc``, ``eglfs``, …) need no display.
    """
    if not sys.platform.startswith("linux"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    platform = os.environ.get("QT_QPA_PLATFORM", "").strip()
    if platform:
        # "wayland;xcb" is a fallback list; "xcb:option=value" carries plugin options.
        names = {part.split(":", 1)[0].strip().lower() for part in platform.split(";")}
        if not names - {""} <= _DISPLAY_PLATFORMS:
            return None
    return no_display_message()


def no_display_message() -> str:
    """What to do without a display, checked against this machine, on one line.

    With ``xvfb-run`` on PATH: run under it. Without: render offscreen with
    ``--screenshot`` (always works), or install Xvfb with the package manager found here.
    Under ``make`` the suggestion is ``make run``; otherwise the command as it was typed.
    """
    app = _app_command()
    again = "make run" if os.environ.get("MAKELEVEL") else app
    # --screenshot picks the offscreen platform itself, unless one was chosen explicitly.
    offscreen = "QT_QPA_PLATFORM=offscreen " if os.environ.get("QT_QPA_PLATFORM") else ""
    screenshot = f"`{offscreen}{app} --screenshot shot.png`"
    if shutil.which("xvfb-run"):
        return (f"DP Studio: no display found. Start it on a virtual display with "
                f"`xvfb-run -a {again}`, or render the window to an image with {screenshot}.")
    install = next((cmd for tool, cmd in _XVFB_INSTALL if shutil.which(tool)), None)
    how = f"install Xvfb (`{install}`)" if install else "install Xvfb (it provides xvfb-run)"
    return (f"DP Studio: no display found, and xvfb-run is not installed. Render the window "
            f"to an image with {screenshot} (no display needed), or {how} and run "
            f"`xvfb-run -a {again}`.")


def _app_command() -> str:
    """``dpstudio`` if that name on PATH is this program, else the path it was started by
    (``.venv/bin/dpstudio`` from the project folder)."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    started = Path(argv0)
    if started.name != "dpstudio":
        return "dpstudio"
    on_path = shutil.which("dpstudio")
    try:
        if on_path and Path(on_path).resolve() == started.resolve():
            return "dpstudio"
        return str(started.resolve().relative_to(Path.cwd().resolve()))
    except (OSError, ValueError):
        return str(started)
