"""A project release of a DP-SGD or FedAvg model (``query = "train"``) needs a declared
expected batch: refused in one line without it (release and check alike), nothing drawn,
charged or written; with it, the release's engine divides by B."""

from __future__ import annotations

import shutil

import pytest

from dpstudio.analysis.expected_batch import REFUSAL
from dpstudio.data import sample_path
from dpstudio.project import Project, ProjectError, load_spec, release_model, save_spec
from dpstudio.project.release_model import train_spec

FEATURES = ["age", "bmi", "smoker"]


def _health(folder, rows=160) -> str:
    src = sample_path("health")
    lines = src.read_text(encoding="utf-8").splitlines()[:rows + 1]
    path = folder / "health.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(src.with_name(src.name + ".schema.json"), folder / "health.csv.schema.json")
    return str(path)


@pytest.fixture
def runs(monkeypatch):
    """The engine object of every training a release runs (none when it is refused)."""
    seen = []
    real = release_model.run_analysis

    def run(*args, **kw):
        result = real(*args, **kw)
        seen.append(result.engine)
        return result

    monkeypatch.setattr(release_model, "run_analysis", run)
    return seen


@pytest.mark.parametrize("fields", [
    {"epochs": 1, "batch_rate": 0.1},
    {"fed_variant": "secagg", "sites": 3, "rounds": 1, "local_steps": 1, "batch_rate": 0.1},
])
def test_a_release_without_b_is_refused_with_nothing_charged(tmp_path, runs, fields):
    base = {"dataset": _health(tmp_path), "label": "diabetes", "features": FEATURES,
            "method": "dpsgd", "epsilon": 1.0, "delta": 1e-6} | fields
    spec = train_spec(base)  # the spec itself is valid: only its release is refused
    with Project.create(tmp_path / "p.dpstudio", epsilon=20, delta=1e-3,
                        relation="add-remove") as project:
        for attempt in (project.check, project.release):
            with pytest.raises(ProjectError) as exc:
                attempt(spec, tmp_path / "out")
            assert str(exc.value) == REFUSAL
        assert project.ledger() == []
    assert runs == [] and not (tmp_path / "out").exists()


def test_a_release_with_b_divides_by_it(tmp_path, runs):
    spec = train_spec({"dataset": _health(tmp_path), "label": "diabetes",
                       "features": FEATURES, "method": "dpsgd", "epsilon": 1.0,
                       "delta": 1e-6, "epochs": 1, "batch_rate": 0.1,
                       "expected_batch": 12.0})
    again = load_spec(save_spec(spec, tmp_path / "s.toml"))
    assert again.query.params["expected_batch"] == 12.0
    with Project.create(tmp_path / "p.dpstudio", epsilon=20, delta=1e-3,
                        relation="add-remove") as project:
        record = project.release(again, tmp_path / "out")
    (engine,) = runs
    assert engine.plan.expected_batch == 12.0 and not engine.simulated
    assert float(record.epsilon) == float(engine.epsilon)
