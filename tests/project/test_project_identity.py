"""Item 8 of issue 10: a dataset is its rows as parsed, so its budget does not come back
when the file is re-encoded or its rows are shuffled; a file that looks like a version of
a registered dataset is refused until the analyst says whose budget it spends."""

import json
import random
import shutil
import sqlite3
from importlib.resources import files
from pathlib import Path

import pytest
from dps_project_helpers import folder_state, make_dataset, run, write_spec

from dpstudio.engine.queries import QuerySpec
from dpstudio.project import (
    BudgetExceededError,
    DatasetChangedError,
    Project,
    ProjectError,
    ReleaseSpec,
    SpecError,
    load_spec,
)

FIXTURES = Path(__file__).parent / "fixtures"


def spec_for(data, epsilon=1.0, **kw):
    return ReleaseSpec(dataset=str(data), query=QuerySpec(
        query="sum", mechanism="laplace", epsilon=epsilon, column="x"), **kw)


@pytest.fixture
def spent(tmp_path):
    """A project whose dataset's whole budget (ε = 1) is spent."""
    data = make_dataset(tmp_path)
    project = Project.create(tmp_path / "p.dpstudio", epsilon=1.0, delta=1e-5)
    project.release(spec_for(data), tmp_path / "out")
    assert project.remaining(1)[0] == 0
    yield project, data, tmp_path
    project.close()


def _lines(data):
    text = data.read_text(encoding="utf-8")
    header, *rows = text.splitlines()
    return header, rows


def _copy(tmp_path, data, name, body):
    path = tmp_path / "copies" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(body.encode("utf-8"))
    # The declared schema goes along, as a re-saved copy would keep it.
    path.with_name(name + ".schema.json").write_bytes(
        data.with_name(data.name + ".schema.json").read_bytes())
    return path


@pytest.mark.parametrize("variant", ["extra newline", "shuffled rows", "CRLF"])
def test_a_re_encoded_or_shuffled_copy_of_a_spent_dataset_is_refused(spent, variant):
    """Before: each copy registered as a new dataset with a full budget (ε = 1 again)."""
    project, data, tmp = spent
    header, rows = _lines(data)
    if variant == "extra newline":
        body = data.read_text(encoding="utf-8") + "\n"
    elif variant == "shuffled rows":
        random.Random(7).shuffle(rows)
        body = "\n".join([header, *rows]) + "\n"
    else:
        body = "\r\n".join([header, *rows]) + "\r\n"
    copy = _copy(tmp, data, "copy.csv", body)
    assert copy.read_bytes() != data.read_bytes()
    out = tmp / "out"
    state = folder_state(out)
    with pytest.raises(BudgetExceededError, match=r"same rows as registered dataset #1"):
        project.release(spec_for(copy, epsilon=0.1), out)
    assert len(project.datasets()) == 1 and len(project.ledger()) == 1
    assert folder_state(out) == state


def test_a_re_encoded_copy_spends_the_same_budget(tmp_path):
    """Not spent yet: the copy's release is charged to the registered dataset, and its
    manifest keeps the copy's own byte hash."""
    data = make_dataset(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=1.0) as project:
        project.release(spec_for(data, epsilon=0.25), tmp_path / "out")
        copy = _copy(tmp_path, data, "copy.csv", data.read_text(encoding="utf-8") + "\n\n")
        rec = project.release(spec_for(copy, epsilon=0.25), tmp_path / "out2")
        assert rec.dataset_id == 1 and len(project.datasets()) == 1
        assert project.budget(1).spent_epsilon == project.budget(1).total_epsilon / 2
        manifest = json.loads(next((tmp_path / "out2").glob("*.manifest.json")).read_text())
        assert manifest["dataset"]["fingerprint"] == rec.spec["fingerprint"]
        assert rec.spec["fingerprint"] != project.dataset(1).fingerprint  # the copy's bytes
        assert rec.spec["content_hash"] == project.dataset(1).content_hash
        assert any("re-encoded or reordered" in n for n in rec.result["notes"])


def _edited(tmp_path, data, name="edited.csv"):
    header, rows = _lines(data)
    rows[3] = "11.5,b,SECRET-edited"
    return _copy(tmp_path, data, name, "\n".join([header, *rows]) + "\n")


def test_a_version_is_refused_until_the_analyst_says_whose_budget(spent):
    project, data, tmp = spent
    edited = _edited(tmp, data)
    out = tmp / "out"
    with pytest.raises(DatasetChangedError) as info:
        project.release(spec_for(edited, epsilon=0.1), out)
    message = str(info.value)
    assert "looks like a version of registered dataset #1 (data.csv" in message
    assert "--share-budget-with 1" in message and "share_budget_with = 1" in message
    assert "--separate-budget" in message and "new path" not in message
    assert len(project.datasets()) == 1
    # Sharing: the version is registered, but spends dataset #1's (spent) budget.
    with pytest.raises(BudgetExceededError, match="a version of dataset #1"):
        project.release(spec_for(edited, epsilon=0.1, share_budget_with=1), out)
    with pytest.raises(ProjectError, match="no dataset #9"):
        project.release(spec_for(edited, epsilon=0.1, share_budget_with=9), out)
    # Declared to hold other people: a budget of its own.
    rec = project.release(spec_for(edited, epsilon=0.1, separate_budget=True), out)
    assert rec.dataset_id == 2 and project.dataset(2).budget_of is None


def test_the_registered_path_changed_offers_sharing_not_a_new_path(spent):
    """Before: "register the new version as a new dataset under a new path"."""
    project, data, tmp = spent
    data.write_text(data.read_text() + "3.5,a,SECRET-999\n", encoding="utf-8")
    with pytest.raises(DatasetChangedError) as info:
        project.release(spec_for(data, epsilon=0.1), tmp / "out")
    message = str(info.value)
    assert "has changed since it was registered as dataset #1" in message
    assert "--share-budget-with 1" in message and "new path" not in message


def test_the_registered_file_with_a_row_appended_cannot_take_a_separate_budget(spent):
    """Before: ``separate_budget = true`` returned before the same-path check, so the
    registered file itself, one row longer, released with a fresh budget of ε = 1."""
    project, data, tmp = spent
    data.write_text(data.read_text() + "3.5,a,SECRET-999\n", encoding="utf-8")
    state = folder_state(tmp / "out")
    with pytest.raises(DatasetChangedError, match="has changed since it was registered as "
                       "dataset #1") as info:
        project.release(spec_for(data, epsilon=0.1, separate_budget=True), tmp / "out")
    assert "--separate-budget" not in str(info.value)
    assert len(project.datasets()) == 1 and folder_state(tmp / "out") == state


def test_shared_budget_from_the_cli(tmp_path, capsys):
    data = make_dataset(tmp_path)
    project = tmp_path / "p.dpstudio"
    assert run(capsys, "project", "init", project, "--epsilon", "1")[0] == 0
    base = ["--project", project, "--out", tmp_path / "out"]
    spec = write_spec(tmp_path / "a.toml", data, epsilon=0.5)
    assert run(capsys, "release", spec, *base)[0] == 0
    edited = _edited(tmp_path, data)
    version = write_spec(tmp_path / "v.toml", edited, epsilon=0.5)
    code, _, err = run(capsys, "release", version, *base)
    assert code == 2 and err.count("\n") == 1 and "--share-budget-with 1" in err
    code, text, err = run(capsys, "release", version, *base, "--share-budget-with", "1")
    assert code == 0, err
    assert "budget of edited.csv: ε 0 of 1 left" in text  # the two releases share ε = 1
    code, _, err = run(capsys, "release", version, *base, "--share-budget-with", "1")
    assert code == 3 and "a version of dataset #1" in err
    code, text, _ = run(capsys, "ledger", project)
    assert code == 0 and "shares the budget of dataset #1" in text
    # The spec key does the same; it and --separate-budget cannot both be given.
    keyed = write_spec(tmp_path / "k.toml", edited, epsilon=0.1, share_budget_with=1)
    assert load_spec(keyed).share_budget_with == 1
    with pytest.raises(SpecError, match="contradict"):
        load_spec(write_spec(tmp_path / "x.toml", edited, share_budget_with=1,
                             separate_budget=True))


def test_a_version_1_dataset_gets_its_content_hash_on_first_use(tmp_path):
    """A dataset registered by schema version 1 has no content hash: its bytes find it
    once, then its re-encoded copies are recognized too."""
    data = make_dataset(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=1.0) as project:
        project.release(spec_for(data, epsilon=0.5), tmp_path / "out")
    conn = sqlite3.connect(tmp_path / "p.dpstudio")
    conn.execute("UPDATE datasets SET content_hash = NULL, rows = NULL, columns_json = NULL, "
                 "sketch = NULL")
    conn.commit()
    conn.close()
    from dpstudio.project import _chain

    with Project.open(tmp_path / "p.dpstudio") as project:  # re-seal as a migration would
        with project._transaction() as conn:
            _chain.seal(conn, "migrate", {"test": True})
        assert project.integrity() == [] and project.dataset(1).content_hash is None
        project.release(spec_for(data, epsilon=0.25), tmp_path / "out")
        assert project.dataset(1).content_hash is not None and project.integrity() == []
        copy = _copy(tmp_path, data, "copy.csv", data.read_text(encoding="utf-8") + "\n")
        with pytest.raises(BudgetExceededError, match="same rows as registered dataset #1"):
            project.release(spec_for(copy, epsilon=0.5), tmp_path / "out")


def test_a_spent_version_1_dataset_is_recognized_in_a_re_encoded_copy(tmp_path):
    """A version-1 dataset (no content hash) whose file is still the registered bytes is
    compared by content before any new dataset is registered. Before: its content hash
    was filled only when the exact bytes were released again, so a copy with one more
    newline registered as a new dataset with a full budget (ε = 2)."""
    path = tmp_path / "old.dpstudio"
    shutil.copyfile(FIXTURES / "project-v1-current.dpstudio", path)
    data = tmp_path / "fixture.csv"
    shutil.copyfile(FIXTURES / "fixture.csv", data)
    conn = sqlite3.connect(path)  # the registered file, where this machine keeps it
    conn.execute("UPDATE datasets SET path = ? WHERE id = 1", (str(data),))
    conn.commit()
    conn.close()
    copy = tmp_path / "copies" / "fixture.csv"
    copy.parent.mkdir()
    copy.write_bytes(data.read_bytes() + b"\n")

    def spec(dataset, epsilon):
        return ReleaseSpec(dataset=str(dataset), query=QuerySpec(
            query="sum", mechanism="laplace", epsilon=epsilon, bounds=(0, 10), column="x",
            relation="replace"))

    with Project.open(path) as project:  # migrated to version 2: no content hash yet
        assert project.dataset(1).content_hash is None and project.integrity() == []
        left = project.remaining(1)[0]
        assert 0 < left < 2
        with pytest.raises(BudgetExceededError, match="same rows as registered dataset #1"):
            project.release(spec(copy, float(left) + 0.1), tmp_path / "out")
        assert len(project.datasets()) == 2 and project.dataset(1).content_hash is not None
        assert project.integrity() == []


def test_a_column_cut_out_of_a_spent_dataset_is_refused(tmp_path):
    """``cut -d, -f6 health.csv > bmi.csv``: the released column in a file of its own.
    Before: its rows and columns looked like nothing registered (whole-row hashes, 1 of
    10 columns), so it released again with a full budget after health.csv's was spent."""
    samples = Path(str(files("dpstudio.resources") / "samples"))
    data = tmp_path / "health.csv"
    shutil.copyfile(samples / "health.csv", data)
    shutil.copyfile(samples / "health.csv.schema.json", tmp_path / "health.csv.schema.json")
    lines = data.read_text(encoding="utf-8").splitlines()
    assert lines[0].split(",")[5] == "bmi"
    bmi = tmp_path / "cut" / "bmi.csv"
    bmi.parent.mkdir()
    bmi.write_text("".join(line.split(",")[5] + "\n" for line in lines), encoding="utf-8")

    def spec(dataset, **kw):
        return ReleaseSpec(dataset=str(dataset), query=QuerySpec(
            query="mean", mechanism="laplace", epsilon=1.0, bounds=(10, 60), column="bmi"),
            **kw)

    out = tmp_path / "out"
    with Project.create(tmp_path / "p.dpstudio", epsilon=1.0, delta=1e-5) as project:
        project.release(spec(data), out)
        assert project.remaining(1)[0] == 0
        state = folder_state(out)
        with pytest.raises(DatasetChangedError) as info:
            project.release(spec(bmi), out)
        message = str(info.value)
        assert "looks like a version of registered dataset #1 (health.csv" in message
        assert "column bmi holds exactly the values of column bmi" in message
        assert folder_state(out) == state and len(project.datasets()) == 1
        with pytest.raises(BudgetExceededError):  # shared: health.csv's spent budget
            project.release(spec(bmi, share_budget_with=1), out)
