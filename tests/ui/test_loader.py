"""Loading off the UI thread: progress, cancel, errors as dialogs, recent files, drops."""

from __future__ import annotations

import time

import pandas as pd
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox

from dpstudio.data import open_dataset, sample_path
from dpstudio.jobs import check
from dpstudio.ui.loader import DatasetLoader


def _choose(monkeypatch, path):
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda *a, **k: (str(path), "")))


def _wait_idle(qtbot, window, timeout=5000):
    qtbot.waitUntil(lambda: not window.loader.busy, timeout=timeout)


def slow_open(delay: float = 0.02, steps: int = 200):
    """An ``open_dataset`` that takes ``delay × steps`` seconds unless cancelled."""
    calls = {"started": 0, "finished": 0}

    def opener(path, *, state):
        calls["started"] += 1
        for i in range(steps):
            check(state)
            state.progress(i / steps, "slowly")
            time.sleep(delay)
        calls["finished"] += 1
        return open_dataset(path, state=state)

    return opener, calls


def test_open_loads_in_the_background_and_remembers_the_file(qtbot, window, monkeypatch,
                                                              errors, tmp_path):
    good = tmp_path / "tiny.tsv"
    good.write_text("x\ty\n1\t2\n3\t4\n", encoding="utf-8")
    _choose(monkeypatch, good)
    with qtbot.waitSignal(window.dataset_changed, timeout=5000):
        window.open_action.trigger()
    assert errors == []
    assert window.windowTitle() == "DP Studio — tiny.tsv"
    assert window.table_model.rowCount() == 2
    assert window.settings.recent_files[0] == str(good.resolve())
    assert window.settings.path.is_file()  # saved at once


def test_malformed_csv_shows_a_dialog_and_keeps_the_data(qtbot, window, monkeypatch, errors,
                                                         tmp_path):
    before = window.dataset
    bad = tmp_path / "broken.csv"
    bad.write_text("a,b,c\n1,2,3\n4,5,6,7\n", encoding="utf-8")
    _choose(monkeypatch, bad)
    window.open_action.trigger()
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert errors == ["broken.csv: line 3 has 4 fields, expected 3"]
    assert window.dataset is before
    assert window.table_model.rowCount() == 2000
    assert window.windowTitle() == "DP Studio — survey.csv"
    assert window.settings.recent_files == []


def test_cancel_during_a_slow_load_keeps_the_old_dataset(qtbot, window, errors):
    before = window.dataset
    opener, calls = slow_open()
    window.loader.open_fn = opener
    changed = []
    window.dataset_changed.connect(changed.append)
    window.open_path(sample_path("health"))
    qtbot.waitUntil(lambda: window.load_status.isVisibleTo(window), timeout=3000)
    assert window.load_status.label.text() == "Opening health.csv…"
    qtbot.waitUntil(lambda: window.load_status.bar.value() > 0, timeout=3000)
    window.load_status.cancel_button.click()
    assert not window.loader.busy and not window.load_status.isVisibleTo(window)
    window.loader.wait()
    qtbot.wait(50)  # anything the cancelled job emitted has been delivered
    assert calls == {"started": 1, "finished": 0}
    assert window.dataset is before and changed == [] and errors == []
    assert window.windowTitle() == "DP Studio — survey.csv"


def test_the_newest_load_wins(qtbot, window, errors):
    opener, calls = slow_open(delay=0.004, steps=100)
    window.loader.open_fn = opener
    seen = []
    window.dataset_changed.connect(lambda d: seen.append(d.name))
    window.open_path(sample_path("health"))
    window.open_path(sample_path("survey"))
    _wait_idle(qtbot, window)
    window.loader.wait()
    qtbot.wait(50)
    assert seen == ["survey.csv"] and errors == []
    assert calls["finished"] <= 1


def test_loader_signals_without_a_window(qtbot, tmp_path):
    loader = DatasetLoader()
    got = []
    loader.failed.connect(lambda path, message: got.append(message))
    with qtbot.waitSignal(loader.failed, timeout=5000):
        loader.load(tmp_path / "missing.csv")
    assert got == ["missing.csv: file not found (%s)" % (tmp_path / "missing.csv")]
    with qtbot.waitSignal(loader.loaded, timeout=5000) as blocker:
        loader.load(sample_path("survey"))
    assert blocker.args[0].n_rows == 2000
    loader.shutdown()


def test_samples_and_recent_files(qtbot, window, errors, tmp_path):
    with qtbot.waitSignal(window.dataset_changed, timeout=5000):
        window.sample_actions["health"].trigger()
    assert window.dataset.name == "health.csv"
    copy = tmp_path / "mine.csv"
    pd.DataFrame({"a": [1, 2]}).to_csv(copy, index=False)
    with qtbot.waitSignal(window.dataset_changed, timeout=5000):
        window.open_path(copy)
    window._fill_recent_menu()
    labels = [a.text() for a in window.recent_menu.actions() if a.text()]
    assert labels[:2] == ["&1 mine.csv", "&2 health.csv"]
    copy.unlink()
    window.recent_menu.actions()[0].trigger()  # the file has gone since
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert "mine.csv: file not found" in errors[0]
    assert window.settings.recent_files == [str(sample_path("health").resolve())]
    window._clear_recent()
    window._fill_recent_menu()
    assert window.recent_menu.actions()[0].text() == "No recent files"


def _drop(window, path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    return event


def test_drop_a_file_onto_the_window(qtbot, window, errors, tmp_path):
    dropped = tmp_path / "dropped.csv"
    pd.DataFrame({"x": [1, 2, 3]}).to_csv(dropped, index=False)
    with qtbot.waitSignal(window.dataset_changed, timeout=5000):
        assert _drop(window, dropped).isAccepted()
    assert window.dataset.name == "dropped.csv"
    other = tmp_path / "notes.json"
    other.write_text("{}", encoding="utf-8")
    assert not _drop(window, other).isAccepted()
    assert not window.loader.busy


def test_unsaved_declarations_are_offered_before_opening_another_file(qtbot, window, errors,
                                                                      monkeypatch):
    assert window.schema_panel.edit("age", "lower", "0")
    answers = [QMessageBox.StandardButton.Cancel]
    monkeypatch.setattr(QMessageBox, "question",
                        staticmethod(lambda *a, **k: answers.pop(0)))
    assert not window.open_path(sample_path("health"))
    assert not window.loader.busy and window.schema_panel.is_dirty()
    answers.append(QMessageBox.StandardButton.Discard)
    with qtbot.waitSignal(window.dataset_changed, timeout=5000):
        assert window.open_path(sample_path("health"))
    assert not window.schema_panel.is_dirty()
