"""Issue 10, items 10 and 12a in the data layer: headerless files, non-finite cells, and
user text echoed in messages. Each test failed before the fix."""

import numpy as np
import pandas as pd
import pytest

from dpstudio.data.columns import numeric_column, require_column
from dpstudio.data.errors import MAX_MESSAGE, DataError, shorten
from dpstudio.data.loading import header_note, load_table

# The same numbers for each reader: plain UTF-8 (pyarrow's fast path), padded fields and
# Windows-1252 text (both read by pandas' C parser, the latter with one text row).
VARIANTS = {
    "fast": b"1.5,2,3\n4,5,6\n7,8,9\n",
    "padded": b"1.5, 2,3\n4, 5,6\n7, 8,9\n",
    "cp1252": "1.5,2,3\n4,5,6\n7,8,9\n\u00e9,x,y\n".encode("cp1252"),
}


@pytest.mark.parametrize("kind", sorted(VARIANTS))
def test_a_file_of_numbers_keeps_its_first_row_with_no_header(tmp_path, kind):
    path = tmp_path / "n.csv"
    path.write_bytes(VARIANTS[kind])
    with_header = load_table(path)
    assert list(with_header.columns) == ["1.5", "2", "3"]  # the first row, lost to names
    assert "--no-header" in with_header.attrs["load_notes"][0]
    df = load_table(path, header=False)
    assert list(df.columns) == ["1", "2", "3"]
    assert df.shape[0] == with_header.shape[0] + 1
    assert df.attrs["header"] is False and df.attrs["load_notes"] == []
    assert str(df["1"].iloc[0]).strip() == "1.5"


def test_a_real_header_gives_no_note(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("age,score\n1,2\n", encoding="utf-8")
    assert load_table(path).attrs["load_notes"] == []


def test_no_header_in_excel(tmp_path):
    path = tmp_path / "n.xlsx"
    pd.DataFrame([[1, 2], [3, 4]]).to_excel(path, index=False, header=False)
    df = load_table(path, header=False)
    assert list(df.columns) == ["1", "2"] and df["1"].tolist() == [1, 3]
    assert "every column name is a number" in load_table(path).attrs["load_notes"][0]


def test_header_note_shortens_what_it_echoes():
    df = pd.DataFrame(columns=["1" * 300, "2", "3", "4"])
    note = header_note(df, "x.csv")
    assert len(note) < 300 and note.count("…") >= 2


def test_nonfinite_cells_reach_the_query_layer_as_infinities(tmp_path):
    path = tmp_path / "inf.csv"
    path.write_text("x,y,z\n1,a,1\ninf,b,2\n-inf,c,\nNaN,d,4\n,e,5\nInfinity,f,6\n",
                    encoding="utf-8")
    df = load_table(path)
    # The values reach the query layer as ±inf (it treats them as missing and says so).
    assert np.isinf(numeric_column(df, "x")).sum() == 3


def test_shorten_keeps_one_line_and_says_how_long():
    assert shorten("abc") == "abc"
    cut = shorten("x" * 100_000, 10)
    assert cut == "xxxxxxxxx… (100,000 characters)"
    assert shorten("a\nb\r\x1b[31m") == "a b  [31m"


def test_every_data_error_is_one_capped_line():
    err = DataError("bad name '" + "n" * 100_000 + "'\nsecond line: do this")
    assert "\n" not in str(err) and len(str(err)) <= MAX_MESSAGE
    assert str(err).endswith("do this")


def test_missing_column_message_is_short_for_a_huge_header(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("a" * 100_000 + ",b\n1,2\n", encoding="utf-8")
    df = load_table(path)
    with pytest.raises(DataError) as info:
        require_column(df, "zz" * 50_000)
    assert len(str(info.value)) < 400 and "(100,000 characters)" in str(info.value)


def test_a_repeated_huge_name_is_reported_briefly(tmp_path):
    path = tmp_path / "rep.csv"
    name = "q" * 100_000
    path.write_text(f"{name},{name} \n1,2\n", encoding="utf-8")
    with pytest.raises(DataError, match="repeats the name") as info:
        load_table(path)
    assert len(str(info.value)) < 400
