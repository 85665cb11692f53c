"""Help ▸ Guide: a short built-in guide and glossary, offline.

The first hour in five steps, how to read the two plots, the trust models and the terms.
Nothing is written twice: the terms are the tooltips' own sentences
(:data:`dpstudio.ui.texts.GLOSSARY`), the trust models the engine's table and the
application's explanations (:data:`dpstudio.ui.texts.TRUST_MODELS`), the plots' sentences
the captions under them, and the keyboard section is read off the window's menus — so the
guide says what the application says, and lists the shortcuts it really has.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QMenu,
    QMenuBar,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from dpstudio.ui.texts import GLOSSARY, TRADEOFF_CAPTION, TRUST_MODELS, UTILITY_CAPTION

__all__ = ["GLOSSARY_TERMS", "GuideDialog", "definition", "guide_html", "menu_shortcuts"]

#: The glossary's entries, in reading order: (heading, anchor, key of GLOSSARY).
GLOSSARY_TERMS: tuple[tuple[str, str, str], ...] = (
    ("ε — the privacy budget", "epsilon", "epsilon"),
    ("δ — the failure probability", "delta", "delta"),
    ("Neighbouring datasets", "neighbours", "relation"),
    ("Sensitivity and declared bounds", "sensitivity", "sensitivity"),
    ("Mechanism", "mechanism", "mechanism"),
    ("Trust model", "trust", "trust"),
    ("Releases k (composition)", "compositions", "compositions"),
    ("Type I error α", "type1", "type1"),
    ("Type II error β", "type2", "type2"),
    ("Gaussian DP μ", "gdp", "gdp"),
    ("Confidence", "confidence", "confidence"),
    ("Hide true values", "hide_true", "hide_true"),
)

_STEPS = (
    "<b>Open a dataset</b> — File ▸ Open… (CSV, TSV, Parquet, Excel), or File ▸ Open Sample "
    "to try one. The data never leave this computer.",
    "<b>Declare each column</b> in the Columns panel: its type and its public bounds or "
    "categories, from the codebook — never from the data. Save them (Ctrl+S) beside the "
    "file.",
    "<b>Choose what to release</b> in the Analysis panel: a column, a query (mean, count, "
    "histogram…), a trust model and a privacy budget ε.",
    "<b>Read the two plots</b> (below): what ε costs in accuracy, and what it leaves an "
    "attacker. The result preview simulates one release; Draw Again simulates another. "
    "Nothing is spent.",
    "<b>Release</b> — with a project open (File ▸ New Project…), Analysis ▸ Release… makes "
    "a real release: it asks first, charges the budget and records it in the ledger.",
)


def menu_shortcuts(menu_bar: QMenuBar) -> list[tuple[str, str]]:
    """Every menu action that has a shortcut: ("File ▸ Open…", "Ctrl+O"), in menu order.

    Parameters
    ----------
    menu_bar : QMenuBar
        The window's menu bar.

    Returns
    -------
    list of (str, str)
        The action's menu path (accelerator ampersands removed) and its shortcuts as
        shown on this platform, joined by " or ".
    """
    found: list[tuple[str, str]] = []

    def walk(actions: Iterable[QAction], path: str) -> None:
        for action in actions:
            name = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
            menu = action.menu()
            if isinstance(menu, QMenu):
                walk(menu.actions(), f"{path}{name} ▸ ")
            elif not action.isSeparator() and action.shortcuts():
                keys = " or ".join(k.toString(QKeySequence.SequenceFormat.NativeText)
                                   for k in action.shortcuts())
                found.append((f"{path}{name}", keys))

    walk(menu_bar.actions(), "")
    return found


def definition(sentence: str) -> str:
    """A tooltip's sentence without the term it opens with, for a line under a heading.

    Parameters
    ----------
    sentence : str
        E.g. "Mechanism: the randomized algorithm that turns the data into a private
        release."

    Returns
    -------
    str
        What follows the term ("the randomized algorithm …"), or the whole sentence when
        it does not open with one: the guide's heading already names the term.
    """
    term, sep, rest = sentence.partition(": ")
    # A term is short and has no clause of its own ("ε (privacy-loss budget)").
    if sep and rest and len(term) <= 48 and not any(c in term for c in ".;:,"):
        return rest
    return sentence


def _para(text: str) -> str:
    return f"<p>{html.escape(text)}</p>"


def guide_html(shortcuts: Iterable[tuple[str, str]] = ()) -> str:
    """The guide as HTML (Qt's rich-text subset): steps, plots, trust models, terms, keys.

    Parameters
    ----------
    shortcuts : iterable of (str, str)
        The keyboard section's rows (:func:`menu_shortcuts`); none: no such section.

    Returns
    -------
    str
        One HTML document with anchors ``steps``, ``plots``, ``trust-models``,
        ``glossary`` (and one per term) and ``keys``.
    """
    parts = ["<h2>DP Studio in the first hour</h2>",
             "<p><a href='#steps'>Steps</a> · <a href='#plots'>The two plots</a> · "
             "<a href='#trust-models'>Trust models</a> · <a href='#glossary'>Glossary</a>"
             + (" · <a href='#keys'>Keyboard</a>" if shortcuts else "") + "</p>",
             "<p>Differential privacy adds calibrated noise so that what is published "
             "barely depends on any one person: whether Alice is in the data or not, "
             "every result is almost equally likely. DP Studio shows what that costs in "
             "accuracy, and what it leaves an attacker, before anything is released.</p>",
             "<h3><a name='steps'></a>Steps</h3><ol>"]
    parts += [f"<li>{step}</li>" for step in _STEPS]
    parts.append("</ol>")

    parts.append("<h3><a name='plots'></a>The two plots</h3>")
    parts.append("<p><b>Privacy–utility</b> (top): the expected error of the released "
                 "statistic at each ε, one curve per trust model; the dashed line marks "
                 "the ε chosen. " + html.escape(UTILITY_CAPTION) + "</p>")
    parts.append("<p><b>Attacker's trade-off</b> (bottom left): every test an attacker "
                 "could run to tell whether one person is in the data, as its false alarms "
                 "(Type I error α) against its misses (Type II error β). The diagonal is "
                 "guessing. " + html.escape(TRADEOFF_CAPTION) + "</p>")

    parts.append("<h3><a name='trust-models'></a>Trust models</h3>")
    parts.append(_para(GLOSSARY["trust"]))
    for meta in TRUST_MODELS.values():
        # The explanation only: the one-line tooltip says the same thing in short.
        parts.append(f"<p><b><span style='color:{meta['colour']}'>●</span> "
                     f"{html.escape(meta['label'])}</b> — "
                     f"{html.escape(meta['explanation'])}</p>")

    parts.append("<h3><a name='glossary'></a>Glossary</h3>")
    for heading, anchor, key in GLOSSARY_TERMS:
        # The trust models' section opens with this term's sentence: point there instead.
        text = ("<a href='#trust-models'>Trust models</a>, above" if key == "trust"
                else html.escape(definition(GLOSSARY[key])))
        parts.append(f"<p><a name='{anchor}'></a><b>{html.escape(heading)}</b>: {text}</p>")

    rows = list(shortcuts)
    if rows:
        parts.append("<h3><a name='keys'></a>Keyboard</h3>"
                     "<p>Tab moves between the panels and out of the tables; the shortcuts "
                     "are also shown in the menus.</p><table cellpadding='3'>")
        parts += [f"<tr><td>{html.escape(what)}</td><td><b>{html.escape(keys)}</b></td></tr>"
                  for what, keys in rows]
        parts.append("</table>")
    return "\n".join(parts)


class GuideDialog(QDialog):
    """The guide in a window of its own, beside the application (not modal).

    Parameters
    ----------
    parent : QWidget, optional
        The main window: its menu bar gives the keyboard section.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("DP Studio guide and glossary")
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(False)  # offline: nothing leaves this window
        menu_bar = parent.findChild(QMenuBar) if parent is not None else None
        self.browser.setHtml(guide_html(menu_shortcuts(menu_bar) if menu_bar else ()))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.resize(640, 720)

    def text(self) -> str:
        """The guide as plain text (what a reader sees, for tests)."""
        return self.browser.toPlainText()
