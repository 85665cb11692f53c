"""sha256_file streams the file and matches hashlib over its bytes."""

from __future__ import annotations

import hashlib

import pytest

from dpstudio.data import DataError, sha256_file


@pytest.mark.parametrize("size", [0, 10, 3 * (1 << 20) + 17])  # empty, tiny, several chunks
def test_sha256_matches_hashlib(tmp_path, size):
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="cannot read file"):
        sha256_file(tmp_path / "missing.csv")


# ------------------------------------------------------------------ content fingerprints

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpstudio.data.fingerprint import (  # noqa: E402
    content_fingerprint,
    estimated_overlap,
    looks_like_version,
)
from dpstudio.data.loading import load_table  # noqa: E402


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(17, 90, n), "bmi": rng.normal(25, 4, n).round(1),
                         "smoker": rng.choice(["yes", "no", None], n)})


def test_content_hash_ignores_encoding_and_row_order(tmp_path):
    """The same rows re-encoded (extra newline, CRLF, quoting, 1 vs 1.0, columns reordered)
    or shuffled are one dataset; a byte hash tells them apart, the content hash does not."""
    frame = _table()
    base = tmp_path / "a.csv"
    frame.to_csv(base, index=False)
    text = base.read_text()
    variants = {
        "newline": text + "\n",
        "crlf": text.replace("\n", "\r\n"),
        "shuffled": frame.sample(frac=1.0, random_state=3).to_csv(index=False),
        "columns": frame[["smoker", "bmi", "age"]].to_csv(index=False),
        "floats": frame.assign(age=frame["age"].astype(float)).to_csv(index=False),
        "quoted": frame.to_csv(index=False, quoting=1),
    }
    want = content_fingerprint(load_table(base))
    assert want.rows == 400 and want.columns == ("age", "bmi", "smoker")
    for name, body in variants.items():
        path = tmp_path / f"{name}.csv"
        path.write_text(body, newline="")
        assert sha256_file(path) != sha256_file(base), name
        assert content_fingerprint(load_table(path)).digest == want.digest, name


def test_content_hash_sees_a_changed_added_or_removed_row():
    frame = _table()
    want = content_fingerprint(frame).digest
    changed = frame.copy()
    changed.loc[7, "bmi"] += 0.1
    assert content_fingerprint(changed).digest != want
    assert content_fingerprint(pd.concat([frame, frame.iloc[:1]])).digest != want  # duplicate
    assert content_fingerprint(frame.iloc[1:]).digest != want
    assert content_fingerprint(frame.rename(columns={"bmi": "BMI"})).digest != want


def test_overlap_estimate_and_versions():
    """Bottom-k Jaccard estimate within 4 standard errors (k = 256) of the truth; a version
    (a few rows edited, or a column dropped) is recognized, another table is not."""
    frame = _table(4000, seed=1)
    a = content_fingerprint(frame)
    edited = frame.copy()
    edited.loc[:399, "bmi"] += 100.0  # 400 of 4000 rows changed: J = 3600/4400
    b = content_fingerprint(edited)
    truth = 3600 / 4400
    se = np.sqrt(truth * (1 - truth) / 256)
    assert abs(estimated_overlap(a.sketch, b.sketch) - truth) < 4 * se
    assert "rows are the same" in looks_like_version(b, a)
    dropped = content_fingerprint(frame.drop(columns=["smoker"]))
    assert "2 of 3 columns" in looks_like_version(dropped, a)
    other = content_fingerprint(_table(1000, seed=9).rename(columns=str.upper))
    assert looks_like_version(other, a) is None
    assert estimated_overlap((), a.sketch) == 0.0


def test_a_column_holding_exactly_a_registered_column_s_values_is_a_version():
    """One column cut out into a table of its own, shuffled and with its missing values
    dropped, matches the column it came from (whole-row hashes and the column names do
    not see it); a column with one value changed, or too few values, does not."""
    from dpstudio.data.fingerprint import COLUMN_MIN_VALUES

    frame = _table(400, seed=2)
    frame.loc[::7, "bmi"] = np.nan
    a = content_fingerprint(frame)
    cut = frame[["bmi"]].dropna().sample(frac=1.0, random_state=1).rename(
        columns={"bmi": "x"})
    assert "column x holds exactly the values of column bmi" in looks_like_version(
        content_fingerprint(cut), a)
    changed = cut.copy()
    changed.iloc[0, 0] += 0.1
    assert looks_like_version(content_fingerprint(changed), a) is None
    small = frame.iloc[:COLUMN_MIN_VALUES - 1]
    few = content_fingerprint(small[["age"]])
    assert few.column_digests == ()
    assert looks_like_version(few, content_fingerprint(small)) is None
