"""The reproducible script runs on its own and repeats the release's procedure."""

import json
import subprocess
import sys

import pytest

from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project, ReleaseSpec


def _dataset(folder):
    data = folder / "poll's \"data\".csv"  # a name that needs quoting in the script
    rows = [f"{20 + (i * 13) % 60},{'yes' if i % 3 else 'no'},{['north', 'south'][i % 2]}"
            for i in range(300)]
    data.write_text("age,smoker,region\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (folder / (data.name + ".schema.json")).write_text(json.dumps({
        "schema_version": 1, "columns": [
            {"name": "age", "type": "numeric", "lower": 18, "upper": 90},
            {"name": "smoker", "type": "boolean"},
            {"name": "region", "type": "categorical", "categories": ["north", "south"]}]}))
    return data


@pytest.mark.parametrize("query", [
    QuerySpec(query="mean", mechanism="gaussian", epsilon=0.7, delta=1e-6, column="age"),
    QuerySpec(query="histogram", mechanism="laplace", epsilon=0.5, column="smoker"),
], ids=["mean", "yes-no histogram"])
def test_the_script_runs_and_matches_the_release(tmp_path, query):
    data = _dataset(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=5, delta=1e-5) as project:
        rec = project.release(ReleaseSpec(dataset=str(data), query=query, script=True,
                                          formats=("json",)), tmp_path / "out")
    script = next(f.path for f in rec.files if f.name.endswith(".py"))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "not in the project ledger" in proc.stderr
    again = json.loads(proc.stdout)
    mine = rec.result
    for key in ("query", "column", "mechanism", "epsilon", "delta", "relation", "confidence",
                "noise_scale", "sensitivity"):
        assert again[key] == mine[key], key
    assert again["simulated"] is False and "clamped" not in again
    if query.query == "histogram":
        assert list(again["value"]) == ["yes", "no"]
        return

    data.write_text(data.read_text() + "30,no,north\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and "SHA-256 differs" in proc.stderr and proc.stdout == ""
