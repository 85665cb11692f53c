"""Spreadsheet formula injection (issue 10, item 12d): OWASP's full list of leading
characters, plus line feed and the full-width forms, neutralized on every export path —
the release tables (CSV, JSON, Parquet, Excel) and the records CSV of ``dpstudio query
--export-records``, which used to be written by pandas with no neutralization at all."""

import csv
import io
import json

import numpy as np
import openpyxl
import pyarrow.parquet as pq
import pytest

from dpstudio.commands.query import _write_records
from dpstudio.export import render_table
from dpstudio.export.tables import ExportTable, records_table
from dpstudio.export.writers import FORMULA_PREFIXES, neutralize, neutralize_cells

OWASP = ("=", "+", "-", "@", "\t", "\r")
MORE = ("\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")  # LF; full-width = + - @
LABELS = [p + "1+1" for p in OWASP + MORE]


def test_the_prefixes_cover_owasp_and_the_full_width_forms():
    assert set(OWASP + MORE) <= set(FORMULA_PREFIXES)
    for label in LABELS:
        assert neutralize(label) == "'" + label
    for safe in ("1+1", "'=already", " =spaced", "", "a-b"):
        assert neutralize(safe) == safe


def _text(cells) -> list[str]:
    """The text cells (a CSV's numbers, "-1.5", are numbers: left as they are)."""
    def number(c):
        try:
            float(c)
            return True
        except ValueError:
            return False
    return [c for c in cells if isinstance(c, str) and not number(c)]


def _cells(data: bytes, fmt: str) -> list:
    if fmt == "csv":
        return [c for row in csv.reader(io.StringIO(data.decode(), newline="")) for c in row]
    if fmt == "json":
        doc = json.loads(data)
        return [c["name"] for c in doc["columns"]] + [v for r in doc["rows"] for v in r.values()]
    if fmt == "parquet":
        table = pq.read_table(io.BytesIO(data))
        return table.column_names + [v for r in table.to_pylist() for v in r.values()]
    wb = openpyxl.load_workbook(io.BytesIO(data))
    return [c.value for ws in wb.worksheets for row in ws.iter_rows() for c in row]


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "xlsx"])
def test_every_format_neutralizes_every_prefix(fmt):
    table = ExportTable("histogram", (("=cell", "text"), ("count", "number")),
                        tuple((label, -1.5) for label in LABELS))
    cells = _text(_cells(render_table(table, fmt, {"note": "\uff1dx"}), fmt))
    assert cells
    # xlsx stores CR as LF (XML): compare after that normalization.
    assert not any(c.replace("\r", "\n").startswith(FORMULA_PREFIXES) for c in cells), cells
    assert any(c.startswith("'\uff1d") for c in cells)


def test_records_tables_are_neutralized_too():
    data = render_table(records_table({"report": np.array(LABELS, dtype=object)}), "csv")
    assert not any(c.startswith(FORMULA_PREFIXES) for c in _text(_cells(data, "csv")))


def test_the_export_records_csv_is_neutralized(tmp_path):
    # Before: pandas wrote "=1+1" as is.
    path = tmp_path / "records.csv"
    _write_records(str(path), {"@name": np.array(LABELS, dtype=object),
                               "bit": np.array([-1, 0, 1] * 3 + [1, 0]),
                               "bits": np.array([[0, 1]] * len(LABELS))})
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][0] == "'@name"
    cells = _text(c for row in rows for c in row)
    assert not any(c.startswith(FORMULA_PREFIXES) for c in cells), cells
    assert [row[1] for row in rows[1:4]] == ["-1", "0", "1"]  # numbers stay numbers


def test_neutralize_cells_leaves_numeric_arrays_alone():
    numbers = np.array([-1.0, 2.0])
    assert neutralize_cells(numbers) is numbers
    assert neutralize_cells(["-x", 3, None]) == ["'-x", 3, None]
