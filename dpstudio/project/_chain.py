"""The ledger's hash chain: edits made outside DP Studio are detected and charged pessimistically.

Every change DP Studio makes to a budget-relevant row appends an entry to ``ledger_chain``:
``(kind, ref, content, prev, hash)`` with ``hash = SHA-256(prev, kind, ref, content)`` and
``prev`` the hash of the entry before it. ``content`` is the canonical JSON of the row's
chained fields (:data:`DATASET_FIELDS` of a dataset: its identity and budget;
:data:`RELEASE_FIELDS` of a release: its identity and charge). A *seal* (the project's
creation, a migration, an acknowledgement) is an entry of kind ``create``, ``migrate`` or
``acknowledge`` followed by one entry for every row: from the last seal on, the chain
holds what every row must be.

:func:`audit` compares the file with its chain and with the release manifests it can
reach (each manifest records its release's ε and δ), and reports each difference in one
line: a release or dataset deleted or added by hand, a field changed (ε lowered, a budget
raised, …), a value that is not a number, a chain entry altered or removed, a ledger
charge below what a manifest says was released. Whatever was changed, the charges it
computes are the pessimistic ones: for a release, the largest ε and δ recorded in the row,
the chain or its manifest (a deleted release stays charged; a release without any readable
ε uses up its dataset's budget); for a dataset, the smallest budget recorded.

:func:`acknowledge` writes those pessimistic values back (deleted rows restored, deleted
releases as ``aborted``), then seals the ledger with the list of what was acknowledged.

Limits: the chain is not keyed. It makes edits with ``sqlite3`` and other tools evident;
someone who recomputes every hash by hand can forge it, and is then caught only where a
manifest of an altered release is reachable. Deleting the last chain entries is seen
through SQLite's ``sqlite_sequence`` (the chain's ``AUTOINCREMENT`` counter).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from dpstudio.export.manifest import MANIFEST_KIND as _MANIFEST_KIND

__all__ = ["DATASET_FIELDS", "RELEASE_FIELDS", "Audit", "acknowledge", "audit",
           "record_dataset", "record_release", "recharge_randomized_response", "seal"]

GENESIS = "0" * 64
SEAL_KINDS = ("create", "migrate", "acknowledge")
DATASET_FIELDS = ("id", "fingerprint", "content_hash", "path", "budget_epsilon",
                  "budget_delta", "relation", "accountant", "budget_of", "registered_at")
RELEASE_FIELDS = ("id", "uid", "dataset_id", "created_at", "query", "column_name",
                  "mechanism", "trust_model", "epsilon", "delta", "accountant", "out_dir",
                  # What the tight accountants read: a forged noise scale would lower them.
                  "loss")
_LABELS = {"epsilon": "ε", "delta": "δ", "budget_epsilon": "budget ε",
           "budget_delta": "budget δ", "dataset_id": "dataset", "column_name": "column",
           "budget_of": "shared budget", "content_hash": "content hash",
           "fingerprint": "SHA-256"}
_MANIFEST_MAX_BYTES = 16 << 20
#: Charge of a release whose ε (or δ) cannot be read anywhere and whose dataset is unknown.
_UNKNOWN_CHARGE = Decimal(10) ** 9


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)


def _digest(prev: str, kind: str, ref: Any, content: str) -> str:
    text = "\n".join((str(prev), str(kind), "" if ref is None else str(ref), str(content)))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def amount(value: Any) -> Decimal | None:
    """A stored ε/δ/budget as an exact Decimal; None unless a finite number ≥ 0."""
    if value is None or isinstance(value, bool | bytes):
        return None
    try:
        d = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() and d >= 0 else None


# ------------------------------------------------------------------------------ writing


def append(conn: sqlite3.Connection, kind: str, ref: int | None, content: dict) -> None:
    """Append one entry (inside the caller's transaction)."""
    row = conn.execute("SELECT hash FROM ledger_chain ORDER BY seq DESC LIMIT 1").fetchone()
    prev = row[0] if row is not None else GENESIS
    text = _canonical(content)
    digest = _digest(prev, kind, ref, text)
    conn.execute("INSERT INTO ledger_chain (kind, ref, content, prev, hash) VALUES "
                 "(?, ?, ?, ?, ?)", (kind, ref, text, prev, digest))


def _select(conn: sqlite3.Connection, table: str, fields: tuple[str, ...]) -> str:
    """The SELECT list of ``fields``, with NULL for a column an older schema lacks (a
    migration seals the ledger before later migrations add their columns)."""
    have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})").fetchall()}
    return ", ".join(name if name in have else f"NULL AS {name}" for name in fields)


def _row(conn: sqlite3.Connection, table: str, fields: tuple[str, ...], ref: int
         ) -> dict | None:
    row = conn.execute(f"SELECT {_select(conn, table, fields)} FROM {table} WHERE id = ?",
                       (ref,)).fetchone()
    return None if row is None else dict(zip(fields, row, strict=True))


def record_dataset(conn: sqlite3.Connection, dataset_id: int) -> None:
    """Chain a dataset's current identity and budget (after inserting or changing it)."""
    append(conn, "dataset", dataset_id, _row(conn, "datasets", DATASET_FIELDS, dataset_id))


def record_release(conn: sqlite3.Connection, release_id: int) -> None:
    """Chain a release's identity and charge (after inserting it, before committing)."""
    append(conn, "release", release_id, _row(conn, "releases", RELEASE_FIELDS, release_id))


def seal(conn: sqlite3.Connection, kind: str, info: dict) -> None:
    """A seal entry, then every dataset and release as it is now."""
    append(conn, kind, None, {"time": _now()} | info)
    for (ref,) in conn.execute("SELECT id FROM datasets ORDER BY id").fetchall():
        record_dataset(conn, ref)
    for (ref,) in conn.execute("SELECT id FROM releases ORDER BY id").fetchall():
        record_release(conn, ref)


def recharge_randomized_response(conn: sqlite3.Connection) -> list[dict]:
    """Version 1 charged a randomized response release with a chosen ``p`` at the spec's ε;
    the randomizer is ln(p/(1−p))-DP. Charge the larger of the two (a migration step)."""
    from dpstudio.engine.errors import EngineError
    from dpstudio.engine.local.frequency import RandomizedResponse

    changed = []
    rows = conn.execute("SELECT id, epsilon, spec_json, note FROM releases WHERE mechanism = "
                        "'rr'").fetchall()
    for ref, eps, spec_json, note in rows:
        try:
            p = (json.loads(spec_json).get("params") or {}).get("p")
            true_eps = Decimal(repr(RandomizedResponse(1.0, p).epsilon)) if p else None
        except (ValueError, TypeError, AttributeError, EngineError):
            continue
        recorded = amount(eps)
        if true_eps is None or (recorded is not None and recorded >= true_eps):
            continue
        why = (f"re-charged at ε = {true_eps} (randomized response with p = {p}) when the "
               f"project was upgraded; it was charged ε = {eps}")
        conn.execute("UPDATE releases SET epsilon = ?, note = ? WHERE id = ?",
                     (str(true_eps), f"{note}; {why}" if note else why, ref))
        changed.append({"release": ref, "from": str(eps), "to": str(true_eps)})
    return changed


# ------------------------------------------------------------------------------ checking


@dataclass
class Audit:
    """What :func:`audit` found: problems (one line each) and the pessimistic amounts.

    ``release_charge``: release id → (ε, δ) to charge (present and deleted releases);
    ``release_dataset``: release id → the dataset ids it is charged to; ``budgets``:
    dataset id → total (ε, δ).
    """

    problems: list[str] = field(default_factory=list)
    release_charge: dict[int, tuple[Decimal, Decimal]] = field(default_factory=dict)
    release_dataset: dict[int, set[int]] = field(default_factory=dict)
    budgets: dict[int, tuple[Decimal, Decimal]] = field(default_factory=dict)
    expected_datasets: dict[int, dict] = field(default_factory=dict)
    expected_releases: dict[int, dict] = field(default_factory=dict)
    datasets: dict[int, dict] = field(default_factory=dict)
    releases: dict[int, dict] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def charges(self, dataset_ids: set[int]) -> list[tuple[Decimal, Decimal]]:
        """The (ε, δ) of every release charged to any of these datasets."""
        return [self.release_charge[r] for r, ds in sorted(self.release_dataset.items())
                if ds & dataset_ids]


def _entries(conn: sqlite3.Connection) -> list[tuple]:
    return conn.execute("SELECT seq, kind, ref, content, prev, hash FROM ledger_chain ORDER BY "
                        "seq").fetchall()


def _check_links(conn: sqlite3.Connection, entries: list[tuple], problems: list[str]
                 ) -> int:
    """Check the chain from its last seal on; the index of that seal."""
    if not entries:
        problems.append("the ledger's hash chain was deleted")
        return 0
    start = max((i for i, e in enumerate(entries) if e[1] in SEAL_KINDS), default=0)
    if start == 0 and entries[0][4] != GENESIS:
        problems.append(f"ledger chain entries before #{entries[0][0]} were removed")
    for i in range(start, len(entries)):
        seq, kind, ref, content, prev, digest = entries[i]
        if _digest(prev, kind, ref, content) != digest:
            what = f"{kind} #{ref}" if ref is not None else kind
            problems.append(f"ledger chain entry #{seq} ({what}) was altered")
        if i > 0:
            before = entries[i - 1]
            # What came before the seal was sealed with it: only the link is checked there.
            if seq != before[0] + 1 and i > start:
                gap = (f"#{before[0] + 1}" if seq == before[0] + 2 else
                       f"#{before[0] + 1}–#{seq - 1}")
                problems.append(f"ledger chain entries {gap} were removed")
            elif prev != before[5]:
                problems.append(f"ledger chain entry #{seq} does not follow entry #{before[0]}")
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'ledger_chain'").fetchone()
    if row is not None and int(row[0]) > entries[-1][0]:
        problems.append(f"the last ledger chain entries (after #{entries[-1][0]}) were removed")
    return start


def _orphan_manifests(conn: sqlite3.Connection, known: dict[int, dict], folders: set[str]
                      ) -> dict[int, dict]:
    """Releases whose manifest is in one of the project's output folders but which are
    neither in the ledger nor in its chain (both deleted): their chained fields, read back
    from the manifest.

    Looked for on every audit, whatever the chain says: deleting the last release with its
    chain entry and winding ``sqlite_sequence`` back leaves a chain that checks out, and
    only the manifest still says the release was made. Manifests are written after their
    release is committed, so one without a ledger row was never an interrupted release.
    A known release's own manifest (by its recorded file name) is not read again."""
    datasets = {r[0]: r[1] for r in conn.execute("SELECT fingerprint, id FROM datasets")}
    for fp, ref in conn.execute("SELECT spec_json, dataset_id FROM releases").fetchall():
        try:
            datasets.setdefault(json.loads(fp).get("fingerprint"), ref)
        except (TypeError, ValueError, AttributeError):
            pass
    uids = {str(r.get("uid")) for r in known.values()}
    listed = {(str(out_dir), name) for out_dir, name in conn.execute(
        "SELECT r.out_dir, f.name FROM release_files f JOIN releases r ON r.id = f.release_id "
        "WHERE f.role = 'manifest'").fetchall()}
    found: dict[int, dict] = {}
    for folder in sorted(folders):
        try:  # one listing per folder
            paths = sorted(Path(folder).glob("r*.manifest.json"))
        except OSError:
            continue
        for path in paths:
            if (folder, path.name) in listed:
                continue
            try:
                if path.stat().st_size > _MANIFEST_MAX_BYTES:
                    continue
                doc = json.loads(path.read_text(encoding="utf-8"))
                release, privacy = doc["release"], doc["privacy"]
                ref, uid = int(release["id"]), str(release["uid"])
                dataset = datasets.get(doc["dataset"]["fingerprint"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if (doc.get("kind") != _MANIFEST_KIND or dataset is None or uid in uids
                    or ref in known or ref in found):
                continue
            query = doc.get("query") or {}
            found[ref] = {
                "id": ref, "uid": uid, "dataset_id": dataset,
                "created_at": release.get("created_at"), "query": query.get("statistic"),
                "column_name": query.get("column"),
                "mechanism": (doc.get("mechanism") or {}).get("name"),
                "trust_model": doc.get("trust_model", "central"),
                "epsilon": privacy.get("epsilon_exact", privacy.get("epsilon")),
                "delta": privacy.get("delta_exact", privacy.get("delta")),
                "accountant": privacy.get("accountant", "basic"), "out_dir": folder}
    return found


def _expected(entries: list[tuple], start: int) -> tuple[dict[int, dict], dict[int, dict]]:
    datasets: dict[int, dict] = {}
    releases: dict[int, dict] = {}
    for _, kind, ref, content, _, _ in entries[start:]:
        if kind not in ("dataset", "release") or ref is None:
            continue
        try:
            value = json.loads(content)
        except ValueError:
            continue
        if isinstance(value, dict):
            (datasets if kind == "dataset" else releases)[int(ref)] = value
    return datasets, releases


def _show(value: Any) -> str:
    text = "none" if value is None else str(value)
    return repr(text) if amount(text) is None and value is not None else text


def _row_problems(what: str, expected: dict | None, row: dict | None,
                  fields: tuple[str, ...], amounts: tuple[str, ...]) -> list[str]:
    """What changed in one row against its chain entry: deleted, added by hand, fields
    changed, and amounts that are not numbers."""
    if row is None:
        return [f"{what} was deleted"]
    out = ([f"{what} was added outside DP Studio"] if expected is None
           else _differences(what, expected, row, fields))
    out += [f"{what}: {_LABELS[name]} {_show(row[name])} is not a number"
            for name in amounts if amount(row[name]) is None]
    return out


def _differences(what: str, expected: dict, actual: dict, fields: tuple[str, ...]
                 ) -> list[str]:
    out = []
    for name in fields:
        old, new = expected.get(name), actual.get(name)
        if _canonical(old) == _canonical(new):
            continue
        label = _LABELS.get(name, name)
        a, b = amount(old), amount(new)
        if a is not None and b is not None and name in ("epsilon", "delta", "budget_epsilon",
                                                        "budget_delta"):
            verb = "lowered" if b < a else "raised"
            out.append(f"{what}: {label} {verb} from {old} to {new}")
        else:
            out.append(f"{what}: {label} changed from {_show(old)} to {_show(new)}")
    return out


def _read_manifest(path: Path, uid: str) -> tuple[Decimal | None, Decimal | None] | None:
    """(ε, δ) a release's manifest records, if the file is there and is that release's."""
    try:
        if not path.is_file() or path.stat().st_size > _MANIFEST_MAX_BYTES:
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
        if (not isinstance(doc, dict) or doc.get("kind") != _MANIFEST_KIND
                or (doc.get("release") or {}).get("uid") != uid):
            return None
        privacy = doc.get("privacy") or {}
        return (amount(privacy.get("epsilon_exact", privacy.get("epsilon"))),
                amount(privacy.get("delta_exact", privacy.get("delta"))))
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def _manifest_of(conn: sqlite3.Connection, release: dict, manifests: bool
                 ) -> tuple[tuple[Decimal | None, Decimal | None], str] | None:
    """The manifest of a release (by its recorded file, else by its name pattern)."""
    if not manifests or not release.get("out_dir") or not release.get("uid"):
        return None
    out = Path(str(release["out_dir"]))
    names = [r[0] for r in conn.execute(
        "SELECT name FROM release_files WHERE release_id = ? AND role = 'manifest'",
        (release.get("id"),)).fetchall()]
    if not names:
        try:
            names = sorted(p.name for p in out.glob(f"r{int(release['id']):04d}-*.manifest.json"))
        except (OSError, ValueError, TypeError):
            names = []
    for name in names:
        found = _read_manifest(out / name, str(release["uid"]))
        if found is not None:
            return found, name
    return None


def _largest(values: list[Decimal | None]) -> Decimal | None:
    valid = [v for v in values if v is not None]
    return max(valid) if valid else None


def _smallest(values: list[Decimal | None]) -> Decimal | None:
    valid = [v for v in values if v is not None]
    return min(valid) if valid else None


def audit(conn: sqlite3.Connection, manifests: bool = True) -> Audit:
    """Check the ledger against its chain and the manifests it can reach (see the module
    docstring); never raises on what it finds."""
    out = Audit()
    entries = _entries(conn)
    start = _check_links(conn, entries, out.problems)
    out.expected_datasets, out.expected_releases = _expected(entries, start)
    out.datasets = {r[0]: dict(zip(DATASET_FIELDS, r, strict=True)) for r in conn.execute(
        f"SELECT {_select(conn, 'datasets', DATASET_FIELDS)} FROM datasets ORDER BY id"
    ).fetchall()}
    out.releases = {r[0]: dict(zip(RELEASE_FIELDS, r, strict=True)) for r in conn.execute(
        f"SELECT {_select(conn, 'releases', RELEASE_FIELDS)} FROM releases ORDER BY id"
    ).fetchall()}
    # A release deleted with its chain entries: its manifest may still say so.
    known = out.expected_releases | out.releases
    folders = {str(r["out_dir"]) for r in known.values() if r.get("out_dir")}
    out.expected_releases |= _orphan_manifests(conn, known, folders)
    names = {i: Path(str(d.get("path") or "")).name
             for i, d in (out.expected_datasets | out.datasets).items()}

    def dataset_what(ref: int) -> str:
        return f"dataset #{ref} ({names[ref]})" if names.get(ref) else f"dataset #{ref}"

    for ref in sorted(set(out.expected_datasets) | set(out.datasets)):
        exp, row = out.expected_datasets.get(ref), out.datasets.get(ref)
        what = dataset_what(ref)
        out.problems += _row_problems(what, exp, row, DATASET_FIELDS,
                                      ("budget_epsilon", "budget_delta"))
        sources = [d for d in (exp, row) if d is not None]
        e = _smallest([amount(d.get("budget_epsilon")) for d in sources])
        d_ = _smallest([amount(d.get("budget_delta")) for d in sources])
        out.budgets[ref] = (Decimal(0) if e is None else e, Decimal(0) if d_ is None else d_)

    for ref in sorted(set(out.expected_releases) | set(out.releases)):
        exp, row = out.expected_releases.get(ref), out.releases.get(ref)
        what = f"release #{ref}"
        out.problems += _row_problems(what, exp, row, RELEASE_FIELDS, ("epsilon", "delta"))
        sources = [d for d in (exp, row) if d is not None]
        found = _manifest_of(conn, row or exp, manifests)
        m_eps = m_delta = None
        if found is not None:
            (m_eps, m_delta), manifest_name = found
            for label, mine, theirs in (("ε", row and amount(row["epsilon"]), m_eps),
                                        ("δ", row and amount(row["delta"]), m_delta)):
                if row is not None and mine is not None and theirs is not None and theirs > mine:
                    out.problems.append(f"{what}: {label} is {mine} in the ledger but {theirs} "
                                        f"in its manifest {manifest_name}")
        charged_to: set[int] = set()
        for d in sources:
            try:
                charged_to.add(int(d.get("dataset_id")))
            except (TypeError, ValueError):
                pass
        eps = _largest([amount(d.get("epsilon")) for d in sources] + [m_eps])
        delta = _largest([amount(d.get("delta")) for d in sources] + [m_delta])
        if eps is None or delta is None:  # nothing readable: it uses up its datasets' budgets
            worst = max((out.budgets.get(i, (_UNKNOWN_CHARGE,) * 2) for i in charged_to),
                        default=(_UNKNOWN_CHARGE, _UNKNOWN_CHARGE))
            eps = worst[0] if eps is None else eps
            delta = worst[1] if delta is None else delta
        out.release_charge[ref] = (eps, delta)
        out.release_dataset[ref] = charged_to
    return out


# ------------------------------------------------------------------------- acknowledging


def acknowledge(conn: sqlite3.Connection, found: Audit, note: str = "") -> list[str]:
    """Adopt the pessimistic values of ``found`` (a fresh :func:`audit` of this connection,
    inside the caller's transaction) and seal the ledger; the problems acknowledged."""
    when = _now()
    for ref, exp in found.expected_datasets.items():
        row = found.datasets.get(ref)
        budget = found.budgets[ref]
        values = {k: exp.get(k) for k in DATASET_FIELDS} | {
            "budget_epsilon": str(budget[0]), "budget_delta": str(budget[1])}
        if row is None:
            values |= {"id": ref}
            conn.execute(
                "INSERT INTO datasets (id, fingerprint, content_hash, path, name, schema_json, "
                "budget_epsilon, budget_delta, relation, accountant, budget_of, registered_at) "
                "VALUES (?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?)",
                (ref, values["fingerprint"], values["content_hash"], values["path"],
                 Path(str(values["path"] or "")).name or f"dataset-{ref}",
                 values["budget_epsilon"], values["budget_delta"], values["relation"],
                 values["accountant"], values["budget_of"], values["registered_at"]))
        else:
            sets = [k for k in DATASET_FIELDS if k != "id"]
            conn.execute(f"UPDATE datasets SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                         [values[k] for k in sets] + [ref])
    for ref in found.datasets:
        if ref not in found.expected_datasets:  # added by hand: keep it, with a readable budget
            budget = found.budgets[ref]
            conn.execute("UPDATE datasets SET budget_epsilon = ?, budget_delta = ? WHERE id = ?",
                         (str(budget[0]), str(budget[1]), ref))
    restored = (f"restored on {when}: it had been deleted outside DP Studio (its charge stays; "
                "its files are not listed)")
    for ref, exp in found.expected_releases.items():
        charge = found.release_charge[ref]
        values = {k: exp.get(k) for k in RELEASE_FIELDS} | {
            "epsilon": str(charge[0]), "delta": str(charge[1])}
        if ref not in found.releases:
            conn.execute(
                "INSERT INTO releases (id, uid, dataset_id, status, created_at, finished_at, "
                "query, column_name, mechanism, trust_model, epsilon, delta, accountant, "
                "spec_json, noise_json, out_dir, note) VALUES (?, ?, ?, 'aborted', ?, ?, ?, ?, "
                "?, ?, ?, ?, ?, '{}', '{}', ?, ?)",
                (ref, values["uid"], values["dataset_id"], values["created_at"], when,
                 values["query"], values["column_name"], values["mechanism"],
                 values["trust_model"], values["epsilon"], values["delta"],
                 values["accountant"], values["out_dir"], restored))
        else:
            sets = [k for k in RELEASE_FIELDS if k != "id"]
            conn.execute(f"UPDATE releases SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                         [values[k] for k in sets] + [ref])
    for ref in found.releases:
        if ref not in found.expected_releases:  # added by hand: it stays charged
            charge = found.release_charge[ref]
            conn.execute("UPDATE releases SET epsilon = ?, delta = ? WHERE id = ?",
                         (str(charge[0]), str(charge[1]), ref))
    seal(conn, "acknowledge", {"problems": list(found.problems), "note": note})
    return list(found.problems)
