"""A release on a folder of files writes a script that sums the files where they are,
checks their fingerprint before any noise, and repeats the release's procedure."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project, ReleaseSpec


def _folder(root):
    folder = root / "visits"
    folder.mkdir()
    rng = np.random.default_rng(5)
    for i in range(3):
        n = 200 + 50 * i
        pd.DataFrame({"stay": rng.integers(0, 40, n).astype(float),
                      "ward": rng.choice(["a", "b", "c"], n)}).to_parquet(
            folder / f"part-{i}.parquet")
    (root / "visits.schema.json").write_text(json.dumps({
        "schema_version": 1, "columns": [
            {"name": "stay", "type": "numeric", "lower": 0, "upper": 30},
            {"name": "ward", "type": "categorical", "categories": ["a", "b", "c"]}]}))
    return folder


@pytest.mark.parametrize("query", [
    QuerySpec(query="mean", mechanism="laplace", epsilon=0.7, column="stay"),
    QuerySpec(query="histogram", mechanism="laplace", epsilon=0.5, column="ward"),
], ids=["mean", "histogram"])
def test_the_folder_script_runs_and_matches_the_release(tmp_path, query):
    folder = _folder(tmp_path)
    with Project.create(tmp_path / "p.dpstudio", epsilon=5, delta=1e-5) as project:
        rec = project.release(ReleaseSpec(dataset=str(folder), query=query, script=True,
                                          formats=("json",), engine="pandas"),
                              tmp_path / "out")
    script = next(f.path for f in rec.files if f.name.endswith(".py"))
    text = script.read_text()
    assert "files-sha256-v1" in text and "run_partials" in text
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "not in the project ledger" in proc.stderr
    again, mine = json.loads(proc.stdout), rec.result
    for key in ("query", "column", "mechanism", "epsilon", "delta", "noise_scale",
                "sensitivity"):
        assert again[key] == mine[key], key
    assert again["simulated"] is False and "clamped" not in again
    if query.query == "histogram":
        assert list(again["value"]) == ["a", "b", "c"]
        return
    # A mean of values in [0, 30]: the noisy answer is near the data's clamped mean.
    assert abs(again["value"] - mine["value"]) < 20 * mine["noise_scale"] + 1

    # One more row in one file: the files are not the release's, and nothing is drawn.
    extra = folder / "part-0.parquet"
    frame = pd.read_parquet(extra)
    pd.concat([frame, frame.head(1)]).to_parquet(extra)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and "files differ" in proc.stderr and proc.stdout == ""


def test_a_folder_script_is_for_central_statistics_only():
    from dpstudio.export.script import release_script

    spec = QuerySpec(query="histogram", mechanism="krr", epsilon=1.0, column="ward",
                     categories=("a", "b"))
    with pytest.raises(ValueError, match="central statistic only"):
        release_script(release_id=1, created_at="t", version="v", dataset_name="d",
                       dataset_path="d", fingerprint="f", spec=spec, reader="category_column",
                       script_name="s.py", trust_model="local", files=True)
