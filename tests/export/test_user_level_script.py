"""The script of a user-level release (issue 14): it reads the identifier column, bounds
each person's rows to k at random as the release did, and draws noise for k × a row's
sensitivity; the notebook form runs top to bottom; a row-level script is unchanged."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from dpstudio.engine.queries import QuerySpec
from dpstudio.export.script import release_script
from dpstudio.project import Project, ReleaseSpec

K = 2
#: One person ("whale") has 100 rows, 60 others one each: the count of the rows kept is
#: 60 + K, the count of all rows 160 (a script releasing per row misses by 98).
_WHALE, _OTHERS = 100, 60


def _visits(folder):
    rng = np.random.default_rng(3)
    people = ["whale"] * _WHALE + [f"p{i}" for i in range(_OTHERS)]
    amounts = rng.uniform(0, 50, len(people))
    lines = ["person,amount"] + [f"{p},{a:.2f}" for p, a in zip(people, amounts, strict=True)]
    data = folder / "visits.csv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "visits.csv.schema.json").write_text(json.dumps({
        "schema_version": 3, "columns": [
            {"name": "person", "type": "identifier", "max_rows": K},
            {"name": "amount", "type": "numeric", "lower": 0, "upper": 50}]}))
    return data


def _release(tmp_path, query, script_format="py"):
    data = _visits(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=5, delta=1e-5) as project:
        rec = project.release(ReleaseSpec(dataset=str(data), query=query, script=True,
                                          script_format=script_format, formats=("json",)),
                              tmp_path / "out")
    manifest = json.loads(next(f.path for f in rec.files
                               if f.name.endswith(".manifest.json")).read_text())
    return rec, manifest


def _run(script, cwd):
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


_COUNT = QuerySpec(query="count", mechanism="laplace", epsilon=1.0, column="amount")
_SUM = QuerySpec(query="sum", mechanism="laplace", epsilon=0.5, column="amount",
                 bounds=(0.0, 50.0))


@pytest.mark.parametrize("query", [_COUNT, _SUM], ids=["count", "sum"])
def test_the_script_bounds_people_and_draws_the_k_scaled_noise(tmp_path, query):
    rec, manifest = _release(tmp_path, query)
    script = next(f.path for f in rec.files if f.name.endswith(".py"))
    text = script.read_text(encoding="utf-8")
    person = f"add or remove one person (up to {K} rows)"
    assert person in text.split('"""')[1]  # stated in the header docstring
    assert "release_user_level(values, ids, SPEC, MAX_ROWS, SecureSource())" in text
    proc = _run(script, tmp_path)
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    row_level = 1.0 if query.query == "count" else 50.0
    assert again["relation"] == person == manifest["privacy"]["relation"]
    assert again["sensitivity"] == K * row_level == manifest["mechanism"]["sensitivity"]
    assert again["noise_scale"] == rec.result["noise_scale"] == K * row_level / query.epsilon
    assert again["simulated"] is False and "clamped" not in again
    # Nothing in the output says how many rows were dropped.
    dropped = _WHALE - K
    assert not re.search(rf"(?<![\d.]){dropped}(?![\d.])", proc.stdout + proc.stderr)
    assert set(again) <= set(rec.result) and not any("drop" in key for key in again)
    if query.query == "count":
        # Power: Laplace(scale 2) exceeds 30 with probability e^-15; the unbounded count
        # (160) is 98 away from the bounded one (62).
        assert abs(again["value"] - (_OTHERS + K)) < 30


def test_the_script_refuses_other_data(tmp_path):
    rec, _ = _release(tmp_path, _COUNT)
    data = tmp_path / "visits.csv"
    data.write_text(data.read_text() + "p99,3\n", encoding="utf-8")
    proc = _run(next(f.path for f in rec.files if f.name.endswith(".py")), tmp_path)
    assert proc.returncode == 2 and "SHA-256 differs" in proc.stderr and proc.stdout == ""


def test_the_notebook_of_a_user_level_release_runs_top_to_bottom(tmp_path):
    rec, manifest = _release(tmp_path, _COUNT, script_format="ipynb")
    nb = json.loads(next(f.path for f in rec.files if f.name.endswith(".ipynb")).read_text())
    assert "add or remove one person (up to 2 rows)" in "".join(nb["cells"][0]["source"])
    code = "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    code = code.rstrip()
    assert code.endswith("exit_code")
    code = code[: -len("exit_code")] + "\nprint('EXIT', exit_code)\n"
    # As a kernel would be started: its own argv must not be taken for a dataset.
    proc = subprocess.run([sys.executable, "-c", code, "-f", "kernel-1.json"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and "EXIT 0" in proc.stdout, proc.stderr
    again = json.loads(proc.stdout[: proc.stdout.index("EXIT")])
    assert again["noise_scale"] == manifest["mechanism"]["noise_scale"] == K / 1.0
    assert again["relation"] == manifest["privacy"]["relation"]


def _row_level(**extra):
    return release_script(release_id=3, created_at="2026-11-25T00:00:00Z", version="t",
                          dataset_name="visits.csv", dataset_path="visits.csv",
                          fingerprint="0" * 64, spec=_SUM, reader="numeric_column",
                          script_name="r3.py", **extra)


def test_a_row_level_script_is_unchanged():
    text = _row_level()
    assert text == _row_level(contributions=None)
    assert "result = release(values, SPEC, SecureSource())" in text
    assert "IDENTIFIER" not in text and "release_user_level" not in text
    assert "one person" not in text


@pytest.mark.parametrize("bad", [{"identifier": "", "max_rows": 2},
                                 {"identifier": "person", "max_rows": 0}])
def test_a_user_level_script_without_its_declaration_is_refused(bad):
    with pytest.raises(ValueError):
        _row_level(contributions=bad)
    with pytest.raises(ValueError, match="one file only"):
        _row_level(contributions={"identifier": "person", "max_rows": 2}, files=True)
