"""File ▸ Open Folder: a folder (or glob) of Parquet or CSV files opened from metadata,
with the first rows read for the Data tab's preview.

:func:`open_folder` lists the files and their columns through
:func:`dpstudio.data.folders.open_files` (Parquet footers, CSV header lines: no value),
counts a Parquet folder's rows from its footers, and reads at most :data:`PREVIEW_ROWS`
rows, from the first files only, for the table and for guessing the types of undeclared
columns. The declared schema is the folder's sidecar (``<folder>.schema.json``), as for a
file: bounds are declared, never read off the preview. Every number the analysis shows of
a folder comes from the exact aggregates of *all* its rows
(:mod:`dpstudio.ui.folder_numbers`), never from this preview.

Qt-free: the loader's worker runs it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from dpstudio.data.dataset import Dataset, open_dataset
from dpstudio.data.errors import DataError, shorten
from dpstudio.data.folders import FileDataset, is_multi_file, open_files
from dpstudio.data.schema import complete_schema, load_schema, sidecar_path
from dpstudio.jobs import check

__all__ = ["BIAS_NOT_MEASURED", "PREVIEW_ROWS", "FolderDataset", "is_folder", "open_any",
           "open_folder", "preview_text", "rows_phrase", "sidecar_of"]

#: Rows the Data tab shows of a folder (read with a row limit from its first files).
PREVIEW_ROWS = 1000
#: Said wherever a folder's error would need the unclamped sums its aggregates lack.
BIAS_NOT_MEASURED = "bias not measured on a folder"


@dataclass(frozen=True, eq=False)
class FolderDataset(Dataset):
    """A folder of data files: ``frame`` holds only its first rows (the preview).

    ``files`` is the lazily opened folder; ``total_rows`` its rows counted from Parquet
    footers (None for CSV, whose rows are known only once read).
    """

    files: FileDataset | None = None
    total_rows: int | None = None

    @property
    def name(self) -> str:
        return self.files.name if self.files is not None else self.path.name

    @property
    def preview_rows(self) -> int:
        return int(self.frame.shape[0])

    @property
    def sha256(self) -> str:  # a folder's fingerprint is its release's, per file
        raise OSError("a folder is fingerprinted file by file when a release reads it")


def is_folder(dataset: Any) -> bool:
    """Whether ``dataset`` is a folder of files (its numbers come from all its files)."""
    return isinstance(dataset, FolderDataset)


def open_any(path: str | os.PathLike[str], *, state: Any = None,
             header: bool = True) -> Dataset:
    """A file through :func:`open_dataset`, a folder or glob through :func:`open_folder`."""
    if is_multi_file(path):
        return open_folder(path, state=state, header=header)
    return open_dataset(path, state=state, header=header)


def open_folder(path: str | os.PathLike[str], *, state: Any = None, header: bool = True,
                limit: int = PREVIEW_ROWS) -> FolderDataset:
    """Open a folder or glob of Parquet/CSV files: metadata, row counts, the first rows.

    Raises :class:`DataError` in one sentence (no data files, mixed kinds, columns that
    differ, an unreadable file).
    """
    files = open_files(path, header=header)
    if state is not None:
        state.progress(0.2, "Reading the folder's metadata")
    total = _parquet_rows(files) if files.format == "parquet" else None
    check(state)
    if state is not None:
        state.progress(0.5, f"Reading the first {limit:,} rows")
    frame = _first_rows(files, limit, header)
    frame.attrs.update({"format": files.format, "header": header, "preview": True})
    sidecar = files.sidecar  # beside the folder (a glob: beside its folder)
    declared = load_schema(sidecar) if sidecar.is_file() else None
    check(state)
    schema = complete_schema(frame, declared)
    if state is not None:
        state.progress(1.0, "Done")
    return FolderDataset(path=Path(files.source), frame=frame, schema=schema,
                         declared=declared, files=files, total_rows=total)


def preview_text(dataset: FolderDataset) -> str:
    """"Preview: first 1,000 rows of 3,000,000 (3 Parquet files)" for the Data tab."""
    files = dataset.files
    k = len(files.files) if files is not None else 0
    noun = "file" if k == 1 else "files"
    kind = "Parquet" if files is not None and files.format == "parquet" else "CSV"
    if dataset.total_rows is None:  # a CSV file's rows are known once read
        return f"Preview: first {dataset.preview_rows:,} rows ({k:,} {kind} {noun})"
    return (f"Preview: first {dataset.preview_rows:,} rows of {dataset.total_rows:,} "
            f"({k:,} {kind} {noun})")


def sidecar_of(dataset: Dataset) -> Path:
    """Where the dataset's declarations are saved: a folder's (or a glob's) beside its
    folder, a file's beside it."""
    if isinstance(dataset, FolderDataset) and dataset.files is not None:
        return dataset.files.sidecar
    return sidecar_path(dataset.path)


def rows_phrase(dataset: Dataset) -> str:
    """"1,200,000 rows in 3 files" for a folder (never its preview's rows), else the
    file's "4,000 rows"."""
    if not isinstance(dataset, FolderDataset) or dataset.files is None:
        return f"{dataset.n_rows:,} rows"
    k = len(dataset.files.files)
    files = f"{k:,} file{'s' * (k != 1)}"
    if dataset.total_rows is None:
        return f"{files} (rows counted when read)"
    return f"{dataset.total_rows:,} rows in {files}"


def _parquet_rows(files: FileDataset) -> int:
    """Rows of a Parquet folder from its footers (no row read)."""
    import pyarrow.parquet as pq

    total = 0
    for p in files.files:
        try:
            total += int(pq.ParquetFile(p).metadata.num_rows)
        except Exception as exc:  # pyarrow raises many types
            raise DataError(f"{shorten(p.name)}: not a readable Parquet file "
                            f"({shorten(str(exc).splitlines()[0] if str(exc) else exc, 120)})"
                            ) from None
    return total


def _first_rows(files: FileDataset, limit: int, header: bool) -> pd.DataFrame:
    """At most ``limit`` rows from the first files, each read with a row limit."""
    parts: list[pd.DataFrame] = []
    left = limit
    for p in files.files:
        if left <= 0:
            break
        part = (_parquet_head(p, left) if files.format == "parquet"
                else _text_head(p, left, header, files.columns))
        parts.append(part)
        left -= len(part)
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    frame.columns = [str(c).strip() for c in frame.columns]
    keep = [c for c in files.columns if c in frame.columns]
    return frame[keep] if keep else frame


def _parquet_head(p: Path, rows: int) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(p)
        batch = next(pf.iter_batches(batch_size=rows), None)
        table = (pa.Table.from_batches([batch]) if batch is not None
                 else pf.schema_arrow.empty_table())
        return table.to_pandas()
    except Exception as exc:  # pyarrow raises many types
        raise DataError(f"{shorten(p.name)}: not a readable Parquet file "
                        f"({shorten(str(exc).splitlines()[0] if str(exc) else exc, 120)})"
                        ) from None


def _text_head(p: Path, rows: int, header: bool, columns: tuple[str, ...]) -> pd.DataFrame:
    from dpstudio.data.text_tables import sniff_delimiter

    try:
        with p.open("rb") as handle:
            first = handle.readline(1 << 20).decode("utf-8-sig", errors="replace")
        delimiter = "\t" if p.suffix.lower() == ".tsv" else sniff_delimiter(first)
        frame = pd.read_csv(p, sep=delimiter, nrows=rows, header=0 if header else None,
                            encoding_errors="replace", skipinitialspace=True)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{shorten(p.name)}: cannot read its first rows "
                        f"({shorten(str(exc).splitlines()[0] if str(exc) else exc, 120)})"
                        ) from None
    if not header:
        frame.columns = list(columns[:frame.shape[1]])
    return frame
