"""The model analysis path end to end, as a person drives it (issue 13's pytest-qt test).

On a copy of the bundled survey sample: pick the label and the features, tick each trust
model (central output perturbation and DP-SGD, FedAvg under local DP and under secure
aggregation), move ε and see every curve's point at the form's ε follow it, open the
membership attack, start a long audit and cancel it (the plot stays), then release the
DP-SGD model into a project created through the project API — one ledger row, charged
the ε of the very engine object that drew the release's noise, which is also the ε the
confirmation announced (the same calibration the tab's simulation ran).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem
from ui_helpers import pick, type_into

from dpstudio.data import sample_path
from dpstudio.data.dataset import open_dataset
from dpstudio.engine.rng import SecureSource
from dpstudio.project import Project, release_model
from dpstudio.ui.model_release import HELD_OUT_TEXT
from dpstudio.ui.result_panel import RELEASE_TOOLTIP

TIMEOUT_MS = 30_000
WAYS = ("output", "dpsgd", "fed-local", "fed-secagg")


def _click_check(qtbot, lst, item) -> None:
    """Click the check box of ``item`` in the list ``lst``."""
    lst.scrollToItem(item)
    opt = QStyleOptionViewItem()
    opt.rect = lst.visualItemRect(item)
    opt.features |= QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
    box = lst.style().subElementRect(QStyle.SubElement.SE_ItemViewItemCheckIndicator, opt, lst)
    before = item.checkState()
    qtbot.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=box.center())
    assert item.checkState() != before, f"the click did not toggle {item.text()}"


def _set_ticked(qtbot, lst, wanted) -> None:
    """Tick exactly the items whose data is in ``wanted`` (by clicks)."""
    for i in range(lst.count()):
        item = lst.item(i)
        if not item.flags() & Qt.ItemFlag.ItemIsEnabled:
            continue
        on = item.checkState() == Qt.CheckState.Checked
        if on != (item.data(Qt.ItemDataRole.UserRole) in wanted):
            _click_check(qtbot, lst, item)


def _finished(qtbot, view, **fields):
    def done():
        r = view.result
        return (r is not None and not view.jobs.busy and not view._later._timer.isActive()
                and all(getattr(r.request, k) == v for k, v in fields.items()))
    try:
        qtbot.waitUntil(done, timeout=TIMEOUT_MS)
    except Exception:
        raise AssertionError(f"no result: {view.form.problem.text()!r}, "
                             f"{view.status.text()!r}") from None
    return view.result


@pytest.fixture
def spy(monkeypatch):
    """The engine object of every training a release draws, and its source."""
    seen = []
    real = release_model.run_analysis

    def run(analysis, values, source, **kw):
        result = real(analysis, values, source, **kw)
        seen.append((source, result.engine))
        return result

    monkeypatch.setattr(release_model, "run_analysis", run)
    return seen


@pytest.fixture
def setup(qtbot, tmp_path):
    """The survey sample's copy in the window, and a project made by the project API."""
    from dpstudio.ui.main_window import MainWindow

    src = sample_path("survey")
    data = tmp_path / "survey.csv"
    shutil.copy(src, data)
    shutil.copy(src.with_name(src.name + ".schema.json"), tmp_path / "survey.csv.schema.json")
    project = tmp_path / "models.dpstudio"
    Project.create(project, epsilon=20, delta=1e-3, relation="add-remove").close()
    win = MainWindow(open_dataset(data))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.model_view.grid = (1.0,)  # one grid point: the test is about the path, not curves
    win.show()
    qtbot.waitExposed(win)
    yield win, project
    win.model_view.shutdown()
    win.analysis.shutdown()
    win.projects.shutdown()


def test_label_features_trust_models_epsilon_audit_cancel_and_release(qtbot, setup, spy):
    win, project_path = setup
    win.models_tab_action.trigger()
    view = win.model_view
    form = view.form
    assert win.width() <= 1400  # the tab does not widen the window

    # Label and features, by keys and clicks.
    pick(qtbot, form.label_box, "works")
    assert form.label_box.currentData() == "works_part_time"
    _set_ticked(qtbot, form.features, {"age", "gpa"})
    type_into(qtbot, form.runs, "1")
    type_into(qtbot, form.rounds, "3")
    type_into(qtbot, form.local_steps, "2")
    # Each trust model: central (output perturbation, DP-SGD), local, secure aggregation.
    _set_ticked(qtbot, form.variants, set(WAYS))
    r = _finished(qtbot, view, variants=WAYS, features=("age", "gpa"), runs=1, rounds=3)
    assert set(view.drawn.curves) == set(WAYS)
    for key in WAYS:  # the plotted point at the form's ε is the run's metric there
        mark = view.drawn.marks[key]
        metric = view.metric_box.currentData()
        assert mark.yData[0] == pytest.approx(r.at_epsilon[key][metric]), key
        assert 10 ** mark.xData[0] == pytest.approx(1.0)
    before = {k: float(view.drawn.marks[k].yData[0]) for k in WAYS}

    # Without a project, the Release… button says what the statistics' button says.
    assert not view.release_button.isEnabled()
    assert view.release_button.toolTip() == RELEASE_TOOLTIP

    # Move ε with the keyboard on the slider: every way's point moves to the new ε.
    slider = form.params.fields["epsilon"].slider
    slider.setFocus()
    for _ in range(4):
        qtbot.keyClick(slider, Qt.Key.Key_Right)
    eps = form.params.values()["epsilon"]
    assert eps > 1.0
    r = _finished(qtbot, view, epsilon=eps)
    metric = view.metric_box.currentData()
    for key in WAYS:
        mark = view.drawn.marks[key]
        assert 10 ** mark.xData[0] == pytest.approx(eps)
        assert mark.yData[0] == pytest.approx(r.at_epsilon[key][metric]), key
    assert any(view.drawn.marks[k].yData[0] != before[k] for k in WAYS)
    # The training curves per round follow too (FedAvg's two variants, three rounds, the
    # metric shown: AUC after each round as well as accuracy).
    pick(qtbot, view.view_box, "Train")
    assert metric == "auc"
    for key in ("fed-local", "fed-secagg"):
        np.testing.assert_allclose(view.drawn_rounds.curves[key].yData,
                                   r.at_epsilon[key]["rounds_by_metric"]["auc"])
        assert len(r.at_epsilon[key]["rounds"]) == 3

    # The membership attack of DP-SGD at this ε: a long audit, cancelled; the plot stays.
    pick(qtbot, view.view_box, "Memb")
    assert view.stack.currentWidget() is view.audit
    pick(qtbot, view.way_box, "DP-SGD")
    assert view.selected_way() == "dpsgd"
    audit = view.audit
    qtbot.waitUntil(lambda: audit.claim is not None and audit.request is not None
                    and audit.request.method == "dpsgd"
                    and audit.request.epsilon == pytest.approx(eps), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: "working out" not in audit.status.text(), timeout=TIMEOUT_MS)
    curve = {k: np.array(v[1]) for k, v in audit.plot.curves().items()}
    assert curve
    words = audit.words.text()
    audit.runs_box.setValue(2000)  # thousands of trainings: time to cancel
    qtbot.mouseClick(audit.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: audit.busy and audit.progress.value() > 0, timeout=TIMEOUT_MS)
    qtbot.mouseClick(audit.cancel_button, Qt.MouseButton.LeftButton)
    assert audit.progress.format() == "cancelled" and "cancelled" in audit.status.text()
    audit.runner.wait("model-audit", timeout=60)
    qtbot.wait(100)
    assert audit.outcome is None and audit.words.text() == words
    for key, y in curve.items():
        np.testing.assert_array_equal(audit.plot.curves()[key][1], y)

    # Release the DP-SGD model into the project, through the Release… button. A DP-SGD
    # release divides each step by a declared, public expected batch B: until it is typed
    # the button says so.
    assert win.projects.open_project(project_path)
    assert not view.release_button.isEnabled()
    assert "expected batch" in view.release_button.toolTip()
    b_box = form.params.fields["expected_batch"]
    b_box = getattr(b_box, "spin", b_box)
    type_into(qtbot, b_box.lineEdit() if hasattr(b_box, "lineEdit") else b_box, "20")
    assert form.params.values()["expected_batch"] == 20.0
    qtbot.waitUntil(view.release_button.isEnabled, timeout=TIMEOUT_MS)
    # The window's Release… action (Ctrl+Shift+R) follows the tab's button here.
    assert win.release_action.isEnabled()
    planned = r.at_epsilon["dpsgd"]["epsilon"]
    qtbot.mouseClick(view.release_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.release.dialog is not None and view.release.dialog.isVisible(),
                    timeout=TIMEOUT_MS)
    dialog = view.release.dialog
    assert dialog.held_out.text() == HELD_OUT_TEXT
    assert f"ε = {eps:g}," in dialog.charge_label.text()  # at most the target
    assert dialog.planned_label.text().startswith(f"ε = {planned:.6g},")
    assert planned < eps
    assert dialog.out_edit.text() == str(win.projects.default_out_dir())
    qtbot.mouseClick(dialog.release_button, Qt.MouseButton.LeftButton)
    try:
        qtbot.waitUntil(lambda: win.projects.busy is None
                        and "Released as" in view.status.text(), timeout=TIMEOUT_MS)
    except Exception:
        raise AssertionError(f"no release: status {view.status.text()!r}, busy "
                             f"{win.projects.busy!r}, window status "
                             f"{win.statusBar().currentMessage()!r}") from None
    (source, engine), = spy
    assert isinstance(source, SecureSource) and not engine.simulated
    with Project.open(project_path) as project:
        (dataset,) = project.datasets()
        (row,) = project.ledger(dataset)
        assert row.query == "train"
        assert float(row.epsilon) == float(engine.epsilon) == pytest.approx(planned)
        assert float(row.delta) == float(engine.delta)
    assert win.ledger_view.table.rowCount() == 1
    done = win.projects.done_dialog
    assert "Released model: <b>logistic by dpsgd</b>, 3 coefficients" in done.value_label.text()
    assert f"ε = {float(engine.epsilon):.6g}" in view.status.text()
    done.close()
    # A comparison that finishes after the release (here: Train again) says its summary
    # and keeps the release's line: it used to replace it, and where the comparison of the
    # typed B finished last (a fresh clone's cold caches), "Released as" was gone.
    released = view.status.text().splitlines()[-1]
    assert released.startswith("Released as")
    qtbot.mouseClick(view.rerun_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.jobs.busy and "AUC" in view.status.text(),
                    timeout=4 * TIMEOUT_MS)
    lines = view.status.text().splitlines()
    assert lines[-1] == released and "AUC" in lines[0]
