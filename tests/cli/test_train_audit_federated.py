"""``dpstudio train --audit N`` on a federated run (issue 13): every training a full,
seeded FedAvg simulation on D or on D′ (the canary added at one site), the result's audit
keys as for the central methods, and the audit's progress and cancellation going through
the job's state."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from dpstudio.analysis import resolve, run
from dpstudio.analysis.training import describe_training
from dpstudio.cli import main
from dpstudio.engine.learning.membership import AUDIT_MEANING
from dpstudio.engine.rng import SimulationSource
from dpstudio.jobs import Cancelled

SCHEMA = {"schema_version": 1, "columns": [
    {"name": "a", "type": "numeric", "lower": 0, "upper": 10},
    {"name": "b", "type": "numeric", "lower": -5, "upper": 5},
    {"name": "region", "type": "categorical", "categories": ["north", "south", "east"]},
    {"name": "outcome", "type": "boolean"}]}
DECLARED = {"a": SimpleNamespace(bounds=(0.0, 10.0), categories=None, type=None),
            "b": SimpleNamespace(bounds=(-5.0, 5.0), categories=None, type=None)}
FEDERATED = {"sites": 3, "rounds": 2, "local_steps": 1}


def _columns(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0, 10, n), rng.uniform(-5, 5, n)
    g = rng.choice(["north", "south", "east"], n)
    y = np.where((a - 5) + b + rng.logistic(size=n) > 0, "yes", "no")
    return {"a": a, "b": b, "region": g, "outcome": y}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("fedaudit") / "small.csv"
    c = _columns()
    rows = ["a,b,region,outcome"] + [f"{a:.4f},{b:.4f},{g},{y}" for a, b, g, y in zip(
        c["a"], c["b"], c["region"], c["outcome"], strict=True)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    path.with_name("small.csv.schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    return path


@pytest.mark.parametrize("variant", ["secagg", "local"])
def test_a_federated_audit_gives_points_and_a_bound_below_the_claim(capsys, small, variant):
    code = main(["train", str(small), "--label", "outcome", "--features", "a,b",
                 "--method", "dpsgd", "--fed-variant", variant, "--epsilon", "4",
                 "--delta", "1e-5", "--sites-by", "region", "--rounds", "2",
                 "--local-steps", "1", "--audit", "6", "--simulate", "5", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    audit = d["audit"]
    assert audit["runs"] == 6 and audit["relation"] == "add" and audit["points"]
    assert 0.0 <= audit["epsilon_lower"] <= d["epsilon"] <= 4.0
    assert audit["note"] == AUDIT_MEANING
    for p in audit["points"]:
        assert p["fpr_low"] <= p["fpr"] <= p["fpr_high"]
        assert p["tpr_low"] <= p["tpr"] <= p["tpr_high"]
    # Reproducible: the same seed gives the same audit, training by training.
    main(["train", str(small), "--label", "outcome", "--features", "a,b", "--method",
          "dpsgd", "--fed-variant", variant, "--epsilon", "4", "--delta", "1e-5",
          "--sites-by", "region", "--rounds", "2", "--local-steps", "1", "--audit", "6",
          "--simulate", "5", "--json"])
    assert json.loads(capsys.readouterr()[0])["audit"] == audit


class _CancelAfter:
    """A job state that cancels once ``limit`` progress reports have arrived."""

    def __init__(self, limit):
        self.limit, self.messages = limit, []

    def progress(self, fraction, message=""):
        self.messages.append((fraction, message))

    def cancelled(self):
        return sum("audit" in m for _, m in self.messages) >= self.limit


def _spec(audit):
    spec = describe_training("outcome", ("a", "b"), "logistic", "dpsgd", 4.0, delta=1e-5,
                             audit=audit, fed_variant="secagg", federated=FEDERATED)
    return resolve(spec, DECLARED)


def test_the_audit_reports_each_training_and_stops_when_cancelled():
    spec, notes = _spec(4)
    state = _CancelAfter(limit=10**6)
    r = run(spec, _columns(), SimulationSource(2), notes=notes, state=state)
    audit = [(f, m) for f, m in state.messages if "audit" in m]
    # One report per training, 2·N in all, ending at 1; the inner runs' own go unreported.
    assert [f for f, _ in audit] == pytest.approx([k / 8 for k in range(1, 9)])
    assert r.fields["audit"]["relation"] == "add"
    spec, notes = _spec(4)
    state = _CancelAfter(limit=3)
    with pytest.raises(Cancelled):
        run(spec, _columns(), SimulationSource(2), notes=notes, state=state)
    assert sum("audit" in m for _, m in state.messages) == 3
