"""Render the application icon's PNGs from its SVG, at the freedesktop standard sizes.

    .venv/bin/python packaging/render_icons.py      # or: make icons

The SVG (``dpstudio/resources/icons/dpstudio.svg``) is the one source; the PNGs beside it
(``dpstudio-16.png`` … ``dpstudio-256.png``) are committed renders of it, because icon
themes, launchers that do not read SVG, and the Windows/macOS icon formats want bitmaps.
``tests/packaging/test_desktop.py`` renders again and fails if a committed PNG has drifted
from the SVG, so after editing the SVG run this script.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "dpstudio" / "resources" / "icons"
SVG = ICONS / "dpstudio.svg"
SIZES = (16, 32, 48, 64, 128, 256)


def png_path(size: int) -> Path:
    """The committed render of the icon at ``size`` pixels.

    Parameters
    ----------
    size : int
        Width and height in pixels.

    Returns
    -------
    Path
        ``dpstudio/resources/icons/dpstudio-<size>.png`` in the source tree.
    """
    return ICONS / f"dpstudio-{size}.png"


def render(size: int, svg: Path = SVG):
    """Render the SVG into a square transparent ARGB image.

    Parameters
    ----------
    size : int
        Width and height in pixels.
    svg : Path
        The SVG to render (default: the application icon).

    Returns
    -------
    PySide6.QtGui.QImage
        The image, premultiplied ARGB32, transparent outside the drawing.
    """
    # QPainter needs a QGuiApplication; offscreen so this runs on a build machine with no
    # display. Set before the first Qt import reads it.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(["render_icons"])  # noqa: F841
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    """Write every size's PNG; print one line per file."""
    for size in SIZES:
        path = png_path(size)
        if not render(size).save(str(path), "PNG"):
            print(f"could not write {path}", file=sys.stderr)
            return 1
        print(f"{path.relative_to(ICONS.parents[2])}: {size}×{size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
