"""Item 9 of issue 10: the ledger is tamper-evident. Each edit made with sqlite3 (a release
deleted, an ε lowered, a budget raised, a non-numeric ε) is detected by ``dpstudio ledger``
and refuses ``dpstudio release`` in one line, until it is acknowledged; the acknowledgement
keeps the pessimistic charges and is itself recorded in the chain."""

import json
import sqlite3
from decimal import Decimal

import pytest
from dps_project_helpers import folder_state, make_dataset, run, write_spec

from dpstudio.project import LedgerTamperedError, Project, _chain


@pytest.fixture
def env(tmp_path, capsys):
    """Two releases of ε = 0.25 from a dataset with a budget of ε = 1."""
    data = make_dataset(tmp_path)
    project = tmp_path / "p.dpstudio"
    assert run(capsys, "project", "init", project, "--epsilon", "1")[0] == 0
    spec = write_spec(tmp_path / "s.toml", data, epsilon=0.25)
    out = tmp_path / "out"
    for _ in range(2):
        assert run(capsys, "release", spec, "--project", project, "--out", out)[0] == 0
    return project, spec, out


def sql(project, *statements):
    conn = sqlite3.connect(project)
    for s in statements:
        conn.execute(s)
    conn.commit()
    conn.close()


#: edit → (what the ledger must say, the ε spent after acknowledging, the total budget)
EDITS = {
    "delete a release": (["DELETE FROM releases WHERE id = 2"],
                         "release #2 was deleted", "0.5", "1"),
    "lower an epsilon": (["UPDATE releases SET epsilon = '0.01' WHERE id = 2"],
                         "release #2: ε lowered from 0.25 to 0.01", "0.5", "1"),
    "raise a budget": (["UPDATE datasets SET budget_epsilon = '100'"],
                       "dataset #1 (data.csv): budget ε raised from 1.0 to 100", "0.5", "1.0"),
    "non-numeric epsilon": (["UPDATE releases SET epsilon = 'lots' WHERE id = 1"],
                            "release #1: ε 'lots' is not a number", "0.5", "1"),
    "delete a release and its chain entries": (
        ["DELETE FROM releases WHERE id = 2",
         "DELETE FROM ledger_chain WHERE seq = (SELECT MAX(seq) FROM ledger_chain)"],
        "the last ledger chain entries", "0.5", "1"),
    # The chain then checks out (its counter wound back too): only the manifest still in
    # the output folder says release #2 was made.
    "delete the last release, its chain entry and the chain's counter": (
        ["DELETE FROM release_files WHERE release_id = 2",
         "DELETE FROM releases WHERE id = 2",
         "DELETE FROM ledger_chain WHERE seq = (SELECT MAX(seq) FROM ledger_chain)",
         "UPDATE sqlite_sequence SET seq = seq - 1 WHERE name = 'ledger_chain'"],
        "release #2 was deleted", "0.5", "1"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_each_edit_is_detected_refused_and_acknowledged(env, capsys, edit):
    project, spec, out = env
    statements, said, spent_after, total_after = EDITS[edit]
    sql(project, *statements)
    state = folder_state(out)
    # `dpstudio ledger` says what was changed, in one line, exit code 2, no traceback.
    code, text, err = run(capsys, "ledger", project)
    assert code == 2 and said in err and err.count("\n") == 1, err
    assert "changed outside DP Studio" in err and "--acknowledge" in err
    assert "Traceback" not in err + text and "dataset #1 data.csv" in text
    code, text, err = run(capsys, "ledger", project, "--json")
    assert code == 2 and said in " ".join(json.loads(text)["integrity"]["problems"])
    # Even the pessimistic reading never gives the budget back.
    assert Decimal(json.loads(text)["datasets"][0]["exact"]["spent_epsilon"]) >= Decimal("0.5")
    # `dpstudio release` is refused in one line, and writes nothing.
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 2 and text == "" and err.count("\n") == 1 and said in err, err
    assert folder_state(out) == state
    # Acknowledged: the pessimistic charges are kept, and releases are allowed again.
    code, _, err = run(capsys, "ledger", project, "--acknowledge")
    assert code == 0 and "acknowledged" in err and said in err
    with Project.open(project) as p:
        assert p.integrity() == []
        budget = p.budget(1)
        assert budget.spent_epsilon == Decimal(spent_after)
        assert budget.total_epsilon == Decimal(total_after)
        assert len(p.ledger()) == 2
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 0, err
    assert "ε 0.25 of 1 left" in text
    assert run(capsys, "ledger", project)[0] == 0


def test_a_forged_chain_is_caught_by_the_manifest(env, capsys):
    """Someone lowers an ε and recomputes the whole chain: the release's manifest, which
    records the ε that was released, still shows it; the charge stays the larger one."""
    project, spec, out = env
    sql(project, "UPDATE releases SET epsilon = '0.01' WHERE id = 2")
    conn = sqlite3.connect(project)
    _chain.seal(conn, "acknowledge", {"forged": True})  # what a forger would compute
    conn.commit()
    conn.close()
    code, _, err = run(capsys, "ledger", project)
    assert code == 2
    assert "release #2: ε is 0.01 in the ledger but 0.25 in its manifest r0002-sum-x" in err
    with Project.open(project) as p:
        assert p.budget(1).spent_epsilon == Decimal("0.5")  # not 0.26
        with pytest.raises(LedgerTamperedError, match="in its manifest"):
            p.check(__import__("dpstudio.project", fromlist=["load_spec"]).load_spec(spec), out)


def test_an_altered_chain_entry_and_a_dropped_chain_are_detected(env, capsys):
    project, _, _ = env
    sql(project, "UPDATE ledger_chain SET content = replace(content, '0.25', '0.5') "
                 "WHERE kind = 'release' AND ref = 1")
    code, _, err = run(capsys, "ledger", project)
    assert code == 2 and "ledger chain entry #" in err and "was altered" in err
    sql(project, "DROP TABLE ledger_chain")
    code, _, err = run(capsys, "ledger", project)
    assert code == 2 and "hash chain cannot be read" in err and "Traceback" not in err
    code, _, err = run(capsys, "ledger", project, "--acknowledge")
    assert code == 0, err
    assert run(capsys, "ledger", project)[0] == 0


def test_an_intact_ledger_says_nothing_and_acknowledging_it_changes_nothing(env, capsys):
    project, _, _ = env
    code, _, err = run(capsys, "ledger", project)
    assert code == 0 and err == ""
    before = sqlite3.connect(project).execute("SELECT COUNT(*) FROM ledger_chain").fetchone()
    code, _, err = run(capsys, "ledger", project, "--acknowledge")
    assert code == 0 and "nothing to acknowledge" in err
    after = sqlite3.connect(project).execute("SELECT COUNT(*) FROM ledger_chain").fetchone()
    assert before == after


def test_recovery_and_aborts_keep_the_chain_intact(tmp_path, monkeypatch):
    """Status changes (done, aborted by a failed write, completed by recovery) are not
    tampering: the chain covers the charge, which they never change."""
    from dpstudio.engine.queries import QuerySpec
    from dpstudio.project import ProjectError, ReleaseSpec
    from dpstudio.project import release as project_module

    data = make_dataset(tmp_path)
    spec = ReleaseSpec(dataset=str(data), query=QuerySpec(query="sum", mechanism="laplace",
                                                          epsilon=0.1, column="x"))
    with Project.create(tmp_path / "p.dpstudio", epsilon=1.0) as p:
        p.release(spec, tmp_path / "out")

        def full(path, payload):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(project_module, "write_durably", full)
        with pytest.raises(ProjectError, match="aborted"):
            p.release(spec, tmp_path / "out")
        assert [r.status for r in p.ledger()] == ["done", "aborted"]
        assert p.integrity() == []


def test_the_charged_ledger_lists_what_remaining_counts(env):
    """While the ledger is edited, ``charged_ledger`` (the Ledger tab's table and plot)
    lists each release at its pessimistic charge, and a deleted release as ``deleted``:
    their sum is what the budget counts as spent. Before: the tab listed the ledger's rows
    (a deleted release nowhere) while "Remaining" charged it."""
    project, _, _ = env
    sql(project, "UPDATE releases SET epsilon = '0.01' WHERE id = 1",
        "DELETE FROM releases WHERE id = 2")
    with Project.open(project) as p:
        rows = p.charged_ledger(1)
        assert [(r.id, r.status, r.epsilon) for r in rows] == [
            (1, "done", Decimal("0.25")), (2, "deleted", Decimal("0.25"))]
        assert p.cumulative_epsilon(1)[-1].cumulative_epsilon == float(
            p.budget(1).spent_epsilon) == 0.5
        assert [r.id for r in p.ledger(1)] == [1]  # the file as it is


def test_dpstudio_ledger_lists_a_deleted_release_that_is_still_charged(env, capsys):
    """What `ledger` lists adds up to what it says is spent (before: the deleted release
    was charged but not listed)."""
    project, _, _ = env
    sql(project, "DELETE FROM release_files WHERE release_id = 2",
        "DELETE FROM releases WHERE id = 2")
    code, text, _ = run(capsys, "ledger", project, "--json")
    assert code == 2
    (ds,) = json.loads(text)["datasets"]
    listed = {r["id"]: r["status"] for r in ds["releases"]}
    assert listed == {1: "done", 2: "deleted"}
    assert sum(Decimal(str(r["epsilon"])) for r in ds["releases"]) == \
        Decimal(ds["exact"]["spent_epsilon"])
