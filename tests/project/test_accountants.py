"""Tight ledgers (issue 14): a dataset's accountant (basic, advanced, zcdp, pld), the
privacy-loss description stored per release (schema version 3), and the old projects that
have none."""

import json
import math
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest
from dps_project_helpers import make_dataset
from scipy.optimize import brentq
from scipy.stats import norm

from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.calibration import analytic_gaussian_sigma
from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project, ProjectError, ReleaseSpec
from dpstudio.project._chain import record_release
from dpstudio.project._db import SCHEMA_VERSION
from dpstudio.project.accountant import ACCOUNTANTS, get_accountant, spent_by_accountant
from dpstudio.project.ledger_loss import charge_loss, loss_json, read_loss

FIXTURES = Path(__file__).parent / "fixtures"
EPS, DELTA, K = 0.5, 1e-6, 20


def _gaussian(sigma: float) -> LossDescription:
    return LossDescription("gaussian", epsilon=EPS, delta=DELTA, scale=sigma, sensitivity=1.0)


def _exact_epsilon(mu: float, delta: float) -> float:
    """ε of a Gaussian mechanism of μ = Δ/σ at δ (Balle & Wang 2018), solved here, apart
    from the engine's PLD: K Gaussians of μ compose to one of √K·μ."""
    def excess(e: float) -> float:
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta
    return brentq(excess, 1e-9, 100, xtol=1e-12)


def test_the_four_accountants_are_offered():
    assert tuple(ACCOUNTANTS) == ("basic", "advanced", "zcdp", "pld")
    with pytest.raises(ProjectError, match="unknown accountant 'rdp'"):
        get_accountant("rdp")


def test_twenty_gaussians_pld_below_zcdp_below_basic_all_pessimistic():
    sigma = analytic_gaussian_sigma(1.0, EPS, DELTA)
    by = spent_by_accountant([_gaussian(sigma)] * K)
    eps = {name: float(e) for name, (e, _) in by.items()}
    assert {d for _, d in by.values()} == {Decimal("0.00002")}  # all at Σδᵢ, exactly
    assert by["basic"][0] == Decimal("10")
    assert eps["pld"] < eps["zcdp"] < eps["basic"]
    exact = _exact_epsilon(math.sqrt(K) / sigma, K * DELTA)
    assert exact <= eps["pld"] <= exact + 1e-3  # pessimistic, and within 10⁻³
    assert exact <= eps["zcdp"] and exact <= eps["advanced"] <= eps["basic"]
    # Known only by their (ε, δ), the same releases are charged more by pld, never less
    # than the exact loss of what was drawn.
    claims = spent_by_accountant([charge_loss(Decimal("0.5"), Decimal("0.000001"))] * K)
    assert float(claims["pld"][0]) > eps["pld"] and claims["basic"] == by["basic"]


def test_a_stored_description_never_lowers_the_charge():
    sigma = analytic_gaussian_sigma(1.0, EPS, DELTA)
    text = loss_json(_gaussian(sigma))
    assert read_loss(text, Decimal("0.5"), Decimal("0.000001")).mechanism == "gaussian"
    # Re-charged above its claim (a migration, an acknowledged edit): the charge wins.
    assert read_loss(text, Decimal("0.6"), Decimal("0.000001")) == charge_loss(
        Decimal("0.6"), Decimal("0.000001"))
    assert read_loss("{not json", Decimal("0.25"), Decimal(0)).mechanism == "pure"
    assert read_loss(None, Decimal("0.5"), Decimal("1e-6")).mechanism == "approx"


def test_the_version_2_fixture_migrates_and_counts_as_its_charges(tmp_path):
    path = tmp_path / "old.dpstudio"
    shutil.copyfile(FIXTURES / "project-v2.dpstudio", path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert "loss" not in [r[1] for r in conn.execute("PRAGMA table_info(releases)")]
    conn.close()
    with Project.open(path) as p:
        assert p.schema_version == SCHEMA_VERSION == 3
        assert p.integrity() == [] and p.integrity_check() == "ok"
        (ds,) = p.datasets()
        assert [r.loss for r in p.ledger()] == [None, None, None]
        assert [d.mechanism for d in p.losses(ds)] == ["pure", "approx", "approx"]
        b = p.budget(ds)
        assert (b.spent_epsilon, b.spent_delta) == (Decimal("1.25"), Decimal("0.000002"))
        by = p.spent_by_accountant(ds)
        assert all(e <= Decimal("1.25") and d == Decimal("0.000002")
                   for e, d in by.values())
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM releases WHERE loss IS NULL").fetchone()[0] == 3
    conn.close()


def _count(data: Path, accountant: str) -> ReleaseSpec:
    return ReleaseSpec(dataset=str(data), accountant=accountant, formats=("json",),
                       query=QuerySpec(query="count", mechanism="gaussian", epsilon=EPS,
                                       delta=DELTA, column="x"))


def test_the_accountant_is_fixed_from_the_first_release(tmp_path):
    data = make_dataset(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=12, delta=1e-4,
                        accountant="pld") as p:
        assert p.defaults()["accountant"] == "pld"
        p.release(_count(data, "pld"), tmp_path / "out")
        (ds,) = p.datasets()
        assert ds.accountant == "pld" and p.budget(ds).accountant == "pld"
        with pytest.raises(ProjectError, match="never changes after"):
            p.set_accountant(ds, "basic")
        with pytest.raises(ProjectError, match="accounted with the pld accountant"):
            p.release(_count(data, "basic"), tmp_path / "out")
        assert p.datasets()[0].accountant == "pld" and p.integrity() == []
        with pytest.raises(ProjectError, match="unknown accountant"):
            p.set_accountant(ds, "tight")


def test_twenty_gaussian_releases_through_a_project(tmp_path):
    """Twenty released counts at (0.5, 10⁻⁶) on a pld dataset. The release transaction
    stores what each drew (a discrete Gaussian on the count's grid); the test then writes
    the continuous Gaussian's description over them, chained as the transaction does, and
    checks that the budget follows the dataset's accountant."""
    data = make_dataset(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=12, delta=1e-4,
                        accountant="pld") as p:
        for _ in range(K):
            p.release(_count(data, "pld"), tmp_path / "out")
        (ds,) = p.datasets()
        before = p.budget(ds)
        # What was drawn, composed: far below basic's 10 (known by (ε, δ) only, the
        # worst-case pairs would be barely below it).
        assert before.spent_epsilon < Decimal("3")
        assert {r.loss["mechanism"] for r in p.ledger(ds)} == {"discrete_gaussian"}
    sigma = analytic_gaussian_sigma(1.0, EPS, DELTA)
    conn = sqlite3.connect(tmp_path / "p.dpstudio")
    conn.execute("UPDATE releases SET loss = ?", (loss_json(_gaussian(sigma)),))
    # ...and chains it, as the release transaction does (a hand edit is tampering).
    for (rid,) in conn.execute("SELECT id FROM releases").fetchall():
        record_release(conn, rid)
    conn.commit()
    conn.close()
    with Project.open(tmp_path / "p.dpstudio") as p:
        assert p.integrity() == []
        b = p.budget(ds)
        by = p.spent_by_accountant(ds)
        assert b.accountant == "pld" and (b.spent_epsilon, b.spent_delta) == by["pld"]
        assert by["pld"][0] < by["zcdp"][0] < by["basic"][0] == Decimal("10")
        assert b.remaining_epsilon > Decimal("7")  # 12 − ε_pld (≈ 4.4), not 12 − 10
        doc = p.to_dict()["datasets"][0]
        assert doc["spent_epsilon"] == float(by["pld"][0])
        assert list(doc["spent_by_accountant"]) == list(ACCOUNTANTS)
        assert doc["releases"][0]["loss"]["mechanism"] == "gaussian"
        json.dumps(doc, allow_nan=False)


def test_the_release_gate_follows_the_accountant():
    """``fits_charged`` (what the release transaction is to call): with a budget of
    ε = 6, a twenty-first Gaussian fits under pld, not under basic (ε = 10.5) nor when the
    past releases are known only by their charges."""
    sigma = analytic_gaussian_sigma(1.0, EPS, DELTA)
    total = (Decimal(6), Decimal("0.0001"))
    charge = (Decimal("0.5"), Decimal("0.000001"))
    past = [_gaussian(sigma)] * K
    pld, basic = get_accountant("pld"), get_accountant("basic")
    assert pld.fits_charged(total, [charge] * K, past, charge, _gaussian(sigma))
    assert not basic.fits_charged(total, [charge] * K, past, charge, _gaussian(sigma))
    claims = [charge_loss(*charge)] * K
    assert not pld.fits_charged(total, [charge] * K, claims, charge)
    # δ still adds up: a budget δ below Σδᵢ refuses under every accountant.
    tight = (Decimal(60), Decimal("0.00002"))
    assert not pld.fits_charged(tight, [charge] * K, past, charge, _gaussian(sigma))


def test_a_description_edited_by_hand_is_reported_as_tampering(tmp_path):
    """The tight accountants read the stored description: a larger noise scale typed in
    by hand would lower what they charge, so the chain covers it."""
    data = make_dataset(tmp_path)
    path = tmp_path / "p.dpstudio"
    with Project.create(path, epsilon=12, delta=1e-4, accountant="pld") as p:
        p.release(_count(data, "pld"), tmp_path / "out")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE releases SET loss = ?", (loss_json(_gaussian(1e6)),))
    conn.commit()
    conn.close()
    with Project.open(path) as p:
        problems = p.integrity()
    assert any("loss changed" in line for line in problems), problems
