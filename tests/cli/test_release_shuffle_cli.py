"""``dpstudio release`` of shuffle-model and secure-aggregation specs, ``dpstudio verify`` on
their manifests, and their reproducible script and notebook (issue 14, first item)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from dpstudio.cli import main

N = 1200


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def env(tmp_path, capsys):
    rng = np.random.default_rng(3)
    hours = rng.integers(0, 41, N)
    (tmp_path / "h.csv").write_text("hours\n" + "\n".join(map(str, hours)) + "\n",
                                    encoding="utf-8")
    (tmp_path / "h.csv.schema.json").write_text(json.dumps({"schema_version": 1, "columns": [
        {"name": "hours", "type": "numeric", "lower": 0, "upper": 40}]}), encoding="utf-8")
    project = tmp_path / "p.dpstudio"
    code, _, err = run(capsys, "project", "init", project, "--epsilon", "6", "--delta", "1e-4",
                       "--relation", "replace")
    assert code == 0, err
    return tmp_path, project, hours


def _spec(tmp, name, trust_model, mechanism, epsilon, extra=""):
    path = tmp / f"{name}.toml"
    path.write_text(f'schema_version = 1\ndataset = "h.csv"\ncolumn = "hours"\n'
                    f'query = "mean"\ntrust_model = "{trust_model}"\n'
                    f'mechanism = "{mechanism}"\nepsilon = {epsilon}\ndelta = 1e-6\n{extra}',
                    encoding="utf-8")
    return path


def test_release_verify_and_rerun_a_secure_aggregation_mean(env, capsys):
    tmp, project, hours = env
    spec = _spec(tmp, "sk", "distributed", "skellam", 1.0,
                 'script = true\n[params]\nmax_dropouts = 12\n')
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", tmp / "o",
                          "--json")
    assert code == 0, err
    record = json.loads(text)
    assert (record["epsilon"], record["delta"]) in ((1.0, 1e-6), ("1", "0.000001"),
                                                    ("1.0", "0.000001"))
    manifest = next((tmp / "o").glob("*.manifest.json"))
    code, text, err = run(capsys, "verify", manifest)
    assert code == 0 and "FAILED" not in text, (text, err)
    m = json.loads(manifest.read_text(encoding="utf-8"))
    assert m["parties"]["max_dropouts"] == 12 and m["protocol"]["max_dropouts"] == 12
    assert m["parties"]["sees"]["server"].startswith("only the masked sum")
    # A tampered export fails verification.
    csv = next((tmp / "o").glob("*.csv"))
    csv.write_text(csv.read_text(encoding="utf-8").replace("mean", "MEAN"), encoding="utf-8")
    code, text, _ = run(capsys, "verify", manifest)
    assert code == 1 and "FAILED" in text
    # The script reruns the protocol (fresh OS randomness) and prints only public fields.
    script = next((tmp / "o").glob("*.py"))
    done = subprocess.run([sys.executable, str(script), str(tmp / "h.csv")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    public = json.loads(done.stdout)
    assert public["mechanism"] == "skellam" and public["max_dropouts"] == 12
    assert public["calibrated_for"] == {"epsilon": 1.0, "delta": 1e-6}
    assert "clamped" not in public and "missing_count" not in public
    assert abs(public["value"] - hours.mean()) < 3 * public["error_bound"]


def test_a_shuffle_release_as_a_notebook_and_a_refused_spec(env, capsys):
    tmp, project, _ = env
    spec = _spec(tmp, "cl", "shuffle", "cloak", 1.0, 'script = true\nscript_format = "ipynb"\n')
    code, text, err = run(capsys, "release", spec, "--project", project, "--out", tmp / "o")
    assert code == 0, err
    notebook = json.loads(next((tmp / "o").glob("*.ipynb")).read_text(encoding="utf-8"))
    code_text = "".join("".join(c["source"]) for c in notebook["cells"]
                        if c["cell_type"] == "code")
    assert "protocol_public" in code_text and "'shuffle'" in code_text
    manifest = next((tmp / "o").glob("*.manifest.json"))
    assert run(capsys, "verify", manifest)[0] == 0
    # Not a shuffle protocol: one sentence, nothing charged.
    bad = _spec(tmp, "bad", "shuffle", "skellam", 1.0)
    code, _, err = run(capsys, "release", bad, "--project", project, "--out", tmp / "o2")
    assert code == 2 and err.count("\n") == 1
    assert ("skellam is not a shuffle-model protocol (krr or sue or oue or olh or cloak or "
            "blanket)") in err
    code, text, _ = run(capsys, "ledger", project)
    assert code == 0 and text.count("done") == 1
