"""Manifests: what they hold (and never hold), and re-checking files against them."""

import json

import numpy as np
import pytest

from dpstudio import __version__
from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.rng import SecureSource
from dpstudio.export import ExportError, public_result, render_bundle, verify_manifest
from dpstudio.export.bundle import BundleInput
from dpstudio.export.manifest import check_public, manifest_bytes


def _bundle(tmp_path, **kw):
    spec = QuerySpec(query="sum", mechanism="gaussian", epsilon=0.5, delta=1e-6,
                     bounds=(0.0, 10.0), column="x")
    values = np.array([1.0, 2.0, 30.0, 4.0])  # one value is clamped: analyst-only
    result = release(values, spec, SecureSource())
    assert result.clamped == 1
    inp = BundleInput(release_id=7, uid="u" * 32, created_at="2024-01-01T00:00:00Z",
                      stem="r0007-sum-x", dataset_name="d.csv", dataset_path="/data/d.csv",
                      fingerprint="f" * 64, schema={"schema_version": 1, "columns": []},
                      spec=spec, public=public_result(result), epsilon=0.5, delta=1e-6,
                      accountant="basic", budget_epsilon=3, budget_delta=1e-5,
                      formats=("csv", "json", "parquet", "xlsx"), **kw)
    files = render_bundle(inp)
    for f in files:
        (tmp_path / f.name).write_bytes(f.data)
    return files, tmp_path / "r0007-sum-x.manifest.json"


def test_manifest_contents(tmp_path):
    files, path = _bundle(tmp_path, script=True)
    m = json.loads(path.read_text())
    assert m["schema_version"] == 1 and m["kind"] == "dpstudio-release-manifest"
    assert m["dataset"]["fingerprint"] == "f" * 64
    assert m["dataset"]["declared"] == {"column": "x", "lower": 0.0, "upper": 10.0}
    assert m["trust_model"] == "central"
    assert m["mechanism"]["name"] == "gaussian"
    assert m["mechanism"]["params"] == {"epsilon": 0.5, "delta": 1e-6, "calibration": "analytic"}
    assert m["mechanism"]["noise_scale"] > 0 and m["mechanism"]["sensitivity"] == 10.0
    assert m["privacy"] == {"epsilon": 0.5, "delta": 1e-6, "epsilon_exact": "0.5",
                            "delta_exact": "0.000001", "relation": "add-remove",
                            "accountant": "basic"}
    assert m["confidence"] == 0.95 and m["engine"]["version"] == __version__
    assert m["release"]["created_at"] == "2024-01-01T00:00:00Z"
    assert [f["name"] for f in m["files"]] == [f.name for f in files[:-1]]
    text = path.read_text().lower()
    for word in ("clamped", "seed", "/data/d.csv"):
        assert word not in text


def test_verify_manifest_checks_every_file(tmp_path):
    files, path = _bundle(tmp_path, script=True)
    check = verify_manifest(path)
    assert check.ok and check.problems == [] and len(check.checked) == len(files) - 1
    target = tmp_path / "r0007-sum-x.json"
    data = bytearray(target.read_bytes())
    data[10] ^= 1  # same size, one bit flipped
    target.write_bytes(bytes(data))
    (tmp_path / "r0007-sum-x.parquet").unlink()
    check = verify_manifest(path)
    assert not check.ok
    assert check.problems == ["r0007-sum-x.json: SHA-256 differs from the manifest (file "
                              "altered)", "r0007-sum-x.parquet: missing"]


def test_verify_refuses_what_is_not_a_manifest(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"a": 1}')
    with pytest.raises(ExportError, match="not a DP Studio release manifest"):
        verify_manifest(bad)
    bad.write_text("not json")
    with pytest.raises(ExportError, match="not a JSON manifest"):
        verify_manifest(bad)
    with pytest.raises(ExportError, match="cannot read"):
        verify_manifest(tmp_path / "missing.json")
    _, path = _bundle(tmp_path)
    m = json.loads(path.read_text())
    m["files"].append({"name": "../../etc/passwd", "sha256": "0" * 64, "bytes": 1})
    path.write_text(json.dumps(m))
    assert verify_manifest(path).problems[0].startswith("invalid file entry")
    m["schema_version"] = 9
    path.write_text(json.dumps(m))
    with pytest.raises(ExportError, match="unsupported manifest schema_version 9"):
        verify_manifest(path)


def test_private_keys_cannot_enter_a_manifest():
    with pytest.raises(ExportError, match="clamped"):
        check_public({"release": {"value": 1, "clamped": 3}})
    with pytest.raises(ExportError, match="seed"):
        manifest_bytes({"schema_version": 1, "randomness": {"seed": 42}})
