"""Help ▸ About says what ``dpstudio --version`` says: version, randomness, Qt, numpy,
Python — clicked through the real menu action."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QMessageBox

from dpstudio import __version__
from dpstudio.about import about_lines
from dpstudio.engine.rng import SecureSource


def test_help_about_shows_the_version_lines(window, monkeypatch):
    shown: list[tuple[str, str]] = []
    # QMessageBox.about is modal (it would wait for a click offscreen): record it instead.
    monkeypatch.setattr(QMessageBox, "about",
                        staticmethod(lambda _parent, title, text: shown.append((title, text))))
    help_menu = next(a.menu() for a in window.menuBar().actions()
                     if a.text().replace("&", "") == "Help")
    about = next(a for a in help_menu.actions() if a.text().replace("&", "").startswith("About"))
    assert about is window.about_action
    about.trigger()
    assert len(shown) == 1
    title, text = shown[0]
    assert title == "About DP Studio"
    assert f"DP Studio {__version__}" in text
    lines = about_lines()
    assert len(lines) == 4 and lines[0].endswith(SecureSource.label)
    for line in lines:
        assert html.escape(line) in text
    for word in ("Qt ", "PySide6 ", "numpy ", "Python ", "OS CSPRNG"):
        assert word in text
