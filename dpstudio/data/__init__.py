"""Data layer: loading tables, declared schemas, column extraction, fingerprints.

pandas is allowed here, Qt never is.
"""

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
