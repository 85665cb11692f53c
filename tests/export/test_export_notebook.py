"""A release's script as a notebook: nbformat 4.5 cells whose code, run top to bottom in
a fresh interpreter, repeats the release (and refuses data that is not the release's)."""

import json
import subprocess
import sys

import pytest

from dpstudio.engine.queries import QuerySpec
from dpstudio.export.notebook import script_notebook
from dpstudio.export.script import release_script


def _data(tmp_path):
    data = tmp_path / "ages.csv"
    data.write_text("age\n" + "\n".join(str(20 + i % 50) for i in range(400)) + "\n")
    (tmp_path / "ages.csv.schema.json").write_text(json.dumps({
        "schema_version": 1, "columns": [{"name": "age", "type": "numeric", "lower": 18,
                                          "upper": 90}]}))
    return data


def _notebook(data, fingerprint):
    spec = QuerySpec(query="mean", mechanism="laplace", epsilon=1.0, bounds=(18.0, 90.0),
                     column="age")
    text = release_script(release_id=7, created_at="2026-11-25T00:00:00Z", version="t",
                          dataset_name="ages.csv", dataset_path=str(data),
                          fingerprint=fingerprint, spec=spec, reader="numeric_column",
                          script_name="r7.py")
    return json.loads(script_notebook(text))


def _run_cells(nb, cwd):
    code = "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    # As a kernel would: the last expression's value is shown; here, printed.
    code = code.replace("\nexit_code\n", "\n").rstrip()
    if code.endswith("exit_code"):
        code = code[: -len("exit_code")]
    code += "\nprint('EXIT', exit_code)\n"
    # A kernel's own argv (its connection file) must not be taken for a dataset.
    return subprocess.run([sys.executable, "-c", code, "-f", "kernel-123.json"],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def test_the_notebook_has_valid_cells_and_runs_top_to_bottom(tmp_path):
    from dpstudio.data import sha256_file

    data = _data(tmp_path)
    nb = _notebook(data, sha256_file(data))
    assert nb["nbformat"] == 4 and nb["nbformat_minor"] == 5
    kinds = [c["cell_type"] for c in nb["cells"]]
    assert kinds == ["markdown", "code", "code", "code"]
    assert len({c["id"] for c in nb["cells"]}) == 4
    for cell in nb["cells"]:
        assert all(line.endswith("\n") for line in cell["source"][:-1])
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    header = "".join(nb["cells"][0]["source"])
    assert header.startswith("# Reproduce DP Studio release #7") and "FRESH noise" in header
    assert "Usage:" not in header
    proc = _run_cells(nb, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "EXIT 0" in proc.stdout and "not in the project ledger" in proc.stderr
    result = json.loads(proc.stdout[: proc.stdout.index("EXIT")])
    assert result["query"] == "mean" and result["epsilon"] == 1.0


def test_the_notebook_refuses_other_data_like_the_script(tmp_path):
    data = _data(tmp_path)
    proc = _run_cells(_notebook(data, "0" * 64), tmp_path)
    assert proc.returncode == 0 and "EXIT 2" in proc.stdout
    assert "SHA-256 differs" in proc.stderr


@pytest.mark.parametrize("text", ["def main(:", "x = 1\n", '"""doc"""\nx = 1\n'])
def test_what_is_not_a_release_script_is_refused(text):
    with pytest.raises(ValueError, match="not a release script"):
        script_notebook(text)


def test_a_spec_with_script_format_ipynb_releases_a_notebook(tmp_path):
    from dpstudio.project import Project
    from dpstudio.project.spec import SpecError, parse_spec

    data = _data(tmp_path)
    spec = parse_spec({"schema_version": 1, "dataset": str(data), "column": "age",
                       "query": "mean", "mechanism": "laplace", "epsilon": 1.0,
                       "script": True, "script_format": "ipynb", "formats": ["json"]})
    assert spec.script_format == "ipynb"
    with Project.create(tmp_path / "p.dpstudio", epsilon=5, delta=1e-5) as project:
        rec = project.release(spec, tmp_path / "out")
    names = [f.name for f in rec.files]
    assert any(n.endswith(".ipynb") for n in names) and not any(n.endswith(".py")
                                                                for n in names)
    nb = json.loads(next(f.path for f in rec.files if f.name.endswith(".ipynb")).read_text())
    proc = _run_cells(nb, tmp_path)
    assert proc.returncode == 0 and "EXIT 0" in proc.stdout, proc.stderr
    manifest = json.loads(next(f.path for f in rec.files
                               if f.name.endswith(".manifest.json")).read_text())
    assert any(f.get("role") == "script/notebook" for f in manifest["files"])
    with pytest.raises(SpecError, match="script_format must be one of py, ipynb"):
        parse_spec({"schema_version": 1, "dataset": str(data), "column": "age",
                    "query": "mean", "mechanism": "laplace", "epsilon": 1.0,
                    "script_format": "r"})
