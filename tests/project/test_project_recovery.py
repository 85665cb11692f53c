"""Failures inside a release and recovery of interrupted ones, step by step.

The random kill -9 test is test_project_crash.py; here each state is made on purpose.
"""

import sqlite3
from decimal import Decimal

import pytest
from dps_project_helpers import assert_consistent, folder_state, make_dataset

from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project, ProjectError, ReleaseSpec
from dpstudio.project import release as project_module
from dpstudio.project._fs import ProjectLock


def spec_for(data, **q):
    base = dict(query="sum", mechanism="laplace", epsilon=0.1, column="x")
    base.update(q)
    return ReleaseSpec(dataset=str(data), query=QuerySpec(**base),
                       formats=("csv", "json", "xlsx"))


@pytest.fixture
def env(tmp_path):
    data = make_dataset(tmp_path)
    path = tmp_path / "p.dpstudio"
    Project.create(path, epsilon=5.0, delta=1e-5).close()
    return path, data, tmp_path / "out"


def _set(path, sql, args=()):
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


def test_a_write_failure_aborts_removes_files_and_keeps_the_charge(env, monkeypatch):
    path, data, out = env
    calls = []
    original = project_module.write_durably

    def failing(target, payload):
        calls.append(target)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        original(target, payload)

    with Project.open(path) as p:
        p.release(spec_for(data), out)
        kept = folder_state(out)
        monkeypatch.setattr(project_module, "write_durably", failing)
        with pytest.raises(ProjectError, match="aborted.*No space left.*stays charged"):
            p.release(spec_for(data), out)
        last = p.ledger()[-1]
        assert last.status == "aborted" and last.files == () and last.result is None
        assert "No space left" in last.note
        assert p.budget(last.dataset_id).spent_epsilon == Decimal("0.2")
    assert folder_state(out) == kept
    assert_consistent(path, out)


def test_an_interrupt_while_writing_aborts_too(env, monkeypatch):
    path, data, out = env
    seen = []

    def interrupt(step):
        seen.append(step)
        if step == "renamed" and seen.count("renamed") == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(project_module, "pause", interrupt)
    with Project.open(path) as p, pytest.raises(KeyboardInterrupt):
        p.release(spec_for(data), out)
    assert folder_state(out) == {}
    records = assert_consistent(path, out)
    assert [r.status for r in records] == ["aborted"]


def test_a_failure_before_the_charge_rolls_everything_back(env, monkeypatch):
    path, data, out = env
    import dpstudio.export.bundle as bundle

    def broken(inp):
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr(bundle, "render_bundle", broken)
    with Project.open(path) as p:
        with pytest.raises(RuntimeError, match="renderer crashed"):
            p.release(spec_for(data), out)
        assert p.ledger() == [] and p.datasets() == []  # registration rolled back too
    assert not out.exists()  # the folder this release created is gone again


def test_recovery_completes_a_release_whose_files_are_all_written(env):
    path, data, out = env
    with Project.open(path) as p:
        rec = p.release(spec_for(data), out)
    _set(path, "UPDATE releases SET status = 'pending', finished_at = NULL")
    with Project.open(path) as p:
        assert p.last_recovery.completed == [rec.id]
        again = p.release_record(rec.id)
        assert again.status == "done" and again.result == rec.result
        assert "completed by recovery" in again.note
    assert_consistent(path, out)


def test_recovery_aborts_a_partial_release_and_deletes_its_files(env):
    path, data, out = env
    with Project.open(path) as p:
        first = p.release(spec_for(data), out)
        second = p.release(spec_for(data, query="count"), out)
    _set(path, "UPDATE releases SET status = 'pending' WHERE id = ?", (second.id,))
    csv, other = second.files[0], second.files[1]
    csv.path.unlink()
    tmp = out / f".{csv.name}.{second.uid}.tmp"
    tmp.write_bytes(b"half a fil")
    with Project.open(path) as p:
        assert p.last_recovery.aborted == [second.id]
        rec = p.release_record(second.id)
        assert rec.status == "aborted" and rec.files == () and rec.result is None
        assert p.budget(rec.dataset_id).spent_epsilon == Decimal("0.2")  # still charged
    assert not other.path.exists() and not tmp.exists()
    assert set(folder_state(out)) == {f.name for f in first.files}
    assert_consistent(path, out)


def test_an_altered_file_of_a_pending_release_means_abort(env):
    path, data, out = env
    with Project.open(path) as p:
        rec = p.release(spec_for(data), out)
    _set(path, "UPDATE releases SET status = 'pending'")
    rec.files[0].path.write_bytes(b"tampered")
    with Project.open(path) as p:
        assert p.last_recovery.aborted == [rec.id]
    assert folder_state(out) == {}


def test_a_missing_output_folder_is_left_pending(env, tmp_path):
    path, data, out = env
    with Project.open(path) as p:
        rec = p.release(spec_for(data), out)
    _set(path, "UPDATE releases SET status = 'pending'")
    out.rename(tmp_path / "unplugged")
    with Project.open(path) as p:
        assert p.last_recovery.left_pending == [rec.id]
        assert p.release_record(rec.id).status == "pending"
    (tmp_path / "unplugged").rename(out)
    with Project.open(path) as p:
        assert p.last_recovery.completed == [rec.id]


def test_recovery_waits_for_a_live_release(env):
    path, data, out = env
    with Project.open(path) as p:
        rec = p.release(spec_for(data), out)
    _set(path, "UPDATE releases SET status = 'pending'")
    other = ProjectLock(path)  # another process in the middle of a release
    assert other.acquire(0)
    try:
        with Project.open(path) as p:
            assert p.last_recovery.skipped
            assert p.release_record(rec.id).status == "pending"
            with pytest.raises(ProjectError, match="busy"):
                p._lock.held(0.05).__enter__()
    finally:
        other.release()
    with Project.open(path) as p:
        assert p.last_recovery.completed == [rec.id]
