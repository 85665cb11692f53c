"""The little Qt the export layer needs: a QGuiApplication, quietly, and PNG bytes.

Reports are drawn with QtGui only (QImage, QPainter, QTextDocument, QPdfWriter): no
widgets and no display. When no Qt application exists (the command line, a script), one
is created on the ``offscreen`` platform, so a report renders the same with or without a
display. Inside the GUI the running
QApplication (a QGuiApplication) is used as is.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, qInstallMessageHandler
from PySide6.QtGui import QGuiApplication, QImage

from dpstudio.export.errors import ExportError

__all__ = ["ensure_gui_application", "png_bytes", "quiet_qt"]

_APP: QGuiApplication | None = None


def ensure_gui_application() -> QGuiApplication:
    """The running QGuiApplication, or a new one on the offscreen platform."""
    global _APP
    app = QGuiApplication.instance()
    if app is None:
        # Always offscreen: a report needs no window, and so no display connection (which
        # would abort the process when the display is missing).
        argv = [sys.argv[0] if sys.argv and sys.argv[0] else "dpstudio", "-platform",
                "offscreen"]
        with quiet_qt():
            app = QGuiApplication(argv)
        _APP = app
    elif not isinstance(app, QGuiApplication):
        raise ExportError("rendering a report needs a QGuiApplication, but a console-only "
                          "QCoreApplication is running")
    return app


@contextlib.contextmanager
def quiet_qt() -> Iterator[list[str]]:
    """Collect Qt's warnings (font look-ups and the like) instead of printing them."""
    messages: list[str] = []

    def handler(mode, context, message):  # noqa: ARG001 - Qt's signature
        messages.append(str(message))

    previous = qInstallMessageHandler(handler)
    try:
        yield messages
    finally:
        qInstallMessageHandler(previous)


def png_bytes(image: QImage) -> bytes:
    """The image encoded as PNG."""
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG"):
        raise ExportError("could not encode a plot as PNG")
    buf.close()
    return bytes(data.data())
