"""Local releases are stored with their exact privacy-loss pair (issue 14), and a pld
project composes them exactly.

Numbers: a budget of (ε, δ) = (6, 10⁻⁴); one Gaussian sum of x ∈ [0, 10] at (0.5, 10⁻⁶)
(drawn on the grid, so stored as the discrete Gaussian it is), then five histograms of
g ∈ {a, b} (plus the "other or missing" cell) with symmetric unary encoding at ε = 1.
Every accountant reads ε at the δ basic composition spends, Σδᵢ = 10⁻⁶: basic 5.5;
pld ≈ 5.35 (the SUE pairs' losses ±1 compose to fewer large values than five worst-case
ε = 1 pairs). Pure releases alone spend Σδᵢ = 0, where every accountant reads basic's ε.
"""

import sys
from decimal import Decimal

import pytest
from dps_project_helpers import make_dataset, run

from dpstudio.engine.accounting.ledger import spent
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project, ReleaseSpec


def _sue(data) -> ReleaseSpec:
    return ReleaseSpec(dataset=str(data), formats=("json",), trust_model="local",
                       query=QuerySpec(query="histogram", mechanism="sue", epsilon=1.0,
                                       categories=("a", "b"), relation="replace",
                                       column="g"))


def _gaussian(data) -> ReleaseSpec:
    return ReleaseSpec(dataset=str(data), formats=("json",),
                       query=QuerySpec(query="sum", mechanism="gaussian", epsilon=0.5,
                                       delta=1e-6, bounds=(0.0, 10.0), column="x",
                                       relation="replace"))


def _released(capsys, tmp_path, accountant: str = "pld"):
    """A project of the module's numbers, its six releases made; returns its path."""
    data = make_dataset(tmp_path)
    path = tmp_path / f"{accountant}.dpstudio"
    code, _, err = run(capsys, "project", "init", path, "--epsilon", "6", "--delta", "1e-4",
                       "--accountant", accountant, "--relation", "replace")
    assert code == 0, err
    with Project.open(path) as p:
        p.release(_gaussian(data), tmp_path / "out")
        for _ in range(5):
            p.release(_sue(data), tmp_path / "out")
    return path


def test_sue_releases_are_stored_as_their_pair_and_pld_spends_less(capsys, tmp_path):
    with Project.open(_released(capsys, tmp_path)) as p:
        (ds,) = p.datasets()
        rows = p.ledger(ds)
        by = p.spent_by_accountant(ds)
        budget = p.budget(ds)
    assert [r.loss["mechanism"] for r in rows] == ["discrete_gaussian"] + ["pair"] * 5
    assert rows[1].loss["schema_version"] == 2
    desc = LossDescription.from_dict(rows[1].loss)
    assert [round(x, 12) for x in desc.losses] == [-1.0, 0.0, 1.0]
    assert by["basic"] == (Decimal("5.5"), Decimal("0.000001"))
    engine = spent([LossDescription.from_dict(r.loss) for r in rows], "pld", 1e-6).epsilon
    assert float(by["pld"][0]) == pytest.approx(engine, abs=1e-12)
    assert 5.3 < float(by["pld"][0]) < 5.45 < float(by["basic"][0])
    assert budget.accountant == "pld" and budget.spent_epsilon == by["pld"][0]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
