"""Projects, releases and the ledger in the main window: create a project, release through
the confirmation dialog (its exec patched to accept), see the files, the Ledger tab, the
cumulative-ε plot and the budget panel; refusals (budget exceeded, dataset changed, not a
project) show their message and write nothing; release specs round-trip."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QDialog, QMessageBox

from dpstudio.commands import release as release_command
from dpstudio.data import open_dataset, sample_path
from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project, ReleaseSpec, load_spec
from dpstudio.ui import session as session_module
from dpstudio.ui.ledger_view import BUDGET_COLOUR, COLUMNS
from dpstudio.ui.main_window import MainWindow
from dpstudio.ui.project_dialogs import NewProjectDialog, ReleaseDialog
from dpstudio.ui.result_panel import RELEASE_TOOLTIP

TIMEOUT_MS = 15_000
SIZE = (1400, 900)


@pytest.fixture
def data(tmp_path) -> Path:
    """A copy of the survey sample (with its declarations), so the test may change it."""
    folder = tmp_path / "data"
    folder.mkdir()
    src = sample_path("survey")
    shutil.copy(src, folder / src.name)
    shutil.copy(src.with_name(src.name + ".schema.json"), folder / (src.name + ".schema.json"))
    return folder / src.name


@pytest.fixture
def window(qtbot, data, monkeypatch):
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", False)
    win = MainWindow(open_dataset(data))
    qtbot.addWidget(win)
    win.resize(*SIZE)
    assert win.analysis.wait_idle(20)
    yield win
    win.analysis.shutdown()
    win.projects.shutdown()


@pytest.fixture
def messages(monkeypatch):
    """QMessageBox.critical / warning / information recorded instead of shown."""
    shown: list[tuple[str, str, str]] = []
    for kind in ("critical", "warning", "information"):
        monkeypatch.setattr(QMessageBox, kind, staticmethod(
            lambda _parent, title, text, *a, _k=kind, **kw: shown.append((_k, title, text))
            or QMessageBox.StandardButton.Ok))
    return shown


class Confirm:
    """ReleaseDialog.exec patched: records the dialog, ticks the script box, accepts."""

    def __init__(self, monkeypatch, before=None) -> None:
        self.dialogs: list[ReleaseDialog] = []
        self.before = before
        confirm = self

        def exec_(dialog: ReleaseDialog) -> int:
            confirm.dialogs.append(dialog)
            dialog.script_box.setChecked(True)
            if confirm.before is not None:
                confirm.before(dialog)
            return QDialog.DialogCode.Accepted

        monkeypatch.setattr(ReleaseDialog, "exec", exec_)


def _create(win: MainWindow, tmp_path: Path, epsilon: float = 1.0) -> Path:
    path = tmp_path / "study.dpstudio"
    assert win.projects.create_project(path, epsilon=epsilon, delta=1e-5)
    return path


def _release(win: MainWindow, qtbot):
    button = win.result_panel.release_button
    assert button.isEnabled(), button.toolTip()
    with qtbot.waitSignal(win.projects.release_done, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    return blocker.args[0]


def _local_histogram(s, column: str, mechanism: str) -> None:
    """The session on a local-model histogram of ``column`` with ``mechanism``."""
    s.set_column(column)
    s.set_trust_model("local")
    s.set_query("histogram")
    s.set_mechanism(mechanism)


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_release_a_mean_through_the_dialog(window, qtbot, tmp_path, monkeypatch):
    assert not window.result_panel.release_button.isEnabled()
    assert window.result_panel.release_button.toolTip() == RELEASE_TOOLTIP
    project = _create(window, tmp_path)
    assert "study.dpstudio" in window.windowTitle() and "survey.csv" in window.windowTitle()
    s = window.session
    assert (s.column, s.query, s.mechanism, s.trust_model) == ("age", "mean", "laplace",
                                                               "central")
    s.set_epsilon(0.6)
    # Before any release the budget panel shows the project's default budget.
    assert window.analysis_panel.budget_panel.figures()["total_epsilon"] == 1.0
    assert "study.dpstudio" in window.analysis_panel.budget_box.title()
    confirm = Confirm(monkeypatch)
    opened = []
    monkeypatch.setattr("dpstudio.ui.project_dialogs.QDesktopServices.openUrl",
                        lambda url: opened.append(url.toLocalFile()) or True)
    on_ui_thread = []
    real_release = Project.release

    def spy(self, *args, **kwargs):
        on_ui_thread.append(threading.current_thread() is threading.main_thread())
        return real_release(self, *args, **kwargs)

    monkeypatch.setattr(Project, "release", spy)

    record = _release(window, qtbot)

    assert on_ui_thread == [False]  # the release ran in the worker

    # The confirmation said what, what it costs, and that it is real.
    dialog = confirm.dialogs[0]
    assert "OS CSPRNG" in dialog.banner.text()
    assert "ε = 0.6" in dialog.charge_label.text()
    assert "ε = 1" in dialog.before_label.text() and "ε = 0.4" in dialog.after_label.text()
    assert "registered" in dialog.notes_label.text()
    # The release: done, its files written next to the project.
    out = project.parent / "study-releases"
    assert record.status == "done" and record.out_dir == out
    assert (record.query, record.column, record.mechanism) == ("mean", "age", "laplace")
    assert float(record.epsilon) == 0.6
    names = _files(out)
    assert names == sorted(f.name for f in record.files)
    assert any(n.endswith(".csv") for n in names) and any(n.endswith(".py") for n in names)
    assert any(n.endswith(".manifest.json") for n in names)
    # The result dialog shows the released value and opens the folder.
    done = window.projects.done_dialog
    assert done is not None and done.isVisible()
    value = record.result["value"]
    assert f"{value:,.6g}" in done.value_label.text()
    assert done.files.count() == len(record.files)
    done.open_button.click()
    assert opened == [str(out)]
    # The analyst's copy (the report is ticked by default): in the project's private
    # folder, named in the dialog, opened by its own button, never among the files.
    analyst = record.analyst_report
    assert analyst is not None and analyst.exists() and analyst.parent != out
    assert str(analyst) in done.analyst_label.text() and done.analyst_label.isVisible()
    done.analyst_button.click()
    assert opened[-1] == str(analyst)
    assert analyst.name not in names
    # The Ledger tab: one row, one point on the cumulative plot under the budget line.
    window.ledger_tab_action.trigger()
    assert window.tabs.currentWidget() is window.ledger_view
    rows = window.ledger_view.rows()
    assert len(rows) == 1
    row = dict(zip(COLUMNS, rows[0], strict=True))
    assert (row["Query"], row["Column"], row["Mechanism"], row["ε"], row["δ"],
            row["Status"]) == ("Mean", "age", "laplace", "0.6", "0", "done")
    assert row["#"] == str(record.id) and "manifest" in row["Files"]
    plotted = window.ledger_view.plotted()
    assert plotted["ids"] == [record.id]
    np.testing.assert_allclose(plotted["cumulative_epsilon"], [0.6])
    assert plotted["budget_epsilon"] == 1.0
    assert "ε 0.4</b> of 1" in window.ledger_view.remaining.text()
    # The budget panel shows what the project has left.
    figures = window.analysis_panel.budget_panel.figures()
    assert figures["spent_epsilon"] == pytest.approx(0.6)
    assert figures["remaining_epsilon"] == pytest.approx(1.0 - 0.6 - 0.6)
    # In words that add up: the second 0.6 is this release, not spent (issue 12 item 8).
    panel = window.analysis_panel.budget_panel
    assert panel.words.text() == "ε 0.6 spent + 0.6 this release of 1 → 0.2 over"
    assert "1 real release of survey.csv" in panel.words.toolTip()
    assert not window.analysis_panel.budget_panel.total_eps.isEnabled()
    # Closing the project falls back to the session-level budget.
    assert window.projects.close_project()
    assert window.session.project_budget is None
    assert window.analysis_panel.budget_panel.total_eps.isEnabled()
    assert window.ledger_view.rows() == [] and "study" not in window.windowTitle()


def test_a_release_over_budget_is_refused_before_the_click_and_writes_nothing(
        window, qtbot, tmp_path, monkeypatch, messages):
    """Issue 12 item 9 changed this: the second release is refused by the Release…
    button itself (disabled, the reason its tooltip), not by a pop-up after the click."""
    project = _create(window, tmp_path)
    window.session.set_epsilon(0.6)
    confirm = Confirm(monkeypatch)
    _release(window, qtbot)
    out = project.parent / "study-releases"
    before = _files(out)
    button = window.result_panel.release_button
    assert not button.isEnabled() and button.text() == "Release… (over budget)"
    assert button.toolTip() == (
        "Over budget: this release needs ε 0.6, but only ε 0.4 of 1 is left for survey.csv "
        "in study.dpstudio; lower it, or use the remaining ε (budget panel).")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.wait(200)
    assert messages == [] and window.projects.busy is None
    assert len(confirm.dialogs) == 1 and _files(out) == before
    assert len(window.ledger_view.rows()) == 1


def test_budget_spent_elsewhere_while_confirming_refuses_the_release(
        window, qtbot, tmp_path, monkeypatch, messages, data):
    project = _create(window, tmp_path)
    window.session.set_epsilon(0.6)
    other = tmp_path / "other-out"

    def spend_elsewhere(_dialog: ReleaseDialog) -> None:  # another process, same project
        with Project.open(project) as p:
            p.release(ReleaseSpec(str(data), QuerySpec("count", "laplace", 0.6,
                                                       column="age")), other)

    Confirm(monkeypatch, before=spend_elsewhere)
    qtbot.mouseClick(window.result_panel.release_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(messages), timeout=TIMEOUT_MS)
    assert messages[-1][1] == "Budget exceeded" and "0.4" in messages[-1][2]
    assert not (project.parent / "study-releases").exists()  # not even the folder
    rows = window.ledger_view.rows()
    assert len(rows) == 1 and rows[0][2] == "Count"  # only the other process's release
    assert window.session.project_budget.spent_epsilon == pytest.approx(0.6)


def test_a_changed_dataset_is_refused(window, qtbot, tmp_path, monkeypatch, messages, data):
    _create(window, tmp_path, epsilon=5.0)
    Confirm(monkeypatch)
    _release(window, qtbot)
    with open(data, "a", encoding="utf-8") as handle:
        handle.write("R9999,online,Arts,1st,30,10,no,,3.1,no\n")
    offered: list[list[str]] = []

    def cancel(box):  # the analyst is asked whose budget this version spends, and cancels
        offered.append([b.text() for b in box.buttons()])
        box.button(QMessageBox.StandardButton.Cancel).click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", cancel)
    qtbot.mouseClick(window.result_panel.release_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(messages), timeout=TIMEOUT_MS)
    # The registered path with other rows: sharing its budget is offered, a budget of its
    # own is not (it is the same file).
    assert any(t.startswith("Share the budget of #1") for t in offered[0])
    assert "It holds other people" not in offered[0]
    assert messages[-1][1] == "The dataset has changed"
    assert "changed since it was registered" in messages[-1][2]
    assert len(window.ledger_view.rows()) == 1


def test_release_button_says_why_it_is_disabled(window, tmp_path):
    _create(window, tmp_path)
    button = window.result_panel.release_button
    assert button.isEnabled() and "OS CSPRNG" in button.toolTip()
    window.session.set_trust_model("local")  # local needs a replace-relation budget
    assert not button.isEnabled() and "replace relation" in button.toolTip()
    window.session.set_trust_model("shuffle")
    if window.session.trust_model == "shuffle":
        assert not button.isEnabled()
    window.session.set_trust_model("central")
    window.session.set_relation("replace")
    assert not button.isEnabled() and "add-remove relation" in button.toolTip()
    window.session.set_relation("add-remove")
    assert button.isEnabled()


def test_new_project_dialog_and_recent_projects(window, tmp_path, monkeypatch):
    target = tmp_path / "from-dialog"

    def exec_(dialog: NewProjectDialog) -> int:
        assert dialog.epsilon.toolTip() and dialog.delta.toolTip() and dialog.relation.toolTip()
        dialog.path_edit.setText(str(target))  # the suffix is added
        dialog.epsilon.setValue(2.0)
        dialog.relation.setCurrentIndex(1)
        dialog.accountant.setCurrentIndex(dialog.accountant.findData("zcdp"))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(NewProjectDialog, "exec", exec_)
    window.new_project_action.trigger()
    path = target.with_name("from-dialog.dpstudio")
    assert window.projects.project.path == path
    defaults = window.projects.project.defaults()
    assert (float(defaults["epsilon"]), defaults["relation"]) == (2.0, "replace")
    assert defaults["accountant"] == "zcdp"  # the dialog's choice reaches the project
    assert window.settings.recent_projects[0] == str(path.resolve())
    window._fill_recent_projects_menu()
    labels = [a.text() for a in window.recent_projects_menu.actions()]
    assert any("from-dialog.dpstudio" in t for t in labels)
    assert window.projects.close_project()
    next(a for a in window.recent_projects_menu.actions()
         if "from-dialog" in a.text()).trigger()
    assert window.projects.project is not None and window.projects.project.path == path


def test_opening_a_file_that_is_not_a_project_shows_why(window, tmp_path, messages):
    project = _create(window, tmp_path)
    title = window.windowTitle()
    bogus = tmp_path / "notes.dpstudio"
    bogus.write_text("not a database\n", encoding="utf-8")
    assert not window.projects.open_project(bogus)
    kind, heading, text = messages[-1]
    assert (kind, heading) == ("critical", "Could not open the project")
    assert "is not a DP Studio project" in text and "\n" not in text
    assert window.projects.project.path == project and window.windowTitle() == title
    # Creating over an existing file is refused the same way.
    assert not window.projects.create_project(bogus, epsilon=1.0, delta=0.0)
    assert "already exists" in messages[-1][2] and bogus.read_text() == "not a database\n"


def test_save_and_open_a_release_spec(window, tmp_path, data, messages):
    s = window.session
    s.set_column("income")
    s.set_query("sum")
    s.set_epsilon(0.5)
    spec_path = data.parent / "income.toml"
    written = window.projects.save_spec(spec_path)
    assert written == spec_path
    spec = load_spec(spec_path)
    assert spec.dataset == str(data)  # saved relative to the spec's folder
    assert "dataset = \"survey.csv\"" in spec_path.read_text(encoding="utf-8")
    q = spec.query
    assert (q.column, q.query, q.mechanism, q.epsilon, q.bounds) == (
        "income", "sum", "laplace", 0.5, (0.0, 100000.0))
    assert spec.budget_epsilon == s.total_epsilon  # no project: the session's budget
    # The saved spec is what `dpstudio release` takes.
    project = tmp_path / "cli.dpstudio"
    Project.create(project, epsilon=2.0, delta=1e-5).close()
    code = release_command.run([str(spec_path), "--project", str(project),
                                "--out", str(tmp_path / "cli-out")])
    assert code == 0 and any(p.suffix == ".csv" for p in (tmp_path / "cli-out").iterdir())
    # Opening it brings the session back to those choices.
    s.set_column("age")
    s.set_query("mean")
    s.set_epsilon(2.0)
    assert window.projects.open_spec(spec_path)
    assert (s.column, s.query, s.mechanism, s.epsilon) == ("income", "sum", "laplace", 0.5)
    assert messages == []


def test_opening_a_malformed_spec_shows_why(window, tmp_path, messages):
    bad = tmp_path / "bad.toml"
    bad.write_text("schema_version = 1\ncolumn = \n", encoding="utf-8")
    assert not window.projects.open_spec(bad)
    assert messages[-1][:2] == ("critical", "Could not open the release spec")
    assert "malformed TOML" in messages[-1][2]


# -- screenshots ---------------------------------------------------------------------------


def _pixels(image: QImage, rect: QRect) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32).copy(rect)
    raw = np.frombuffer(image.constBits(), dtype=np.uint32).reshape(image.height(), -1)
    return raw[:, : image.width()] & 0xFFFFFF


def _near(pixels: np.ndarray, colour: str, tolerance: int = 60) -> int:
    c = QColor(colour)
    r, g, b = (pixels >> 16) & 255, (pixels >> 8) & 255, pixels & 255
    return int(((np.abs(r.astype(int) - c.red()) + np.abs(g.astype(int) - c.green())
                 + np.abs(b.astype(int) - c.blue())) < tolerance).sum())


def test_ledger_tab_and_release_dialog_render(window, qtbot, tmp_path, monkeypatch):
    window.show()
    qtbot.waitExposed(window)
    _create(window, tmp_path, epsilon=2.0)
    grabbed: list[QImage] = []

    def grab(dialog: ReleaseDialog) -> None:
        dialog.adjustSize()
        grabbed.append(dialog.grab().toImage())

    Confirm(monkeypatch, before=grab)
    window.session.set_epsilon(0.5)
    _release(window, qtbot)
    window.session.set_epsilon(0.8)
    _release(window, qtbot)
    window.projects.done_dialog.close()
    window.show_view("ledger")
    qtbot.wait(50)
    image = window.grab().toImage()
    image.save(str(tmp_path / "ledger.png"))
    grabbed[0].save(str(tmp_path / "release-dialog.png"))
    assert (image.width(), image.height()) == SIZE
    plot = window.ledger_view.plot
    rect = QRect(plot.mapTo(window, QPoint(0, 0)), plot.size())
    assert rect.width() > 400 and rect.height() > 240
    pixels = _pixels(image, rect)
    assert _near(pixels, BUDGET_COLOUR) > 100  # the budget line
    assert _near(pixels, session_module.TRUST_MODELS["central"]["colour"]) > 100  # the steps
    np.testing.assert_allclose(window.ledger_view.plotted()["cumulative_epsilon"], [0.5, 1.3])
    dialog = grabbed[0]
    assert dialog.width() >= 560 and dialog.height() > 300
    assert _near(_pixels(dialog, dialog.rect()), "#fdecea", 10) > 2000  # the warning banner


def test_release_a_local_krr_histogram(window, qtbot, tmp_path, monkeypatch):
    """The local model: Release… is enabled for K-RR on a declared categorical column, the
    confirmation names the local model and the charge, and the release writes the records."""
    path = tmp_path / "study.dpstudio"
    assert window.projects.create_project(path, epsilon=2.0, delta=1e-5, relation="replace")
    s = window.session
    _local_histogram(s, "faculty", "krr")
    s.set_epsilon(0.8)
    assert (s.trust_model, s.query, s.mechanism) == ("local", "histogram", "krr")
    window.projects.update_release_state()
    assert window.result_panel.release_button.isEnabled(), \
        window.result_panel.release_button.toolTip()
    confirm = Confirm(monkeypatch)
    record = _release(window, qtbot)
    dialog = confirm.dialogs[0]
    assert dialog.trust_label is not None
    assert "local model: each record randomized before aggregation" in dialog.trust_label.text()
    assert "ε = 0.8" in dialog.charge_label.text()
    assert record.status == "done" and record.trust_model == "local"
    assert (record.query, record.column, record.mechanism) == ("histogram", "faculty", "krr")
    assert float(record.epsilon) == 0.8
    names = {f.name for f in record.files}
    records_csv = next(n for n in names if n.endswith(".records.csv"))
    text = (record.out_dir / records_csv).read_text(encoding="utf-8")
    assert text.startswith("report") and "Engineering" not in text
    assert any(n.endswith(".manifest.json") for n in names)
    # Shuffle releases into the project too (issue 14): no "not in the project format".
    s.set_trust_model("shuffle")
    window.projects.update_release_state()
    assert s.trust_model == "shuffle"
    assert "project format" not in window.result_panel.release_button.toolTip()


def test_release_confirmation_shows_the_randomizers_true_epsilon(window, qtbot, tmp_path,
                                                                 monkeypatch):
    """Randomized response with p = 0.75 is ln 3-DP whatever the ε slider says: the
    confirmation, the ledger and the manifest all show ln 3 ≈ 1.0986 (before: ε = 1)."""
    import json
    import math

    path = tmp_path / "study.dpstudio"
    assert window.projects.create_project(path, epsilon=3.0, delta=1e-5, relation="replace")
    s = window.session
    _local_histogram(s, "cheated_on_exam", "rr")
    s.set_epsilon(1.0)
    s.set_param("p", 0.75)
    assert (s.trust_model, s.mechanism, s.epsilon) == ("local", "rr", 1.0)
    window.projects.update_release_state()
    confirm = Confirm(monkeypatch)
    record = _release(window, qtbot)
    dialog = confirm.dialogs[0]
    assert "ε = 1.099" in dialog.charge_label.text(), dialog.charge_label.text()
    assert "ε = 1," not in dialog.charge_label.text()
    assert float(record.epsilon) == pytest.approx(math.log(3), abs=1e-14)
    assert float(record.epsilon) >= math.log(3)
    manifest = next(f.path for f in record.files if f.name.endswith(".manifest.json"))
    assert json.loads(manifest.read_text())["privacy"]["epsilon"] == float(record.epsilon)
    assert window.ledger_view.rows()[0][5] == "1.099"


def test_an_edited_ledger_is_shown_and_refused_until_acknowledged(window, qtbot, tmp_path,
                                                                   monkeypatch, messages):
    """A release row deleted with sqlite3 while the project is closed: opening it warns and
    says what changed, the Ledger tab shows it, Release… is disabled with the reason; the
    tab's Acknowledge button (confirmed) keeps the pessimistic charge and allows releases."""
    import sqlite3

    path = _create(window, tmp_path, epsilon=3.0)
    Confirm(monkeypatch)
    window.session.set_epsilon(0.5)
    _release(window, qtbot)
    _release(window, qtbot)
    window.projects.close_project()
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM releases WHERE id = 2")
    conn.execute("UPDATE datasets SET budget_epsilon = '50'")
    conn.commit()
    conn.close()
    window.show()
    assert window.projects.open_project(path)
    assert window.tabs.currentWidget() is window.ledger_view
    kind, title, text = messages[-1]
    assert (kind, title) == ("warning", "The ledger was changed outside DP Studio")
    assert "release #2 was deleted" in text and "budget ε raised from 3.0 to 50" in text
    # The app's way on (the Ledger tab's button), not the command line's.
    assert "--acknowledge" not in text and "dpstudio ledger" not in text
    assert "Acknowledge the changes…" in text and "Ledger tab" in text
    view = window.ledger_view
    assert view.tamper.isVisibleTo(window) and view.acknowledge_button.isVisibleTo(window)
    assert "release #2 was deleted" in view.tamper.text()
    button = window.result_panel.release_button
    assert not button.isEnabled() and "changed outside DP Studio" in button.toolTip()
    # Refused by the release itself (edited after the check): the same advice.
    from dpstudio.project import LedgerTamperedError
    from dpstudio.project.project import tamper_message

    problems = window.projects.tamper
    window.projects._refused(LedgerTamperedError(tamper_message(path, problems), problems))
    kind, title, text = messages[-1]
    assert title == "The ledger was changed outside DP Studio" and "release #2" in text
    assert "--acknowledge" not in text and "Acknowledge the changes…" in text
    # The budget shown is the pessimistic one even before acknowledging.
    assert window.session.project_budget.spent_epsilon == pytest.approx(1.0)
    assert window.session.project_budget.total_epsilon == pytest.approx(3.0)
    # The deleted release still counts in "Remaining": the table and the plot show it too.
    assert [(r[0], r[5], r[7]) for r in view.rows()] == [("1", "0.5", "done"),
                                                         ("2", "0.5", "deleted")]
    assert view._plotted["cumulative_epsilon"].tolist() == pytest.approx([0.5, 1.0])
    assert "ε 2</b> of 3" in view.remaining.text()
    asked = []
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda *a, **k: asked.append(a[2]) or QMessageBox.StandardButton.Yes))
    qtbot.mouseClick(view.acknowledge_button, Qt.MouseButton.LeftButton)
    assert asked and "release #2 was deleted" in asked[0]
    assert not view.tamper.isVisibleTo(window) and button.isEnabled()
    rows = view.rows()
    assert [r[7] for r in rows] == ["done", "aborted"]  # restored, still charged
    record = _release(window, qtbot)
    assert record.id == 3
    assert window.session.project_budget.spent_epsilon == pytest.approx(1.5)


def test_every_epsilon_shown_for_rr_with_p_is_the_randomizers(window, qtbot):
    """Before a release too: with p = 0.75 the budget panel's "this release" and the
    trade-off plot's (ε, δ) bound say ln 3 ≈ 1.099, not the slider's 1."""
    from dpstudio.analysis import privacy as compute

    s = window.session
    _local_histogram(s, "cheated_on_exam", "rr")
    s.set_epsilon(1.0)
    s.set_param("p", 0.75)
    panel = window.analysis_panel.budget_panel
    panel.refresh()
    assert panel.figures()["this_epsilon"] == pytest.approx(1.0986122886681098)
    result = compute.tradeoff(s.settings(), draws=2000)
    assert result.bound.label.startswith("ε = 1.1"), result.bound.label
    assert any("fix its guarantee at ε = 1.099" in n for n in result.notes)
    s.set_param("p", 0.0)  # p derived from ε: the slider's ε again
    assert panel.figures()["this_epsilon"] == pytest.approx(1.0)


@pytest.mark.parametrize("answer", ["share", "cancel"])
def test_a_version_of_a_spent_dataset_asks_whose_budget(window, qtbot, tmp_path, data,
                                                         monkeypatch, messages, answer):
    """A file with one row changed looks like a version of the registered survey: the
    Release… button asks whose budget it spends; sharing charges the registered dataset's
    budget (before: the version got a full budget of its own, silently)."""
    path = _create(window, tmp_path, epsilon=1.0)
    Confirm(monkeypatch)
    window.session.set_epsilon(0.6)
    first = _release(window, qtbot)
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[4] = str(int(cells[4]) + 1)  # one person's age
    version = data.with_name("survey-v2.csv")
    version.write_text("".join([lines[0], ",".join(cells), *lines[2:]]), encoding="utf-8")
    shutil.copy(data.with_name(data.name + ".schema.json"),
                version.with_name(version.name + ".schema.json"))
    assert window.open_path_now(version)
    assert window.analysis.wait_idle(20)
    asked: list[str] = []

    def exec_(box):
        asked.append(box.text())
        wanted = box.buttons()[0] if answer == "share" else box.button(
            QMessageBox.StandardButton.Cancel)
        wanted.click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    window.session.set_epsilon(0.3)
    button = window.result_panel.release_button
    if answer == "share":
        record = _release(window, qtbot)
        assert "looks like a version of registered dataset" in asked[0]
        assert record.dataset_id != first.dataset_id
        with Project.open(path) as project:
            # The version spends the registered dataset's budget: 0.6 + 0.3 of 1.0.
            assert float(project.budget(record.dataset_id).remaining_epsilon) == \
                pytest.approx(0.1)
    else:
        with qtbot.waitSignal(window.projects.release_refused, timeout=TIMEOUT_MS):
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert asked and any("looks like a version" in text for _, _, text in messages)
        with Project.open(path) as project:
            assert len(project.ledger()) == 1


def test_a_re_encoded_copy_is_found_by_its_hashes_off_the_ui_thread(window, qtbot, tmp_path,
                                                                     monkeypatch, data):
    """A moved or re-encoded copy of a registered dataset is found by its byte and content
    hashes, computed in the worker and the budget panel updated when they are known.
    Before: both were computed on the UI thread (a second for a million rows) inside
    ``suppress(Exception)``."""
    from dpstudio.data import fingerprint

    _create(window, tmp_path, epsilon=2.0)
    Confirm(monkeypatch)
    window.session.set_epsilon(0.5)
    _release(window, qtbot)
    copy = tmp_path / "elsewhere" / "survey.csv"
    copy.parent.mkdir()
    copy.write_bytes(data.read_bytes() + b"\n")  # the same rows, other bytes
    threads: list[bool] = []
    real = fingerprint.content_fingerprint

    def spy(frame):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(frame)

    monkeypatch.setattr(fingerprint, "content_fingerprint", spy)
    assert window.open_path_now(copy)
    qtbot.waitUntil(lambda: window.session.project_budget is not None
                    and window.session.project_budget.registered, timeout=TIMEOUT_MS)
    budget = window.session.project_budget
    assert budget.spent_epsilon == pytest.approx(0.5) and budget.releases == 1
    assert threads == [False]  # once, in the worker
