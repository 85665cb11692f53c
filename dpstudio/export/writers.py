"""Exported tables as CSV, Parquet, JSON and Excel, rendered to bytes.

Spreadsheet formula injection: a spreadsheet opening an export treats a text cell that
begins with ``=``, ``+``, ``-`` or ``@`` (and, in some programs, a tab, carriage return
or line feed, or the full-width ``＝ ＋ － ＠`` that East Asian input methods type) as a
formula — ``=HYPERLINK(...)`` in a category name would run when a stakeholder
opens the CSV. Every text cell of every format is therefore *neutralized*: such a cell is
written with a leading single quote (``'=HYPERLINK(...)``), which spreadsheets display as
text (OWASP's recommendation). Numbers are written as numbers and never altered, so a
negative value stays a number. JSON and Parquet get the same treatment, because they are
opened by spreadsheet importers too and one rule for all formats is easier to trust. A
reader who needs the original label strips one leading quote from a text cell that starts
with ``'`` followed by one of those characters.

Renderers return bytes, so a release can hash every file before any of it is written.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from typing import Any

from dpstudio.export.errors import ExportError
from dpstudio.export.tables import ExportTable

__all__ = [
    "FORMATS",
    "FORMULA_PREFIXES",
    "JSON_VERSION",
    "neutralize",
    "neutralize_all",
    "neutralize_cells",
    "normalize_format",
    "render_table",
]

#: Format name → file extension.
FORMATS = {"csv": ".csv", "json": ".json", "parquet": ".parquet", "xlsx": ".xlsx"}
_ALIASES = {"excel": "xlsx", "pq": "parquet"}
#: Leading characters that make a spreadsheet read a cell as a formula: OWASP's list
#: (= + - @ tab CR), line feed, and the full-width forms of = + - @ (U+FF1D, U+FF0B,
#: U+FF0D, U+FF20), which some spreadsheets in CJK locales convert to the ASCII ones.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\n",
                    "\uff1d", "\uff0b", "\uff0d", "\uff20")
JSON_VERSION = 1


def normalize_format(name: str) -> str:
    """The canonical format name for ``name`` (``excel`` → ``xlsx``); ExportError if unknown."""
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in FORMATS:
        raise ExportError(f"unknown output format {name!r} (choose from csv, json, parquet, "
                          "xlsx)")
    return key


def neutralize(text: str) -> str:
    """``text`` with a leading single quote if it begins like a spreadsheet formula."""
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def neutralize_cells(values: Any) -> Any:
    """A column for a CSV written outside :func:`render_table` (``--export-records``):
    every text cell neutralized, numbers untouched; numeric arrays come back as they are.
    """
    if getattr(getattr(values, "dtype", None), "kind", "O") in "biuf":
        return values
    return [neutralize(v) if isinstance(v, str) else v for v in values]


def neutralize_all(value: Any) -> Any:
    """Neutralize every string (and mapping key) inside a JSON-like value."""
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, Mapping):
        return {neutralize(str(k)): neutralize_all(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [neutralize_all(v) for v in value]
    return value


def _cell(value: Any) -> Any:
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _rows(table: ExportTable) -> list[list[Any]]:
    return [[_cell(v) for v in row] for row in table.rows]


def render_table(table: ExportTable, fmt: str, meta: Mapping[str, Any] | None = None) -> bytes:
    """The bytes of ``table`` in format ``fmt`` (csv, json, parquet or xlsx).

    ``meta`` (public facts about the release: mechanism, ε, …) goes into the JSON
    document, the Parquet schema metadata and the Excel file's second sheet; CSV has
    the table only.
    """
    fmt = normalize_format(fmt)
    meta = neutralize_all(dict(meta or {}))
    return {"csv": _csv, "json": _json, "parquet": _parquet, "xlsx": _xlsx}[fmt](table, meta)


def _csv(table: ExportTable, meta: dict) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180; quotes fields with CR or LF
    writer.writerow([neutralize(n) for n in table.names])
    for row in _rows(table):
        writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else v
                         for v in row])
    return out.getvalue().encode("utf-8")


def _json(table: ExportTable, meta: dict) -> bytes:
    names = [neutralize(n) for n in table.names]
    doc = {
        "schema_version": JSON_VERSION,
        "kind": table.kind,
        "title": neutralize(table.title),
        "columns": [{"name": n, "type": t} for n, (_, t) in zip(names, table.columns,
                                                                 strict=True)],
        "rows": [dict(zip(names, row, strict=True)) for row in _rows(table)],
        "meta": meta,
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def _parquet(table: ExportTable, meta: dict) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"text": pa.string(), "number": pa.float64(), "integer": pa.int64()}
    rows = _rows(table)
    arrays = [pa.array([row[i] for row in rows], type=types[kind])
              for i, (_, kind) in enumerate(table.columns)]
    schema = pa.schema([pa.field(neutralize(n), types[k]) for n, k in table.columns],
                       metadata={b"dpstudio": json.dumps(meta, ensure_ascii=False).encode()})
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), sink)
    return sink.getvalue().to_pybytes()


def _xlsx(table: ExportTable, meta: dict) -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Font

    wb = Workbook()
    ws = wb.active
    ws.title = "release"
    bold = Font(bold=True)
    for j, name in enumerate(table.names, start=1):
        _put(ws.cell(row=1, column=j), neutralize(name)).font = bold
    for i, row in enumerate(_rows(table), start=2):
        for j, value in enumerate(row, start=1):
            _put(ws.cell(row=i, column=j), value)
    about = wb.create_sheet("about")
    for i, (key, value) in enumerate(meta.items(), start=1):
        _put(about.cell(row=i, column=1), str(key)).font = bold
        shown = value if isinstance(value, int | float | str) or value is None else \
            neutralize(json.dumps(value, ensure_ascii=False))
        _put(about.cell(row=i, column=2), shown)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def _put(cell, value: Any):
    """Store ``value``; strings always as text (openpyxl would read "=…" as a formula)."""
    cell.value = value
    if isinstance(value, str):
        cell.data_type = "s"
    return cell
