"""A DP Studio project: one SQLite file holding datasets, budgets and the release ledger.

Transaction design (a release is in the ledger if and only if its files are written)
-----------------------------------------------------------------------------------
A release runs under the project's inter-process lock (``<project>.lock``, see
:class:`~dpstudio.project._fs.ProjectLock`) in three steps:

1. **Charge.** In one ``BEGIN IMMEDIATE`` transaction: re-check the budget, insert the
   release as ``pending``, draw the noise, render every output file *in memory*, record
   the files' names, sizes and SHA-256, commit. If anything fails before the commit, the
   transaction rolls back: nothing is charged and nothing has been written — the noise
   drawn existed only in this process's memory and was never observed.
2. **Write.** Each file goes to a temporary name (``.NAME.UID.tmp``), is fsynced and
   renamed into place; then the folder is fsynced. Nothing is written before step 1
   commits, so every file in the output folder belongs to a recorded release.
3. **Confirm.** Mark the release ``done`` (one autocommit statement).

Recovery (every open that can take the lock, and before every release): a ``pending``
release belongs to a process that died — the lock proves no live process is inside a
release. If all its files are present with their recorded hashes, step 2 completed and it
becomes ``done``. Otherwise its files and temporary files are deleted (folder fsynced)
and only then is it marked ``aborted`` with no files, in one transaction; if recovery is
itself interrupted, the release is still ``pending`` and the next recovery finishes the
job (deleting is idempotent). Renames are atomic, so a final name never holds a partial
file. The ledger and the folder therefore agree after recovery whatever the interleaving.
A pending release whose output folder is missing altogether (an unplugged drive) is left
pending, never guessed at.

An ``aborted`` release stays charged: its noise was drawn and some of its files may have
been written — and read, copied or synced — before the interruption. It is not a release
(it lists no files, shows no value), but its ε and δ count against the budget.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import tempfile
import threading
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from dpstudio import __version__
from dpstudio.data.columns import require_column
from dpstudio.data.dataset import open_dataset
from dpstudio.data.errors import DataError
from dpstudio.data.fingerprint import (
    ContentFingerprint,
    content_fingerprint,
    looks_like_version,
    sha256_file,
)
from dpstudio.data.schema import Schema
from dpstudio.engine.accounting.budget import exact
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.queries import RELATIONS, QuerySpec
from dpstudio.engine.queries import release as engine_release
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import SecureSource
from dpstudio.project import _chain, _db
from dpstudio.project._fs import ProjectLock, fsync_dir, pause, write_durably
from dpstudio.project.accountant import get_accountant
from dpstudio.project.errors import (
    BudgetExceededError,
    DatasetChangedError,
    DatasetVersionError,
    LedgerTamperedError,
    NotAProjectError,
    ProjectError,
)
from dpstudio.project.spec import ReleaseSpec
from dpstudio.project.values import (
    MODEL_QUERIES,
    ModelInput,
    read_model_columns,
    read_values,
    reader_for,
    resolve_local_query,
    resolve_model_query,
    resolve_query,
)

__all__ = [
    "PROJECT_SUFFIX",
    "BudgetState",
    "CumulativePoint",
    "DatasetRecord",
    "FileRecord",
    "Project",
    "RecoveryReport",
    "ReleaseRecord",
]

PROJECT_SUFFIX = ".dpstudio"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_BUSY_TIMEOUT = 30.0
# How long a release waits for the project lock while other releases go first. Releases
# queue on it one at a time; a hundred started at once on a busy machine can wait well
# beyond a minute, and each must end with a definitive answer (released, or budget
# exceeded), never "busy". The bound only ends a wait behind a holder that is alive but
# stuck (a dead holder's lock is dropped by the kernel at once).
_RELEASE_WAIT = 900.0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _dec_text(d: Decimal) -> str:
    """A short human form of an exact amount (full precision, no exponent for normal sizes)."""
    if d == 0:
        return "0"
    text = format(d.normalize(), "f")
    return text if len(text) <= 14 else f"{float(d):.6g}"


def _exact_str(d: Decimal) -> str:
    """An exact amount in plain decimal notation ("0.5", "0.00001"), all digits kept."""
    return "0" if d == 0 else format(d.normalize(), "f")


def _tmp_name(name: str, uid: str) -> str:
    return f".{name}.{uid}.tmp"


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s[:48].strip("-.") or "release"


def _budget_amounts(epsilon: Any, delta: Any) -> tuple[Decimal, Decimal]:
    """Exact (ε, δ) of a budget: ε > 0, 0 ≤ δ < 1."""
    try:
        e = exact(epsilon)
        d = exact(0.0 if delta is None else delta)
    except ParameterError as exc:
        raise ProjectError(f"budget: {exc}") from None
    if e <= 0:
        raise ProjectError(f"a budget ε must be positive, got {epsilon!r}")
    if d >= 1:
        raise ProjectError(f"a budget δ must be below 1, got {delta!r}")
    return e, d


# ---------------------------------------------------------------------------- records


@dataclass(frozen=True)
class DatasetRecord:
    """A registered dataset: its fingerprint, path, declared schema and total budget."""

    id: int
    fingerprint: str
    path: str
    name: str
    schema: dict[str, Any]
    budget_epsilon: Decimal
    budget_delta: Decimal
    relation: str
    accountant: str
    registered_at: str
    #: Content hash of the rows as parsed (None for a version-1 dataset not yet read again).
    content_hash: str | None = None
    rows: int | None = None
    columns: tuple[str, ...] = ()
    #: The dataset whose budget this one shares (a version of it), or None.
    budget_of: int | None = None

    @property
    def budget_root(self) -> int:
        """The dataset whose budget this one spends (itself unless it shares another's)."""
        return self.budget_of if self.budget_of is not None else self.id


@dataclass(frozen=True)
class FileRecord:
    """One file of a release, with its size and SHA-256."""

    name: str
    role: str
    sha256: str
    bytes: int
    path: Path

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "role": self.role,
                "sha256": self.sha256, "bytes": self.bytes}


@dataclass(frozen=True)
class ReleaseRecord:
    """One ledger entry. ``status``: ``pending``, ``done`` or ``aborted``.

    ``result`` is the public released output (value, intervals, noise scale…) of a done
    release; ``None`` otherwise. Aborted releases list no files.
    """

    id: int
    uid: str
    dataset_id: int
    dataset_fingerprint: str
    status: str
    created_at: str
    finished_at: str | None
    query: str
    column: str | None
    mechanism: str
    trust_model: str
    epsilon: Decimal
    delta: Decimal
    accountant: str
    spec: dict[str, Any]
    noise: dict[str, Any]
    result: dict[str, Any] | None
    out_dir: Path
    files: tuple[FileRecord, ...]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "uid": self.uid, "time": self.created_at,
            "finished": self.finished_at, "status": self.status, "query": self.query,
            "column": self.column, "mechanism": self.mechanism,
            "trust_model": self.trust_model, "epsilon": float(self.epsilon),
            "delta": float(self.delta), "epsilon_exact": _exact_str(self.epsilon),
            "delta_exact": _exact_str(self.delta), "accountant": self.accountant,
            "out_dir": str(self.out_dir), "files": [f.to_dict() for f in self.files],
            "spec": self.spec, "noise": self.noise, "result": self.result, "note": self.note,
        }


@dataclass(frozen=True)
class BudgetState:
    """A dataset's budget: total, spent (all releases, aborted included) and remaining."""

    total_epsilon: Decimal
    total_delta: Decimal
    spent_epsilon: Decimal
    spent_delta: Decimal
    accountant: str = "basic"

    @property
    def remaining_epsilon(self) -> Decimal:
        return self.total_epsilon - self.spent_epsilon

    @property
    def remaining_delta(self) -> Decimal:
        return self.total_delta - self.spent_delta

    def describe(self) -> str:
        return (f"ε {_dec_text(max(self.remaining_epsilon, Decimal(0)))} of "
                f"{_dec_text(self.total_epsilon)} left, δ "
                f"{_dec_text(max(self.remaining_delta, Decimal(0)))} of "
                f"{_dec_text(self.total_delta)} left")

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget_epsilon": float(self.total_epsilon), "budget_delta": float(self.total_delta),
            "spent_epsilon": float(self.spent_epsilon), "spent_delta": float(self.spent_delta),
            "remaining_epsilon": float(self.remaining_epsilon),
            "remaining_delta": float(self.remaining_delta),
            "exact": {k: _exact_str(v) for k, v in (
                ("budget_epsilon", self.total_epsilon), ("budget_delta", self.total_delta),
                ("spent_epsilon", self.spent_epsilon), ("spent_delta", self.spent_delta),
                ("remaining_epsilon", self.remaining_epsilon),
                ("remaining_delta", self.remaining_delta))},
        }


@dataclass(frozen=True)
class CumulativePoint:
    """One step of a dataset's cumulative spending, for the GUI's budget plot."""

    release_id: int
    time: str
    status: str
    epsilon: float
    delta: float
    cumulative_epsilon: float
    cumulative_delta: float


@dataclass
class RecoveryReport:
    """What recovery did: releases completed, aborted, or left pending (folder missing)."""

    completed: list[int] = field(default_factory=list)
    aborted: list[int] = field(default_factory=list)
    left_pending: list[int] = field(default_factory=list)
    skipped: bool = False  # another process held the lock


@dataclass
class _Prepared:
    """A release checked and ready to charge: nothing drawn, nothing charged yet."""

    spec: ReleaseSpec
    query: QuerySpec
    notes: list[str]
    path: Path
    fingerprint: str
    name: str
    schema: dict[str, Any]
    record: DatasetRecord | None
    budget: tuple[Decimal, Decimal]
    relation: str
    accountant: str
    charge: tuple[Decimal, Decimal]
    values: Any
    reader: str
    out: Path
    created_dirs: list[Path]
    trust_model: str = "central"
    #: A model release (``logistic_regression``): its prepared columns and feature bounds.
    model: ModelInput | None = None
    #: The rows as parsed; and, for a new version of a registered dataset, whose budget.
    content: ContentFingerprint | None = None
    budget_of: int | None = None

    def cleanup_dirs(self) -> None:
        """Remove output folders this release created, if they are still empty."""
        for d in reversed(self.created_dirs):
            with contextlib.suppress(OSError):
                d.rmdir()


# ---------------------------------------------------------------------------- project


class Project:
    """An open project file. Use :meth:`create` or :meth:`open`; close it (or use ``with``).

    Methods are safe to call from several threads (one connection, serialized); several
    processes may use one project at once (releases are serialized by the project lock).
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._mutex = threading.RLock()
        self._lock = ProjectLock(path)
        self.last_recovery = RecoveryReport(skipped=True)
        self._audit_cache: tuple[tuple[int, int], _chain.Audit] | None = None
        # Version-1 datasets whose file could not give a content hash, by (id, path,
        # mtime, size): not read again until the file changes.
        self._unfillable: set[tuple[int, str, int, int]] = set()

    # ------------------------------------------------------------ creating and opening

    @classmethod
    def create(cls, path: str | os.PathLike[str], *, epsilon: Any = None, delta: Any = None,
               relation: str = "add-remove", accountant: str = "basic") -> Project:
        """Create a new project file with default budgets for the datasets it registers.

        ``epsilon``/``delta`` may be None (no default: each dataset's first release spec
        must then give a ``[budget]``). Refuses to overwrite an existing file.
        """
        p = Path(path)
        if p.exists():
            raise ProjectError(f"{p} already exists (open it, or choose another name)")
        if not p.parent.is_dir():
            raise ProjectError(f"cannot create {p}: folder {p.parent} does not exist")
        if relation not in RELATIONS:
            raise ProjectError(f"relation must be add-remove or replace, got {relation!r}")
        get_accountant(accountant)
        settings = {"created_at": _now(), "created_by": f"dpstudio {__version__}",
                    "default_relation": relation, "default_accountant": accountant}
        if epsilon is not None:
            e, d = _budget_amounts(epsilon, delta)
            settings |= {"default_epsilon": str(e), "default_delta": str(d)}
        elif delta is not None:
            raise ProjectError("a default δ needs a default ε too")
        tmp = p.with_name(f".{p.name}.{uuid.uuid4().hex[:8]}.creating")
        try:
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                conn.execute("PRAGMA synchronous = FULL")
                conn.execute("BEGIN")
                _db.create_schema(conn)
                conn.executemany("INSERT INTO settings (key, value) VALUES (?, ?)",
                                 settings.items())
                conn.execute("COMMIT")
            finally:
                conn.close()
            try:
                os.link(tmp, p)  # never clobbers an existing file
            except FileExistsError:
                raise ProjectError(f"{p} already exists (open it, or choose another "
                                   "name)") from None
            except OSError:  # no hard links on this file system
                if p.exists():
                    raise ProjectError(f"{p} already exists") from None
                os.replace(tmp, p)
            fsync_dir(p.parent)
        except (OSError, sqlite3.Error) as exc:
            raise ProjectError(f"cannot create {p} ({getattr(exc, 'strerror', None) or exc})"
                               ) from None
        finally:
            tmp.unlink(missing_ok=True)
        return cls.open(p)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, recover: bool = True) -> Project:
        """Open a project file, migrating it to the current schema and recovering any
        interrupted release (unless another process is releasing right now)."""
        p = Path(path)
        if not p.exists():
            raise ProjectError(f"no project file {p} (create one with: dpstudio project init "
                               f"{p} --epsilon E --delta D)")
        if p.is_dir():
            raise NotAProjectError(f"{p} is a folder, not a DP Studio project")
        try:
            with open(p, "rb") as handle:
                header = handle.read(len(_SQLITE_MAGIC))
        except OSError as exc:
            raise ProjectError(f"cannot read {p} ({exc.strerror or exc})") from None
        if header != _SQLITE_MAGIC:
            raise NotAProjectError(f"{p.name} is not a DP Studio project (not an SQLite "
                                   "database)")
        uri = "file:" + urllib.parse.quote(str(p.resolve())) + "?mode=rw"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                   timeout=_BUSY_TIMEOUT, check_same_thread=False)
        except sqlite3.Error as exc:
            raise ProjectError(f"cannot open {p.name} ({exc})") from None
        try:
            cls._check_and_migrate(conn, p)
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = FULL")
        except ProjectError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise NotAProjectError(f"{p.name} is not a readable DP Studio project ({exc})"
                                   ) from None
        project = cls(p, conn)
        if recover:
            project.recover(wait=0.0)
        project.audit()  # checked on every open: see integrity()
        return project

    @staticmethod
    def _check_and_migrate(conn: sqlite3.Connection, p: Path) -> None:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id != _db.APPLICATION_ID:
            raise NotAProjectError(f"{p.name} is not a DP Studio project (an SQLite database "
                                   "of another application)")
        if version > _db.SCHEMA_VERSION:
            raise NotAProjectError(
                f"{p.name} was made by a newer DP Studio (project schema version {version}; "
                f"this one reads up to {_db.SCHEMA_VERSION}); please update DP Studio")
        if version < 1:
            raise NotAProjectError(f"{p.name} is not a DP Studio project (no schema version)")
        if version == _db.SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            _db.migrate(conn, current)
            conn.execute("COMMIT")
        except BaseException as exc:
            conn.execute("ROLLBACK")
            if isinstance(exc, LookupError | sqlite3.Error):
                raise ProjectError(f"cannot upgrade {p.name} from project schema version "
                                   f"{version}: {exc}") from None
            raise

    def close(self) -> None:
        with self._mutex:
            self._conn.close()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------- queries

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with self._mutex:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise ProjectError(f"{self.path.name}: database error ({exc})") from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any exception."""
        with self._db() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @property
    def schema_version(self) -> int:
        with self._db() as conn:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])

    def settings(self) -> dict[str, str]:
        with self._db() as conn:
            return dict(conn.execute("SELECT key, value FROM settings").fetchall())

    def defaults(self) -> dict[str, Any]:
        """Default budget, relation and accountant for datasets this project registers."""
        s = self.settings()
        eps = s.get("default_epsilon")
        return {
            "epsilon": None if eps is None else Decimal(eps),
            "delta": None if eps is None else Decimal(s.get("default_delta", "0")),
            "relation": s.get("default_relation", "add-remove"),
            "accountant": s.get("default_accountant", "basic"),
        }

    def set_defaults(self, epsilon: Any, delta: Any = 0.0, relation: str | None = None) -> None:
        """Change the default budget for datasets registered from now on."""
        e, d = _budget_amounts(epsilon, delta)
        rows = [("default_epsilon", str(e)), ("default_delta", str(d))]
        if relation is not None:
            if relation not in RELATIONS:
                raise ProjectError(f"relation must be add-remove or replace, got {relation!r}")
            rows.append(("default_relation", relation))
        with self._transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", rows)

    _DATASET_COLS = ("id, fingerprint, path, name, schema_json, budget_epsilon, budget_delta, "
                     "relation, accountant, registered_at, content_hash, rows, columns_json, "
                     "budget_of")

    @staticmethod
    def _dataset_from_row(row: tuple) -> DatasetRecord:
        try:
            columns = tuple(json.loads(row[12])) if row[12] else ()
        except (TypeError, ValueError):
            columns = ()
        try:
            schema = json.loads(row[4])
        except (TypeError, ValueError):
            schema = {}
        # A budget edited into something that is not a number reads as 0 (nothing left);
        # the audit reports it and BudgetState uses the pessimistic amounts.
        return DatasetRecord(row[0], row[1], row[2], row[3], schema,
                             _chain.amount(row[5]) or Decimal(0),
                             _chain.amount(row[6]) or Decimal(0), row[7], row[8], row[9],
                             row[10], row[11], columns, row[13])

    def datasets(self) -> list[DatasetRecord]:
        """Every registered dataset, in registration order."""
        with self._db() as conn:
            rows = conn.execute(f"SELECT {self._DATASET_COLS} FROM datasets ORDER BY id")
            return [self._dataset_from_row(r) for r in rows.fetchall()]

    def dataset(self, key: DatasetRecord | str | int | os.PathLike[str]) -> DatasetRecord:
        """A registered dataset by record, id, fingerprint (of its bytes or of its content)
        or path; ProjectError if none."""
        if isinstance(key, DatasetRecord):
            key = key.id
        with self._db() as conn:
            if isinstance(key, int):
                row = conn.execute(f"SELECT {self._DATASET_COLS} FROM datasets WHERE id = ?",
                                   (key,)).fetchone()
            else:
                text = str(key)
                row = conn.execute(f"SELECT {self._DATASET_COLS} FROM datasets WHERE "
                                   "fingerprint = ? OR content_hash = ? ORDER BY id",
                                   (text.lower(), text.lower())).fetchone()
                if row is None:
                    row = conn.execute(f"SELECT {self._DATASET_COLS} FROM datasets WHERE path = "
                                       "? ORDER BY id DESC", (_abs(text),)).fetchone()
        if row is None:
            raise ProjectError(f"no dataset {key} in {self.path.name}")
        return self._dataset_from_row(row)

    def _identify(self, path: Path, fingerprint: str, content: ContentFingerprint,
                  share_with: int | None = None, separate: bool = False
                  ) -> tuple[DatasetRecord | None, int | None, list[str]]:
        """Which registered dataset these rows are: ``(record, None, notes)``; or ``(None,
        budget_of, notes)`` for a new dataset (sharing ``budget_of``'s budget, if not None).

        The same rows as parsed (re-encoded, reordered, moved) are the same dataset. A file
        that looks like a version of a registered dataset (the registered path with other
        rows, or about the same rows or columns) is refused unless the analyst says whose
        budget it spends: ``share_with`` (that dataset's) or ``separate`` (its own: it
        holds other people).
        """
        self._fill_contents()
        with self._db() as conn:
            row = conn.execute(f"SELECT {self._DATASET_COLS} FROM datasets WHERE content_hash = "
                               "? ORDER BY id", (content.digest,)).fetchone()
            if row is None:  # a version-1 dataset, registered before content hashes
                row = conn.execute(f"SELECT {self._DATASET_COLS} FROM datasets WHERE "
                                   "fingerprint = ?", (fingerprint,)).fetchone()
                if row is not None and row[10] is None:
                    with self._transaction() as tconn:
                        self._set_content(tconn, row[0], content)
                    row = conn.execute(f"SELECT {self._DATASET_COLS} FROM datasets WHERE id = ?",
                                       (row[0],)).fetchone()
            if row is not None:
                rec = self._dataset_from_row(row)
                notes = []
                if rec.fingerprint != fingerprint:
                    notes.append(f"{path.name} holds the same rows as registered dataset "
                                 f"#{rec.id} ({rec.name}), re-encoded or reordered: its budget "
                                 "applies")
                return rec, None, notes
            records = [self._dataset_from_row(r) for r in conn.execute(
                f"SELECT {self._DATASET_COLS} FROM datasets ORDER BY id").fetchall()]
        if share_with is not None:
            target = next((r for r in records if r.id == share_with), None)
            if target is None:
                raise ProjectError(f"no dataset #{share_with} in {self.path.name} to share a "
                                   "budget with (see dpstudio ledger)")
            root = target.budget_root
            return None, root, [f"{path.name} is registered as a version of dataset #{root} "
                                f"and spends its budget"]
        # The registered file itself, changed, is a version of its dataset whatever the
        # spec declares: the people in it are the registered ones (and perhaps a few more),
        # never only "other people", so separate_budget cannot give it a budget of its own.
        for rec in records:
            if rec.path == str(path):
                raise DatasetVersionError(
                    f"warning: {path.name} has changed since it was registered as dataset "
                    f"#{rec.id} (its rows are not the registered ones); refusing to release — "
                    f"restore the registered file, or release this version under dataset "
                    f"#{rec.budget_root}'s budget with --share-budget-with {rec.budget_root} "
                    f"(spec: share_budget_with = {rec.budget_root})",
                    budget_of=rec.budget_root, registered=(rec.id, rec.name),
                    separable=False)
        if separate:
            return None, None, [f"{path.name} was declared to hold other people than the "
                                "registered datasets: it has a budget of its own"]
        for rec in records:
            if rec.content_hash is None:
                continue
            why = looks_like_version(content, self._content_of(rec))
            if why:
                raise DatasetVersionError(
                    f"warning: {path.name} looks like a version of registered dataset "
                    f"#{rec.id} ({rec.name}: {why}); refusing to give it a budget of its "
                    f"own — release it under that budget with --share-budget-with "
                    f"{rec.budget_root} (spec: share_budget_with = {rec.budget_root}), or, if "
                    "it holds other people, say so with --separate-budget (spec: "
                    "separate_budget = true)",
                    budget_of=rec.budget_root, registered=(rec.id, rec.name),
                    separable=True)
        return None, None, []

    def _fill_contents(self) -> None:
        """Give every version-1 dataset (registered before content hashes) whose file is
        still the registered bytes its content hash, before any identity comparison.

        Without it such a dataset is invisible to the comparison: a re-encoded copy of it
        (one more newline) would register as a new dataset with a full budget. A file
        that is gone or changed cannot vouch for the registered rows and is left alone
        (its record keeps no content hash), and is not re-read until it changes.
        """
        with self._db() as conn:
            rows = conn.execute("SELECT id, fingerprint, path FROM datasets WHERE content_hash "
                                "IS NULL ORDER BY id").fetchall()
        for ref, fingerprint, path in rows:
            p = Path(str(path or ""))
            try:
                stat = p.stat()
                key = (int(ref), str(p), stat.st_mtime_ns, stat.st_size)
                if key in self._unfillable:
                    continue
                content = None
                if sha256_file(p) == fingerprint:
                    data = open_dataset(p)  # version 1 read every file with a header
                    if sha256_file(p) == fingerprint:  # not changed while it was read
                        content = content_fingerprint(data.frame)
            except (OSError, DataError):
                continue
            if content is None:
                self._unfillable.add(key)
                continue
            with self._transaction() as tconn:
                self._set_content(tconn, ref, content)

    def _content_of(self, rec: DatasetRecord) -> ContentFingerprint:
        with self._db() as conn:
            row = conn.execute("SELECT sketch, column_digests FROM datasets WHERE id = ?",
                               (rec.id,)).fetchone()
        sketch = ContentFingerprint.parse_sketch(row[0] if row else None)
        digests = ContentFingerprint.parse_column_digests(row[1] if row else None)
        return ContentFingerprint(rec.content_hash or "", rec.rows or 0, rec.columns, sketch,
                                  digests)

    @staticmethod
    def _set_content(conn: sqlite3.Connection, dataset_id: int,
                     content: ContentFingerprint) -> None:
        """Record a version-1 dataset's content hash (chained: it identifies the dataset)."""
        conn.execute("UPDATE datasets SET content_hash = ?, rows = ?, columns_json = ?, sketch = "
                     "?, column_digests = ? WHERE id = ? AND content_hash IS NULL",
                     (content.digest, content.rows, json.dumps(content.columns,
                                                               ensure_ascii=False),
                      content.sketch_text(), content.column_digests_text(), dataset_id))
        _chain.record_dataset(conn, dataset_id)

    def register_dataset(self, path: str | os.PathLike[str], schema: Schema | dict | None = None,
                         budget_epsilon: Any = None, budget_delta: Any = None,
                         relation: str | None = None, accountant: str | None = None, *,
                         share_budget_with: int | None = None, separate_budget: bool = False
                         ) -> DatasetRecord:
        """Register a dataset with its total budget (the project's defaults when None).

        ``schema`` is the declared schema (a :class:`Schema` or its dict); by default the
        dataset's sidecar (``DATA.schema.json``), or an empty schema. Types guessed from
        the data are never recorded: they are read off the data, so not public.
        ``share_budget_with``: the id of a registered dataset this one is a version of
        (it then spends that budget); ``separate_budget``: register a file that looks like
        a version of a registered dataset with a budget of its own (it holds other people).
        """
        p = Path(_abs(path))
        fingerprint = sha256_file(p)
        data = open_dataset(p)
        content = content_fingerprint(data.frame)
        found, budget_of, _ = self._identify(p, fingerprint, content, share_budget_with,
                                             separate_budget)
        if found is not None:
            raise ProjectError(f"{p.name} is already registered in {self.path.name} (dataset "
                               f"#{found.id})")
        if schema is None:
            schema = _declared_dict(data.declared)
        schema_dict = schema.to_dict() if isinstance(schema, Schema) else dict(schema)
        if budget_of is not None:
            root = self.dataset(budget_of)
            budget = (root.budget_epsilon, root.budget_delta)
            relation, accountant = root.relation, root.accountant
        else:
            budget, relation, accountant = self._registration(budget_epsilon, budget_delta,
                                                              relation, accountant, p.name)
        self._require_intact()
        with self._transaction() as conn:
            new_id = self._insert_dataset(conn, fingerprint, p, schema_dict, budget, relation,
                                          accountant, content, budget_of)
        return self.dataset(new_id)

    def _registration(self, eps: Any, delta: Any, relation: str | None,
                      accountant: str | None, name: str
                      ) -> tuple[tuple[Decimal, Decimal], str, str]:
        d = self.defaults()
        if eps is None:
            if d["epsilon"] is None:
                raise ProjectError(
                    f"no budget for {name}: the project has no default budget; give one with "
                    "a [budget] table in the spec (epsilon = …, delta = …) or create the "
                    "project with dpstudio project init --epsilon E --delta D")
            eps, delta = d["epsilon"], d["delta"] if delta is None else delta
        budget = _budget_amounts(eps, delta)
        relation = relation or d["relation"]
        if relation not in RELATIONS:
            raise ProjectError(f"relation must be add-remove or replace, got {relation!r}")
        accountant = accountant or d["accountant"]
        get_accountant(accountant)
        return budget, relation, accountant

    @staticmethod
    def _insert_dataset(conn: sqlite3.Connection, fingerprint: str, path: Path, schema: dict,
                        budget: tuple[Decimal, Decimal], relation: str, accountant: str,
                        content: ContentFingerprint | None = None,
                        budget_of: int | None = None) -> int:
        cur = conn.execute(
            "INSERT INTO datasets (fingerprint, path, name, schema_json, budget_epsilon, "
            "budget_delta, relation, accountant, registered_at, content_hash, rows, "
            "columns_json, sketch, column_digests, budget_of) VALUES "
            "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (fingerprint, str(path), path.name, json.dumps(schema, ensure_ascii=False),
             str(budget[0]), str(budget[1]), relation, accountant, _now(),
             None if content is None else content.digest,
             None if content is None else content.rows,
             None if content is None else json.dumps(content.columns, ensure_ascii=False),
             None if content is None else content.sketch_text(),
             None if content is None else content.column_digests_text(), budget_of))
        new_id = int(cur.lastrowid)
        _chain.record_dataset(conn, new_id)
        return new_id

    _RELEASE_COLS = ("r.id, r.uid, r.dataset_id, d.fingerprint, r.status, r.created_at, "
                     "r.finished_at, r.query, r.column_name, r.mechanism, r.trust_model, "
                     "r.epsilon, r.delta, r.accountant, r.spec_json, r.noise_json, "
                     "r.result_json, r.out_dir, r.note")

    def _releases(self, where: str = "", args: tuple = ()) -> list[ReleaseRecord]:
        found = self.audit()
        with self._db() as conn:
            rows = conn.execute(
                f"SELECT {self._RELEASE_COLS} FROM releases r LEFT JOIN datasets d ON d.id = "
                f"r.dataset_id {where} ORDER BY r.id", args).fetchall()
            files: dict[int, list[tuple]] = {}
            for f in conn.execute("SELECT release_id, name, role, sha256, bytes FROM "
                                  "release_files ORDER BY release_id, rowid").fetchall():
                files.setdefault(f[0], []).append(f[1:])
        out = []
        for r in rows:
            out_dir = Path(r[17])
            recs = tuple(FileRecord(n, role, sha, size, out_dir / n)
                         for n, role, sha, size in files.get(r[0], []))
            # What is charged (pessimistic when the row was edited), never a raw edited text.
            eps, delta = found.release_charge.get(r[0]) or (
                _chain.amount(r[11]) or Decimal(0), _chain.amount(r[12]) or Decimal(0))
            out.append(ReleaseRecord(
                id=r[0], uid=r[1], dataset_id=r[2], dataset_fingerprint=r[3] or "", status=r[4],
                created_at=r[5], finished_at=r[6], query=r[7], column=r[8], mechanism=r[9],
                trust_model=r[10], epsilon=eps, delta=delta,
                accountant=r[13], spec=_json_or(r[14], {}), noise=_json_or(r[15], {}),
                result=None if r[16] is None or r[4] != "done" else _json_or(r[16], None),
                out_dir=out_dir, files=recs if r[4] != "aborted" else (), note=r[18]))
        return out

    def ledger(self, dataset: DatasetRecord | str | int | None = None) -> list[ReleaseRecord]:
        """Every release (pending, done, aborted) of one dataset, or of the project."""
        if dataset is None:
            return self._releases()
        return self._releases("WHERE r.dataset_id = ?", (self.dataset(dataset).id,))

    def release_record(self, release_id: int) -> ReleaseRecord:
        found = self._releases("WHERE r.id = ?", (int(release_id),))
        if not found:
            raise ProjectError(f"no release #{release_id} in {self.path.name}")
        return found[0]

    def _group(self, conn: sqlite3.Connection, dataset_id: int) -> tuple[int, set[int]]:
        """The dataset whose budget ``dataset_id`` spends, and every dataset spending it."""
        row = conn.execute("SELECT budget_of FROM datasets WHERE id = ?", (dataset_id,)
                           ).fetchone()
        root = row[0] if row is not None and row[0] is not None else dataset_id
        members = {root} | {r[0] for r in conn.execute(
            "SELECT id FROM datasets WHERE budget_of = ?", (root,)).fetchall()}
        return root, members

    def _charges(self, conn: sqlite3.Connection, dataset_id: int
                 ) -> list[tuple[Decimal, Decimal]]:
        """Every charge against ``dataset_id``'s budget (shared with its versions), the
        pessimistic amounts when the ledger was edited (see :mod:`._chain`)."""
        _, members = self._group(conn, dataset_id)
        return self._audit_locked(conn).charges(members)

    def budget(self, dataset: DatasetRecord | str | int) -> BudgetState:
        """Total, spent and remaining budget of a dataset (aborted releases count; a
        version sharing another dataset's budget shows that budget)."""
        rec = self.dataset(dataset)
        with self._db() as conn:
            root, _ = self._group(conn, rec.id)
            charges = self._charges(conn, rec.id)
            total = self._audit_locked(conn).budgets.get(root)
        if total is None:
            total = (rec.budget_epsilon, rec.budget_delta)
        spent = get_accountant(rec.accountant).spent(charges)
        return BudgetState(total[0], total[1], spent[0], spent[1], rec.accountant)

    def remaining(self, dataset: DatasetRecord | str | int) -> tuple[Decimal, Decimal]:
        """Exact (ε, δ) left for a dataset."""
        b = self.budget(dataset)
        return b.remaining_epsilon, b.remaining_delta

    def charged_ledger(self, dataset: DatasetRecord | str | int) -> list[ReleaseRecord]:
        """A dataset's releases as they are charged (what its remaining budget counts).

        :meth:`ledger` (whose amounts are already the pessimistic charges), and, when the
        ledger was edited outside DP Studio, each release deleted by hand but still charged,
        with status ``deleted``, from its chain entry or manifest.
        """
        rec = self.dataset(dataset)
        releases = self.ledger(rec)
        found = self.audit()
        if found.ok:
            return releases
        out = list(releases)
        listed = {r.id for r in releases}
        for ref, ds in sorted(found.release_dataset.items()):
            if ref in listed or rec.id not in ds or ref in found.releases:
                continue
            info = found.expected_releases.get(ref) or {}
            eps, delta = found.release_charge[ref]
            out.append(ReleaseRecord(
                id=ref, uid=str(info.get("uid") or ""), dataset_id=rec.id,
                dataset_fingerprint=rec.fingerprint, status="deleted",
                created_at=str(info.get("created_at") or ""), finished_at=None,
                query=str(info.get("query") or "?"), column=info.get("column_name"),
                mechanism=str(info.get("mechanism") or "?"),
                trust_model=str(info.get("trust_model") or "central"), epsilon=eps,
                delta=delta, accountant=str(info.get("accountant") or rec.accountant),
                spec={}, noise={}, result=None, out_dir=Path(str(info.get("out_dir") or "")),
                files=(), note="deleted outside DP Studio: still charged until the change is "
                "acknowledged, and after (restored as aborted)"))
        return sorted(out, key=lambda r: r.id)

    def cumulative_epsilon(self, dataset: DatasetRecord | str | int) -> list[CumulativePoint]:
        """Cumulative ε and δ after each release of a dataset, in order (for a plot), as
        charged (see :meth:`charged_ledger`)."""
        points, e_sum, d_sum = [], Decimal(0), Decimal(0)
        for r in self.charged_ledger(dataset):
            e_sum, d_sum = e_sum + r.epsilon, d_sum + r.delta
            points.append(CumulativePoint(r.id, r.created_at, r.status, float(r.epsilon),
                                          float(r.delta), float(e_sum), float(d_sum)))
        return points

    def to_dict(self) -> dict[str, Any]:
        """The whole ledger as JSON-ready data (what ``dpstudio ledger --json`` prints)."""
        d = self.defaults()
        problems = self.integrity()
        out: dict[str, Any] = {
            "project": str(self.path), "schema_version": self.schema_version,
            "engine_version": __version__,
            "defaults": {"epsilon": None if d["epsilon"] is None else float(d["epsilon"]),
                         "delta": None if d["delta"] is None else float(d["delta"]),
                         "relation": d["relation"], "accountant": d["accountant"]},
            "integrity": {"ok": not problems, "problems": problems},
            "datasets": [],
        }
        for rec in self.datasets():
            entry = {"id": rec.id, "fingerprint": rec.fingerprint, "path": rec.path,
                     "name": rec.name, "relation": rec.relation, "accountant": rec.accountant,
                     "registered_at": rec.registered_at, "content_hash": rec.content_hash,
                     "rows": rec.rows, "budget_of": rec.budget_of}
            entry |= self.budget(rec).to_dict()
            # As charged: a release deleted by hand but still counted is listed too.
            entry["releases"] = [r.to_dict() for r in self.charged_ledger(rec)]
            out["datasets"].append(entry)
        return out

    # ------------------------------------------------------------------------- integrity

    def _audit_locked(self, conn: sqlite3.Connection) -> _chain.Audit:
        """The audit of the ledger as it is now (cached until the file changes)."""
        key = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
        if self._audit_cache is None or self._audit_cache[0] != key:
            try:
                found = _chain.audit(conn)
            except sqlite3.Error as exc:  # e.g. the chain's table dropped by hand
                found = _chain.Audit(problems=[f"the ledger's hash chain cannot be read "
                                               f"({exc})"])
            self._audit_cache = (key, found)
        return self._audit_cache[1]

    def audit(self) -> _chain.Audit:
        """Check the ledger against its hash chain and the manifests it can reach."""
        with self._db() as conn:
            return self._audit_locked(conn)

    def integrity(self) -> list[str]:
        """What was changed in the ledger outside DP Studio (one line each); [] when intact."""
        return list(self.audit().problems)

    def _require_intact(self) -> None:
        problems = self.integrity()
        if problems:
            raise LedgerTamperedError(tamper_message(self.path, problems), problems)

    def acknowledge(self, note: str = "") -> list[str]:
        """Acknowledge changes made to the ledger outside DP Studio: keep the pessimistic
        charges (the largest ε and δ the ledger, its chain or a manifest records; deleted
        releases restored as aborted, still charged; a raised budget lowered back), record
        the acknowledgement in the chain, and allow releases again. Returns what was
        acknowledged ([] if the ledger was intact)."""
        with self._lock.held(_BUSY_TIMEOUT):
            with self._transaction() as conn:
                try:
                    found = _chain.audit(conn)
                except sqlite3.Error:
                    conn.execute(_db.LEDGER_CHAIN_TABLE)
                    found = _chain.audit(conn)
                if found.ok:
                    return []
                try:
                    return _chain.acknowledge(conn, found, note)
                except sqlite3.IntegrityError as exc:
                    raise ProjectError(f"cannot acknowledge the changes to {self.path.name} "
                                       f"automatically ({exc}); restore the file from a "
                                       "backup") from None

    def integrity_check(self) -> str:
        """SQLite's own check of the file ("ok" when sound)."""
        with self._db() as conn:
            return "; ".join(r[0] for r in conn.execute("PRAGMA integrity_check").fetchall())

    # ------------------------------------------------------------------------ recovery

    def recover(self, wait: float = _BUSY_TIMEOUT) -> RecoveryReport:
        """Finish or abort interrupted releases (see the module docstring).

        Waits up to ``wait`` seconds for the project lock; if another process holds it
        (it is releasing), nothing is done and ``skipped`` is set.
        """
        report = RecoveryReport()
        try:
            got = self._lock.acquire(wait)
        except OSError:  # cannot create the lock file: a read-only project
            got = False
        if not got:
            report.skipped = True
            self.last_recovery = report
            return report
        try:
            report = self._recover_locked()
        finally:
            self._lock.release()
        self.last_recovery = report
        return report

    def _recover_locked(self) -> RecoveryReport:
        report = RecoveryReport()
        for rec in self._releases("WHERE r.status = 'pending'"):
            if not rec.out_dir.is_dir():
                report.left_pending.append(rec.id)
                continue
            if all(_matches(f) for f in rec.files):
                for f in rec.files:
                    (rec.out_dir / _tmp_name(f.name, rec.uid)).unlink(missing_ok=True)
                pause("recovery-complete")
                with self._db() as conn:
                    conn.execute("UPDATE releases SET status = 'done', finished_at = ?, note = "
                                 "? WHERE id = ? AND status = 'pending'",
                                 (_now(), "completed by recovery: all files were written",
                                  rec.id))
                report.completed.append(rec.id)
            else:
                self._abort(rec.id, rec.uid, rec.out_dir, [f.name for f in rec.files],
                            "aborted by recovery: interrupted before all files were written")
                report.aborted.append(rec.id)
        return report

    def _abort(self, release_id: int, uid: str, out: Path, names: list[str], note: str) -> None:
        """Delete a pending release's files, then mark it aborted (it stays charged)."""
        for name in names:
            for target in (out / name, out / _tmp_name(name, uid)):
                try:
                    target.unlink()
                except FileNotFoundError:
                    pass
                pause("abort-unlink")
        with contextlib.suppress(OSError):
            fsync_dir(out)
        with self._transaction() as conn:
            conn.execute("UPDATE releases SET status = 'aborted', finished_at = ?, "
                         "result_json = NULL, note = ? WHERE id = ? AND status = 'pending'",
                         (_now(), note, release_id))
            conn.execute("DELETE FROM release_files WHERE release_id = ?", (release_id,))

    # ------------------------------------------------------------------------ releases

    def check(self, spec: ReleaseSpec, out_dir: str | os.PathLike[str]) -> dict[str, Any]:
        """Everything :meth:`release` checks first, without drawing noise or writing.

        Returns the resolved query, the charge, the budget left and the notes; raises
        like :meth:`release` would (BudgetExceededError, DatasetChangedError, …).
        """
        prep = self._prepare(spec, out_dir, create_out=False)
        remaining = prep.budget if prep.record is None else self.remaining(prep.record)
        return {"query": prep.query, "epsilon": prep.charge[0], "delta": prep.charge[1],
                "registers_dataset": prep.record is None, "dataset": prep.name,
                "notes": prep.notes, "budget": prep.budget, "remaining": remaining}

    def release(self, spec: ReleaseSpec, out_dir: str | os.PathLike[str]) -> ReleaseRecord:
        """Perform a release: charge the budget, write the files, record them.

        Raises BudgetExceededError (nothing charged, nothing written), DatasetChangedError,
        SpecError/ProjectError/DataError/EngineError for bad input (likewise), or
        ProjectError when writing fails after charging (files removed, budget charged).
        """
        with self._lock.held(_RELEASE_WAIT):
            self._recover_locked()
            pause("start")
            prep = self._prepare(spec, out_dir, create_out=True)
            try:
                release_id, uid, files = self._charge(prep)
            except BaseException:
                prep.cleanup_dirs()
                raise
            return self._write(release_id, uid, files, prep.out)

    def _prepare(self, spec: ReleaseSpec, out_dir: str | os.PathLike[str], create_out: bool
                 ) -> _Prepared:
        trust_model = spec.trust_model
        if trust_model in ("shuffle", "distributed"):
            raise ProjectError(f"{trust_model}-model releases are not supported yet (central "
                               "or local)")
        if trust_model not in ("central", "local"):
            raise ProjectError(f"unknown trust model {trust_model!r} (central or local)")
        get_accountant(spec.accountant)
        self._require_intact()  # an edited ledger: no release until it is acknowledged
        path = Path(_abs(spec.dataset))
        if not path.is_file():
            raise ProjectError(f"dataset {spec.dataset}: no such file")
        fingerprint = sha256_file(path)
        if spec.fingerprint is not None and spec.fingerprint != fingerprint:
            raise DatasetChangedError(
                f"warning: {path.name} is not the dataset the spec names (SHA-256 "
                f"{fingerprint[:12]}… is not {spec.fingerprint[:12]}…); refusing to release")
        data = open_dataset(path, header=spec.header)
        if sha256_file(path) != fingerprint:
            raise DatasetChangedError(f"warning: {path.name} changed while it was being read; "
                                      "refusing to release")
        # A dataset is its rows as parsed: the same rows re-encoded or reordered spend the
        # same budget (the byte hash still names the exact file, in the manifest).
        content = content_fingerprint(data.frame)
        record, budget_of, identity_notes = self._identify(
            path, fingerprint, content, spec.share_budget_with, spec.separate_budget)
        if not spec.query.column:
            raise ProjectError("the spec names no column")
        require_column(data.frame, spec.query.column)
        declared = data.declared
        if declared is None and record is not None:  # moved without its sidecar
            with contextlib.suppress(Exception):
                declared = Schema.from_dict(record.schema)
        model_bounds = None
        if spec.query.query in MODEL_QUERIES or spec.features is not None:
            if trust_model != "central":
                raise ProjectError(f"a {spec.query.query} release is central-model only")
            for feature in spec.features or ():
                require_column(data.frame, feature)
            query, notes, model_bounds = resolve_model_query(spec.query, spec.features,
                                                             declared)
        else:
            resolve = resolve_local_query if trust_model == "local" else resolve_query
            query, notes = resolve(spec.query, declared)
        notes = identity_notes + notes
        if record is not None or budget_of is not None:
            # A version of a dataset spends (and is accounted like) the dataset it shares.
            root = self.dataset(record.budget_root if record is not None else budget_of)
            budget = (root.budget_epsilon, root.budget_delta)
            relation, accountant = root.relation, root.accountant
            schema = record.schema if record is not None else _declared_dict(data.declared)
        else:
            budget, relation, accountant = self._registration(
                spec.budget_epsilon, spec.budget_delta, None, spec.accountant, path.name)
            schema = _declared_dict(data.declared)
        if spec.accountant != accountant:
            raise ProjectError(f"{path.name} is accounted with the {accountant} accountant; the "
                               f"spec asks for {spec.accountant}")
        if model_bounds is not None and relation != "replace":
            raise ProjectError(f"{path.name} is budgeted under the {relation} relation; a model "
                               "release needs a dataset budgeted under replace (its noise "
                               "bounds replacing one record, with n public)")
        if query.relation != relation:
            raise ProjectError(f"{path.name} is budgeted under the {relation} relation; set "
                               f"relation = \"{relation}\" in the spec (ε under one relation "
                               "does not bound the other)")
        model = None
        if model_bounds is not None:
            model = read_model_columns(data.frame, query.column, tuple(spec.features),
                                       model_bounds)
            values = None
        else:
            values = read_values(data.frame, query, declared)
        acc = get_accountant(accountant)
        # The query's ε and δ are the engine's own (a local query's are its randomizer's,
        # see resolve_local_query); _charge checks them again against the result object.
        charge = acc.charge(query)
        with self._db() as conn:
            charges = (self._charges(conn, record.id) if record is not None else
                       self._charges(conn, budget_of) if budget_of is not None else [])
        label = path.name
        if record is not None and record.fingerprint != fingerprint:
            label += f" (the same rows as registered dataset #{record.id}, {record.name})"
        elif record is not None and record.budget_of is not None or budget_of is not None:
            label += (f" (a version of dataset #{budget_of or record.budget_of}, sharing its "
                      "budget)")
        _check_budget(acc, budget, charges, charge, label)
        out, created = _output_folder(out_dir, create_out)
        return _Prepared(spec, query, notes, path, fingerprint, path.name, schema, record, budget,
                         relation, accountant, charge, values, reader_for(query, declared),
                         out, created, trust_model, model, content, budget_of)

    def _stem(self, release_id: int, prep: _Prepared, uid: str) -> str:
        from dpstudio.export.bundle import file_names

        base = _slug(prep.spec.name or f"{prep.query.query}-{prep.query.column}")
        for stem in (f"r{release_id:04d}-{base}", f"r{release_id:04d}-{base}-{uid[:8]}"):
            names = file_names(stem, prep.spec.formats, prep.spec.report, prep.spec.script,
                               records=prep.trust_model == "local")
            if not any((prep.out / n).exists() or (prep.out / _tmp_name(n, uid)).exists()
                       for n in names):
                return stem
        raise ProjectError(f"{prep.out} already holds files named like this release's; choose "
                           "another output folder")

    def _charge(self, prep: _Prepared) -> tuple[int, str, list]:
        """Step 1: check, draw, render, record as pending — one transaction."""
        from dpstudio.export.bundle import BundleInput, render_bundle
        from dpstudio.export.tables import public_result

        acc = get_accountant(prep.accountant)
        uid = uuid.uuid4().hex
        created_at = _now()
        with self._transaction() as conn:
            if prep.record is None:
                dataset_id = self._insert_dataset(conn, prep.fingerprint, prep.path, prep.schema,
                                                  prep.budget, prep.relation, prep.accountant,
                                                  prep.content, prep.budget_of)
            else:
                dataset_id = prep.record.id
            problems = self._audit_locked(conn).problems  # edited since _prepare checked?
            if problems:
                raise LedgerTamperedError(tamper_message(self.path, problems), problems)
            charges = self._charges(conn, dataset_id)
            _check_budget(acc, prep.budget, charges, prep.charge, prep.name)
            spec_dict = _spec_dict(prep)
            cur = conn.execute(
                "INSERT INTO releases (uid, dataset_id, status, created_at, query, column_name, "
                "mechanism, trust_model, epsilon, delta, accountant, spec_json, noise_json, "
                "out_dir) VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?)",
                (uid, dataset_id, created_at, prep.query.query, prep.query.column,
                 prep.query.mechanism, prep.trust_model, str(prep.charge[0]), str(prep.charge[1]),
                 prep.accountant, json.dumps(spec_dict, ensure_ascii=False), str(prep.out)))
            release_id = int(cur.lastrowid)
            history = self._history(conn, dataset_id, release_id)
            records = None
            if prep.trust_model == "local":  # each record randomized as its owner would
                public, records, result = _local_release(prep)
            elif prep.model is not None:  # a DP model: the noise is drawn here
                public, result = _model_release(prep)
            else:
                result = engine_release(prep.values, prep.query, SecureSource())  # the noise
                public = public_result(result)
            # What is charged, written and shown is the (ε, δ) of the engine object that drew
            # the noise, never the spec's. Nothing drawn has been seen yet: if it is more than
            # was checked, the budget is checked again and the transaction may still roll back.
            charge = (exact(float(result.epsilon)), exact(float(result.delta)))
            if charge != prep.charge:
                _check_budget(acc, prep.budget, charges, charge, prep.name)
                conn.execute("UPDATE releases SET epsilon = ?, delta = ? WHERE id = ?",
                             (str(charge[0]), str(charge[1]), release_id))
                history = self._history(conn, dataset_id, release_id)
            _chain.record_release(conn, release_id)
            public["notes"] = prep.notes + list(public.get("notes", []))
            stem = self._stem(release_id, prep, uid)
            # The report and the script read ε and δ off the spec they are given: give them
            # the engine object's, like the manifest and the ledger.
            shown = prep.query
            if (float(shown.epsilon), float(shown.delta)) != (float(result.epsilon),
                                                               float(result.delta)):
                shown = replace(shown, epsilon=float(result.epsilon),
                                delta=float(result.delta))
            files = render_bundle(BundleInput(
                release_id=release_id, uid=uid, created_at=created_at, stem=stem,
                dataset_name=prep.name, dataset_path=str(prep.path),
                fingerprint=prep.fingerprint, schema=prep.schema, spec=shown,
                public=public, epsilon=charge[0], delta=charge[1],
                accountant=prep.accountant, budget_epsilon=prep.budget[0],
                budget_delta=prep.budget[1], formats=prep.spec.formats,
                report=prep.spec.report, script=prep.spec.script, reader=prep.reader,
                history=history, trust_model=prep.trust_model, records=records,
                header=prep.spec.header))
            conn.executemany(
                "INSERT INTO release_files (release_id, name, role, sha256, bytes) VALUES "
                "(?, ?, ?, ?, ?)",
                [(release_id, f.name, f.role, f.sha256, len(f.data)) for f in files])
            noise = {"sensitivity": public.get("sensitivity"),
                     "noise_scale": public.get("noise_scale"),
                     "variance": public.get("variance"),
                     "params": REGISTRY.get(prep.query.mechanism).resolve(
                         prep.query.mechanism_params()),
                     "components": public.get("components", [])}
            if prep.model is not None:
                noise |= {k: public.get(k) for k in (
                    "noise_family", "grid", "sensitivity_l1", "sensitivity_l2", "rho", "n",
                    "lambda", "calibration")}
            if prep.trust_model == "local":
                noise |= {"randomizer": public.get("parameters", {}), "reports": public.get("n"),
                          "messages_bits": public.get("messages_bits")}
            conn.execute("UPDATE releases SET noise_json = ?, result_json = ? WHERE id = ?",
                         (json.dumps(noise, allow_nan=False),
                          json.dumps(public, allow_nan=False, ensure_ascii=False), release_id))
            pause("before-charge-commit")
        pause("charged")
        return release_id, uid, files

    def _history(self, conn: sqlite3.Connection, dataset_id: int, this_id: int
                 ) -> list[dict[str, Any]]:
        _, members = self._group(conn, dataset_id)
        marks = ", ".join("?" * len(members))
        rows = conn.execute("SELECT id, created_at, query, column_name, mechanism, epsilon, "
                            f"delta, status FROM releases WHERE dataset_id IN ({marks}) ORDER "
                            "BY id", tuple(sorted(members))).fetchall()
        return [{"id": r[0], "time": r[1], "query": r[2], "column": r[3], "mechanism": r[4],
                 "epsilon": float(_chain.amount(r[5]) or 0), "delta": float(
                     _chain.amount(r[6]) or 0),
                 "status": "this release" if r[0] == this_id else r[7]} for r in rows]

    def _write(self, release_id: int, uid: str, files: list, out: Path) -> ReleaseRecord:
        """Steps 2 and 3: write each file durably under a temporary name, rename, confirm."""
        current = ""
        try:
            for f in files:
                current = f.name
                tmp = out / _tmp_name(f.name, uid)
                write_durably(tmp, f.data)
                pause("tmp-written")
                os.replace(tmp, out / f.name)
                pause("renamed")
            fsync_dir(out)
            pause("folder-synced")
        except BaseException as exc:
            note = (f"aborted: could not write {current}"
                    + (f" ({exc.strerror or exc})" if isinstance(exc, OSError) else
                       f" ({type(exc).__name__})"))
            self._abort(release_id, uid, out, [f.name for f in files], note)
            if isinstance(exc, OSError):
                raise ProjectError(f"release #{release_id} aborted: could not write {current} "
                                   f"in {out} ({exc.strerror or exc}); its files were removed "
                                   "and its budget stays charged") from None
            raise
        try:
            with self._db() as conn:
                conn.execute("UPDATE releases SET status = 'done', finished_at = ? WHERE id = ? "
                             "AND status = 'pending'", (_now(), release_id))
        except ProjectError as exc:
            raise ProjectError(f"release #{release_id} was written to {out} but the ledger "
                               f"could not confirm it ({exc}); reopening the project confirms "
                               "it") from None
        pause("done")
        return self.release_record(release_id)


# ---------------------------------------------------------------------------- helpers


def _abs(path: str | os.PathLike[str]) -> str:
    return str(Path(path).expanduser().resolve())


def _declared_dict(declared: Schema | None) -> dict[str, Any]:
    """The declared (public) schema as recorded and exported; empty if none is declared."""
    return (declared if declared is not None else Schema()).to_dict()


def _json_or(text: Any, default: Any) -> Any:
    """A stored JSON column, or ``default`` when it is missing or was edited into garbage."""
    try:
        return default if text is None else json.loads(text)
    except (TypeError, ValueError):
        return default


def tamper_message(path: Path, problems: list[str]) -> str:
    """One line: what was changed in the ledger, and how to release again."""
    shown = "; ".join(problems[:6]) + (f"; and {len(problems) - 6} more" if len(problems) > 6
                                        else "")
    return (f"the ledger of {path.name} was changed outside DP Studio: {shown} — new releases "
            "are refused until the change is acknowledged (dpstudio ledger "
            f"{path.name} --acknowledge keeps the pessimistic charges)")


def _matches(f: FileRecord) -> bool:
    """Whether a recorded file is present with its recorded size and SHA-256."""
    try:
        if f.path.stat().st_size != f.bytes:
            return False
        return sha256_file(f.path) == f.sha256
    except Exception:  # OSError, or DataError for an unreadable file
        return False


def _check_budget(acc, budget: tuple[Decimal, Decimal], charges: list,
                  request: tuple[Decimal, Decimal], name: str) -> None:
    if acc.fits(budget, charges, request):
        return
    spent = acc.spent(charges)
    left = (budget[0] - spent[0], budget[1] - spent[1])
    shown = tuple(max(x, Decimal(0)) for x in left)
    raise BudgetExceededError(
        f"budget exceeded for {name}: this release needs ε = {_dec_text(request[0])}, "
        f"δ = {_dec_text(request[1])}, but only ε = {_dec_text(shown[0])}, δ = "
        f"{_dec_text(shown[1])} is left (of ε = {_dec_text(budget[0])}, δ = "
        f"{_dec_text(budget[1])}, {acc.name} accountant)", left[0], left[1])


def _output_folder(out_dir: str | os.PathLike[str], create: bool) -> tuple[Path, list[Path]]:
    """The output folder as an absolute path, created if asked (and which folders were
    created); ProjectError unless it is a writable folder."""
    out = Path(out_dir).expanduser().absolute()
    created: list[Path] = []
    if out.exists() and not out.is_dir():
        raise ProjectError(f"output folder {out} is a file, not a folder")
    if not out.exists():
        if not create:
            return out, created
        missing = [out] + [p for p in out.parents if not p.exists()]
        try:
            out.mkdir(parents=True)
        except OSError as exc:
            raise ProjectError(f"cannot create output folder {out} ({exc.strerror or exc})"
                               ) from None
        created = list(reversed(missing))
    try:
        # An unnamed temporary file (O_TMPFILE where available): proves we may create files
        # there, and leaves nothing behind even if the process is killed right now.
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        for d in reversed(created):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise ProjectError(f"output folder {out} is not writable ({exc.strerror or exc})"
                           ) from None
    return out, created


def _local_release(prep: _Prepared) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the local protocol on the column (fresh randomness from the OS CSPRNG): the
    public estimate, the columns the untrusted collector received, and the engine's result
    (whose ε and δ are charged)."""
    from dpstudio.engine.local import run_local
    from dpstudio.export.tables import local_public

    q = prep.query
    result = run_local(prep.values, q.mechanism, q.mechanism_params(),
                       categories=q.categories, bounds=q.bounds, source=SecureSource(),
                       confidence=q.confidence)
    if result.simulated:  # pragma: no cover - SecureSource is never simulated
        raise ProjectError("a local release needs the OS CSPRNG")
    return local_public(result, q.column, q.relation), result.records(), result


def _model_release(prep: _Prepared) -> tuple[dict[str, Any], Any]:
    """Fit and release the model (fresh noise from the OS CSPRNG): its public fields."""
    from dpstudio.engine.learning import release_logistic
    from dpstudio.export.tables import model_public

    q, m = prep.query, prep.model
    source = SecureSource()
    params = REGISTRY.get(q.mechanism).resolve(q.mechanism_params())
    result = release_logistic(m.columns, m.label, m.features, m.bounds, q.epsilon, q.delta,
                              params["lambda"], source)
    if result.simulated:  # pragma: no cover - release_logistic requires a SecureSource
        raise ProjectError("a model release needs the OS CSPRNG")
    return model_public(result, m.label, q.relation, source.label), result


def _spec_dict(prep: _Prepared) -> dict[str, Any]:
    """The full resolved spec as recorded in the ledger."""
    q = prep.query
    out = {
        "dataset": str(prep.path), "fingerprint": prep.fingerprint,
        "content_hash": None if prep.content is None else prep.content.digest,
        "column": q.column,
        "query": q.query, "bounds": None if q.bounds is None else [float(b) for b in q.bounds],
        "categories": None if q.categories is None else list(q.categories), "bins": q.bins,
        "quantile": q.quantile, "mechanism": q.mechanism, "params": dict(q.params),
        "epsilon": float(q.epsilon), "delta": float(q.delta), "relation": q.relation,
        "confidence": float(q.confidence), "accountant": prep.accountant,
        "formats": list(prep.spec.formats), "report": prep.spec.report,
        "script": prep.spec.script, "name": prep.spec.name, "trust_model": prep.trust_model,
        "header": prep.spec.header, "missing": q.missing,
        "impute": q.impute_value() if q.missing == "impute" else None,
    }
    if prep.model is not None:
        out["features"] = list(prep.model.features)
    return out
