"""Datasets that are folders or globs: opened from metadata, sidecar beside, fingerprint."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from dpstudio.data.errors import DataError
from dpstudio.data.folders import (
    FILES_ALGORITHM,
    files_fingerprint,
    folder_sidecar_path,
    hash_bytes,
    is_multi_file,
    open_files,
)
from dpstudio.data.schema import sidecar_path


def _parquet_folder(root, parts=3, rows=50):
    folder = root / "pq"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(parts):
        pd.DataFrame({"age": rng.integers(0, 100, rows).astype("int32"),
                      "sex": rng.choice(["f", "m"], rows)}).to_parquet(
            folder / f"part-{i}.parquet")
    (folder / "_SUCCESS").write_bytes(b"")  # a writer's marker, not data
    return folder


def test_a_folder_opens_from_footers_without_reading_a_row(tmp_path, monkeypatch):
    folder = _parquet_folder(tmp_path)

    def no_rows(*a, **k):
        raise AssertionError("opening a folder read rows")

    monkeypatch.setattr(pd, "read_parquet", no_rows)
    monkeypatch.setattr("pyarrow.parquet.read_table", no_rows)
    ds = open_files(folder)
    assert [p.name for p in ds.files] == ["part-0.parquet", "part-1.parquet", "part-2.parquet"]
    assert ds.format == "parquet" and ds.columns == ("age", "sex")
    assert ds.types["age"] == "int32" and "string" in ds.types["sex"]
    assert ds.total_bytes == sum(p.stat().st_size for p in ds.files)


def test_a_glob_picks_its_files_and_its_folder_sidecar(tmp_path):
    folder = _parquet_folder(tmp_path)
    ds = open_files(str(folder / "part-[01].parquet"))
    assert [p.name for p in ds.files] == ["part-0.parquet", "part-1.parquet"]
    assert is_multi_file(str(folder / "*.parquet")) and is_multi_file(folder)
    assert not is_multi_file(ds.files[0])
    # A folder's sidecar is beside it, named as a file's would be; a glob's is its folder's.
    assert folder_sidecar_path(folder) == sidecar_path(folder) == tmp_path / "pq.schema.json"
    assert folder_sidecar_path(str(folder / "part-*.parquet")) == tmp_path / "pq.schema.json"


def test_csv_columns_come_from_the_header_line(tmp_path):
    folder = tmp_path / "csv"
    folder.mkdir()
    for i in range(2):
        (folder / f"p{i}.csv").write_text("age;city\n1;a\n2;b\n")
    ds = open_files(folder)
    assert ds.format == "csv" and ds.columns == ("age", "city") and ds.types == {}
    assert open_files(folder, header=False).columns == ("1", "2")


@pytest.mark.parametrize("make, message", [
    (lambda f: None, "no Parquet or CSV files found"),
    (lambda f: ((f / "a.csv").write_text("x\n1\n"),
                pd.DataFrame({"x": [1]}).to_parquet(f / "b.parquet")),
     "holds both Parquet and text files"),
    (lambda f: ((f / "a.csv").write_text("x\n1\n"), (f / "b.csv").write_text("y\n1\n")),
     "its columns differ from a.csv's"),
    (lambda f: (f / "a.parquet").write_bytes(b"not parquet"), "not a readable Parquet file"),
])
def test_bad_folders_are_one_sentence(tmp_path, make, message):
    folder = tmp_path / "d"
    folder.mkdir()
    make(folder)
    with pytest.raises(DataError, match=message) as err:
        open_files(folder)
    assert "\n" not in str(err.value)


def test_the_fingerprint_is_the_files_bytes_not_their_names_order_or_times(tmp_path):
    folder = _parquet_folder(tmp_path)
    files = sorted(folder.glob("*.parquet"))
    entries = [hash_bytes(p, p.read_bytes(), folder) for p in files]
    digest = files_fingerprint(entries)
    assert entries[0].name == "part-0.parquet" and entries[0].bytes == files[0].stat().st_size
    assert files_fingerprint(entries[::-1]) == digest
    os.utime(files[0], ns=(1, 1))  # touched: the same dataset, the same budget
    touched = [hash_bytes(p, p.read_bytes(), folder) for p in files]
    assert touched[0].mtime_ns == 1 and files_fingerprint(touched) == digest
    renamed = files[0].rename(folder / "renamed.parquet")
    again = [hash_bytes(p, p.read_bytes(), folder) for p in [renamed, *files[1:]]]
    assert files_fingerprint(again) == digest
    changed = bytearray(renamed.read_bytes())
    changed[-20] ^= 1
    other = [hash_bytes(renamed, bytes(changed), folder), *again[1:]]
    assert files_fingerprint(other) != digest
    assert files_fingerprint(again[:-1]) != digest  # a file fewer is another dataset
    assert FILES_ALGORITHM == "files-sha256-v1"
