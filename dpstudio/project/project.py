"""A DP Studio project: one SQLite file holding datasets, budgets and the release ledger.

:class:`Project` is assembled here from what it holds, one module each:

- :mod:`.store`: the file (create, open, migrate), settings, datasets, ledger queries,
  budgets and the ledger as JSON;
- :mod:`.identity`: which registered dataset a file is, and registering one;
- :mod:`.recovery`: the ledger's audit against its hash chain, acknowledging edits, and
  recovering interrupted releases;
- :mod:`.release`: the release transaction (its design is that module's docstring);
- :mod:`.records`: the records all of these hand out.

Every name this module exported before the split is still importable from it.
"""

from __future__ import annotations

from dpstudio.project.identity import DatasetIdentity
from dpstudio.project.records import (
    BudgetState,
    CumulativePoint,
    DatasetRecord,
    FileRecord,
    RecoveryReport,
    ReleaseRecord,
)
from dpstudio.project.recovery import Integrity, tamper_message
from dpstudio.project.release import ReleaseTransaction
from dpstudio.project.store import PROJECT_SUFFIX, ProjectStore

__all__ = [
    "PROJECT_SUFFIX",
    "BudgetState",
    "CumulativePoint",
    "DatasetRecord",
    "FileRecord",
    "Project",
    "RecoveryReport",
    "ReleaseRecord",
    "tamper_message",
]


class Project(ReleaseTransaction, Integrity, DatasetIdentity, ProjectStore):
    """An open project file. Use :meth:`create` or :meth:`open`; close it (or use ``with``).

    Methods are safe to call from several threads (one connection, serialized); several
    processes may use one project at once (releases are serialized by the project lock).
    """
