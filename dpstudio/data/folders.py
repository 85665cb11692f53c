"""Datasets that are many files: a folder or a glob of Parquet (or CSV) files.

Opened lazily: :func:`open_files` lists the files and reads their column names (and, for
Parquet, their types) from metadata only — Parquet footers, a CSV file's header line —
never a value. The rows are read later, file by file, by whichever engine runs the query
(:mod:`dpstudio.execution`).

The declared schema of a folder lives *beside* it, ``<folder>.schema.json``, as a file's
sidecar does (``survey.csv`` → ``survey.csv.schema.json``): :func:`schema_for` and every
tool that finds a file's sidecar find a folder's the same way; a folder that a pipeline
rewrites wholesale (Spark's and Dask's ``overwrite``) keeps its declaration; and readers
that take every file of a folder never meet a JSON file among the data. A glob's sidecar
is that of the folder its pattern lies in (``data/part-*.parquet`` → ``data.schema.json``):
the files it picks share the folder's columns.

A folder's fingerprint (:func:`files_fingerprint`, kind :data:`FILES_ALGORITHM`) is the
SHA-256 over each file's name-free entry: size and the SHA-256 of its bytes, computed once
while the release reads the file (see :func:`hash_bytes`). It is a kind of its own: a
single file keeps the fingerprints it always had (its bytes' SHA-256, and its parsed rows'
``rows-sha256-v1``), so no existing project's dataset changes identity.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpstudio.data.errors import DataError, shorten

__all__ = [
    "FILES_ALGORITHM",
    "FileDataset",
    "FileEntry",
    "files_fingerprint",
    "folder_sidecar_path",
    "hash_bytes",
    "is_multi_file",
    "open_files",
]

#: Name of the folder fingerprint's kind, recorded beside the digest (bump if it changes).
FILES_ALGORITHM = "files-sha256-v1"
_GLOB_CHARS = "*?["
_PARQUET = (".parquet", ".pq")
_TEXT = (".csv", ".tsv", ".txt")


@dataclass(frozen=True)
class FileEntry:
    """One file of a dataset as a release read it: for the manifest and the fingerprint.

    ``mtime_ns`` is recorded (when was it read) but is no part of the fingerprint: touching
    a file must not make it a new dataset with a fresh budget.
    """

    name: str
    bytes: int
    mtime_ns: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        """The manifest's entry."""
        return {"name": self.name, "bytes": self.bytes, "mtime_ns": self.mtime_ns,
                "sha256": self.sha256}


@dataclass(frozen=True)
class FileDataset:
    """A folder or glob of data files, opened lazily.

    ``files``: the data files, sorted by path; ``format``: ``"parquet"`` or ``"csv"``
    (CSV, TSV or text); ``columns``: their names, from metadata; ``types``: column →
    the Parquet footer's type (empty for text files, whose types come from the declared
    schema); ``total_bytes``: the files' size on disk.
    """

    source: str
    files: tuple[Path, ...]
    format: str
    columns: tuple[str, ...]
    types: dict[str, str] = field(default_factory=dict)
    total_bytes: int = 0

    @property
    def name(self) -> str:
        """How the dataset is named in messages, ledgers and manifests."""
        return Path(self.source.rstrip("/\\")).name or self.source

    @property
    def sidecar(self) -> Path:
        """Where its declared schema lives (:func:`folder_sidecar_path`)."""
        return folder_sidecar_path(self.source)


def is_multi_file(text: str | os.PathLike[str]) -> bool:
    """Whether ``text`` names a folder or a glob pattern rather than one file.

    Parameters
    ----------
    text : str or os.PathLike
        What the user typed.

    Returns
    -------
    bool
    """
    s = os.fspath(text)
    if os.path.isfile(s):
        return False
    return os.path.isdir(s) or any(c in s for c in _GLOB_CHARS)


def folder_sidecar_path(text: str | os.PathLike[str]) -> Path:
    """The declared schema of a folder (``<folder>.schema.json``) or of a glob (that of
    the folder its pattern lies in); see the module's docstring for why beside, not in."""
    s = os.fspath(text).rstrip("/\\") or os.fspath(text)
    if any(c in s for c in _GLOB_CHARS):
        parent = Path(s).parent
        while any(c in str(parent) for c in _GLOB_CHARS):
            parent = parent.parent
        s = str(parent.absolute())
    p = Path(s)
    return p.with_name(p.name + ".schema.json")


def open_files(text: str | os.PathLike[str], header: bool = True) -> FileDataset:
    """List a folder's (or a glob's) data files and read their columns from metadata.

    Files whose names start with ``_`` or ``.`` (``_SUCCESS``, ``_metadata``, checksums)
    are not data. Every file must have the same format and the same column names.

    Parameters
    ----------
    text : str or os.PathLike
        A folder, or a glob such as ``data/part-*.parquet``.
    header : bool, default True
        Whether text files start with a line of names (else columns are ``1``, ``2``, …).

    Returns
    -------
    FileDataset

    Raises
    ------
    DataError
        No data files, mixed formats, or files whose columns differ (one sentence).
    """
    source = os.fspath(text)
    if os.path.isdir(source):
        found = [p for p in Path(source).iterdir() if p.is_file()]
    else:
        found = [Path(p) for p in glob.glob(source) if os.path.isfile(p)]
    files = sorted(p for p in found if not p.name.startswith(("_", "."))
                   and p.suffix.lower() in _PARQUET + _TEXT)
    shown = shorten(source, 120)
    if not files:
        raise DataError(f"{shown}: no Parquet or CSV files found")
    kinds = {"parquet" if p.suffix.lower() in _PARQUET else "csv" for p in files}
    if len(kinds) > 1:
        raise DataError(f"{shown}: holds both Parquet and text files; point DP Studio at one "
                        "kind (a glob such as *.parquet)")
    kind = kinds.pop()
    names, types = None, {}
    for p in files:
        these, these_types = (_parquet_columns(p) if kind == "parquet"
                              else (_text_columns(p, header), {}))
        if names is None:
            names, types = these, these_types
        elif these != names:
            raise DataError(f"{shorten(p.name)}: its columns differ from {shorten(files[0].name)}"
                            f"'s ({', '.join(shorten(c, 20) for c in these[:5])} against "
                            f"{', '.join(shorten(c, 20) for c in names[:5])})")
    total = sum(p.stat().st_size for p in files)
    return FileDataset(source, tuple(files), kind, tuple(names), types, total)


def hash_bytes(path: Path, raw: bytes, root: Path | None = None) -> FileEntry:
    """The fingerprint entry of a file from the bytes just read for a release.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    raw : bytes
        Its bytes, as read once (the same bytes the release parses).
    root : pathlib.Path, optional
        Names are relative to it (the folder); the file name when None.

    Returns
    -------
    FileEntry
    """
    stat = path.stat()
    name = os.path.relpath(path, root) if root is not None else path.name
    return FileEntry(name, len(raw), stat.st_mtime_ns, hashlib.sha256(raw).hexdigest())


def files_fingerprint(entries: list[FileEntry]) -> str:
    """The dataset fingerprint of a folder: SHA-256 over its files' sizes and hashes.

    Order- and name-free (the files' hashes sorted): renaming or moving the same files
    keeps the dataset; changing, adding or removing a byte does not. Modification times
    are left out on purpose (see :class:`FileEntry`).

    Parameters
    ----------
    entries : list of FileEntry
        One per file.

    Returns
    -------
    str
        Hex SHA-256.
    """
    digest = hashlib.sha256(FILES_ALGORITHM.encode())
    lines = sorted(f"{e.sha256} {e.bytes}" for e in entries)
    digest.update(json.dumps(lines).encode())
    return digest.hexdigest()


def _parquet_columns(p: Path) -> tuple[list[str], dict[str, str]]:
    """Column names and types from a Parquet footer (no row is read)."""
    try:
        import pyarrow.parquet as pq

        schema = pq.read_schema(p)
    except Exception as exc:  # pyarrow raises many types
        raise DataError(f"{shorten(p.name)}: not a readable Parquet file "
                        f"({shorten(str(exc).splitlines()[0] if str(exc) else exc, 120)})"
                        ) from None
    index = {c for c in (schema.pandas_metadata or {}).get("index_columns", ())
             if isinstance(c, str)}
    fields = [f for f in schema if f.name not in index]
    return [str(f.name).strip() for f in fields], {str(f.name).strip(): str(f.type)
                                                   for f in fields}


def _text_columns(p: Path, header: bool) -> list[str]:
    """Column names from a text file's first line (its only line read here)."""
    from dpstudio.data.loading import decode_bytes
    from dpstudio.data.text_tables import sniff_delimiter

    try:
        with p.open("rb") as handle:
            first = handle.readline(1 << 20)
    except OSError as exc:
        raise DataError(f"{shorten(p.name)}: cannot read file ({exc.strerror or exc})"
                        ) from None
    if not first.strip():
        raise DataError(f"{shorten(p.name)}: the file is empty")
    line, _ = decode_bytes(first)
    delimiter = "\t" if p.suffix.lower() == ".tsv" else sniff_delimiter(line)
    cells = next(csv.reader(io.StringIO(line), delimiter=delimiter))
    if not header:
        return [str(i) for i in range(1, len(cells) + 1)]
    return [c.strip() for c in cells]
