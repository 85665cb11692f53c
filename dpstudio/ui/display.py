"""Detect, before Qt aborts, that there is no display to open a window on."""

from __future__ import annotations

import os
import sys

NO_DISPLAY_MESSAGE = (
    "DP Studio: no display found. Run `xvfb-run make run`, "
    "or render offscreen with `dpstudio --screenshot shot.png`."
)

#: Qt platform plugins that need an X11 or Wayland server.
_DISPLAY_PLATFORMS = frozenset({"xcb", "wayland", "wayland-egl", "wayland-brcm"})


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
    return NO_DISPLAY_MESSAGE
