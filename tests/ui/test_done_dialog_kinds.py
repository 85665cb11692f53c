"""The release's result dialog says what each kind of release released, itself: one value
with its interval, a histogram's counts, a model ("Released model: logistic by dpsgd, 3
coefficients"), and a plan's several statistics (a table, one row per statistic or
group). It used to know only values and counts: the Models tab rewrote its line after it
opened, and a plan's release showed no result dialog at all."""

from __future__ import annotations

import shutil
from decimal import Decimal
from types import SimpleNamespace

import pytest
from ui_helpers import close_window, open_window

from dpstudio.data import sample_path
from dpstudio.project import Project
from dpstudio.project.spec import load_spec
from dpstudio.ui.done_kinds import value_text
from dpstudio.ui.project_dialogs import ReleaseDoneDialog

TIMEOUT_MS = 20_000

PLAN = """schema_version = 2
dataset = "survey.csv"
epsilon = 2.0
confidence = 0.9
rows = 2000
report = false
script = false
name = "term"

[[statistics]]
column = "age"
query = "count"

[[statistics]]
column = "hours_studied_per_week"
query = "mean"
by = ["faculty"]

[split]
method = "weights"
"""


def _record(tmp_path, **fields) -> SimpleNamespace:
    base = dict(id=7, query="mean", column="age", mechanism="laplace",
                epsilon=Decimal("0.5"), delta=Decimal(0), result={}, files=(),
                out_dir=tmp_path)
    return SimpleNamespace(**(base | fields))


def _table(dialog) -> list[list[str]]:
    t = dialog.table
    return [[t.item(i, j).text() for j in range(3)] for i in range(t.rowCount())]


def test_a_model_says_what_was_fitted_and_by_which_method(qtbot, tmp_path):
    result = {"model": "logistic", "method": "dpsgd", "coefficients": [0.1, -0.4, 2.0]}
    dialog = ReleaseDoneDialog(_record(tmp_path, query="train", column="passed",
                                       mechanism="dpsgd", result=result))
    qtbot.addWidget(dialog)
    text = dialog.value_label.text()
    assert "Released model: <b>logistic by dpsgd</b>, 3 coefficients at ε = 0.5" in text
    assert "Released value" not in text and dialog.table is None
    weights = dict(result, coefficients=[], weights_shape=[4, 2])
    dialog = ReleaseDoneDialog(_record(tmp_path, query="train", result=weights))
    qtbot.addWidget(dialog)
    assert "logistic by dpsgd</b>, weights [4, 2]" in dialog.value_label.text()


def test_a_value_and_a_histogram_read_as_before(qtbot, tmp_path):
    value = {"value": 41.234567, "ci_low": 40.0, "ci_high": 42.5, "confidence": 0.9}
    dialog = ReleaseDoneDialog(_record(tmp_path, result=value))
    qtbot.addWidget(dialog)
    assert dialog.value_label.text() == ("Released value: <b>41.2346</b> &nbsp;(90% interval "
                                         "40 – 42.5)")
    counts = {"value": {"a": 12.0, "b": 3_000_000.0}, "ci_low": {"a": 10.0, "b": 1.0},
              "ci_high": {"a": 14.0, "b": 2.0}}
    dialog = ReleaseDoneDialog(_record(tmp_path, query="histogram", result=counts))
    qtbot.addWidget(dialog)
    assert dialog.value_label.text() == "2 released counts"
    assert _table(dialog) == [["a", "12", "10 – 14"], ["b", "3,000,000", "1 – 2"]]


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    src = sample_path("survey")
    shutil.copy(src, folder / src.name)
    shutil.copy(src.with_name(src.name + ".schema.json"), folder / (src.name + ".schema.json"))
    (folder / "plan.toml").write_text(PLAN, encoding="utf-8")
    project = tmp_path / "study.dpstudio"
    Project.create(project, epsilon=5.0, delta=1e-5).close()
    win = open_window(qtbot, folder / src.name, monkeypatch)
    assert win.projects.open_project(project)
    yield win
    close_window(win)


def test_a_plan_release_shows_its_statistics_in_the_result_dialog(window, qtbot, tmp_path):
    spec = load_spec(tmp_path / "data" / "plan.toml")
    with qtbot.waitSignal(window.projects.release_done, timeout=TIMEOUT_MS) as done:
        assert window.projects.start_plan_release(spec, tmp_path / "out")
    record = done.args[0]
    assert record.query == "plan"
    dialog = window.projects.done_dialog
    assert dialog is not None and dialog.isVisible() and dialog.record is record
    stats = record.result["statistics"]
    assert "Released plan: <b>2 statistics</b>" in dialog.value_label.text()
    assert "a plan of 2 statistics" in dialog.header.text()
    assert f"ε = {float(record.epsilon):.4g}" in dialog.header.text()
    rows = _table(dialog)
    # The count, then the grouped mean: one row per declared faculty, as the ledger holds.
    count, mean = stats
    groups = mean["value"]
    assert len(rows) == 1 + len(groups) and len(groups) >= 2
    assert rows[0] == [count["label"], value_text(count["value"]),
                       f"{value_text(count['ci_low'])} – {value_text(count['ci_high'])}"]
    for row, (key, v) in zip(rows[1:], groups.items(), strict=True):
        assert row[0] == f"{mean['label']} — {key}" and row[1] == value_text(v)
    assert dialog.table.horizontalHeaderItem(2).text() == "90% interval"
    assert dialog.files.count() == len(record.files)
