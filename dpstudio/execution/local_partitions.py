"""Local, shuffle and secure-aggregation protocols over a dataset's files, one task each.

The worker tasks here read one file's column (its bytes read once; for a release, hashed
from those same bytes), run the protocol's client side over its rows with a random
source made *in the task* — a fresh :class:`~dpstudio.engine.rng.SecureSource`, or for a
simulation a :class:`~dpstudio.engine.rng.SimulationSource` from a seed spawned for that
file alone — and return only the protocol's aggregate, exact integers:

* local randomizers (:mod:`dpstudio.engine.local.partial`): the reports' support counts,
  sketch counts, sum in grid steps or number of +1 bits;
* shuffle sums (:mod:`dpstudio.engine.shuffle.partial`) and secure aggregation
  (:mod:`dpstudio.engine.distributed.partial`): the sum of the file's users' messages
  (modulo q where the protocol sums modulo q).

The estimator or analyzer runs once, on the client, on their total. The shuffle and
secure-aggregation parameters depend on the number of users, so those run in two
rounds: the files' row counts first (Parquet: from the file's metadata), then the sums.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpstudio.data.folders import FileDataset, FileEntry
from dpstudio.engine.rng import SecureSource, SimulationSource, Source
from dpstudio.execution.engines import ExecutionError
from dpstudio.execution.futures import check_cancelled, gather_tasks, report_progress
from dpstudio.execution.partitions import file_bytes, read_column, seeds

__all__ = ["file_local", "file_rows", "file_sum", "local_on_files", "sum_protocol_on_files"]


def _source(seed: int | None) -> Source:
    """The task's own random source: the OS CSPRNG, or a simulation's spawned seed."""
    return SecureSource() if seed is None else SimulationSource(seed)


def _read(path: str, fmt: str, column: str, reader: str, header: bool, fingerprint: bool,
          root: str | None) -> tuple[Any, FileEntry | None]:
    """One file's column, and (for a release) its fingerprint from the bytes parsed."""
    p = Path(path)
    raw, entry = file_bytes(p, root) if fingerprint else (None, None)
    return read_column(p, fmt, column, reader, header, raw), entry


def file_rows(path: str, fmt: str, column: str, header: bool = True) -> int:
    """How many rows (users) a file holds: a Parquet file's metadata, a text file's
    column read. The first round of a shuffle or secure-aggregation sum."""
    p = Path(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            return int(pq.ParquetFile(p).metadata.num_rows)
        except Exception:  # pyarrow raises many types: the reader's own message below
            pass
    return int(read_column(p, fmt, column, "numeric", header).size)


def file_local(path: str, fmt: str, column: str, reader: str, plan: Any,
               header: bool = True, seed: int | None = None, fingerprint: bool = False,
               root: str | None = None) -> tuple[Any, FileEntry | None]:
    """What one worker computes for one file under a local randomizer: every row's
    report drawn here, and only their aggregate returned (a
    :class:`~dpstudio.engine.local.partial.LocalPartial`)."""
    from dpstudio.engine.local.partial import local_partial

    values, entry = _read(path, fmt, column, reader, header, fingerprint, root)
    return local_partial(values, plan, _source(seed)), entry


def file_sum(path: str, fmt: str, column: str, plan: Any, header: bool = True,
             seed: int | None = None, dropouts: int = 0, fingerprint: bool = False,
             root: str | None = None) -> tuple[Any, FileEntry | None]:
    """What one worker computes for one file under a shuffle or secure-aggregation sum:
    the file's users encoded here, and only the sum of their messages returned (a
    :class:`~dpstudio.engine.distributed.partial.SumPartial`)."""
    from dpstudio.engine.distributed.partial import SecurePlan, secure_partial
    from dpstudio.engine.shuffle.partial import shuffle_partial

    values, entry = _read(path, fmt, column, "numeric", header, fingerprint, root)
    if isinstance(plan, SecurePlan):
        return secure_partial(values, plan, _source(seed), dropouts), entry
    return shuffle_partial(values, plan, _source(seed)), entry


def _run(fn: Any, args: list[tuple], client: Any, state: Any, text: str) -> list[Any]:
    """``fn(*a)`` for every ``a``: on the cluster, or file by file here."""
    if client is not None:
        return gather_tasks(client, fn, args, state, text)
    out = []
    for i, a in enumerate(args):
        check_cancelled(state)
        out.append(fn(*a))
        report_progress(state, (i + 1) / len(args), text)
    return out


def _integers_only(results: list[tuple[Any, Any]], kind: type, size: int | None = None
                   ) -> None:
    """Refuse anything but integer aggregates of the declared shape from a worker."""
    for part, _ in results:
        if not isinstance(part, kind) or not all(
                type(v) is int for v in part.integers()) or (
                size is not None and len(part.counts) != size):
            raise ExecutionError("a worker returned something other than the protocol's "
                                 "integer aggregate")


def _root(ds: FileDataset) -> str | None:
    return str(Path(ds.source)) if Path(ds.source).is_dir() else None


def local_on_files(ds: FileDataset, column: str, reader: str, plan: Any, *,
                   client: Any = None, header: bool = True, seed: int | None = None,
                   fingerprint: bool = False, state: Any = None
                   ) -> tuple[Any, list[FileEntry]]:
    """A local protocol's reports over a dataset's files, aggregated per file and added.

    ``plan`` is the client's :class:`~dpstudio.engine.local.partial.LocalPlan`; ``seed``
    (a simulation only) is spawned into one independent seed per file. Returns the total
    :class:`~dpstudio.engine.local.partial.LocalPartial` and the files' fingerprint
    entries (when asked for). ``state`` follows the files and may cancel.
    """
    from dpstudio.engine.local.partial import LocalPartial, add_local_partials

    root = _root(ds)
    args = [(str(f), ds.format, column, reader, plan, header, s, fingerprint, root)
            for f, s in zip(ds.files, seeds(seed, len(ds.files)), strict=True)]
    text = f"Randomizing {len(ds.files)} files of {ds.name}"
    results = _run(file_local, args, client, state, text)
    _integers_only(results, LocalPartial, plan.size)
    total = add_local_partials([p for p, _ in results])
    return total, [e for _, e in results if e is not None]


def sum_protocol_on_files(ds: FileDataset, column: str, make_plan: Any, *,
                          client: Any = None, header: bool = True, seed: int | None = None,
                          dropouts: int = 0, fingerprint: bool = False, state: Any = None,
                          source: Source | None = None
                          ) -> tuple[Any, Any, list[FileEntry]]:
    """A shuffle or secure-aggregation sum over a dataset's files, in two rounds.

    First every file's row count; then ``make_plan(n)`` (the client's plan for ``n``
    users, drawn from nothing) and every file's sum of messages. ``dropouts`` (secure
    aggregation) are spread over the files by the hypergeometric law, from ``source``.
    Returns the plan, the total :class:`~dpstudio.engine.distributed.partial.SumPartial`
    and the files' fingerprint entries.
    """
    from dpstudio.engine.distributed.partial import (
        SumPartial,
        add_sum_partials,
        split_dropouts,
    )

    files = [str(f) for f in ds.files]
    rows = _run(file_rows, [(f, ds.format, column, header) for f in files], client, state,
                f"Counting the rows of {len(files)} files of {ds.name}")
    if not all(type(r) is int for r in rows):
        raise ExecutionError("a worker returned something other than a row count")
    plan = make_plan(sum(rows))
    drops = split_dropouts(rows, dropouts, source or SecureSource())
    root = _root(ds)
    args = [(f, ds.format, column, plan, header, s, d, fingerprint, root)
            for f, s, d in zip(files, seeds(seed, len(files)), drops, strict=True)]
    results = _run(file_sum, args, client, state, f"Encoding {len(files)} files of {ds.name}")
    _integers_only(results, SumPartial)
    total = add_sum_partials([p for p, _ in results])
    return plan, total, [e for _, e in results if e is not None]
