"""Data layer: loading tables, declared schemas, column extraction, fingerprints.

pandas is allowed here, Qt never is.

The names below are imported on first use (PEP 562): importing one light submodule
(``dpstudio.data.errors``, which every command's error handling needs) must not import
pandas and pyarrow, which cost most of a command's start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name → the submodule that defines it.
_EXPORTS = {
    "category_column": "columns",
    "column_values": "columns",
    "normalize_yes_no": "columns",
    "numeric_column": "columns",
    "yes_no_column": "columns",
    "Dataset": "dataset",
    "open_dataset": "dataset",
    "DataError": "errors",
    "sha256_file": "fingerprint",
    "FILE_DIALOG_FILTER": "loading",
    "SUPPORTED_EXTENSIONS": "loading",
    "load_table": "loading",
    "SAMPLES": "samples",
    "sample_path": "samples",
    "SCHEMA_VERSION": "schema",
    "ColumnSpec": "schema",
    "ColumnType": "schema",
    "Schema": "schema",
    "complete_schema": "schema",
    "guess_types": "schema",
    "load_schema": "schema",
    "save_schema": "schema",
    "schema_for": "schema",
    "sidecar_path": "schema",
}

__all__ = [
    "FILE_DIALOG_FILTER",
    "SAMPLES",
    "SCHEMA_VERSION",
    "SUPPORTED_EXTENSIONS",
    "ColumnSpec",
    "ColumnType",
    "DataError",
    "Dataset",
    "Schema",
    "category_column",
    "column_values",
    "complete_schema",
    "guess_types",
    "load_schema",
    "load_table",
    "normalize_yes_no",
    "numeric_column",
    "open_dataset",
    "sample_path",
    "save_schema",
    "schema_for",
    "sha256_file",
    "sidecar_path",
    "yes_no_column",
]


def __getattr__(name: str) -> Any:
    """Import the submodule defining ``name`` when it is first asked for."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and editors: the names, without the imports at run time
    from dpstudio.data.columns import (
        category_column,
        column_values,
        normalize_yes_no,
        numeric_column,
        yes_no_column,
    )
    from dpstudio.data.dataset import Dataset, open_dataset
    from dpstudio.data.errors import DataError
    from dpstudio.data.fingerprint import sha256_file
    from dpstudio.data.loading import FILE_DIALOG_FILTER, SUPPORTED_EXTENSIONS, load_table
    from dpstudio.data.samples import SAMPLES, sample_path
    from dpstudio.data.schema import (
        SCHEMA_VERSION,
        ColumnSpec,
        ColumnType,
        Schema,
        complete_schema,
        guess_types,
        load_schema,
        save_schema,
        schema_for,
        sidecar_path,
    )
