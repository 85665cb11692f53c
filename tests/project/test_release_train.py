"""A trained model released through a project (``query = "train"``, issue 13).

Each method (output and objective perturbation, DP-SGD, FedAvg under secure aggregation)
is released from a spec on a small slice of the bundled health sample: the ledger charges
the (ε, δ) of the very engine object that drew the noise (for DP-SGD, also the PLD
accountant recomputed from the published (q, σ, T)), every random bit comes from the OS
CSPRNG (a spy on the run), the exported coefficients are the released ones, the MLP's
``.npz`` reproduces its predictions with numpy alone, and what cannot be released is
refused in one line with nothing charged.
"""

from __future__ import annotations

import csv
import json
import math
import shutil

import numpy as np
import pytest

from dpstudio.data import sample_path
from dpstudio.engine.rng import SecureSource
from dpstudio.export import verify_manifest
from dpstudio.project import Project, ProjectError, SpecError, load_spec, release_model, save_spec
from dpstudio.project.release_model import train_spec

FEATURES = ["age", "bmi", "smoker"]


def _health(folder, rows: int) -> str:
    """The first ``rows`` records of the health sample, with its declared schema."""
    src = sample_path("health")
    lines = src.read_text(encoding="utf-8").splitlines()[:rows + 1]
    path = folder / "health.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(src.with_name(src.name + ".schema.json"), folder / "health.csv.schema.json")
    return str(path)


@pytest.fixture
def spy(monkeypatch):
    """Every training run a release draws: its source and its engine object."""
    seen = []
    real = release_model.run_analysis

    def run(analysis, values, source, **kw):
        result = real(analysis, values, source, **kw)
        seen.append((source, result.engine))
        return result

    monkeypatch.setattr(release_model, "run_analysis", run)
    return seen


def _project(tmp_path, relation):
    return Project.create(tmp_path / f"{relation}.dpstudio", epsilon=20, delta=1e-3,
                          relation=relation)


def _release(tmp_path, relation, rows=400, **fields):
    data = _health(tmp_path, rows)
    base = {"dataset": data, "label": "diabetes", "features": FEATURES, "epsilon": 1.0}
    if fields.get("method") == "dpsgd":
        # A DP-SGD release divides by a declared expected batch, never by q·n (n is
        # private under add/remove): q × the rows' public count (per site for FedAvg).
        rate = fields.get("batch_rate", 0.05)
        fields.setdefault("expected_batch",
                          rate * rows * 0.75 / (fields.get("sites") or 1))
    with _project(tmp_path, relation) as project:
        record = project.release(train_spec(base | fields), tmp_path / "out")
        spent = project.budget(record.dataset_id).to_dict()
    return record, spent


def _charged_is_engine(record, spy):
    (source, engine), = spy
    assert isinstance(source, SecureSource) and not engine.simulated
    assert float(record.epsilon) == float(engine.epsilon)
    assert float(record.delta) == float(engine.delta)
    return engine


def _csv_coefficients(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {r["feature"]: float(r["coefficient"]) for r in csv.DictReader(handle)}


@pytest.mark.parametrize("method,delta", [("output", 0.0), ("objective", 1e-6)])
def test_perturbation_releases_charge_the_engine_and_export_its_coefficients(
        tmp_path, spy, method, delta):
    record, _ = _release(tmp_path, "replace", method=method, delta=delta)
    engine = _charged_is_engine(record, spy)
    assert record.status == "done" and record.query == "train"
    stem = "r0001-train-diabetes"
    names = {f.name for f in record.files}
    assert names == {f"{stem}.csv", f"{stem}.json", f"{stem}.model-card.md",
                     f"{stem}.manifest.json"}
    pub = record.result
    released = {r["feature"]: r["coefficient"] for r in pub["coefficients"]}
    assert _csv_coefficients(tmp_path / "out" / f"{stem}.csv") == released
    doc = json.loads((tmp_path / "out" / f"{stem}.json").read_text(encoding="utf-8"))
    assert {r["feature"]: r["coefficient"] for r in doc["rows"]} == released
    # The released coefficients are the engine's θ mapped to the features' units.
    from dpstudio.analysis.training_detail import coefficients as _coefficients

    assert list(released) == pub["design"] + ["(intercept)"]
    assert np.array_equal(pub["normalized_theta"], engine.theta)
    bounds = {k: tuple(v) for k, v in pub["feature_bounds"].items()}
    mapped = _coefficients(np.asarray(engine.theta), pub["design"], bounds, None)
    assert {r["feature"]: r["coefficient"] for r in mapped} == released
    n = pub["n"]
    assert n == 300 == engine.plan.n  # 400 rows, a quarter held out: public under replace
    manifest = json.loads((tmp_path / "out" / f"{stem}.manifest.json").read_text("utf-8"))
    assert manifest["privacy"]["epsilon"] == float(engine.epsilon)
    assert manifest["model"]["metrics"]["published"] is False
    assert verify_manifest(tmp_path / "out" / f"{stem}.manifest.json").ok


def test_dpsgd_charge_is_the_accountants_for_the_run(tmp_path, spy):
    from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon

    record, spent = _release(tmp_path, "add-remove", method="dpsgd", delta=1e-6, epochs=1,
                             batch_rate=0.1)
    engine = _charged_is_engine(record, spy)
    plan = record.result["plan"]
    assert (plan["sample_rate"], plan["steps"]) == (0.1, 10)
    again = dpsgd_epsilon(plan["noise_multiplier"], plan["sample_rate"], plan["steps"],
                          1e-6, "pld").epsilon
    assert math.isclose(float(record.epsilon), again, rel_tol=1e-9)
    assert float(record.epsilon) <= 1.0  # σ calibrated to the target, pessimistic side
    assert spent["spent_epsilon"] == pytest.approx(float(engine.epsilon))
    assert "n" not in record.result  # add/remove: n stays private
    assert "accuracy" not in json.dumps(record.result)


def test_check_draws_nothing_and_states_the_target(tmp_path, spy):
    data = _health(tmp_path, 80)
    spec = train_spec({"dataset": data, "label": "diabetes", "features": FEATURES,
                       "method": "output", "epsilon": 0.5})
    with _project(tmp_path, "replace") as project:
        checked = project.check(spec, tmp_path / "out")
        assert float(checked["epsilon"]) == 0.5 and checked["registers_dataset"]
        assert project.ledger() == []
    assert spy == [] and not (tmp_path / "out").exists()


def test_cancel_during_training_charges_and_writes_nothing(tmp_path, spy):
    from dpstudio.jobs import Cancelled

    class CancelMidway:
        """Answers "cancelled" once the training has reported progress."""

        def __init__(self):
            self.seen = []

        def progress(self, fraction, message=""):
            self.seen.append(fraction)

        def cancelled(self):
            return bool(self.seen)

    data = _health(tmp_path, 120)
    spec = train_spec({"dataset": data, "label": "diabetes", "features": FEATURES,
                       "method": "dpsgd", "epsilon": 1.0, "delta": 1e-6, "epochs": 2,
                       # a release needs its divisor declared (never q·n): 0.05 × 90 rows
                       "expected_batch": 4.5})
    state = CancelMidway()
    with _project(tmp_path, "add-remove") as project:
        with pytest.raises(Cancelled):
            project.release(spec, tmp_path / "out", state=state)
        assert project.ledger() == [] and state.seen
    assert not (tmp_path / "out").exists()


def test_fedavg_secagg_release_charges_the_variants_accountant(tmp_path, spy):
    record, _ = _release(tmp_path, "add-remove", method="dpsgd", delta=1e-6,
                         fed_variant="secagg", sites=3, rounds=2, local_steps=2,
                         script=True, script_format="ipynb")
    engine = _charged_is_engine(record, spy)
    pub = record.result
    assert pub["fed_variant"] == "secagg" and pub["accountant"] == engine.accountant
    assert pub["plan"]["per_round"] == list(engine.per_round)
    assert "sites" not in pub["plan"] and "participants" not in pub["plan"]  # data sizes
    assert np.array_equal(pub["normalized_theta"], engine.params)
    notebook = tmp_path / "out" / "r0001-train-diabetes.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    assert any("fed_variant='secagg'" in "".join(c["source"]) for c in cells)


def test_mlp_weights_npz_reproduces_the_predictions(tmp_path, spy):
    from dpstudio.engine.learning.models import MLPModel

    record, _ = _release(tmp_path, "add-remove", rows=160, model="mlp", method="dpsgd",
                         delta=1e-6, hidden=3, epochs=1, features=["age", "bmi"])
    engine = _charged_is_engine(record, spy)
    npz = np.load(tmp_path / "out" / "r0001-train-diabetes.npz", allow_pickle=False)
    assert npz["W1"].shape == (3, 3) and npz["w2"].shape == (3,)
    raw = np.array([[18.0, 12.0], [45.5, 30.0], [100.0, 60.0], [130.0, 5.0]])
    lo, hi = npz["lower"], npz["upper"]
    x = np.clip(2 * (raw - lo) / (hi - lo) - 1, -1, 1)
    rows = np.column_stack([x, np.ones(len(raw))]) / math.sqrt(x.shape[1] + 1)
    mine = 1 / (1 + np.exp(-(np.tanh(rows @ npz["W1"]) @ npz["w2"] + npz["b2"][0])))
    engines = MLPModel(3, 1e-4, hidden=3).predict(engine.theta, rows)
    assert np.allclose(mine, engines, rtol=1e-12, atol=1e-15)
    assert list(npz["inputs"]) == ["age", "bmi"]


def _one_line(exc) -> str:
    text = str(exc.value)
    assert "\n" not in text and text
    return text


def test_refusals_are_one_line_and_charge_nothing(tmp_path, monkeypatch):
    data = _health(tmp_path, 120)
    base = {"dataset": data, "label": "diabetes", "features": FEATURES, "epsilon": 1.0}
    with pytest.raises(SpecError) as exc:  # the objective's condition: λ > 0
        train_spec(base | {"method": "objective", "lambda": 0.0})
    assert "λ" in _one_line(exc) or "lambda" in _one_line(exc)
    with pytest.raises(SpecError) as exc:  # the squared loss has no bounded slope
        train_spec(base | {"method": "objective", "model": "linear"})
    assert "objective" in _one_line(exc)
    with pytest.raises(SpecError) as exc:
        train_spec(base | {"simulate": 3})
    assert "never released" in _one_line(exc)
    with pytest.raises(SpecError) as exc:
        train_spec(base | {"method": "nonprivate"})
    _one_line(exc)
    with _project(tmp_path, "replace") as project:
        with pytest.raises(ProjectError) as exc:  # a classifier's label must be yes/no
            project.release(train_spec(base | {"label": "smoker", "features": ["age"]}),
                            tmp_path / "out")
        assert "yes/no" in _one_line(exc)
        with pytest.raises(ProjectError) as exc:  # DP-SGD's guarantee is add/remove
            project.release(train_spec(base | {"method": "dpsgd", "delta": 1e-6}),
                            tmp_path / "out")
        assert "add-remove" in _one_line(exc)
        # A run that is not drawn from the OS CSPRNG is never released.
        from dpstudio.engine.rng import SimulationSource

        monkeypatch.setattr(release_model, "SecureSource", lambda: SimulationSource(1))
        with pytest.raises(ProjectError) as exc:
            project.release(train_spec(base), tmp_path / "out")
        assert "OS CSPRNG" in _one_line(exc)
        assert project.ledger() == []  # nothing charged, nothing registered
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_train_spec_saves_and_loads_back(tmp_path):
    data = _health(tmp_path, 40)
    spec = train_spec({"dataset": data, "label": "diabetes", "features": FEATURES,
                       "method": "dpsgd", "epsilon": 2.0, "delta": 1e-6, "clip": 0.5,
                       "expected_batch": 1.5,  # declared B saved and read back
                       "fed_variant": "cape", "sites_by": "region", "rounds": 4,
                       "report": True, "budget": {"epsilon": 5.0, "delta": 1e-5}})
    path = save_spec(spec, tmp_path / "s.toml")
    again = load_spec(path)
    assert again.query == spec.query and again.features == spec.features
    assert again.training == spec.training and again.report
    assert (again.budget_epsilon, again.budget_delta) == (5.0, 1e-5)
    assert spec.query.query == "train" and spec.query.mechanism == "dp_sgd"
    assert again.query.params["expected_batch"] == 1.5
    assert spec.query.relation == "add-remove"
