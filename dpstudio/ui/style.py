"""Look and feel: a light, legible palette and pyqtgraph's global options."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtGui import QColor, QIcon, QPalette
from PySide6.QtWidgets import QApplication

TEXT = "#1f2328"
MUTED = "#6e7781"
ACCENT = "#2563eb"
GRID_ALPHA = 0.12
REFERENCE_PEN = pg.mkPen("#9aa1a9", width=1.2, style=pg.QtCore.Qt.PenStyle.DashLine)

PLOT_OPTIONS = {"antialias": True, "background": "w", "foreground": "k"}

_ICON = Path(__file__).resolve().parents[2] / "resources" / "icons" / "dpstudio.svg"


def configure_pyqtgraph() -> None:
    """White plot backgrounds, dark text, antialiased lines (idempotent)."""
    pg.setConfigOptions(**PLOT_OPTIONS)


def app_icon() -> QIcon:
    """The DP Studio icon (an empty icon if the resource is missing)."""
    return QIcon(str(_ICON)) if _ICON.is_file() else QIcon()


def apply_light_theme(app: QApplication) -> None:
    """Fusion style with a light palette, whatever the desktop's theme."""
    app.setStyle("Fusion")
    palette = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#f5f6f8",
        QPalette.ColorRole.WindowText: TEXT,
        QPalette.ColorRole.Base: "#ffffff",
        QPalette.ColorRole.AlternateBase: "#f3f6fa",
        QPalette.ColorRole.ToolTipBase: "#ffffe8",
        QPalette.ColorRole.ToolTipText: TEXT,
        QPalette.ColorRole.PlaceholderText: MUTED,
        QPalette.ColorRole.Text: TEXT,
        QPalette.ColorRole.Button: "#eef0f3",
        QPalette.ColorRole.ButtonText: TEXT,
        QPalette.ColorRole.BrightText: "#b42318",
        QPalette.ColorRole.Highlight: ACCENT,
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: ACCENT,
        QPalette.ColorRole.Mid: "#c9ced6",
        QPalette.ColorRole.Midlight: "#e3e6eb",
        QPalette.ColorRole.Dark: "#a0a7b1",
        QPalette.ColorRole.Shadow: "#6e7781",
    }
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#9aa1a9"))
    app.setPalette(palette)
