"""Integrity and recovery: the ledger checked against its hash chain, interrupted
releases finished or aborted.

Recovery runs under the project lock, so every ``pending`` release it finds belongs to a
process that died: see the transaction design in :mod:`dpstudio.project.release`. Mixed
into :class:`~dpstudio.project.project.Project`.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from dpstudio.data.atomic import fsync_dir
from dpstudio.data.fingerprint import sha256_file
from dpstudio.project import _chain, _db
from dpstudio.project._fs import pause, tmp_name
from dpstudio.project.errors import LedgerTamperedError, ProjectError
from dpstudio.project.records import FileRecord, RecoveryReport
from dpstudio.project.store import BUSY_TIMEOUT, now

__all__ = ["Integrity", "tamper_message"]


def tamper_message(path: Path, problems: list[str]) -> str:
    """One line: what was changed in the ledger, and how to release again.

    Parameters
    ----------
    path : pathlib.Path
        The project file.
    problems : list of str
        What the audit found (the first six are shown).

    Returns
    -------
    str
        The message of :class:`~dpstudio.project.errors.LedgerTamperedError`.
    """
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


class Integrity:
    """The ledger's audit, acknowledgement and crash recovery, mixed into
    :class:`~dpstudio.project.project.Project`."""

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
        with self._lock.held(BUSY_TIMEOUT):
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

    def recover(self, wait: float = BUSY_TIMEOUT) -> RecoveryReport:
        """Finish or abort interrupted releases (see :mod:`dpstudio.project.release`).

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
                    (rec.out_dir / tmp_name(f.name, rec.uid)).unlink(missing_ok=True)
                pause("recovery-complete")
                with self._db() as conn:
                    conn.execute("UPDATE releases SET status = 'done', finished_at = ?, note = "
                                 "? WHERE id = ? AND status = 'pending'",
                                 (now(), "completed by recovery: all files were written",
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
            for target in (out / name, out / tmp_name(name, uid)):
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
                         (now(), note, release_id))
            conn.execute("DELETE FROM release_files WHERE release_id = ?", (release_id,))
