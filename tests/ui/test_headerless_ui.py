"""A file of numbers without a header line, opened in the application: it says so and
offers to read the first line as data; a release of it reads the file the same way."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from dpstudio.data import open_dataset, sample_path
from dpstudio.ui.main_window import MainWindow


@pytest.fixture
def numbers(tmp_path):
    path = tmp_path / "numbers.csv"
    path.write_text("10,20\n30,40\n50,60\n", encoding="utf-8")
    return path


@pytest.fixture
def window(qtbot):
    win = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(win)
    yield win
    win.analysis.shutdown()
    win.projects.shutdown()


def _answer(monkeypatch, label: str | None, asked: list[str]) -> None:
    def exec_(box):
        asked.append(box.text())
        if label is not None:
            next(b for b in box.buttons() if b.text() == label).click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", exec_)


def test_reading_the_first_line_as_data_keeps_every_row(window, qtbot, numbers, monkeypatch):
    asked: list[str] = []
    _answer(monkeypatch, "Read it as data", asked)
    window.open_path(numbers)
    # The first load asks; the answer reloads without a header (three rows, not two).
    qtbot.waitUntil(lambda: window.session.dataset is not None
                    and window.session.dataset.path == numbers
                    and len(window.session.dataset.frame) == 3, timeout=10_000)
    assert len(asked) == 1 and "Every column name" in asked[0]
    assert list(window.session.dataset.frame.columns) == ["1", "2"]
    # What a release spec of this session carries (header = false).
    assert window.session.dataset.frame.attrs["header"] is False


def test_keeping_the_names_says_so_in_the_status_bar(window, qtbot, numbers, monkeypatch):
    asked: list[str] = []
    _answer(monkeypatch, "Keep as names", asked)
    window.open_path(numbers)
    qtbot.waitUntil(lambda: window.session.dataset is not None
                    and window.session.dataset.path == numbers, timeout=10_000)
    assert len(window.session.dataset.frame) == 2  # the analyst chose so
    assert "--no-header" in window.statusBar().currentMessage()


def test_a_file_with_a_real_header_asks_nothing(window, qtbot, tmp_path, monkeypatch):
    asked: list[str] = []
    _answer(monkeypatch, None, asked)
    path = tmp_path / "named.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    window.open_path(path)
    qtbot.waitUntil(lambda: window.session.dataset is not None
                    and window.session.dataset.path == path, timeout=10_000)
    assert asked == []


def test_a_headerless_spec_opens_its_dataset_without_a_header(window, qtbot, numbers, tmp_path,
                                                              monkeypatch):
    """Before: open_spec loaded the spec's dataset with a header, so a ``header = false``
    spec lost its first row to the column names (and the spec the session then made said
    ``header = true``)."""
    from dpstudio.engine.queries import QuerySpec
    from dpstudio.project import ReleaseSpec, save_spec

    asked: list[str] = []
    _answer(monkeypatch, None, asked)
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(
        lambda _parent, title, text, *a, **kw: shown.append(text)))
    assert window.projects.create_project(tmp_path / "p.dpstudio", epsilon=1.0, delta=1e-5)
    spec = save_spec(ReleaseSpec(dataset=str(numbers), header=False, query=QuerySpec(
        query="count", mechanism="laplace", epsilon=0.5, column="1")),
        tmp_path / "numbers.toml")
    assert window.projects.open_spec(spec)
    qtbot.waitUntil(lambda: window.session.dataset is not None
                    and window.session.dataset.path == numbers, timeout=10_000)
    assert len(window.session.dataset.frame) == 3 and asked == []
    qtbot.waitUntil(lambda: window.session.column == "1", timeout=10_000)
    assert window.schema_panel.edit("1", "bounds", ("0", "100"))  # public bounds, declared
    assert window.projects.current_spec().header is False and shown == []


def test_a_spec_opening_another_dataset_applies_its_declarations(window, qtbot, numbers,
                                                                 tmp_path, monkeypatch):
    """The spec's bounds are declared once the whole window holds its dataset (before: the
    Columns panel still held the previous dataset and refused "no column '1'")."""
    from dpstudio.engine.queries import QuerySpec
    from dpstudio.project import ReleaseSpec, save_spec

    _answer(monkeypatch, None, [])
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(
        lambda _parent, title, text, *a, **kw: shown.append(text)))
    assert window.projects.create_project(tmp_path / "p.dpstudio", epsilon=1.0, delta=1e-5)
    spec = save_spec(ReleaseSpec(dataset=str(numbers), header=False, query=QuerySpec(
        query="sum", mechanism="laplace", epsilon=0.5, column="1", bounds=(0.0, 100.0))),
        tmp_path / "numbers.toml")
    assert window.projects.open_spec(spec)
    qtbot.waitUntil(lambda: window.session.column == "1" and window.session.query == "sum",
                    timeout=10_000)
    assert window.session.schema["1"].bounds == (0.0, 100.0)
    assert shown == []
    assert window.projects.current_spec().query.bounds == (0.0, 100.0)
