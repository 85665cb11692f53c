"""``dpstudio project init``, ``release``, ``ledger`` and ``verify``: the contract, and bad
input answered with one line, the right exit code, and nothing half-written."""

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from dps_project_helpers import assert_consistent, folder_state, make_dataset, run, write_spec


@pytest.fixture
def env(tmp_path, capsys):
    data = make_dataset(tmp_path)
    project = tmp_path / "p.dpstudio"
    code, out, _ = run(capsys, "project", "init", project, "--epsilon", "1", "--delta", "1e-5")
    assert code == 0 and "created" in out
    return tmp_path, data, project, tmp_path / "out"


def snapshot(project, out):
    conn = sqlite3.connect(project)
    rows = conn.execute("SELECT * FROM releases").fetchall() + conn.execute(
        "SELECT * FROM datasets").fetchall()
    conn.close()
    return rows, folder_state(out)


def test_release_ledger_and_verify(env, capsys):
    tmp, data, project, out = env
    spec = write_spec(tmp / "s.toml", data.name, query="mean", epsilon=0.25,
                      formats=["csv", "json", "parquet", "xlsx"])
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 0, err
    assert "release #1 done: mean of 'x'" in text and "ε 0.75 of 1 left" in text
    code, text, _ = run(capsys, "release", spec, "--project", project, "--out", out, "--json")
    rec = json.loads(text)
    assert code == 0 and rec["status"] == "done" and rec["budget"]["remaining_epsilon"] == 0.5
    code, text, _ = run(capsys, "ledger", project, "--json")
    doc = json.loads(text)
    (ds,) = doc["datasets"]
    assert ds["spent_epsilon"] == 0.5 and ds["remaining_delta"] == 1e-5
    assert [r["status"] for r in ds["releases"]] == ["done", "done"]
    assert {f["name"] for f in ds["releases"][0]["files"]} == {
        "r0001-mean-x.csv", "r0001-mean-x.json", "r0001-mean-x.parquet", "r0001-mean-x.xlsx",
        "r0001-mean-x.manifest.json"}
    code, text, _ = run(capsys, "ledger", project)
    assert code == 0 and "remaining ε = 0.5," in text and "mean of x" in text
    manifest = out / "r0001-mean-x.manifest.json"
    code, text, _ = run(capsys, "verify", manifest)
    assert code == 0 and text.count("ok ") == 4
    (out / "r0001-mean-x.parquet").write_bytes(b"PAR1 altered")
    code, text, _ = run(capsys, "verify", manifest, "--json")
    assert code == 1 and json.loads(text)["problems"] == [
        "r0001-mean-x.parquet: size 12 bytes, manifest says "
        f"{json.loads(manifest.read_text())['files'][2]['bytes']}"]


def _assert_refused(capsys, argv, code_wanted, message, project, out):
    before = snapshot(project, out)
    code, text, err = run(capsys, *argv)
    assert code == code_wanted, (code, err)
    assert err.count("\n") == 1 and err.startswith("dpstudio") and "Traceback" not in err
    assert message in err, err
    assert text == ""
    assert snapshot(project, out) == before


def test_bad_input_is_one_line_and_changes_nothing(env, capsys):
    tmp, data, project, out = env
    good = write_spec(tmp / "good.toml", data.name)
    assert run(capsys, "release", good, "--project", project, "--out", out)[0] == 0
    base = ["--project", project, "--out", out]
    _assert_refused(capsys, ["release", tmp / "missing.toml", *base], 2, "no spec file",
                    project, out)
    (tmp / "bad.toml").write_text("schema_version = 1\ndataset = [\n", encoding="utf-8")
    _assert_refused(capsys, ["release", tmp / "bad.toml", *base], 2, "malformed TOML",
                    project, out)
    unknown = write_spec(tmp / "u.toml", data.name, mechanism="laplaec")
    _assert_refused(capsys, ["release", unknown, *base], 2, "unknown mechanism 'laplaec'",
                    project, out)
    nocol = write_spec(tmp / "c.toml", data.name, column="nope")
    _assert_refused(capsys, ["release", nocol, *base], 2, "no column 'nope'", project, out)
    noset = write_spec(tmp / "n.toml", "absent.csv")
    _assert_refused(capsys, ["release", noset, *base], 2, "no such file", project, out)
    not_a_project = tmp / "notes.dpstudio"
    not_a_project.write_text("just text\n", encoding="utf-8")
    _assert_refused(capsys, ["release", good, "--project", not_a_project, "--out", out], 2,
                    "not a DP Studio project", project, out)
    _assert_refused(capsys, ["ledger", not_a_project], 2, "not a DP Studio project", project,
                    out)
    a_file = tmp / "file.txt"
    a_file.write_text("x", encoding="utf-8")
    _assert_refused(capsys, ["release", good, "--project", project, "--out", a_file], 2,
                    "is a file, not a folder", project, out)
    _assert_refused(capsys, ["release", good, "--project", project, "--out", a_file / "sub"], 2,
                    "cannot create output folder", project, out)
    big = write_spec(tmp / "big.toml", data.name, epsilon=0.95)
    _assert_refused(capsys, ["release", big, *base], 3, "budget exceeded", project, out)
    data.write_text(data.read_text() + "1.5,a,SECRET-new\n", encoding="utf-8")
    _assert_refused(capsys, ["release", good, *base], 2, "has changed since it was registered",
                    project, out)
    _assert_refused(capsys, ["project", "init", project, "--epsilon", "1"], 2,
                    "already exists", project, out)
    assert_consistent(project, out)


@pytest.mark.skipif(not os.path.isdir("/proc/1"), reason="needs Linux /proc")
def test_unwritable_output_folder_on_a_read_only_filesystem(env, capsys):
    """Root ignores permission bits; /proc refuses file creation for everyone."""
    tmp, data, project, out = env
    good = write_spec(tmp / "good.toml", data.name)
    before = snapshot(project, out)
    code, _, err = run(capsys, "release", good, "--project", project, "--out", "/proc/1")
    assert code == 2 and "not writable" in err and err.count("\n") == 1
    assert snapshot(project, out) == before


def test_budget_exceeded_exit_code_in_a_real_process(env):
    tmp, data, project, out = env
    big = write_spec(tmp / "big.toml", data.name, epsilon=2.0)
    proc = subprocess.run([sys.executable, "-m", "dpstudio", "release", str(big), "--project",
                           str(project), "--out", str(out)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 3
    assert proc.stderr.strip().count("\n") == 0 and "only ε = 1" in proc.stderr
    assert not out.exists()


def test_project_init_without_budget_and_registration_from_the_spec(tmp_path, capsys):
    data = make_dataset(tmp_path)
    project = tmp_path / "p.dpstudio"
    code, text, _ = run(capsys, "project", "init", project)
    assert code == 0 and "no default budget" in text
    spec = write_spec(tmp_path / "s.toml", data.name)
    code, _, err = run(capsys, "release", spec, "--project", project, "--out", tmp_path / "o")
    assert code == 2 and "no budget for data.csv" in err
    spec = write_spec(tmp_path / "s.toml", data.name, budget={"epsilon": 0.2, "delta": 0.0})
    assert run(capsys, "release", spec, "--project", project, "--out", tmp_path / "o")[0] == 0
    assert run(capsys, "release", spec, "--project", project, "--out", tmp_path / "o")[0] == 0
    assert run(capsys, "release", spec, "--project", project, "--out", tmp_path / "o")[0] == 3
    assert run(capsys, "project")[0] == 2
    assert run(capsys, "verify", spec)[0] == 2
