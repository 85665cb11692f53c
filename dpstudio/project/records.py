"""What a project hands out: dataset, release and file records, budgets, recovery reports.

Plain frozen data read off the ledger by :mod:`dpstudio.project.store`; their ``to_dict``
forms are the JSON of ``dpstudio ledger --json`` and of the release manifests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

__all__ = [
    "BudgetState",
    "CumulativePoint",
    "DatasetRecord",
    "FileRecord",
    "RecoveryReport",
    "ReleaseRecord",
    "dec_text",
    "exact_str",
]


def dec_text(d: Decimal) -> str:
    """A short human form of an exact amount (full precision, no exponent for normal sizes).

    Parameters
    ----------
    d : decimal.Decimal
        The amount.

    Returns
    -------
    str
        ``"0"``, all its digits when they fit in 14 characters, else 6 significant ones.
    """
    if d == 0:
        return "0"
    text = format(d.normalize(), "f")
    return text if len(text) <= 14 else f"{float(d):.6g}"


def exact_str(d: Decimal) -> str:
    """An exact amount in plain decimal notation ("0.5", "0.00001"), all digits kept.

    Parameters
    ----------
    d : decimal.Decimal
        The amount.

    Returns
    -------
    str
        Its digits, without exponent or trailing zeros.
    """
    return "0" if d == 0 else format(d.normalize(), "f")


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
    #: The privacy-loss description stored with the release (its JSON form), or None for
    #: a release known only by its (ε, δ) (see :mod:`dpstudio.project.ledger_loss`).
    loss: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "uid": self.uid, "time": self.created_at,
            "finished": self.finished_at, "status": self.status, "query": self.query,
            "column": self.column, "mechanism": self.mechanism,
            "trust_model": self.trust_model, "epsilon": float(self.epsilon),
            "delta": float(self.delta), "epsilon_exact": exact_str(self.epsilon),
            "delta_exact": exact_str(self.delta), "accountant": self.accountant,
            "out_dir": str(self.out_dir), "files": [f.to_dict() for f in self.files],
            "spec": self.spec, "noise": self.noise, "result": self.result, "note": self.note,
            "loss": self.loss,
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
        return (f"ε {dec_text(max(self.remaining_epsilon, Decimal(0)))} of "
                f"{dec_text(self.total_epsilon)} left, δ "
                f"{dec_text(max(self.remaining_delta, Decimal(0)))} of "
                f"{dec_text(self.total_delta)} left")

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget_epsilon": float(self.total_epsilon), "budget_delta": float(self.total_delta),
            "spent_epsilon": float(self.spent_epsilon), "spent_delta": float(self.spent_delta),
            "remaining_epsilon": float(self.remaining_epsilon),
            "remaining_delta": float(self.remaining_delta),
            "exact": {k: exact_str(v) for k, v in (
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
