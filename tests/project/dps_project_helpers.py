"""Shared helpers of the project tests (not a test module)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from dpstudio.project import Project

ROWS = 40


def fast_dir() -> contextlib.AbstractContextManager[Path]:
    """A scratch folder on tmpfs when there is one (fsync is free there), else /tmp."""
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None

    @contextlib.contextmanager
    def scratch():
        d = Path(tempfile.mkdtemp(prefix="dps-test-", dir=base))
        try:
            yield d
        finally:
            shutil.rmtree(d, ignore_errors=True)

    return scratch()


def make_dataset(folder: Path, name: str = "data.csv") -> Path:
    """A small CSV with a numeric column x in [0, 10], a category g, and a declared schema."""
    path = folder / name
    lines = ["x,g,secret"] + [f"{(i * 7) % 11}.5,{'ab'[i % 2]},SECRET-{i:03d}-7.123456789"
                              for i in range(ROWS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    schema = {"schema_version": 1, "columns": [
        {"name": "x", "type": "numeric", "lower": 0, "upper": 12},
        {"name": "g", "type": "categorical", "categories": ["a", "b"]},
        {"name": "secret", "type": "text"},
    ]}
    (folder / f"{name}.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return path


def write_spec(path: Path, dataset: Path | str, **fields) -> Path:
    """A TOML spec; ``fields`` override the defaults (a sum of x with Laplace, ε = 0.1)."""
    base = {"schema_version": 1, "dataset": str(dataset), "column": "x", "query": "sum",
            "mechanism": "laplace", "epsilon": 0.1}
    base.update(fields)
    tables = {k: base.pop(k) for k in ("params", "budget") if k in base}
    lines = []
    for key, value in base.items():
        if value is None:
            continue
        lines.append(f"{key} = {json.dumps(value)}")
    for name, table in tables.items():
        lines.append(f"[{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folder_state(out: Path) -> dict[str, str]:
    """Every entry of the output folder (hidden files included) → SHA-256."""
    if not out.exists():
        return {}
    return {p.name: sha256(p) for p in out.iterdir()}


def assert_consistent(project_path: Path, out: Path, expect_recovery: bool = True) -> list:
    """Open the project (running recovery) and check ledger and folder agree."""
    with Project.open(project_path) as project:
        if expect_recovery:
            assert not project.last_recovery.skipped
        assert project.integrity_check() == "ok"
        assert project.integrity() == []  # interruptions are not tampering: chain intact
        records = project.ledger()
    expected: dict[str, str] = {}
    for r in records:
        assert r.status in ("done", "aborted"), r
        if r.status == "aborted":
            assert r.files == () and r.result is None
        else:
            assert r.files, r
            for f in r.files:
                assert f.path.parent == out
                expected[f.name] = f.sha256
    assert folder_state(out) == expected
    return records


def run(capsys, *argv) -> tuple[int, str, str]:
    """``dpstudio ARGV…`` in this process: (exit code, stdout, stderr)."""
    from dpstudio.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err
