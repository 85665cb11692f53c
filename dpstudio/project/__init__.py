"""Projects: one SQLite file with datasets, their privacy budgets and the release ledger.

    from dpstudio.project import Project, ReleaseSpec, load_spec, save_spec

    with Project.create("study.dpstudio", epsilon=3, delta=1e-5) as project:
        record = project.release(load_spec("age.toml"), "out/")
        print(record.status, [f.name for f in record.files], project.budget(record.dataset_id))

See :mod:`dpstudio.project.release` for the transaction design and crash recovery.
"""

from dpstudio.project._db import SCHEMA_VERSION
from dpstudio.project.accountant import ACCOUNTANTS, get_accountant
from dpstudio.project.errors import (
    BudgetExceededError,
    DatasetChangedError,
    DatasetVersionError,
    LedgerTamperedError,
    NotAProjectError,
    ProjectBusyError,
    ProjectError,
    SpecError,
)
from dpstudio.project.project import (
    PROJECT_SUFFIX,
    BudgetState,
    CumulativePoint,
    DatasetRecord,
    FileRecord,
    Project,
    RecoveryReport,
    ReleaseRecord,
)
from dpstudio.project.spec import SPEC_VERSION, ReleaseSpec, load_spec, parse_spec, save_spec

__all__ = [
    "ACCOUNTANTS",
    "PROJECT_SUFFIX",
    "SCHEMA_VERSION",
    "SPEC_VERSION",
    "BudgetExceededError",
    "BudgetState",
    "CumulativePoint",
    "DatasetChangedError",
    "DatasetVersionError",
    "DatasetRecord",
    "FileRecord",
    "LedgerTamperedError",
    "NotAProjectError",
    "Project",
    "ProjectBusyError",
    "ProjectError",
    "RecoveryReport",
    "ReleaseRecord",
    "ReleaseSpec",
    "SpecError",
    "get_accountant",
    "load_spec",
    "parse_spec",
    "save_spec",
]
