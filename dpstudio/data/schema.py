"""Declared column types, bounds and categories, and their JSON sidecar files.

In differential privacy the bounds of a numeric column and the categories of a
categorical one are *public* facts the analyst declares from domain knowledge. Reading
them off the data would leak it. So this module guesses column **types** only
(:func:`guess_types`); bounds and categories come from the user or a sidecar file
``<dataset>.schema.json`` stored next to the data (:func:`sidecar_path`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dpstudio.data.atomic import write_atomic
from dpstudio.data.errors import DataError

#: The sidecar format this version writes when it needs to: version 2 added value labels,
#: version 3 identifier columns (with their declared ``max_rows`` per person). A schema
#: without either is still written as version 1, which every DP Studio reads.
SCHEMA_VERSION = 3
#: The sidecar versions this DP Studio reads.
READABLE_VERSIONS = (1, 2, 3)
SIDECAR_SUFFIX = ".schema.json"

#: Spellings read as yes / no (compared lower-case, stripped).
YES_SPELLINGS = frozenset({"yes", "y", "true", "t", "1", "1.0"})
NO_SPELLINGS = frozenset({"no", "n", "false", "f", "0", "0.0"})
#: The categories of a column of 0/1 codes: shown as they are, never relabelled yes/no.
ZERO_ONE = ("0", "1")

#: A text column with at most this many distinct values is guessed categorical.
_MAX_GUESSED_CATEGORIES = 50
#: Rows looked at first when guessing the type of a long text column.
_SAMPLE_ROWS = 5_000


class ColumnType(StrEnum):
    NUMERIC = "numeric"
    CATEGORICAL = "categorical"
    BOOLEAN = "boolean"
    TEXT = "text"
    #: Identifies a person (rows sharing it are one person's): makes releases user-level.
    IDENTIFIER = "identifier"

    @property
    def label(self) -> str:
        """The word shown to users."""
        return "yes/no" if self is ColumnType.BOOLEAN else self.value

    @classmethod
    def parse(cls, value: ColumnType | str, column: str = "") -> ColumnType:
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            where = f"column '{column}': " if column else ""
            allowed = ", ".join(t.value for t in cls)
            raise DataError(f"{where}unknown type '{value}' (expected {allowed})") from None


class Source(StrEnum):
    """Where a column's declaration comes from, as the application shows it."""

    GUESSED = "guessed"
    DECLARED = "declared"
    SAVED = "saved"

    @property
    def label(self) -> str:
        """The words shown to users: "guessed", "declared by you, unsaved", "saved in the
        schema file"."""
        return {"guessed": "guessed", "declared": "declared by you, unsaved",
                "saved": "saved in the schema file"}[self.value]


@dataclass(frozen=True)
class ColumnSpec:
    """One column's declared type and public domain.

    ``lower``/``upper`` apply to numeric columns (both or neither; ``None`` means not yet
    declared). ``categories`` apply to categorical columns; yes/no columns always have
    the categories ``("yes", "no")``. ``labels`` name a categorical column's codes for
    reading (``{"0": "no", "1": "yes"}``, given as a mapping or pairs, kept as pairs in
    the categories' order): the data and the releases keep the codes.
    """

    name: str
    type: ColumnType
    lower: float | None = None
    upper: float | None = None
    categories: tuple[str, ...] = ()
    description: str = ""
    labels: tuple[tuple[str, str], ...] = ()
    #: An identifier column's declared maximum of rows per person (public, never read off
    #: the data); None for other columns or not yet declared.
    max_rows: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise DataError("a column in the schema has no name")
        where = f"column '{self.name}'"
        kind = ColumnType.parse(self.type, self.name)
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "description", str(self.description or "").strip())

        lower, upper = self.lower, self.upper
        if lower is not None or upper is not None:
            if kind is not ColumnType.NUMERIC:
                raise DataError(f"{where}: bounds only apply to numeric columns, not {kind.label}")
            if lower is None or upper is None:
                raise DataError(f"{where}: declare both a lower and an upper bound")
            lower, upper = _bound(lower, where, "lower"), _bound(upper, where, "upper")
            if lower > upper:
                raise DataError(f"{where}: reversed bounds (lower {lower:g} > upper {upper:g})")
            if lower == upper:
                raise DataError(f"{where}: lower and upper bounds are both {lower:g}")
            object.__setattr__(self, "lower", lower)
            object.__setattr__(self, "upper", upper)

        categories = self.categories
        if isinstance(categories, str):
            raise DataError(f"{where}: categories must be a list of names, not one string")
        categories = tuple(str(c).strip() for c in (categories or ()))
        if kind is ColumnType.BOOLEAN:
            if categories and {c.lower() for c in categories} != {"yes", "no"}:
                raise DataError(f"{where}: a yes/no column has exactly the categories yes and no")
            categories = ("yes", "no")
        elif categories and kind is not ColumnType.CATEGORICAL:
            raise DataError(f"{where}: categories only apply to categorical columns")
        if any(not c for c in categories):
            raise DataError(f"{where}: a category name is empty")
        if len(set(categories)) != len(categories):
            duplicate = next(c for c in categories if categories.count(c) > 1)
            raise DataError(f"{where}: category '{duplicate}' is listed twice")
        object.__setattr__(self, "categories", categories)
        object.__setattr__(self, "labels", _checked_labels(self.labels, kind, categories, where))
        object.__setattr__(self, "max_rows", _checked_max_rows(self.max_rows, kind, where))

    def label_of(self, category: str) -> str:
        """The label declared for ``category``, else the category itself."""
        return dict(self.labels).get(category, category)

    @property
    def bounds(self) -> tuple[float, float] | None:
        if self.lower is None or self.upper is None:
            return None
        return (self.lower, self.upper)

    @property
    def is_declared(self) -> bool:
        """Whether the public domain the mechanisms need is declared."""
        if self.type is ColumnType.NUMERIC:
            return self.bounds is not None
        if self.type is ColumnType.CATEGORICAL:
            return bool(self.categories)
        if self.type is ColumnType.IDENTIFIER:
            return self.max_rows is not None
        return self.type is ColumnType.BOOLEAN

    def domain_text(self, *, compact: bool = False) -> str:
        """Human description of the declared domain, or ``"undeclared"``.

        ``compact`` shortens a list of categories to a count ("6 categories").
        """
        if self.type is ColumnType.TEXT:
            return "—"
        if self.type is ColumnType.IDENTIFIER and self.max_rows is not None:
            return f"up to {self.max_rows} row{'s' if self.max_rows != 1 else ''} per person"
        if not self.is_declared:
            return "undeclared"
        if self.type is ColumnType.NUMERIC:
            return f"{_fmt(self.lower)} – {_fmt(self.upper)}"
        if compact and self.type is ColumnType.CATEGORICAL:
            return f"{len(self.categories)} categor{'y' if len(self.categories) == 1 else 'ies'}"
        return ", ".join(self.categories)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type.value}
        if self.bounds is not None:
            out["lower"], out["upper"] = _json_number(self.lower), _json_number(self.upper)
        if self.type is ColumnType.CATEGORICAL and self.categories:
            out["categories"] = list(self.categories)
        if self.labels:
            out["labels"] = dict(self.labels)
        if self.max_rows is not None:
            out["max_rows"] = self.max_rows
        if self.description:
            out["description"] = self.description
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], version: int = SCHEMA_VERSION) -> ColumnSpec:
        """A column entry of a sidecar of format ``version`` (labels came in version 2)."""
        if not isinstance(data, Mapping):
            raise DataError(f"a column entry in the schema is not an object: {data!r:.40}")
        fields = {"name", "type", "lower", "upper", "categories", "description"}
        if version >= 2:
            fields.add("labels")
        if version >= 3:
            fields.add("max_rows")
        unknown = set(data) - fields
        label = data.get("name", "?")
        if unknown:
            raise DataError(f"column '{label}': unknown schema field '{sorted(unknown)[0]}'")
        if "type" not in data:
            raise DataError(f"column '{label}': the schema gives no type")
        categories = data.get("categories") or ()
        if not isinstance(categories, list | tuple):
            raise DataError(f"column '{label}': categories must be a list")
        return cls(
            name=data.get("name", ""),
            type=data["type"],
            lower=data.get("lower"),
            upper=data.get("upper"),
            categories=tuple(categories),
            description=data.get("description", ""),
            labels=data.get("labels") or (),
            max_rows=data.get("max_rows"),
        )


def _checked_max_rows(max_rows: Any, kind: ColumnType, where: str) -> int | None:
    """An identifier's declared maximum of rows per person (a whole number ≥ 1), or None."""
    if max_rows is None:
        return None
    if kind is not ColumnType.IDENTIFIER:
        raise DataError(f"{where}: max_rows only applies to an identifier column")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int | float) \
            or not float(max_rows).is_integer() or not 1 <= max_rows <= 1_000_000:
        raise DataError(f"{where}: max_rows must be a whole number of rows between 1 and "
                        f"1,000,000, not {max_rows!r}")
    return int(max_rows)


def _checked_labels(labels: Any, kind: ColumnType, categories: tuple[str, ...],
                    where: str) -> tuple[tuple[str, str], ...]:
    """Value labels as ``(category, label)`` pairs in the categories' order, or a
    :class:`DataError` naming what is wrong."""
    if isinstance(labels, Mapping):
        pairs = list(labels.items())
    elif isinstance(labels, list | tuple) and all(
            isinstance(p, list | tuple) and len(p) == 2 for p in labels):
        pairs = [tuple(p) for p in labels]
    else:
        raise DataError(f"{where}: value labels must map each category to its label")
    if not pairs:
        return ()
    if kind is not ColumnType.CATEGORICAL:
        raise DataError(f"{where}: value labels only apply to categorical columns")
    out: dict[str, str] = {}
    for code, label in pairs:
        code, label = str(code).strip(), str(label).strip()
        if code not in categories:
            raise DataError(f"{where}: value label for '{code}', which is not a declared "
                            "category")
        if code in out:
            raise DataError(f"{where}: category '{code}' has two labels")
        if label:  # an empty label: the category shows as it is
            out[code] = label
    shown = [out.get(c, c) for c in categories]
    if len(set(shown)) != len(shown):
        twice = next(label for label in shown if shown.count(label) > 1)
        raise DataError(f"{where}: two categories would both read '{twice}'")
    return tuple((c, out[c]) for c in categories if c in out)


@dataclass(frozen=True)
class Schema:
    """The declared columns of one dataset, in order.

    Two notes travel with a schema the application edits, neither saved nor compared:
    ``sources`` says where each column's declaration comes from (:class:`Source`;
    a column not listed is guessed) and ``pending`` what a column still lacks
    (``{"age": "upper bound missing"}``).
    """

    columns: tuple[ColumnSpec, ...] = ()
    description: str = ""
    sources: Mapping[str, Source] = field(default_factory=dict, repr=False, compare=False)
    pending: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        columns = tuple(self.columns)
        index: dict[str, int] = {}
        for i, spec in enumerate(columns):
            if not isinstance(spec, ColumnSpec):
                raise TypeError(f"Schema columns must be ColumnSpec, got {type(spec).__name__}")
            if spec.name in index:
                raise DataError(f"the schema declares column '{spec.name}' twice")
            index[spec.name] = i
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "description", str(self.description or "").strip())
        object.__setattr__(self, "_index", index)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.columns)

    def __iter__(self) -> Iterator[ColumnSpec]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __getitem__(self, name: str) -> ColumnSpec:
        try:
            return self.columns[self._index[name]]
        except KeyError:
            raise DataError(f"the schema has no column '{name}'") from None

    def get(self, name: str) -> ColumnSpec | None:
        i = self._index.get(name)
        return None if i is None else self.columns[i]

    def source(self, name: str) -> Source:
        """Where column ``name``'s declaration comes from (:attr:`sources`)."""
        return self.sources.get(name, Source.GUESSED)

    def missing(self, name: str) -> str | None:
        """What column ``name`` still lacks ("upper bound missing"), if the analyst has
        declared it only in part."""
        return self.pending.get(name)

    def with_column(self, spec: ColumnSpec) -> Schema:
        """A copy with ``spec`` replacing the column of the same name (or appended)."""
        columns = list(self.columns)
        if spec.name in self._index:
            columns[self._index[spec.name]] = spec
        else:
            columns.append(spec)
        return replace(self, columns=tuple(columns))

    def to_dict(self) -> dict[str, Any]:
        """The sidecar's JSON form, in the oldest format that holds it (version 1 without
        value labels, so older DP Studios keep reading the files they can)."""
        version = (3 if any(spec.type is ColumnType.IDENTIFIER for spec in self.columns)
                   else 2 if any(spec.labels for spec in self.columns) else 1)
        out: dict[str, Any] = {"schema_version": version}
        if self.description:
            out["description"] = self.description
        out["columns"] = [spec.to_dict() for spec in self.columns]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Schema:
        if not isinstance(data, Mapping):
            raise DataError("the schema is not a JSON object")
        version = data.get("schema_version")
        if version is None:
            raise DataError("the schema has no schema_version")
        if isinstance(version, bool) or version not in READABLE_VERSIONS:
            if isinstance(version, int) and not isinstance(version, bool) \
                    and version > SCHEMA_VERSION:
                raise DataError(
                    f"schema version {version} is newer than this DP Studio reads "
                    f"(version {SCHEMA_VERSION}); please update DP Studio"
                )
            raise DataError(f"unsupported schema version {version!r} (expected 1 to "
                            f"{SCHEMA_VERSION})")
        columns = data.get("columns")
        if not isinstance(columns, list):
            raise DataError("the schema has no list of columns")
        return cls(
            columns=tuple(ColumnSpec.from_dict(c, version) for c in columns),
            description=data.get("description", ""),
        )


# --- guessing types --------------------------------------------------------------------


#: Cells converted at once when guessing numeric columns in blocks (bounds the memory).
_GUESS_BLOCK_CELLS = 1 << 24

#: The guess for a column of 0/1 codes: categorical, its categories "0" and "1" (never
#: relabelled yes/no: labels are the analyst's explicit step).
_CODES = "0/1 codes"


def guess_types(df: pd.DataFrame) -> dict[str, ColumnType]:
    """Guess each column's type from its values. Types only: never bounds, and no
    categories beyond what a type implies (yes/no; "0" and "1" for a column of 0/1 codes,
    guessed categorical — its codes shown as they are).

    Numeric columns are judged together, a block of columns per numpy pass (a file of
    thousands of numeric columns would otherwise build a pandas Series per column); the
    others one by one (:func:`guess_type`). Both follow the same rules.
    """
    return {name: _type_of(kind) for name, kind in _guess_kinds(df).items()}


def _type_of(kind: ColumnType | str) -> ColumnType:
    return ColumnType.CATEGORICAL if kind == _CODES else ColumnType(kind)


def _guess_kinds(df: pd.DataFrame) -> dict[str, ColumnType | str]:
    """Each column's guessed type, or :data:`_CODES` for a column of 0/1 codes."""
    names = [str(c) for c in df.columns]
    dtypes = list(df.dtypes)
    out: dict[str, ColumnType | str] = {}
    numeric = [i for i, d in enumerate(dtypes)
               if ptypes.is_numeric_dtype(d) and not ptypes.is_bool_dtype(d)]
    step = max(1, _GUESS_BLOCK_CELLS // max(len(df), 1))
    for start in range(0, len(numeric), step):
        block = numeric[start:start + step]
        x = df.iloc[:, block].to_numpy(dtype=np.float64, na_value=np.nan)
        present = ~np.isnan(x)
        any_present = present.any(axis=0)
        zero_one = ((x == 0) | (x == 1) | ~present).all(axis=0)
        for j, i in enumerate(block):
            out[names[i]] = (ColumnType.TEXT if not any_present[j] else
                             _CODES if zero_one[j] else ColumnType.NUMERIC)
    done = set(numeric)
    for i, name in enumerate(names):
        if i not in done:
            out[name] = _guess_kind(df.iloc[:, i])
    return {name: out[name] for name in names}


def guess_type(series: pd.Series) -> ColumnType:
    """One column's likely type; text is judged on its distinct values, so a million
    rows of a handful of categories cost about as much as the handful. A column of 0/1
    codes is categorical (see :func:`guess_types`)."""
    return _type_of(_guess_kind(series))


def _guess_kind(series: pd.Series) -> ColumnType | str:
    values = series.dropna()
    if len(values) == 0:
        return ColumnType.TEXT
    if ptypes.is_bool_dtype(values.dtype):
        return ColumnType.BOOLEAN
    if ptypes.is_numeric_dtype(values.dtype):
        if bool(((values == 0) | (values == 1)).all()):
            return _CODES
        return ColumnType.NUMERIC
    if ptypes.is_datetime64_any_dtype(values.dtype):
        return ColumnType.TEXT
    # Texts first (str(1) and str(True) differ though 1 == True), then distinct values.
    text = values if isinstance(values.dtype, pd.StringDtype) else values.astype(str)
    if len(text) > _SAMPLE_ROWS:
        # Exact shortcut for identifiers and free text: more than 50 distinct values in the
        # first rows rules out yes/no and categorical, one non-number rules out numeric.
        head = pd.Series(pd.unique(text.iloc[:_SAMPLE_ROWS]), dtype=text.dtype).str.strip()
        if len(pd.unique(head)) > _MAX_GUESSED_CATEGORIES and not _all_numeric(head):
            return ColumnType.TEXT
    distinct_raw = pd.Series(pd.unique(text), dtype=text.dtype)
    stripped = distinct_raw.str.strip()
    distinct = set(pd.unique(stripped.str.lower()))
    if distinct <= set(ZERO_ONE):  # codes as text: shown as they are, not as yes/no
        return _CODES
    if len(distinct) <= 2 and distinct <= _YES_NO_WORDS:
        return ColumnType.BOOLEAN
    if _all_numeric(stripped):
        return ColumnType.NUMERIC
    n_distinct = len(pd.unique(stripped))
    if n_distinct <= _MAX_GUESSED_CATEGORIES and n_distinct <= max(2, len(values) // 2):
        return ColumnType.CATEGORICAL
    return ColumnType.TEXT


#: Spellings of yes and no that make a text column a guessed yes/no one: words, not the
#: codes 0/1 (a column of those is guessed categorical, its codes shown as they are).
_YES_NO_WORDS = (YES_SPELLINGS | NO_SPELLINGS) - {"0", "1", "0.0", "1.0"}


def _all_numeric(text: pd.Series) -> bool:
    """Whether every string parses as a number (a small sample first: most columns fail)."""
    sample = text.iloc[:256]
    if pd.to_numeric(sample, errors="coerce").isna().any():
        return False
    return bool(pd.to_numeric(text, errors="coerce").notna().all())


def complete_schema(df: pd.DataFrame, declared: Schema | None = None) -> Schema:
    """One spec per column of ``df``, in the frame's order.

    Columns declared in ``declared`` keep their spec (source: saved); the others get a
    guessed type and no bounds or categories ("undeclared") — but for a column of 0/1
    codes, guessed categorical with the categories "0" and "1" (source: guessed).
    Declared columns absent from ``df`` are dropped.
    """
    columns = []
    sources: dict[str, Source] = {}
    for name, kind in _guess_kinds(df).items():
        spec = declared.get(name) if declared is not None else None
        if spec is not None:
            sources[name] = Source.SAVED
        elif kind == _CODES:
            spec = ColumnSpec(name, ColumnType.CATEGORICAL, categories=ZERO_ONE)
        else:
            spec = ColumnSpec(name, _type_of(kind))
        columns.append(spec)
    description = declared.description if declared is not None else ""
    return Schema(tuple(columns), description=description, sources=sources)


# --- sidecar files ---------------------------------------------------------------------


def sidecar_path(dataset_path: str | os.PathLike[str]) -> Path:
    """`<dataset>.schema.json` next to the dataset: `survey.csv` → `survey.csv.schema.json`."""
    p = Path(dataset_path)
    return p.with_name(p.name + SIDECAR_SUFFIX)


def schema_for(dataset_path: str | os.PathLike[str]) -> Schema | None:
    """The dataset's sidecar schema, or ``None`` if it has none (a bad sidecar raises)."""
    path = sidecar_path(dataset_path)
    return load_schema(path) if path.is_file() else None


def load_schema(path: str | os.PathLike[str]) -> Schema:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(f"{p.name}: schema file not found ({p})") from None
    except (OSError, UnicodeError) as exc:
        raise DataError(f"{p.name}: cannot read schema ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{p.name}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    try:
        schema = Schema.from_dict(data)
    except DataError as exc:
        raise DataError(f"{p.name}: {exc}") from None
    return replace(schema, sources=dict.fromkeys(schema.names, Source.SAVED))


def save_schema(schema: Schema, path: str | os.PathLike[str]) -> Path:
    """Write ``schema`` as JSON atomically (temporary file, then ``os.replace``).

    Parameters
    ----------
    schema : Schema
        The declared schema.
    path : str or os.PathLike
        The sidecar file, replaced if it exists.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    DataError
        If the file cannot be written (it then keeps its old content).
    """
    p = Path(path)
    text = json.dumps(schema.to_dict(), indent=2, ensure_ascii=False) + "\n"
    try:
        write_atomic(p, text)
    except OSError as exc:
        raise DataError(f"{p.name}: cannot save schema ({exc.strerror or exc})") from exc
    return p


# --- helpers ---------------------------------------------------------------------------


def _bound(value: Any, where: str, which: str) -> float:
    if isinstance(value, bool):
        raise DataError(f"{where}: the {which} bound must be a number, not {value}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DataError(f"{where}: the {which} bound must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise DataError(f"{where}: the {which} bound must be finite, not {number}")
    return number


def _fmt(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"


def _json_number(value: float | None) -> float | int | None:
    if value is not None and float(value).is_integer() and abs(value) < 2**53:
        return int(value)
    return value
