"""Real releases store what they drew (issue 14): the release transaction writes each
release's privacy-loss description (``loss``) in its charge transaction, chained, and a
tight accountant gates the budget with it — so a pld or zcdp project gets more releases
out of the same budget than basic composition, and a basic project is charged as before.

Numbers: a budget of (ε, δ) = (3, 10⁻⁴) and releases of Gaussian-mechanism sums and means
of x ∈ [0, 10] at (0.5, 10⁻⁶). Basic composition refuses the seventh (6 × 0.5 = 3); twenty
fit under pld (ε ≈ 1.83 at δ = 2·10⁻⁵) and under zcdp (ε ≈ 2.00).
"""

import math
import sqlite3
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from dps_project_helpers import make_dataset, run, write_spec
from scipy.optimize import brentq
from scipy.stats import norm

from dpstudio.engine.accounting.ledger import spent
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.queries.spec import sum_sensitivity
from dpstudio.engine.registry import REGISTRY
from dpstudio.project import BudgetExceededError, Project, ReleaseSpec
from dpstudio.project.ledger_loss import loss_json
from dpstudio.project.spec import load_spec

EPS, DELTA, K = 0.5, 1e-6, 20
BUDGET = ("3", "0.0001")


def _spec(data: Path, query: str, accountant: str | None = None) -> ReleaseSpec:
    return ReleaseSpec(dataset=str(data), accountant=accountant, formats=("json",),
                       query=QuerySpec(query=query, mechanism="gaussian", epsilon=EPS,
                                       delta=DELTA, bounds=(0.0, 10.0), column="x"))


def _project(capsys, path: Path, accountant: str) -> Path:
    """``dpstudio project init`` with the accountant, as a user makes one."""
    code, _, err = run(capsys, "project", "init", path, "--epsilon", BUDGET[0], "--delta",
                       BUDGET[1], "--accountant", accountant)
    assert code == 0, err
    return path


def _exact_epsilon(mu: float, delta: float) -> float:
    """ε of one Gaussian mechanism of μ = Δ/σ at δ (Balle & Wang 2018), apart from the
    engine: Gaussians of μᵢ compose to one of μ = √Σμᵢ²."""
    def excess(e: float) -> float:
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta
    return brentq(excess, 1e-9, 100, xtol=1e-13)


def _mu_squared(result: dict) -> float:
    """Σ(Δ/σ)² of a release's noises, read off its published components (value units)."""
    return math.fsum((c["sensitivity"] / c["noise_scale"]) ** 2 for c in result["components"])


def _twenty(capsys, tmp_path: Path, accountant: str):
    data = make_dataset(tmp_path)
    path = _project(capsys, tmp_path / f"{accountant}.dpstudio", accountant)
    with Project.open(path) as p:
        for i in range(K):  # sums and means, alternately; the spec names no accountant
            p.release(_spec(data, "sum" if i % 2 == 0 else "mean"), tmp_path / "out")
        (ds,) = p.datasets()
        return path, ds, p.ledger(ds), p.budget(ds), p.spent_by_accountant(ds)


@pytest.mark.parametrize("accountant", ["pld", "zcdp"])
def test_twenty_gaussian_releases_fit_where_basic_refuses_the_seventh(capsys, tmp_path,
                                                                       accountant):
    path, ds, ledger, budget, by = _twenty(capsys, tmp_path, accountant)
    assert ds.accountant == accountant and len(ledger) == K
    assert budget.accountant == accountant
    assert (budget.spent_epsilon, budget.spent_delta) == by[accountant]
    assert by["basic"] == (Decimal("10.0"), Decimal("0.000020"))  # what basic would charge
    assert budget.spent_epsilon <= Decimal(BUDGET[0]) < by["basic"][0]
    assert budget.spent_delta == Decimal("0.00002")  # δ still adds up, exactly
    assert all(r.epsilon == Decimal("0.5") and r.delta == Decimal("0.000001") for r in ledger)

    # Each stored description is the engine object's noise, as it published it.
    for r in ledger:
        loss, comps = r.loss, r.result["components"]
        parts = [loss] if loss["mechanism"] != "composed" else loss["parts"]
        assert len(parts) == len(comps) == (1 if r.query == "sum" else 2)
        for part, comp in zip(parts, comps, strict=True):
            assert part["mechanism"] == "discrete_gaussian" and comp["family"] == "gaussian"
            assert part["scale"] == comp["scale_steps"]
            assert part["sensitivity"] * comp["grid"] == comp["sensitivity"]
            assert (part["epsilon"], part["delta"]) == (comp["epsilon"], comp["delta"])
        assert (loss["epsilon"], loss["delta"]) == (EPS, DELTA)
    # ...and the noise the engine calibrates for a sum of x ∈ [0, 10] at (0.5, 10⁻⁶).
    fam = REGISTRY.get("gaussian").build()
    sens = sum_sensitivity(0.0, 10.0, "add-remove")
    grid = fam.grid(sens, EPS, DELTA)
    noise = fam.calibrate(math.ceil(10.0 / grid), grid, EPS, DELTA)
    assert ledger[0].loss["scale"] == noise.scale
    assert ledger[0].loss["sensitivity"] == noise.sensitivity

    # Pessimistic against the exact composition of what was drawn (σ is ~4·10⁴ grid
    # steps: the discrete Gaussians are the continuous ones to ~10⁻¹²).
    mu = math.sqrt(math.fsum(_mu_squared(r.result) for r in ledger))
    exact = _exact_epsilon(mu, K * DELTA)
    eps = {name: float(e) for name, (e, _) in by.items()}
    assert exact - 1e-9 <= eps["pld"] <= exact + 1e-3
    assert eps["pld"] < eps["zcdp"] < eps["basic"] == 10.0
    assert exact <= eps["zcdp"] and exact <= eps["advanced"] <= eps["basic"]
    if accountant == "pld":
        assert 1.7 < eps["pld"] < 1.9
    else:
        assert 1.9 < eps["zcdp"] < 2.1

    # Power: were the stored noise twice as wide, pld would charge below the exact loss
    # of what was drawn — the check above would catch a description that flatters it.
    wide = [LossDescription.from_dict(_scaled(r.loss, 2.0)) for r in ledger]
    assert spent(wide, "pld").epsilon < exact - 0.1


def test_a_pld_dataset_refuses_when_the_composition_would_pass_the_budget(capsys, tmp_path):
    """Budget ε = 1: basic fits two sums at 0.5; pld composes four (ε ≈ 0.97) and refuses
    the fifth (≈ 1.09), saying what the composition would come to; nothing is charged."""
    data = make_dataset(tmp_path)
    path = tmp_path / "p.dpstudio"
    assert run(capsys, "project", "init", path, "--epsilon", "1", "--delta", "1e-4",
               "--accountant", "pld")[0] == 0
    with Project.open(path) as p:
        for _ in range(4):
            p.release(_spec(data, "sum"), tmp_path / "out")
        with pytest.raises(BudgetExceededError) as refused:
            p.release(_spec(data, "sum"), tmp_path / "out")
        (ds,) = p.datasets()
        assert len(p.ledger(ds)) == 4 and 0.95 < float(p.budget(ds).spent_epsilon) < 1
    text = str(refused.value)
    assert "the pld accountant counts ε = 1.0" in text and "over the budget ε = 1" in text
    assert "\n" not in text


def _scaled(loss: dict, factor: float) -> dict:
    out = dict(loss)
    if out["mechanism"] == "composed":
        out["parts"] = [_scaled(p, factor) for p in out["parts"]]
    else:
        out["scale"] = out["scale"] * factor
    return out


def test_basic_project_refuses_the_seventh_and_charges_as_before(capsys, tmp_path):
    data = make_dataset(tmp_path)
    path = _project(capsys, tmp_path / "basic.dpstudio", "basic")
    with Project.open(path) as p:
        for i in range(6):
            p.release(_spec(data, "sum" if i % 2 == 0 else "mean"), tmp_path / "out")
        with pytest.raises(BudgetExceededError, match="basic accountant"):
            p.release(_spec(data, "sum"), tmp_path / "out")
        (ds,) = p.datasets()
        ledger = p.ledger(ds)
        b = p.budget(ds)
    assert len(ledger) == 6 and all(r.status == "done" for r in ledger)
    assert [(r.epsilon, r.delta) for r in ledger] == [(Decimal("0.5"), Decimal("0.000001"))] * 6
    assert (b.spent_epsilon, b.spent_delta) == (Decimal("3.0"), Decimal("0.000006"))
    assert b.remaining_epsilon == 0
    # The description is stored here too (the ledger shows every accountant side by
    # side), but a basic dataset's budget is the exact sums of the charges.
    assert {r.loss["mechanism"] for r in ledger} == {"discrete_gaussian", "composed"}


def test_a_tampered_stored_loss_is_reported_and_not_believed(capsys, tmp_path):
    data = make_dataset(tmp_path)
    path = _project(capsys, tmp_path / "pld.dpstudio", "pld")
    with Project.open(path) as p:
        for _ in range(3):
            p.release(_spec(data, "sum"), tmp_path / "out")
        (ds,) = p.datasets()
        before = p.budget(ds).spent_epsilon
        stored = p.ledger(ds)[0].loss
    conn = sqlite3.connect(path)
    conn.execute("UPDATE releases SET loss = ? WHERE id = 1",
                 (loss_json(LossDescription.from_dict(_scaled(stored, 100.0))),))
    conn.commit()
    conn.close()
    with Project.open(path) as p:
        assert any("release #1" in line and "loss changed" in line for line in p.integrity())
        # A wider noise typed in by hand would lower the charge: the release counts as
        # its (ε, δ) claim instead (worst case), so the spent ε goes up, not down.
        assert p.budget(ds).spent_epsilon > before
    code, _, err = run(capsys, "ledger", path)
    assert code != 0 and "loss changed" in err


def test_a_spec_without_accountant_takes_the_project_s(capsys, tmp_path):
    data = make_dataset(tmp_path)
    path = _project(capsys, tmp_path / "z.dpstudio", "zcdp")
    spec = write_spec(tmp_path / "s.toml", data.name, query="sum", mechanism="gaussian",
                      epsilon=EPS, delta=DELTA, bounds=[0.0, 10.0], formats=["json"])
    assert load_spec(spec).accountant is None
    code, _, err = run(capsys, "release", spec, "--project", path, "--out", tmp_path / "out")
    assert code == 0, err
    with Project.open(path) as p:
        (ds,) = p.datasets()
        assert ds.accountant == "zcdp" and p.budget(ds).accountant == "zcdp"
        # Then the dataset's, whatever the project's default becomes; naming another
        # is refused in one sentence.
        p.release(_spec(data, "mean"), tmp_path / "out")
        with pytest.raises(Exception, match="accounted with the zcdp accountant"):
            p.release(_spec(data, "sum", accountant="basic"), tmp_path / "out")
        assert [r.accountant for r in p.ledger(ds)] == ["zcdp", "zcdp"]
    bad = write_spec(tmp_path / "bad.toml", data.name, accountant="tight")
    code, _, err = run(capsys, "release", bad, "--project", path, "--out", tmp_path / "out")
    assert code == 2 and "accountant must be one of basic, advanced, zcdp, pld" in err


def test_local_and_quantile_releases_describe_themselves(capsys, tmp_path):
    """K-RR is stored as randomized response (its k), a median as pure ε; a pld dataset
    composes them exactly (K-RR's PLD is below its pure ε's worst case)."""
    data = make_dataset(tmp_path)
    median = ReleaseSpec(dataset=str(data), formats=("json",),
                         query=QuerySpec(query="median", mechanism="exponential",
                                         epsilon=EPS, bounds=(0.0, 10.0), column="x",
                                         relation="replace"))
    path = tmp_path / "r.dpstudio"
    assert run(capsys, "project", "init", path, "--epsilon", "3", "--accountant", "pld",
               "--relation", "replace")[0] == 0
    krr = ReleaseSpec(dataset=str(data), formats=("json",), trust_model="local",
                      query=QuerySpec(query="histogram", mechanism="krr", epsilon=1.0,
                                      categories=("a", "b"), relation="replace",
                                      column="g"))
    with Project.open(path) as p:
        p.release(krr, tmp_path / "out")
        p.release(median, tmp_path / "out")
        (ds,) = p.datasets()
        first, second = p.ledger(ds)
        by = p.spent_by_accountant(ds)
    assert first.loss == {"schema_version": 1, "mechanism": "randomized_response",
                          "epsilon": 1.0, "delta": 0.0, "k": 3}  # a, b and "other"
    assert second.loss == {"schema_version": 1, "mechanism": "pure", "epsilon": EPS,
                           "delta": 0.0}
    assert by["basic"][0] == Decimal("1.5") and by["pld"][0] <= by["basic"][0]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
