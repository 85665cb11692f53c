"""Release… of a trained model from the Models tab: when it can start, what it refuses in
one sentence (nothing charged), the window's Release… action on this tab, and the spec it
builds (the same keys as a ``query = "train"`` release spec)."""

from __future__ import annotations

import json
import shutil

import pytest
from PySide6.QtCore import Qt
from ui_helpers import pick

from dpstudio.data import sample_path
from dpstudio.data.dataset import open_dataset
from dpstudio.project import Project
from dpstudio.project.release_model import train_spec
from dpstudio.ui.model_jobs import ModelRequest
from dpstudio.ui.model_release import release_fields
from dpstudio.ui.result_panel import RELEASE_TOOLTIP

TIMEOUT_MS = 20_000
CHOICES = {"label": "works_part_time", "features": ["age", "gpa"], "model": "logistic",
           "variants": ["output", "dpsgd", "fed-none"], "sites_by": None, "sites": 3,
           "rounds": 2, "local_steps": 1, "runs": 1,
           # B declared: a DP-SGD release divides by a public expected batch, never q·n
           "params": {"epsilon": 1.0, "delta": 0.0, "lambda": 0.01, "expected_batch": 20.0}}


def _open(qtbot, tmp_path, config_dir, choices, relation):
    from dpstudio.ui.main_window import MainWindow

    src = sample_path("survey")
    data = tmp_path / "survey.csv"
    shutil.copy(src, data)
    shutil.copy(src.with_name(src.name + ".schema.json"), tmp_path / "survey.csv.schema.json")
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "settings.json").write_text(json.dumps(
        {"schema_version": 2, "last_choices": {"models": {"survey.csv": choices}}}))
    project = tmp_path / f"{relation}.dpstudio"
    Project.create(project, epsilon=10, delta=1e-4, relation=relation).close()
    win = MainWindow(open_dataset(data))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.model_view.grid = (1.0,)
    win.show()
    qtbot.waitExposed(win)
    win.models_tab_action.trigger()
    return win, project


def _close(win) -> None:
    win.model_view.shutdown()
    win.analysis.shutdown()
    win.projects.shutdown()


@pytest.fixture
def tab(qtbot, tmp_path, config_dir):
    """The Models tab on a copy of the survey sample (choices remembered), and a project
    budgeted under the replace relation (output perturbation's)."""
    win, project = _open(qtbot, tmp_path, config_dir, CHOICES, "replace")
    yield win, project
    _close(win)


def _trained(qtbot, view) -> None:
    qtbot.waitUntil(lambda: view.result is not None and not view.jobs.busy
                    and not view._later._timer.isActive(), timeout=TIMEOUT_MS)


def _ledger_rows(path) -> int:
    with Project.open(path) as project:
        return sum(len(project.ledger(d)) for d in project.datasets())


def test_refusals_are_one_sentence_and_charge_nothing(qtbot, tab):
    win, project = tab
    view = win.model_view
    button = view.release_button
    assert not button.isEnabled() and button.toolTip() == RELEASE_TOOLTIP
    assert win.projects.open_project(project)
    qtbot.waitUntil(button.isEnabled, timeout=TIMEOUT_MS)
    _trained(qtbot, view)
    # A model trained without privacy is never released: the button says so.
    pick(qtbot, view.way_box, "FedAvg")
    assert view.selected_way() == "fed-none"
    assert not button.isEnabled()
    assert "never released" in button.toolTip() and button.toolTip().count(". ") == 0
    # DP-SGD's guarantee is add-or-remove: this project's replace budget refuses it, in one
    # sentence under the plot, before anything is drawn or charged.
    pick(qtbot, view.way_box, "DP-SGD")
    assert view.selected_way() == "dpsgd" and button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    # The release's line comes after what the runs say, on a line of its own.
    qtbot.waitUntil(lambda: view.status.text().splitlines()[-1].startswith("Cannot release:"),
                    timeout=TIMEOUT_MS)
    text = view.status.text().splitlines()[-1]
    assert "replace relation" in text and "adding or removing" in text
    assert view.release.dialog is None and _ledger_rows(project) == 0
    assert button.isEnabled()  # ready for another try


def test_the_windows_release_action_on_this_tab_opens_the_models_confirmation(qtbot, tab):
    win, project = tab
    view = win.model_view
    assert win.projects.open_project(project)
    qtbot.waitUntil(view.release_button.isEnabled, timeout=TIMEOUT_MS)
    assert win.release_action.isEnabled()
    # On the Analysis tab the action follows the statistic's button again.
    win.tabs.setCurrentIndex(0)
    assert win.release_action.isEnabled() == win.result_panel.release_button.isEnabled()
    win.models_tab_action.trigger()
    assert win.release_action.isEnabled()
    _trained(qtbot, view)
    assert view.selected_way() == "output"  # output perturbation: replace, as the project
    win.release_action.trigger()  # Analysis ▸ Release… (Ctrl+Shift+R)
    qtbot.waitUntil(lambda: view.release.dialog is not None and view.release.dialog.isVisible(),
                    timeout=TIMEOUT_MS)
    dialog = view.release.dialog
    assert "ε = 1," in dialog.charge_label.text()
    assert dialog.out_edit.text() == str(win.projects.default_out_dir())
    dialog.reject()
    assert view.status.text().splitlines()[-1] == "Not released: nothing was charged."
    assert _ledger_rows(project) == 0


def test_a_release_cancelled_while_it_trains_charges_and_writes_nothing(qtbot, tmp_path,
                                                                        config_dir,
                                                                        monkeypatch):
    import threading
    import time

    from dpstudio.project import release_model
    from dpstudio.ui.release_jobs import CANCELLED_TEXT

    # The release's training, held until Cancel is clicked (a real one takes a fraction of
    # a second here: too short to click in reliably), then run with the cancelled state.
    real, started = release_model.run_analysis, threading.Event()

    def slow(analysis, values, source, **kw):
        started.set()
        end = time.monotonic() + 20
        while not kw["state"].cancelled() and time.monotonic() < end:
            time.sleep(0.01)
        return real(analysis, values, source, **kw)

    monkeypatch.setattr(release_model, "run_analysis", slow)
    win, project = _open(qtbot, tmp_path, config_dir, CHOICES | {"variants": ["dpsgd"]},
                         "add-remove")
    try:
        view = win.model_view
        assert win.projects.open_project(project)
        _trained(qtbot, view)
        qtbot.mouseClick(view.release_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: view.release.dialog is not None
                        and view.release.dialog.isVisible(), timeout=TIMEOUT_MS)
        qtbot.mouseClick(view.release.dialog.release_button, Qt.MouseButton.LeftButton)
        # The status bar's release progress, with its Cancel (as every release).
        progress = win.release_progress
        qtbot.waitUntil(lambda: started.is_set() and progress.cancel_button.isVisible()
                        and progress.cancel_button.isEnabled(), timeout=TIMEOUT_MS)
        assert not view.release_button.isEnabled()  # one release at a time
        qtbot.mouseClick(progress.cancel_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: win.projects.busy is None, timeout=TIMEOUT_MS)
        assert view.status.text().splitlines()[-1] == f"Not released: {CANCELLED_TEXT}"
        assert _ledger_rows(project) == 0
        out = win.projects.default_out_dir()
        assert not out.exists() or not any(out.iterdir())
        assert view.release_button.isEnabled()
    finally:
        _close(win)


def test_the_spec_is_a_train_spec_of_the_run_on_screen(tmp_path):
    data = tmp_path / "survey.csv"
    shutil.copy(sample_path("survey"), data)
    fed = ModelRequest("works_part_time", ("age", "gpa"), method="dpsgd",
                       fed_variant="secagg", fedavg=True, sites=4, rounds=7, local_steps=3,
                       epsilon=2.0, params={"delta": 1e-6, "batch_rate": 0.1, "clip": 0.5,
                                            "learning_rate": 0.3, "epsilon": 2.0})
    fields = release_fields(fed, str(data), budget=(5.0, 1e-5))
    assert fields["budget"] == {"epsilon": 5.0, "delta": 1e-5}
    spec = train_spec(fields)
    assert spec.query.query == "train" and spec.query.epsilon == 2.0
    assert spec.query.delta == 1e-6 and spec.query.relation == "add-remove"
    assert spec.features == ("age", "gpa")
    assert spec.training == {"model": "logistic", "method": "dpsgd", "fed_variant": "secagg",
                             "sites": 4, "rounds": 7, "local_steps": 3}
    assert spec.budget_epsilon == 5.0
    central = ModelRequest("works_part_time", ("age",), method="output", epsilon=1.0,
                           params={"delta": 0.0, "lambda": 0.05})
    spec = train_spec(release_fields(central, str(data)))
    assert spec.query.relation == "replace" and spec.budget_epsilon is None
    assert spec.training == {"model": "logistic", "method": "output"}
