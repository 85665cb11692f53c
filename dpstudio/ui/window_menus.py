"""The main window's menu bar: File, View, Analysis, Tools and Help, their actions and
shortcuts (each shown in its menu).

:func:`build_menus` works like a Qt Designer ``setupUi``: it creates the actions on the
window and stores each as one of its attributes (``open_action``, ``quit_action``,
``presentation_action``, ``palette_actions``…), which tests and the project controller use.
The handlers stay on :class:`~dpstudio.ui.main_window.MainWindow`.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QAbstractButton, QMenu

import dpstudio
from dpstudio.about import about_lines
from dpstudio.data.samples import SAMPLES
from dpstudio.ui.export_plot import FORMATS
from dpstudio.ui.style import PALETTES
from dpstudio.ui.texts import GLOSSARY

if TYPE_CHECKING:
    from dpstudio.ui.main_window import MainWindow

APP_NAME = "DP Studio"
#: Export Plot's shortcut per format (PNG, the one a slide wants).
EXPORT_SHORTCUTS = {"png": "Ctrl+Shift+E"}
#: What Help ▸ About says; its last lines are ``dpstudio --version``'s (one function).
ABOUT_TEXT = (
    f"<h3>{APP_NAME} {dpstudio.__version__}</h3>"
    "<p>Differential privacy on your own data: declare each column's public bounds, "
    "pick a mechanism and a trust model, and see what the privacy budget ε costs in "
    "accuracy and what it leaves an attacker.</p>"
    "<p>Data never leaves this computer.</p>"
    "<p>" + "<br>".join(html.escape(line) for line in about_lines()) + "</p>"
)


def build_menus(window: MainWindow) -> None:
    """Fill ``window``'s menu bar and store its actions as attributes of ``window``.

    Parameters
    ----------
    window : MainWindow
        The window; its ``projects``, ``presentation``, ``plot_tracker``, ``schema_panel``
        and ``settings`` must exist already.
    """
    menu_bar = window.menuBar()
    _build_file_menu(window, menu_bar.addMenu("&File"))
    _build_view_menu(window, menu_bar.addMenu("&View"))
    _build_analysis_menu(window, menu_bar.addMenu("&Analysis"))

    tools_menu = menu_bar.addMenu("&Tools")
    window.rr_demo_action = _action(
        window, "&Randomized-Response Demo…", window.show_rr_demo,
        tip="The classroom survey: simulated respondents answer a yes/no question with "
            "randomized response")
    tools_menu.addAction(window.rr_demo_action)
    window.questionnaire_action = _action(
        window, "&Sensitivity Questionnaire…", window.show_questionnaire,
        tip="Answer two questions about harm and sensitivity to get a proposed (ε, δ)")
    tools_menu.addAction(window.questionnaire_action)
    tools_menu.addSeparator()
    window.execution_action = _action(
        window, "&Execution…", window.show_execution_settings,
        tip="Where a folder's sums run: the engine (auto, pandas, Dask) and the Dask "
            "scheduler's address")
    tools_menu.addAction(window.execution_action)

    help_menu = menu_bar.addMenu("&Help")
    window.guide_action = _action(
        window, "&Guide and Glossary", window.show_guide,
        shortcut=QKeySequence.StandardKey.HelpContents,
        tip="A short guide to the first hour and the terms: trust models, ε, δ, "
            "neighbouring datasets, the two plots (works offline)")
    help_menu.addAction(window.guide_action)
    help_menu.addSeparator()
    window.about_action = _action(window, f"&About {APP_NAME}", window.show_about)
    window.about_action.setMenuRole(QAction.MenuRole.AboutRole)
    help_menu.addAction(window.about_action)


def _build_file_menu(window: MainWindow, file_menu: QMenu) -> None:
    """Datasets, projects, release specs, declarations, plot export and Quit."""
    window.open_action = _action(window, "&Open…", window.open_file, shortcut="Ctrl+O",
                                 tip="Open a CSV, TSV, Parquet or Excel file")
    file_menu.addAction(window.open_action)
    window.open_folder_action = _action(
        window, "Open &Folder…", window.open_folder, shortcut="Ctrl+Alt+O",
        tip="Open a folder of Parquet or CSV files: read from metadata, summed file by "
            "file (on Dask for large data)")
    file_menu.addAction(window.open_folder_action)

    window.samples_menu = file_menu.addMenu("Open &Sample")
    window.sample_actions = {}
    for name, description in SAMPLES.items():
        action = _action(window, f"{name}.csv",
                         lambda _checked=False, n=name: window.open_sample(n), tip=description)
        action.setToolTip(description)
        window.samples_menu.addAction(action)
        window.sample_actions[name] = action

    window.recent_menu = file_menu.addMenu("Open &Recent")
    window.recent_menu.aboutToShow.connect(window._fill_recent_menu)
    window._fill_recent_menu()

    file_menu.addSeparator()
    projects = window.projects
    window.new_project_action = _action(
        window, "&New Project…", lambda: projects.new_project(), shortcut="Ctrl+Shift+N",
        tip="Create a project file: datasets, their privacy budgets and the ledger of real "
            "releases")
    file_menu.addAction(window.new_project_action)
    window.open_project_action = _action(
        window, "Open &Project…", lambda: projects.open_project(), shortcut="Ctrl+Shift+O",
        tip="Open a DP Studio project (.dpstudio)")
    file_menu.addAction(window.open_project_action)
    window.recent_projects_menu = file_menu.addMenu("Open Recent Pro&ject")
    window.recent_projects_menu.aboutToShow.connect(window._fill_recent_projects_menu)
    window._fill_recent_projects_menu()
    window.close_project_action = _action(
        window, "&Close Project", lambda: projects.close_project(),
        tip="Close the project (releases stay in its file)")
    file_menu.addAction(window.close_project_action)
    file_menu.addSeparator()
    window.open_spec_action = _action(
        window, "Open Release Spec…", lambda: projects.open_spec(),
        tip="Load a release spec (TOML) into the analysis")
    file_menu.addAction(window.open_spec_action)
    window.save_spec_action = _action(
        window, "Save Release Spec…", lambda: projects.save_spec(),
        tip="Save the analysis as a release spec (TOML) for "
            "dpstudio release SPEC.toml --project P --out DIR")
    file_menu.addAction(window.save_spec_action)
    projects.project_changed.connect(window._project_actions)
    projects.busy_changed.connect(window._project_actions)
    window._project_actions()

    file_menu.addSeparator()
    # The schema panel owns Save (Ctrl+S, enabled while declarations are unsaved).
    window.save_schema_action = window.schema_panel.save_action
    window.save_schema_action.setText("&Save Declarations")
    file_menu.addAction(window.save_schema_action)

    file_menu.addSeparator()
    window.export_actions = {}
    for fmt in FORMATS:
        action = _action(window, f"Export Plot as {fmt.upper()}…",
                         lambda _checked=False, f=fmt: window.export_current_plot(f),
                         shortcut=EXPORT_SHORTCUTS.get(fmt),
                         tip=f"Save the plot under focus as a {fmt.upper()} file")
        file_menu.addAction(action)
        window.export_actions[fmt] = action
    # Which plot has the focus is read before the menu takes it.
    file_menu.aboutToShow.connect(window.plot_tracker.watch)

    file_menu.addSeparator()
    window.quit_action = _action(window, "&Quit", window.close, shortcut="Ctrl+Q")
    window.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
    file_menu.addAction(window.quit_action)


def _build_view_menu(window: MainWindow, view_menu: QMenu) -> None:
    """Tabs (Ctrl+1 / 2 / 3 / 4), ε (Ctrl+E), presentation mode and the palettes."""
    window.analysis_tab_action = _action(window, "&Analysis",
                                         lambda: window.show_view("analysis"), shortcut="Ctrl+1")
    window.data_tab_action = _action(window, "&Data", lambda: window.show_view("data"),
                                     shortcut="Ctrl+2")
    window.ledger_tab_action = _action(window, "&Ledger", lambda: window.show_view("ledger"),
                                       shortcut="Ctrl+3")
    window.models_tab_action = _action(window, "&Models", lambda: window.show_view("models"),
                                       shortcut="Ctrl+4",
                                       tip="Train a model privately and see what ε costs")
    window.focus_epsilon_action = _action(window, "Set &ε…", window._focus_epsilon,
                                          shortcut="Ctrl+E", tip="Type a privacy budget ε")
    view_menu.addActions([window.analysis_tab_action, window.data_tab_action,
                          window.ledger_tab_action, window.models_tab_action,
                          window.focus_epsilon_action])
    view_menu.addSeparator()

    presentation = window.presentation
    window.presentation_action = action = QAction("&Presentation Mode", window)
    action.setCheckable(True)
    action.setShortcuts([QKeySequence("F11"), QKeySequence("Ctrl+P")])
    action.setStatusTip("Large type, clean plots and plain-language captions, full screen")
    action.toggled.connect(presentation.set_enabled)
    presentation.toggled.connect(action.setChecked)
    view_menu.addAction(action)
    window.reset_layout_action = _action(
        window, "&Reset Layout", window.reset_layout,
        tip="Show the Columns and Analysis panels again, docked and sized for this window")
    view_menu.addAction(window.reset_layout_action)
    view_menu.addSeparator()

    group = QActionGroup(window)
    group.setExclusive(True)
    window.palette_actions = {}
    for name, palette in PALETTES.items():
        action = QAction(f"{palette.label} Palette", window, checkable=True)
        action.setChecked(name == window.settings.palette)
        action.triggered.connect(lambda _checked=False, n=name: window.set_palette(n))
        group.addAction(action)
        view_menu.addAction(action)
        window.palette_actions[name] = action


def _build_analysis_menu(window: MainWindow, menu: QMenu) -> None:
    """Draw again, Hide true values and Release…: the result preview's buttons and the
    panel's check box, with shortcuts, enabled when the buttons are."""
    result = window.result_panel
    window.draw_again_action = _action(
        window, "&Draw Again", lambda: result.draw_again.click(), shortcut="Ctrl+R",
        tip="Simulate another release at the same settings")
    _ButtonWatch(window.draw_again_action, result.draw_again)
    menu.addAction(window.draw_again_action)

    session = window.session
    window.hide_true_action = action = QAction("&Hide True Values", window)
    action.setCheckable(True)
    action.setShortcut(QKeySequence("Ctrl+H"))
    action.setStatusTip(GLOSSARY["hide_true"])
    action.setChecked(session.hide_true)
    action.toggled.connect(session.set_hide_true)

    def follow_session(aspect: str) -> None:
        if action.isChecked() != session.hide_true:
            action.blockSignals(True)
            action.setChecked(session.hide_true)
            action.blockSignals(False)

    session.changed.connect(follow_session)
    menu.addAction(action)
    menu.addSeparator()
    window.plan_action = _action(
        window, "New Release &Plan…", window.show_release_plan, shortcut="Ctrl+Shift+P",
        tip="Several statistics under one budget: split ε by weights or accuracy targets, "
            "see each one's expected error, release them in one ledger charge")
    menu.addAction(window.plan_action)

    def release_button() -> QAbstractButton:
        # The Models tab releases its trained model; every other view, the statistic.
        models = getattr(window, "model_view", None)
        if models is not None and window.tabs.currentWidget() is models:
            return models.release_button
        return result.release_button

    window.release_action = _action(
        window, "&Release…", lambda: release_button().click(), shortcut="Ctrl+Shift+R",
        tip="Make a real release of the analysis on screen (asks for confirmation first)")
    watch = _ButtonWatch(window.release_action, result.release_button)
    if getattr(window, "model_view", None) is not None:
        watch.follow(window.model_view.release_button)
        window.tabs.currentChanged.connect(lambda _i: watch.retarget(release_button()))
    menu.addAction(window.release_action)


class _ButtonWatch(QObject):
    """Keeps an action enabled when its button is, its status tip the button's reason."""

    def __init__(self, action: QAction, button: QAbstractButton) -> None:
        super().__init__(action)
        self._action, self._button = action, button
        button.installEventFilter(self)
        self.sync()

    def follow(self, button: QAbstractButton) -> None:
        """Also watch ``button`` (the action follows it once :meth:`retarget` picks it)."""
        button.installEventFilter(self)

    def retarget(self, button: QAbstractButton) -> None:
        """Follow ``button`` from now on."""
        self._button = button
        self.sync()

    def sync(self) -> None:
        self._action.setEnabled(self._button.isEnabled())
        if tip := self._button.toolTip():
            self._action.setStatusTip(tip)
            self._action.setToolTip(tip)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.EnabledChange, QEvent.Type.ToolTipChange):
            self.sync()
        return False


def _action(window: MainWindow, text: str, slot: Callable[..., Any], *,
            shortcut: str | QKeySequence.StandardKey | None = None,
            tip: str | None = None) -> QAction:
    """A window action running ``slot``, with an optional shortcut and status tip."""
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if tip is not None:
        action.setStatusTip(tip)
    action.triggered.connect(slot)
    return action


def fill_recent(menu: QMenu, files: list[str], open_fn: Callable[[Path], Any], noun: str,
                clear_fn: Callable[[], Any]) -> None:
    """Rebuild a "Recent …" menu: numbered entries, a placeholder when empty, and Clear.

    Parameters
    ----------
    menu : QMenu
        The menu to empty and fill.
    files : list of str
        The paths, most recent first; the first nine get an accelerator (``&1`` … ``&9``).
    open_fn : callable
        Called with the chosen entry's :class:`~pathlib.Path`.
    noun : str
        What the files are, plural ("files", "projects"): "No recent files",
        "Clear Recent Files".
    clear_fn : callable
        Called, without arguments, by the Clear entry (disabled when ``files`` is empty).
    """
    menu.clear()
    for number, name in enumerate(files, start=1):
        path = Path(name)
        action = menu.addAction(f"&{number} {path.name}" if number < 10 else path.name)
        action.setToolTip(str(path))
        action.setStatusTip(str(path))
        action.triggered.connect(lambda _checked=False, p=path: open_fn(p))
    if not files:
        menu.addAction(f"No recent {noun}").setEnabled(False)
    menu.addSeparator()
    clear = menu.addAction(f"Clear Recent {noun.capitalize()}")
    clear.setEnabled(bool(files))
    clear.triggered.connect(clear_fn)
