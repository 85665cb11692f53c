"""Look and feel: light and dark palettes for widgets and plots, and pyqtgraph's options.

:func:`apply_palette` switches the whole application (Fusion style, a :class:`QPalette`,
pyqtgraph's defaults for new plots, and every existing ``pg.PlotWidget``);
:func:`apply_plot_palette` restyles one plot for the current palette (call it on a plot made
after a switch, or let :func:`apply_palette` find them all).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtGui import QColor, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from dpstudio.resources import resource_path

TEXT = "#1f2328"
MUTED = "#6e7781"
ACCENT = "#2563eb"
#: Warnings the analyst must not miss (a biased number): amber text, on a pale amber.
AMBER = "#b45309"
AMBER_BACKGROUND = "#fff4e5"
GRID_ALPHA = 0.12
REFERENCE_PEN = pg.mkPen("#9aa1a9", width=1.2, style=pg.QtCore.Qt.PenStyle.DashLine)

#: The application icon, in the package data (:mod:`dpstudio.resources`).
_ICON = resource_path("icons", "dpstudio.svg")


@dataclass(frozen=True)
class Palette:
    """Colours of one theme: widgets (``window`` … ``highlight``) and plots (``plot_*``)."""

    name: str
    label: str
    window: str
    text: str
    muted: str
    base: str
    alternate_base: str
    button: str
    highlight: str
    highlighted_text: str
    link: str
    mid: str
    midlight: str
    dark: str
    shadow: str
    tooltip_base: str
    disabled_text: str
    warning: str        # undeclared columns, half-declared bounds
    error: str          # refused edits
    plot_background: str
    plot_foreground: str
    plot_muted: str


LIGHT = Palette(
    name="light", label="Light",
    window="#f5f6f8", text=TEXT, muted=MUTED, base="#ffffff", alternate_base="#f3f6fa",
    button="#eef0f3", highlight=ACCENT, highlighted_text="#ffffff", link=ACCENT,
    mid="#c9ced6", midlight="#e3e6eb", dark="#a0a7b1", shadow="#6e7781",
    tooltip_base="#ffffe8", disabled_text="#9aa1a9", warning=AMBER, error="#b42318",
    plot_background="#ffffff", plot_foreground="#1f2328", plot_muted="#6e7781",
)

DARK = Palette(
    name="dark", label="Dark",
    window="#1e2126", text="#e6e8eb", muted="#9ba3ad", base="#15171b", alternate_base="#1b1e23",
    button="#2a2e35", highlight="#3b82f6", highlighted_text="#ffffff", link="#7aa7ff",
    mid="#3a3f47", midlight="#33373e", dark="#0f1114", shadow="#000000",
    tooltip_base="#2a2e35", disabled_text="#6b727c", warning="#f59e0b", error="#f87171",
    plot_background="#15171b", plot_foreground="#d7dade", plot_muted="#9ba3ad",
)

PALETTES: dict[str, Palette] = {p.name: p for p in (LIGHT, DARK)}
DEFAULT_PALETTE = "light"

_current = LIGHT


def current_palette() -> Palette:
    """The palette last applied (light until :func:`apply_palette` says otherwise)."""
    return _current


def palette_named(name: str | None) -> Palette:
    """The palette called ``name``; the default for an unknown or missing name."""
    return PALETTES.get(str(name or "").lower(), PALETTES[DEFAULT_PALETTE])


def configure_pyqtgraph() -> None:
    """Plot background and text for the current palette, antialiased lines (idempotent)."""
    pg.setConfigOptions(
        antialias=True,
        background=_current.plot_background,
        foreground=_current.plot_foreground,
    )


def app_icon() -> QIcon:
    """The DP Studio icon (an empty icon if the resource is missing)."""
    return QIcon(str(_ICON)) if _ICON.is_file() else QIcon()


def qpalette(palette: Palette) -> QPalette:
    """The :class:`QPalette` of ``palette``."""
    qp = QPalette()
    roles = {
        QPalette.ColorRole.Window: palette.window,
        QPalette.ColorRole.WindowText: palette.text,
        QPalette.ColorRole.Base: palette.base,
        QPalette.ColorRole.AlternateBase: palette.alternate_base,
        QPalette.ColorRole.ToolTipBase: palette.tooltip_base,
        QPalette.ColorRole.ToolTipText: palette.text,
        QPalette.ColorRole.PlaceholderText: palette.muted,
        QPalette.ColorRole.Text: palette.text,
        QPalette.ColorRole.Button: palette.button,
        QPalette.ColorRole.ButtonText: palette.text,
        QPalette.ColorRole.BrightText: palette.error,
        QPalette.ColorRole.Highlight: palette.highlight,
        QPalette.ColorRole.HighlightedText: palette.highlighted_text,
        QPalette.ColorRole.Link: palette.link,
        QPalette.ColorRole.LinkVisited: palette.link,
        QPalette.ColorRole.Light: palette.midlight,
        QPalette.ColorRole.Mid: palette.mid,
        QPalette.ColorRole.Midlight: palette.midlight,
        QPalette.ColorRole.Dark: palette.dark,
        QPalette.ColorRole.Shadow: palette.shadow,
    }
    for role, colour in roles.items():
        qp.setColor(role, QColor(colour))
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        qp.setColor(QPalette.ColorGroup.Disabled, role, QColor(palette.disabled_text))
    return qp


def apply_palette(app: QApplication, name: str | Palette = DEFAULT_PALETTE) -> Palette:
    """Switch ``app`` to the palette ``name`` (``"light"``/``"dark"``), plots included."""
    global _current
    palette = name if isinstance(name, Palette) else palette_named(name)
    _current = palette
    app.setStyle("Fusion")
    app.setPalette(qpalette(palette))
    configure_pyqtgraph()
    # The plots of live windows only: QApplication.allWidgets() also hands back widgets a
    # finished window is still tearing down, and wrapping one of those can crash.
    for top in app.topLevelWidgets():
        plots = top.findChildren(pg.PlotWidget)
        if isinstance(top, pg.PlotWidget):
            plots.append(top)
        for widget in plots:
            apply_plot_palette(widget, palette)
    return palette


def apply_light_theme(app: QApplication) -> None:
    """Fusion style with the light palette, whatever the desktop's theme."""
    apply_palette(app, LIGHT)


def apply_plot_palette(widget: pg.PlotWidget, palette: Palette | None = None) -> None:
    """Background, axes, title and legend text of ``widget`` in ``palette`` (default: current)."""
    palette = palette or _current
    widget.setBackground(palette.plot_background)
    item = widget.getPlotItem()
    foreground = pg.mkColor(palette.plot_foreground)
    for name in ("left", "bottom", "right", "top"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(foreground))
        axis.setTextPen(pg.mkPen(foreground))
        if axis.label is not None:
            axis.label.setDefaultTextColor(foreground)
    for axis in (item.getAxis(name) for name in ("left", "bottom", "right", "top")):
        if axis.labelStyle.get("color") and (axis.labelText or axis.labelUnits):
            axis.labelStyle = {**axis.labelStyle, "color": palette.plot_foreground}
            axis.setLabel(axis.labelText, axis.labelUnits or None)
    title = item.titleLabel
    if title is not None and title.text:
        title.setText(title.text, color=palette.plot_foreground)
    # Text drawn in another palette's plot colours takes this palette's.
    swap = {}
    for other in PALETTES.values():
        if other is not palette:
            swap[QColor(other.plot_foreground).name()] = palette.plot_foreground
            swap[QColor(other.plot_muted).name()] = palette.plot_muted
            swap[QColor(other.text).name()] = palette.plot_foreground
    for child in item.items:
        if not isinstance(child, pg.TextItem):
            continue
        if child.fill is not None and child.fill.style() != pg.QtCore.Qt.BrushStyle.NoBrush:
            fill = QColor(palette.plot_background)
            fill.setAlpha(235)
            child.fill = pg.mkBrush(fill)
        colour = pg.mkColor(child.color).name()
        if colour in swap:
            child.setColor(swap[colour])
        child.update()
    legend = item.legend
    if legend is not None:
        legend.setLabelTextColor(palette.plot_muted)
        background = QColor(palette.plot_background)
        background.setAlpha(230)
        legend.setBrush(pg.mkBrush(background))
        for _sample, label in legend.items:
            label.setText(label.text, color=palette.plot_muted)


def plot_widgets(root: QWidget) -> list[pg.PlotWidget]:
    """Every ``pg.PlotWidget`` inside ``root`` (``root`` itself included)."""
    found = root.findChildren(pg.PlotWidget)
    return ([root] if isinstance(root, pg.PlotWidget) else []) + list(found)
