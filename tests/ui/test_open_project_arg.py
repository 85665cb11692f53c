"""``dpstudio study.dpstudio`` (what a double-click on a project runs) opens the project.

The desktop file passes the project's path as the one argument; before, the app took it for
a dataset and stopped with "unsupported file type (.dpstudio)".
"""

from __future__ import annotations

import pandas as pd
import pytest

from dpstudio.project import Project
from dpstudio.ui import app as app_module
from dpstudio.ui.project_controller import ProjectController


@pytest.fixture
def opened(monkeypatch):
    """Record what the window opens: the project path and the dataset's file."""
    seen: dict[str, object] = {}
    real_open = ProjectController.open_project

    def spy(self, path=None):
        ok = real_open(self, path)
        seen["project"] = self.project.path if ok and self.project is not None else None
        seen["dataset"] = self.window.session.dataset.path
        return ok

    monkeypatch.setattr(ProjectController, "open_project", spy)
    return seen


def test_a_project_argument_opens_the_project_and_its_dataset(tmp_path, opened, qapp):
    data = tmp_path / "people.csv"
    pd.DataFrame({"age": [30, 40, 50, 60] * 10}).to_csv(data, index=False)
    project = tmp_path / "study.dpstudio"
    with Project.create(project, epsilon=2.0, delta=1e-5) as created:
        created.register_dataset(data)
    code = app_module.run_app(str(project), screenshot=str(tmp_path / "shot.png"))
    assert code == 0
    assert opened["project"] is not None and opened["project"].name == "study.dpstudio"
    assert str(opened["dataset"]).endswith("people.csv")


def test_a_missing_project_is_one_sentence(tmp_path, capsys, qapp):
    code = app_module.run_app(str(tmp_path / "gone.dpstudio"), screenshot=str(tmp_path / "s.png"))
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "project not found" in err


def test_the_application_names_its_desktop_file(qapp):
    assert app_module._application().desktopFileName() == "io.github.dpstudio.DPStudio"
