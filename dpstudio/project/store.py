"""The project file: creating, opening and migrating it, datasets, ledger and budgets.

:class:`ProjectStore` is the base of :class:`~dpstudio.project.project.Project`; dataset
identity (:mod:`.identity`), integrity and recovery (:mod:`.recovery`) and the release
transaction (:mod:`.release`) are mixed into it there.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import urllib.parse
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Self

from dpstudio import __version__
from dpstudio.data.atomic import atomic_path
from dpstudio.engine.accounting.budget import exact
from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.queries import RELATIONS
from dpstudio.project import _chain, _db
from dpstudio.project._fs import ProjectLock
from dpstudio.project.accountant import ACCOUNTANTS, get_accountant
from dpstudio.project.errors import NotAProjectError, ProjectError
from dpstudio.project.ledger_loss import read_loss
from dpstudio.project.records import (
    BudgetState,
    CumulativePoint,
    DatasetRecord,
    FileRecord,
    RecoveryReport,
    ReleaseRecord,
    exact_str,
)

__all__ = ["BUSY_TIMEOUT", "PROJECT_SUFFIX", "ProjectStore", "budget_amounts"]

PROJECT_SUFFIX = ".dpstudio"
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: How long a statement waits for another process's write, and recovery for the lock.
BUSY_TIMEOUT = 30.0


def now() -> str:
    """The current UTC time as the ledger records it (``2024-01-31T12:00:00Z``).

    Returns
    -------
    str
        ISO 8601, to the second.
    """
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def absolute(path: str | os.PathLike[str]) -> str:
    """A dataset path as the ledger records it: absolute, ``~`` expanded, links resolved.

    Parameters
    ----------
    path : str or os.PathLike
        The path.

    Returns
    -------
    str
        The resolved path.
    """
    return str(Path(path).expanduser().resolve())


def budget_amounts(epsilon: Any, delta: Any) -> tuple[Decimal, Decimal]:
    """Exact (ε, δ) of a budget: ε > 0, 0 ≤ δ < 1.

    Parameters
    ----------
    epsilon, delta : number, str or None
        The budget as given (``delta`` None means 0).

    Returns
    -------
    tuple of decimal.Decimal
        ``(ε, δ)``, exactly.

    Raises
    ------
    ProjectError
        If either is not a number, ε is not positive or δ is not below 1.
    """
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


def _json_or(text: Any, default: Any) -> Any:
    """A stored JSON column, or ``default`` when it is missing or was edited into garbage."""
    try:
        return default if text is None else json.loads(text)
    except (TypeError, ValueError):
        return default


def _spent(accountant: str, charges: list[tuple[Decimal, Decimal]],
           losses: list[LossDescription]) -> tuple[Decimal, Decimal]:
    """(ε, δ) spent under ``accountant``: basic from the exact charges, a tight one from
    the descriptions, never above basic's ε, at basic's δ (Σδᵢ)."""
    acc = get_accountant(accountant)
    basic = get_accountant("basic").spent(charges)
    return basic if accountant == "basic" else acc.spent_losses(losses, basic)


# ---------------------------------------------------------------------------- the store


class ProjectStore:
    """The storage part of :class:`~dpstudio.project.project.Project`: the file, its
    settings, datasets, ledger queries and budgets.

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
               relation: str = "add-remove", accountant: str = "basic") -> Self:
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
        settings = {"created_at": now(), "created_by": f"dpstudio {__version__}",
                    "default_relation": relation, "default_accountant": accountant}
        if epsilon is not None:
            e, d = budget_amounts(epsilon, delta)
            settings |= {"default_epsilon": str(e), "default_delta": str(d)}
        elif delta is not None:
            raise ProjectError("a default δ needs a default ε too")
        # Built under a temporary name and published by hard link: never over a file that
        # appeared meanwhile, and a failed creation leaves nothing behind.
        creating = f".{p.name}.{uuid.uuid4().hex[:8]}.creating"
        try:
            with atomic_path(p, exclusive=True, tmp_name=creating) as tmp:
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
        except FileExistsError:
            raise ProjectError(f"{p} already exists (open it, or choose another name)"
                               ) from None
        except (OSError, sqlite3.Error) as exc:
            raise ProjectError(f"cannot create {p} ({getattr(exc, 'strerror', None) or exc})"
                               ) from None
        return cls.open(p)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, recover: bool = True) -> Self:
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
                                   timeout=BUSY_TIMEOUT, check_same_thread=False)
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

    def __enter__(self) -> Self:
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
        e, d = budget_amounts(epsilon, delta)
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
                                       "? ORDER BY id DESC", (absolute(text),)).fetchone()
        if row is None:
            raise ProjectError(f"no dataset {key} in {self.path.name}")
        return self._dataset_from_row(row)

    _RELEASE_COLS = ("r.id, r.uid, r.dataset_id, d.fingerprint, r.status, r.created_at, "
                     "r.finished_at, r.query, r.column_name, r.mechanism, r.trust_model, "
                     "r.epsilon, r.delta, r.accountant, r.spec_json, r.noise_json, "
                     "r.result_json, r.out_dir, r.note, r.loss")

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
                out_dir=out_dir, files=recs if r[4] != "aborted" else (), note=r[18],
                loss=_json_or(r[19], None) if r[19] else None))
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

    def _losses(self, conn: sqlite3.Connection, dataset_id: int
                ) -> tuple[list[tuple[Decimal, Decimal]], list[LossDescription]]:
        """Every charge against ``dataset_id``'s budget (as :meth:`_charges`) and, for
        each, the privacy-loss description the accountants compose (the stored one when
        it claims at least the charge, else the charge's pure/approx one)."""
        _, members = self._group(conn, dataset_id)
        found = self._audit_locked(conn)
        ids = [r for r, ds in sorted(found.release_dataset.items()) if ds & members]
        stored = dict(conn.execute(
            f"SELECT id, loss FROM releases WHERE id IN ({', '.join('?' * len(ids))})",
            ids).fetchall()) if ids else {}
        charges = [found.release_charge[r] for r in ids]
        losses = [read_loss(self._chained_loss(found, r, stored.get(r)),
                            *found.release_charge[r]) for r in ids]
        return charges, losses

    @staticmethod
    def _chained_loss(found: Any, release_id: int, text: str | None) -> str | None:
        """The stored description unless it differs from the one the chain recorded (an
        edit by hand: a larger scale would lower the tight accountants' charge); then
        none, so the release counts as its charge's pure/approx description."""
        expected = found.expected_releases.get(release_id)
        if expected is not None and "loss" in expected and expected["loss"] != text:
            return None
        return text

    def losses(self, dataset: DatasetRecord | str | int) -> list[LossDescription]:
        """The privacy-loss descriptions of every release charged to a dataset's budget
        (shared with its versions; aborted and deleted-but-charged releases included)."""
        rec = self.dataset(dataset)
        with self._db() as conn:
            return self._losses(conn, rec.id)[1]

    def budget(self, dataset: DatasetRecord | str | int) -> BudgetState:
        """Total, spent and remaining budget of a dataset under its accountant (aborted
        releases count; a version sharing another dataset's budget shows that budget)."""
        rec = self.dataset(dataset)
        with self._db() as conn:
            root, _ = self._group(conn, rec.id)
            charges, losses = self._losses(conn, rec.id)
            total = self._audit_locked(conn).budgets.get(root)
            accountant = self._accountant_of(conn, root, rec.accountant)
        if total is None:
            total = (rec.budget_epsilon, rec.budget_delta)
        spent = _spent(accountant, charges, losses)
        return BudgetState(total[0], total[1], spent[0], spent[1], accountant)

    @staticmethod
    def _accountant_of(conn: sqlite3.Connection, root: int, default: str) -> str:
        """The accountant of the dataset whose budget is spent (a version is accounted
        like the dataset it shares)."""
        row = conn.execute("SELECT accountant FROM datasets WHERE id = ?", (root,)).fetchone()
        return row[0] if row is not None and row[0] else default

    def spent_by_accountant(self, dataset: DatasetRecord | str | int
                            ) -> dict[str, tuple[Decimal, Decimal]]:
        """(ε, δ) a dataset's releases spent under every accountant, side by side (what
        tight accounting buys); its own accountant's is what its budget counts.

        Parameters
        ----------
        dataset : DatasetRecord, str or int

        Returns
        -------
        dict
            Accountant name → exact (ε, δ), in the order of
            :data:`~dpstudio.project.accountant.ACCOUNTANTS`.
        """
        rec = self.dataset(dataset)
        with self._db() as conn:
            charges, losses = self._losses(conn, rec.id)
        return {name: _spent(name, charges, losses) for name in ACCOUNTANTS}

    def set_accountant(self, dataset: DatasetRecord | str | int, accountant: str) -> None:
        """Change a dataset's accountant, only before its first release.

        Raises
        ------
        ProjectError
            For an unknown accountant, a version sharing another dataset's budget, or a
            dataset with a release charged to its budget (its accountant is fixed then).
        """
        get_accountant(accountant)
        rec = self.dataset(dataset)
        if rec.accountant == accountant:
            return
        with self._transaction() as conn:
            root, _ = self._group(conn, rec.id)
            if root != rec.id:
                raise ProjectError(f"{rec.name} shares the budget of dataset #{root}: it is "
                                   "accounted like that dataset")
            charges, _ = self._losses(conn, rec.id)
            if charges:
                raise ProjectError(
                    f"{rec.name} has been accounted with the {rec.accountant} accountant "
                    f"since its first release; a dataset's accountant never changes after "
                    f"that (it would re-count the same releases)")
            conn.execute("UPDATE datasets SET accountant = ? WHERE id = ?",
                         (accountant, rec.id))
            _chain.record_dataset(conn, rec.id)

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
        charged (see :meth:`charged_ledger`), under the dataset's accountant: basic adds
        the charges up; a tight one composes what the releases drew, up to each one."""
        rec = self.dataset(dataset)
        releases = self.charged_ledger(rec)
        budget = self.budget(rec)
        accountant = budget.accountant
        sums, e_sum, d_sum = [], Decimal(0), Decimal(0)
        for r in releases:
            e_sum, d_sum = e_sum + r.epsilon, d_sum + r.delta
            sums.append((e_sum, d_sum))
        spent = [e for e, _ in sums]
        if accountant != "basic" and releases:
            with self._db() as conn:
                found = self._audit_locked(conn)
                stored = dict(conn.execute("SELECT id, loss FROM releases").fetchall())
                charged = len(self._losses(conn, rec.id)[0])
            losses = [read_loss(self._chained_loss(found, r.id, stored.get(r.id)),
                                r.epsilon, r.delta) for r in releases]
            spent = get_accountant(accountant).spent_series(losses, sums)
            if charged == len(releases):
                # The last step is what the budget counts (composed in one tree there,
                # one release at a time here: the two agree to ~1e-11).
                spent[-1] = budget.spent_epsilon
        return [CumulativePoint(r.id, r.created_at, r.status, float(r.epsilon),
                                float(r.delta), float(e), float(d))
                for r, e, (_, d) in zip(releases, spent, sums, strict=True)]

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
            from dpstudio.project.privacy_unit import dataset_unit  # row or person:COL

            entry["unit_of_privacy"] = dataset_unit(self, rec.id)
            entry["spent_by_accountant"] = {
                name: {"epsilon": float(e), "delta": float(d),
                       "epsilon_exact": exact_str(e), "delta_exact": exact_str(d)}
                for name, (e, d) in self.spent_by_accountant(rec).items()}
            # As charged: a release deleted by hand but still counted is listed too.
            entry["releases"] = [r.to_dict() for r in self.charged_ledger(rec)]
            out["datasets"].append(entry)
        return out
