"""Content fingerprints of data files, so a result can name exactly what it was computed on."""

from __future__ import annotations

import hashlib
import os

from dpstudio.data.errors import DataError

_CHUNK = 1 << 20


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of the file's bytes, read in 1 MiB chunks (any file size)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except OSError as exc:
        raise DataError(f"{os.fspath(path)}: cannot read file ({exc.strerror or exc})") from exc
    return digest.hexdigest()
