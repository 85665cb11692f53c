"""A release plan's script, run from another folder on a dataset larger than one read
chunk: it checks the dataset's SHA-256 in 1 MiB chunks (never the whole file in one
read), draws every statistic again, and its numbers agree with the release's within the
noise of two independent draws."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpstudio.project import Project
from dpstudio.project.spec_plan import parse_plan_spec

ROWS, PEOPLE, K = 90_000, 18_000, 2  # about 1.3 MB of CSV: more than one chunk
CHUNK = 1 << 20

# Runs the script as `python script.py` would, with `open` watched on the dataset: every
# binary read of it is recorded (its size), and printed on stderr last.
_WATCH = """
import builtins, json, runpy, sys
script, data = sys.argv[1], sys.argv[2]
real, reads = builtins.open, []

class Watched:
    def __init__(self, handle):
        self._handle = handle
    def read(self, size=-1):
        reads.append(size)
        return self._handle.read(size)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)
    def __getattr__(self, name):
        return getattr(self._handle, name)

def watched_open(file, mode="r", *args, **kwargs):
    handle = real(file, mode, *args, **kwargs)
    same = isinstance(file, (str, bytes)) or hasattr(file, "__fspath__")
    if same and "b" in mode and str(file) == data:
        return Watched(handle)
    return handle

builtins.open = watched_open
sys.argv = [script]
try:
    runpy.run_path(script, run_name="__main__")
    code = 0
except SystemExit as exc:
    code = exc.code
print("READS " + json.dumps(reads), file=sys.stderr)
sys.exit(code)
"""


def _people(people: int = PEOPLE) -> tuple[np.ndarray, np.ndarray]:
    """Each person's score in [0, 10] (5 % missing: imputed as 0, which moves the mean by
    0.25 if a script dropped them instead) and region. Their 5 rows repeat them, so a
    user-level plan's statistics do not depend on which K rows are kept."""
    g = np.random.default_rng(2026)
    score = g.integers(0, 11, people).astype(str)
    score[g.random(people) < 0.05] = ""
    return score, np.array(["north", "south"])[g.integers(0, 2, people)]


def _dataset(folder: Path, person: bool = False, people: int = PEOPLE) -> Path:
    """The people's rows; ``person`` declares the identifier (at most K rows a person)
    for a user-level plan, else it is left undeclared."""
    score, region = (np.repeat(c, ROWS // PEOPLE) for c in _people(people))
    who = np.char.add("p", np.repeat(np.arange(people), ROWS // PEOPLE).astype(str))
    lines = np.char.add(np.char.add(np.char.add(np.char.add(who, ","), score), ","),
                        region)
    path = folder / "big.csv"
    path.write_text("person,score,region\n" + "\n".join(lines) + "\n", encoding="utf-8")
    schema = {"schema_version": 3, "columns": [
        {"name": "score", "type": "numeric", "lower": 0, "upper": 10},
        {"name": "region", "type": "categorical", "categories": ["north", "south"]}]}
    if person:
        schema["columns"].append({"name": "person", "type": "identifier", "max_rows": K})
    (folder / "big.csv.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return path


def _values(stdout: str) -> list:
    """What the script printed, one statistic a line: a number or {key: number}."""
    out = []
    for line in stdout.splitlines():
        if " by " in line:
            out.append(ast.literal_eval(line.split(") ", 1)[1]))
        else:
            out.append(float(line.rsplit(" ", 1)[1]))
    return out


@pytest.mark.parametrize("unit", ["row", "person"])
def test_the_plan_script_runs_elsewhere_reads_in_chunks_and_agrees(tmp_path, unit):
    data = _dataset(tmp_path, person=unit == "person")
    assert data.stat().st_size > CHUNK
    stats = [{"column": "score", "query": "count"},
             {"column": "score", "query": "sum"},
             {"column": "score", "query": "mean", "by": ["region"], "missing": "impute",
              "impute": 0.0}]
    spec = parse_plan_spec({"schema_version": 2, "dataset": str(data), "epsilon": 3.0,
                            "rows": ROWS, "formats": ["json"], "script": True,
                            "statistics": stats}, "plan.toml")
    with Project.create(tmp_path / "p.dpstudio", epsilon=10) as project:
        record = project.release(spec, tmp_path / "out")
    script = next(f.path for f in record.files if f.role == "script")
    manifest = json.loads(next(f.path for f in record.files
                               if f.role == "manifest").read_text(encoding="utf-8"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = subprocess.run([sys.executable, "-c", _WATCH, str(script), str(data)],
                         capture_output=True, text=True, timeout=120, cwd=elsewhere)
    assert ran.returncode == 0, ran.stderr
    reads = json.loads(ran.stderr.rsplit("READS ", 1)[1])
    # The SHA-256 read the file in bounded chunks: never read() of the whole file.
    assert len(reads) >= 3 and all(0 < n <= CHUNK for n in reads), reads
    assert "not in the project ledger" in ran.stderr
    got = _values(ran.stdout)
    assert len(got) == 3
    for released, again in zip(manifest["statistics"], got, strict=True):
        cells = released["value"] if isinstance(released["value"], dict) else {"": None}
        for cell in cells:
            pick = (lambda v, c=cell: v[c] if c else v)  # noqa: E731
            half = (pick(released["ci_high"]) - pick(released["ci_low"])) / 2
            # Two independent draws, each within 4 × its 95 % half-width but with
            # probability 20⁻⁴ (Laplace tails): the difference within 8 ×.
            assert abs(pick(again) - pick(released["value"])) <= 8 * half, (released, again)
    # The imputed mean is the script's as the release's: dropping the missing scores
    # instead would move it by about 0.25, far beyond 8 × its half-width here.
    mean = manifest["statistics"][2]
    assert all((mean["ci_high"][c] - mean["ci_low"][c]) * 4 < 0.2 for c in mean["value"])
    # And both are near the truth (each person's present scores, counted once a row).
    present = (_people()[0] != "").sum() * (K if unit == "person" else ROWS // PEOPLE)
    count = manifest["statistics"][0]
    assert abs(got[0] - present) <= 4 * (count["ci_high"] - count["ci_low"]) / 2
    if unit == "person":
        assert manifest["contributions"] == {"identifier": "person", "max_rows": K}


def test_a_changed_dataset_is_refused_before_anything_is_drawn(tmp_path):
    data = _dataset(tmp_path, people=200)
    spec = parse_plan_spec({"schema_version": 2, "dataset": str(data), "epsilon": 1.0,
                            "formats": ["json"], "script": True,
                            "statistics": [{"column": "score", "query": "count"}]},
                           "plan.toml")
    with Project.create(tmp_path / "p.dpstudio", epsilon=10) as project:
        record = project.release(spec, tmp_path / "out")
    script = next(f.path for f in record.files if f.role == "script")
    other = tmp_path / "other.csv"
    other.write_bytes(data.read_bytes() + b"p0,1,north\n")
    ran = subprocess.run([sys.executable, str(script), str(other)], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert ran.returncode == 2 and ran.stdout == ""
    assert f"{other} is not the dataset of release plan #{record.id}" in ran.stderr
