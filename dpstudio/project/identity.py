"""Which registered dataset a file is: content identity, versions, and registration.

A dataset is its rows as parsed, not its bytes: the same rows re-encoded, reordered or
moved spend the same budget, and a file that looks like a version of a registered dataset
is refused until the analyst says whose budget it spends. Mixed into
:class:`~dpstudio.project.project.Project` (it uses the store's connection and queries).
"""

from __future__ import annotations

import json
import os
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

from dpstudio.data.dataset import open_dataset
from dpstudio.data.errors import DataError
from dpstudio.data.fingerprint import (
    ContentFingerprint,
    content_fingerprint,
    looks_like_version,
    sha256_file,
)
from dpstudio.data.schema import Schema
from dpstudio.engine.queries import RELATIONS
from dpstudio.project import _chain
from dpstudio.project.accountant import get_accountant
from dpstudio.project.errors import DatasetVersionError, ProjectError
from dpstudio.project.records import DatasetRecord
from dpstudio.project.store import absolute, budget_amounts, now

__all__ = ["DatasetIdentity", "declared_dict"]


def declared_dict(declared: Schema | None) -> dict[str, Any]:
    """The declared (public) schema as recorded and exported; empty if none is declared.

    Parameters
    ----------
    declared : Schema or None
        The dataset's declared schema.

    Returns
    -------
    dict
        Its JSON form (an empty schema's when None).
    """
    return (declared if declared is not None else Schema()).to_dict()


class DatasetIdentity:
    """Dataset identity and registration, mixed into
    :class:`~dpstudio.project.project.Project`."""

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
        p = Path(absolute(path))
        fingerprint = sha256_file(p)
        data = open_dataset(p)
        content = content_fingerprint(data.frame)
        found, budget_of, _ = self._identify(p, fingerprint, content, share_budget_with,
                                             separate_budget)
        if found is not None:
            raise ProjectError(f"{p.name} is already registered in {self.path.name} (dataset "
                               f"#{found.id})")
        if schema is None:
            schema = declared_dict(data.declared)
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
        budget = budget_amounts(eps, delta)
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
             str(budget[0]), str(budget[1]), relation, accountant, now(),
             None if content is None else content.digest,
             None if content is None else content.rows,
             None if content is None else json.dumps(content.columns, ensure_ascii=False),
             None if content is None else content.sketch_text(),
             None if content is None else content.column_digests_text(), budget_of))
        new_id = int(cur.lastrowid)
        _chain.record_dataset(conn, new_id)
        return new_id
