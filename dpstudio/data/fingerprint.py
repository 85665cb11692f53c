"""Fingerprints of data: of a file's bytes, and of a table's content as parsed.

A byte hash names exactly which file a result was computed on, but it is a poor identity
for a privacy budget: the same people's rows with one extra newline, another line ending
or shuffled rows are different bytes. :func:`content_fingerprint` identifies the *rows as
parsed*, order-independently, so a re-encoded or reordered copy of a dataset is the same
dataset (and spends the same budget); its bottom-k sketch of row hashes lets a project
notice a file that is *almost* the same rows (an edited version of a dataset).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpstudio.data.errors import DataError

__all__ = ["CONTENT_ALGORITHM", "ContentFingerprint", "content_fingerprint",
           "estimated_overlap", "looks_like_version", "sha256_file"]

_CHUNK = 1 << 20
#: Name of the content-hash algorithm, recorded next to the digest (bump if it changes).
CONTENT_ALGORITHM = "rows-sha256-v1"
#: Size of the bottom-k sketch of row hashes (standard error of a Jaccard estimate from
#: it is about sqrt(J(1−J)/k) ≤ 0.03).
SKETCH_SIZE = 256
_MISSING = "\x00NA"
#: A column's multiset of values identifies its people only when it holds at least this
#: many values (a handful of yes/no answers is the same multiset in unrelated tables).
COLUMN_MIN_VALUES = 20


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


@dataclass(frozen=True)
class ContentFingerprint:
    """What a table holds, independent of its encoding and row order.

    ``digest``: hex SHA-256 over the column names and the sorted multiset of row hashes;
    ``rows``: number of rows; ``columns``: the column names, sorted; ``sketch``: the
    :data:`SKETCH_SIZE` smallest distinct row hashes (a bottom-k sketch, for
    :func:`estimated_overlap`); ``column_digests``: ``(name, digest)`` of every column
    holding at least :data:`COLUMN_MIN_VALUES` values, the digest over the sorted multiset
    of its present values alone (not its name: a column cut out into a file of its own,
    or renamed, still matches).
    """

    digest: str
    rows: int
    columns: tuple[str, ...]
    sketch: tuple[int, ...]
    column_digests: tuple[tuple[str, str], ...] = ()

    def column_digests_text(self) -> str:
        """The column digests as stored in a project file (a JSON object)."""
        return json.dumps(dict(self.column_digests), ensure_ascii=False)

    @staticmethod
    def parse_column_digests(text: str | None) -> tuple[tuple[str, str], ...]:
        """The inverse of :meth:`column_digests_text` (empty for None or malformed text)."""
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            return ()
        if not isinstance(value, dict):
            return ()
        return tuple((str(k), v) for k, v in value.items() if isinstance(v, str))

    def sketch_text(self) -> str:
        """The sketch as stored in a project file (hex, 16 digits a hash)."""
        return "".join(f"{h:016x}" for h in self.sketch)

    @staticmethod
    def parse_sketch(text: str | None) -> tuple[int, ...]:
        """The inverse of :meth:`sketch_text` (empty for None or malformed text)."""
        if not text or len(text) % 16:
            return ()
        try:
            return tuple(int(text[i:i + 16], 16) for i in range(0, len(text), 16))
        except ValueError:
            return ()


def _normalized(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns sorted by name; numbers as float64 (so 1, 1.0 and 1e0 are one value, and
    −0.0 is 0.0); everything else as text, with one marker for a missing value."""
    names = [str(c).strip() for c in frame.columns]
    out: dict[str, np.ndarray] = {}
    order = sorted(range(len(names)), key=lambda i: names[i])
    for i in order:
        col = frame.iloc[:, i]
        if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
            values = pd.to_numeric(col, errors="coerce").to_numpy("float64") + 0.0
        else:
            values = col.astype(object).where(col.notna(), _MISSING).astype(str).to_numpy()
        key = names[i]
        while key in out:  # two columns with one name: keep both
            key += "\x00"
        out[key] = values
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def content_fingerprint(frame: pd.DataFrame) -> ContentFingerprint:
    """The order-independent content hash of a parsed table (vectorized, any size).

    Each row's normalized values are hashed (``pandas.util.hash_pandas_object``, a fixed
    key, so equal rows hash equally in every process); the row hashes are sorted, which
    makes the result a hash of the *multiset* of rows: shuffled rows, another line ending
    or a trailing newline give the same digest, an added, removed or changed row does not.
    Column names (sorted) are part of the digest.
    """
    norm = _normalized(frame)
    columns = tuple(norm.columns)
    if len(norm.columns):
        hashes = np.sort(pd.util.hash_pandas_object(norm, index=False).to_numpy(np.uint64))
    else:
        hashes = np.zeros(0, dtype=np.uint64)
    digest = hashlib.sha256()
    digest.update(CONTENT_ALGORITHM.encode())
    digest.update(json.dumps(columns, ensure_ascii=False).encode("utf-8"))
    digest.update(len(hashes).to_bytes(8, "little"))
    digest.update(hashes.astype("<u8").tobytes())
    sketch = tuple(int(h) for h in np.unique(hashes)[:SKETCH_SIZE])
    return ContentFingerprint(digest.hexdigest(), int(len(hashes)), columns, sketch,
                              _column_digests(norm))


def _column_digests(norm: pd.DataFrame) -> tuple[tuple[str, str], ...]:
    """Each column's order-independent digest of its present values (see
    :class:`ContentFingerprint`); one vectorized hash per column.

    Missing values are left out: a column cut out of a CSV file loses its empty cells to
    the blank-line rule of the reader, and must still match the column it came from.
    """
    out = []
    for name in norm.columns:
        values = norm[name].to_numpy()
        present = (~np.isnan(values) if values.dtype.kind == "f" else values != _MISSING)
        kept = values[present]
        if len(kept) < COLUMN_MIN_VALUES:
            continue
        hashes = np.sort(pd.util.hash_pandas_object(pd.Series(kept), index=False)
                         .to_numpy(np.uint64))
        digest = hashlib.sha256(b"column-values-sha256-v1")
        digest.update(len(hashes).to_bytes(8, "little"))
        digest.update(hashes.astype("<u8").tobytes())
        out.append((str(name), digest.hexdigest()[:32]))
    return tuple(out)


def estimated_overlap(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """Estimated Jaccard similarity of two tables' sets of rows from their bottom-k sketches.

    The k smallest hashes of the union are a uniform sample of the union's rows; the
    fraction of them present in both sketches estimates |A ∩ B| / |A ∪ B| (Broder 1997).
    0 when either sketch is empty.
    """
    if not a or not b:
        return 0.0
    k = min(len(a), len(b))
    union = np.union1d(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))[:k]
    both = np.intersect1d(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))
    return float(np.isin(union, both).sum()) / float(len(union))


def looks_like_version(a: ContentFingerprint, b: ContentFingerprint) -> str | None:
    """Why table ``a`` looks like a version of table ``b`` (same people's rows), or None.

    Either most rows are the same (estimated overlap ≥ 1/2), or most columns are the same
    and the row counts agree within 5 % (rows edited, a column added or dropped), or one
    column holds exactly the values of one of ``b``'s (at least :data:`COLUMN_MIN_VALUES`
    of them): a column extracted into a file of its own is those people's values.
    """
    overlap = estimated_overlap(a.sketch, b.sketch)
    if overlap >= 0.5:
        return f"about {overlap:.0%} of their rows are the same"
    shared, union = set(a.columns) & set(b.columns), set(a.columns) | set(b.columns)
    close = abs(a.rows - b.rows) <= 0.05 * max(a.rows, b.rows, 1)
    if union and len(shared) >= 0.5 * len(union) and close:
        same = "the same columns" if shared == union else (
            f"{len(shared)} of {len(union)} columns in common")
        return f"{same} and {a.rows} rows against {b.rows}"
    theirs = {digest: name for name, digest in b.column_digests}
    for name, digest in a.column_digests:
        if digest in theirs:
            return (f"its column {name} holds exactly the values of column "
                    f"{theirs[digest]}")
    return None
