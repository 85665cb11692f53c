"""``dpstudio project init --accountant`` and the ε spent under every accountant in
``dpstudio ledger`` (issue 14: tight ledgers)."""

import json
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "project"))
from dps_project_helpers import make_dataset, run, write_spec  # noqa: E402

from dpstudio.engine.accounting.loss import LossDescription  # noqa: E402
from dpstudio.engine.calibration import analytic_gaussian_sigma  # noqa: E402
from dpstudio.project._chain import record_release  # noqa: E402
from dpstudio.project.ledger_loss import loss_json  # noqa: E402

ACCOUNTANTS = ["basic", "advanced", "zcdp", "pld"]


def test_init_takes_each_accountant_and_refuses_others(tmp_path, capsys):
    for name in ACCOUNTANTS:
        code, out, _ = run(capsys, "project", "init", tmp_path / f"{name}.dpstudio",
                           "--epsilon", "3", "--delta", "1e-5", "--accountant", name)
        assert code == 0 and f"{name} accountant" in out
    try:
        code, _, err = run(capsys, "project", "init", tmp_path / "x.dpstudio", "--epsilon",
                           "3", "--accountant", "rdp")
    except SystemExit as stop:  # argparse's usage error
        code, err = stop.code, capsys.readouterr().err
    assert code == 2 and "invalid choice: 'rdp'" in err
    assert not (tmp_path / "x.dpstudio").exists()


def test_ledger_shows_every_accountant_side_by_side(tmp_path, capsys):
    data = make_dataset(tmp_path)
    project = tmp_path / "p.dpstudio"
    assert run(capsys, "project", "init", project, "--epsilon", "12", "--delta", "1e-4",
               "--accountant", "zcdp")[0] == 0
    spec = write_spec(tmp_path / "s.toml", data.name, query="count", mechanism="gaussian",
                      epsilon=0.5, delta=1e-6, accountant="zcdp", formats=["json"])
    for _ in range(3):
        code, _, err = run(capsys, "release", spec, "--project", project, "--out",
                           tmp_path / "out")
        assert code == 0, err
    # What the release transaction will store once it describes its noise (release.py).
    sigma = analytic_gaussian_sigma(1.0, 0.5, 1e-6)
    desc = LossDescription("gaussian", epsilon=0.5, delta=1e-6, scale=sigma, sensitivity=1)
    conn = sqlite3.connect(project)
    conn.execute("UPDATE releases SET loss = ?", (loss_json(desc),))
    # ...and chains it, as the release transaction does (a hand edit is tampering).
    for (rid,) in conn.execute("SELECT id FROM releases").fetchall():
        record_release(conn, rid)
    conn.commit()
    conn.close()

    code, text, _ = run(capsys, "ledger", project, "--json")
    assert code == 0
    (ds,) = json.loads(text)["datasets"]
    for key in ("spent_epsilon", "spent_delta", "remaining_epsilon", "exact", "releases",
                "accountant"):
        assert key in ds  # the keys that were there before
    by = ds["spent_by_accountant"]
    assert list(by) == ACCOUNTANTS
    for entry in by.values():
        assert set(entry) == {"epsilon", "delta", "epsilon_exact", "delta_exact"}
        assert entry["delta_exact"] == "0.000003"
    assert by["basic"]["epsilon_exact"] == "1.5"
    assert by["zcdp"]["epsilon"] < by["basic"]["epsilon"]
    assert ds["accountant"] == "zcdp" and ds["spent_epsilon"] == by["zcdp"]["epsilon"]
    assert ds["releases"][0]["loss"]["mechanism"] == "gaussian"

    code, text, _ = run(capsys, "ledger", project)
    assert code == 0
    assert "spent under each accountant (δ = 0.000003)" in text
    header = next(line for line in text.splitlines() if "basic" in line and "pld" in line)
    assert header.split() == ["basic", "advanced", "zcdp*", "pld"]
