"""load_table: formats, encodings and one-line errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpstudio.data import FILE_DIALOG_FILTER, SUPPORTED_EXTENSIONS, DataError, load_table


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [34, 51, 27, 45],
            "income": [52000.5, np.nan, 31000.0, 47000.25],
            "city": ["Zürich", "Lyon", None, "Oslo"],
            "smoker": ["yes", "no", "no", "yes"],
        }
    )


def _assert_same(loaded: pd.DataFrame, expected: pd.DataFrame) -> None:
    assert list(loaded.columns) == list(expected.columns)
    assert len(loaded) == len(expected)
    np.testing.assert_array_equal(loaded["age"].to_numpy(), expected["age"].to_numpy())
    np.testing.assert_allclose(loaded["income"].to_numpy(float), expected["income"].to_numpy())
    assert [None if pd.isna(v) else v for v in loaded["city"]] == ["Zürich", "Lyon", None, "Oslo"]
    assert list(loaded["smoker"]) == ["yes", "no", "no", "yes"]


def test_csv_round_trip(tmp_path, frame):
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    loaded = load_table(path)
    _assert_same(loaded, frame)
    assert loaded.attrs["encoding"] == "utf-8"
    assert loaded.attrs["delimiter"] == ","
    assert loaded.attrs["source"] == str(path)


def test_tsv_round_trip(tmp_path, frame):
    path = tmp_path / "people.tsv"
    frame.to_csv(path, index=False, sep="\t")
    _assert_same(load_table(path), frame)


@pytest.mark.parametrize("sep", [";", "\t", "|", ","])
def test_txt_delimiter_is_sniffed(tmp_path, frame, sep):
    path = tmp_path / "people.txt"
    frame.to_csv(path, index=False, sep=sep)
    loaded = load_table(path)
    assert loaded.attrs["delimiter"] == sep
    _assert_same(loaded, frame)


def test_semicolon_csv_from_european_excel(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text("a;b\n1;2\n3;4\n", encoding="utf-8")
    assert list(load_table(path).columns) == ["a", "b"]


def test_parquet_round_trip(tmp_path, frame):
    path = tmp_path / "people.parquet"
    frame.to_parquet(path)
    loaded = load_table(path)
    _assert_same(loaded, frame)
    assert loaded.attrs["encoding"] is None


def test_excel_round_trip(tmp_path, frame):
    path = tmp_path / "people.xlsx"
    frame.to_excel(path, index=False, sheet_name="Patients")
    loaded = load_table(path)
    _assert_same(loaded, frame)
    assert loaded.attrs["sheet"] == "Patients"


def test_utf8_with_bom(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("name,age\nJosé,30\n".encode("utf-8-sig"))
    loaded = load_table(path)
    assert list(loaded.columns) == ["name", "age"]  # no BOM glued to the first name
    assert loaded.attrs["encoding"] == "utf-8-sig"


def test_cp1252_csv_decodes_to_the_right_text(tmp_path):
    path = tmp_path / "legacy.csv"
    # The en dash and curly quote exist in cp1252 (0x96, 0x92), not in Latin-1.
    path.write_bytes("name,comment\nJosé Müller,it’s fine – really\n".encode("cp1252"))
    loaded = load_table(path)
    assert loaded.attrs["encoding"] == "cp1252"
    assert loaded.loc[0, "name"] == "José Müller"
    assert loaded.loc[0, "comment"] == "it’s fine – really"


def test_latin1_is_the_last_resort(tmp_path):
    path = tmp_path / "odd.csv"
    path.write_bytes(b"code,label\n1,caf\xe9 \x81\n")  # 0x81 is undefined in cp1252
    loaded = load_table(path)
    assert loaded.attrs["encoding"] == "latin-1"
    assert loaded.loc[0, "label"].startswith("café")


def test_column_names_are_stripped_strings(tmp_path):
    path = tmp_path / "spaces.csv"
    path.write_text(" a , b\n1, 2\n", encoding="utf-8")
    assert list(load_table(path).columns) == ["a", "b"]


def test_malformed_csv_names_the_line(tmp_path):
    path = tmp_path / "survey.csv"
    rows = ["a,b,c,d,e"] + [f"{i},1,2,3,4" for i in range(12)] + ["9,1,2,3,4,5,6"]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_table(path)
    assert str(info.value) == "survey.csv: line 14 has 7 fields, expected 5"


def test_unclosed_quote_names_the_line(tmp_path):
    path = tmp_path / "quote.csv"
    path.write_text('a,b\n1,2\n3,"oops\n5,6\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"quote.csv: .*line 3"):
        load_table(path)


@pytest.mark.parametrize("content", [b"", b"   \n\n"])
def test_empty_file(tmp_path, content):
    path = tmp_path / "empty.csv"
    path.write_bytes(content)
    with pytest.raises(DataError, match="empty.csv: the file is empty"):
        load_table(path)


def test_header_without_rows(tmp_path):
    path = tmp_path / "header.csv"
    path.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(DataError, match="no data rows"):
        load_table(path)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="nothere.csv: file not found"):
        load_table(tmp_path / "nothere.csv")


def test_directory(tmp_path):
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    with pytest.raises(DataError, match="is a folder"):
        load_table(folder)


@pytest.mark.parametrize("name", ["data.json", "data"])
def test_unsupported_extension(tmp_path, name):
    path = tmp_path / name
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(DataError, match="unsupported file type"):
        load_table(path)


@pytest.mark.parametrize("name", ["broken.parquet", "broken.xlsx"])
def test_corrupt_binary_formats(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"this is not what the extension says\n" * 4)
    with pytest.raises(DataError, match=name):
        load_table(path)


def test_binary_file_named_csv(tmp_path):
    path = tmp_path / "image.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(DataError, match="binary"):
        load_table(path)


def test_errors_are_one_line(tmp_path):
    path = tmp_path / "multi.csv"
    path.write_text("a,b\n1,2,3\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_table(path)
    assert "\n" not in str(info.value)
    assert "\n" not in str(DataError("two\nlines"))


def test_dialog_filter_lists_every_extension():
    for ext in SUPPORTED_EXTENSIONS:
        assert f"*{ext}" in FILE_DIALOG_FILTER
    assert {".csv", ".tsv", ".txt", ".parquet", ".xlsx", ".xls"} <= set(SUPPORTED_EXTENSIONS)


def test_extra_fields_in_the_first_rows_are_an_error_not_an_index(tmp_path):
    path = tmp_path / "shifted.csv"
    path.write_text("a,b\n1,2\n3,4,5\n", encoding="utf-8")
    with pytest.raises(DataError, match="shifted.csv: line 3 has 3 fields, expected 2"):
        load_table(path)
    path.write_text("a,b\n1,2,3\n4,5,6\n", encoding="utf-8")
    with pytest.raises(DataError, match="shifted.csv: line 2 has 3 fields, expected 2"):
        load_table(path)


def test_trailing_delimiters_are_harmless(tmp_path):
    path = tmp_path / "trailing.csv"
    path.write_text("a,b,\n1,2,\n3,4,\n", encoding="utf-8")
    loaded = load_table(path)
    assert list(loaded.columns) == ["a", "b"]
    assert loaded["b"].tolist() == [2, 4]


def test_line_numbers_count_physical_lines(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text('a,b\n\n1,2\n"two\nlines",2\n3,4,5\n', encoding="utf-8")
    with pytest.raises(DataError, match="notes.csv: line 6 has 3 fields, expected 2"):
        load_table(path)
