"""``dpstudio release SPEC`` with ``query = "train"``: the files, the report and model card,
``dpstudio verify``, and one-line refusals (issue 13)."""

from __future__ import annotations

import json
import shutil

from dpstudio.cli import main
from dpstudio.data import sample_path

STEM = "r0001-train-diabetes"


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _setup(tmp_path, capsys, **keys):
    src = sample_path("health")
    lines = src.read_text(encoding="utf-8").splitlines()[:301]
    (tmp_path / "health.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(src.with_name(src.name + ".schema.json"), tmp_path / "health.csv.schema.json")
    fields = {"schema_version": 1, "dataset": "health.csv", "query": "train",
              "label": "diabetes", "features": ["age", "bmi", "smoker"], "method": "dpsgd",
              "epsilon": 1.0, "delta": 1e-6, "epochs": 1, "batch_rate": 0.1,
              # A DP-SGD release divides by a declared expected batch, never q·n (n is
              # private under add/remove): q × the 300 rows' public count.
              "expected_batch": 30} | keys
    spec = tmp_path / "model.toml"
    spec.write_text("\n".join(f"{k} = {json.dumps(v)}" for k, v in fields.items()
                              if v is not None) + "\n",
                    encoding="utf-8")
    project = tmp_path / "p.dpstudio"
    code, _, err = _run(capsys, "project", "init", project, "--epsilon", "5", "--delta",
                        "1e-4", "--relation", "add-remove")
    assert code == 0, err
    return spec, project, tmp_path / "out"


def test_release_writes_model_card_report_script_and_verifies(qapp, tmp_path, capsys):
    spec, project, out = _setup(tmp_path, capsys, report=True, script=True)
    code, text, err = _run(capsys, "release", spec, "--project", project, "--out", out)
    assert code == 0, err
    assert "release #1 done: train of 'diabetes' (dp_sgd" in text
    assert "held-out accuracy is not published" in text
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{STEM}{x}" for x in (".csv", ".json", ".model-card.md", ".report.html",
                               ".report.pdf", ".py", ".manifest.json"))
    card = (out / f"{STEM}.model-card.md").read_text(encoding="utf-8")
    for heading in ("## Data", "## Method", "## Trust model", "## Privacy guarantee",
                    "## Accuracy", "## Intended use and limits"):
        assert heading in card
    report = (out / f"{STEM}.report.html").read_text(encoding="utf-8")
    assert "Privacy–utility" in report and "Model card" in report
    assert (out / f"{STEM}.report.pdf").read_bytes().startswith(b"%PDF")
    manifest = json.loads((out / f"{STEM}.manifest.json").read_text(encoding="utf-8"))
    for private in ("accuracy", "auc", "baseline", "confusion", "rounds"):
        assert private not in manifest["model"]
    assert manifest["privacy"]["training_accountant"] == "pld"
    code, text, err = _run(capsys, "verify", out / f"{STEM}.manifest.json")
    assert code == 0, err
    # An altered coefficient is caught.
    path = out / f"{STEM}.csv"
    path.write_text(path.read_text(encoding="utf-8").replace("age,", "age,9"),
                    encoding="utf-8")
    code, text, err = _run(capsys, "verify", out / f"{STEM}.manifest.json")
    assert code != 0
    # The script names the same training and checks the dataset's SHA-256.
    script = (out / f"{STEM}.py").read_text(encoding="utf-8")
    assert "method='dpsgd'" in script and "FINGERPRINT" in script
    compile(script, "script", "exec")


def test_refusals_are_one_line_with_nothing_written(tmp_path, capsys):
    for keys, words in (({"label": "smoker", "features": ["age"]}, "yes/no"),
                        ({"method": "output", "delta": 0.0, "epochs": None, "batch_rate": None,
                          "expected_batch": None}, "replace"),
                        # DP-SGD without its declared divisor: refused, nothing charged
                        ({"expected_batch": None}, "declare expected_batch = B"),
                        ({"simulate": 7}, "never released"),
                        ({"column": "diabetes"}, "label")):
        spec, project, out = _setup(tmp_path, capsys, **keys)
        code, text, err = _run(capsys, "release", spec, "--project", project, "--out", out)
        assert code == 2, (keys, text)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (keys, err)
        assert not out.exists() or not any(out.iterdir())
        project.unlink()
