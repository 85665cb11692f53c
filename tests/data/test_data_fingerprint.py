"""sha256_file streams the file and matches hashlib over its bytes."""

from __future__ import annotations

import hashlib

import pytest

from dpstudio.data import DataError, sha256_file


@pytest.mark.parametrize("size", [0, 10, 3 * (1 << 20) + 17])  # empty, tiny, several chunks
def test_sha256_matches_hashlib(tmp_path, size):
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="cannot read file"):
        sha256_file(tmp_path / "missing.csv")
