"""The project file's SQLite schema, its version, and migrations between versions.

A project file is an SQLite database with ``PRAGMA application_id`` = :data:`APPLICATION_ID`
("DPSt") and ``PRAGMA user_version`` = its schema version. Amounts of ε and δ are stored as
decimal text (exact: see :mod:`dpstudio.engine.accounting.budget`), times as ISO 8601 UTC.

To change the schema: add the new version's steps to :data:`MIGRATIONS` (keyed by the
version they migrate *from*), bump :data:`SCHEMA_VERSION`, keep a project file of the old
version in ``tests/project/fixtures/`` and test opening it.

Version 2 adds the ledger's hash chain (:mod:`dpstudio.project._chain`, table
``ledger_chain``) and datasets identified by their content as parsed (``content_hash``,
``rows``, ``columns_json``, ``sketch``, ``column_digests``; see
:func:`dpstudio.data.fingerprint.content_fingerprint`) and versions of a dataset sharing
its budget (``budget_of``). Migrating a version-1 file re-charges randomized-response
releases with a chosen ``p`` at the randomizer's true ε (version 1 charged the spec's ε)
and seals the result in the chain.

Version 3 adds each release's privacy-loss description (``releases.loss``, JSON of
:class:`~dpstudio.engine.accounting.loss.LossDescription`, NULL when not known): what the
tight accountants (``advanced``, ``zcdp``, ``pld``) compose. Releases of an older file keep
it NULL and are accounted as the pure/approx description of their charged (ε, δ)
(:mod:`dpstudio.project.ledger_loss`), which is pessimistic.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

__all__ = ["APPLICATION_ID", "MIGRATIONS", "SCHEMA_VERSION", "create_schema", "migrate"]

APPLICATION_ID = 0x44505374  # "DPSt"
SCHEMA_VERSION = 3

SCHEMA_V1 = """
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE datasets (
    id             INTEGER PRIMARY KEY,
    fingerprint    TEXT NOT NULL UNIQUE,
    path           TEXT NOT NULL,
    name           TEXT NOT NULL,
    schema_json    TEXT NOT NULL,
    budget_epsilon TEXT NOT NULL,
    budget_delta   TEXT NOT NULL,
    relation       TEXT NOT NULL CHECK (relation IN ('add-remove', 'replace')),
    accountant     TEXT NOT NULL,
    registered_at  TEXT NOT NULL
);
CREATE TABLE releases (
    id          INTEGER PRIMARY KEY,
    uid         TEXT NOT NULL UNIQUE,
    dataset_id  INTEGER NOT NULL REFERENCES datasets(id),
    status      TEXT NOT NULL CHECK (status IN ('pending', 'done', 'aborted')),
    created_at  TEXT NOT NULL,
    finished_at TEXT,
    query       TEXT NOT NULL,
    column_name TEXT,
    mechanism   TEXT NOT NULL,
    trust_model TEXT NOT NULL,
    epsilon     TEXT NOT NULL,
    delta       TEXT NOT NULL,
    accountant  TEXT NOT NULL,
    spec_json   TEXT NOT NULL,
    noise_json  TEXT NOT NULL,
    result_json TEXT,
    out_dir     TEXT NOT NULL,
    note        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX releases_by_dataset ON releases(dataset_id, id);
CREATE TABLE release_files (
    release_id INTEGER NOT NULL REFERENCES releases(id),
    name       TEXT NOT NULL,
    role       TEXT NOT NULL,
    sha256     TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    PRIMARY KEY (release_id, name)
);
"""

#: The hash chain's table (also re-created by an acknowledgement if it was dropped by hand).
LEDGER_CHAIN_TABLE = """
CREATE TABLE IF NOT EXISTS ledger_chain (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    kind    TEXT NOT NULL,
    ref     INTEGER,
    content TEXT NOT NULL,
    prev    TEXT NOT NULL,
    hash    TEXT NOT NULL
);
"""

SCHEMA_V2_STEPS = """
ALTER TABLE datasets ADD COLUMN content_hash TEXT;
ALTER TABLE datasets ADD COLUMN rows INTEGER;
ALTER TABLE datasets ADD COLUMN columns_json TEXT;
ALTER TABLE datasets ADD COLUMN sketch TEXT;
ALTER TABLE datasets ADD COLUMN column_digests TEXT;
ALTER TABLE datasets ADD COLUMN budget_of INTEGER REFERENCES datasets(id);
CREATE INDEX datasets_by_content ON datasets(content_hash);
""" + LEDGER_CHAIN_TABLE


SCHEMA_V3_STEPS = """
ALTER TABLE releases ADD COLUMN loss TEXT;
"""


def _statements(script: str) -> list[str]:
    return [s for s in script.split(";") if s.strip()]


def _v1_to_v2(conn: sqlite3.Connection) -> None:
    from dpstudio.project import _chain

    for statement in _statements(SCHEMA_V2_STEPS):
        conn.execute(statement)
    recharged = _chain.recharge_randomized_response(conn)
    _chain.seal(conn, "migrate", {"from_version": 1, "to_version": 2,
                                  "recharged": recharged})


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    from dpstudio.project import _chain

    for statement in _statements(SCHEMA_V3_STEPS):
        conn.execute(statement)
    _chain.seal(conn, "migrate", {"from_version": 2, "to_version": 3})


#: version → function migrating a connection (inside a transaction) from it to version + 1.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _v1_to_v2, 2: _v2_to_v3}


def create_schema(conn: sqlite3.Connection) -> None:
    """Create the current schema in an empty database (inside the caller's transaction)."""
    from dpstudio.project import _chain

    for statement in (_statements(SCHEMA_V1) + _statements(SCHEMA_V2_STEPS)
                      + _statements(SCHEMA_V3_STEPS)):
        conn.execute(statement)
    _chain.seal(conn, "create", {"schema_version": SCHEMA_VERSION})
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def migrate(conn: sqlite3.Connection, version: int) -> int:
    """Migrate from ``version`` to :data:`SCHEMA_VERSION`, one step at a time.

    Runs inside the caller's transaction: a failed step leaves the file as it was.
    Returns the new version.
    """
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise LookupError(f"no migration from project schema version {version}")
        step(conn)
        version += 1
        conn.execute(f"PRAGMA user_version = {version}")
    return version
