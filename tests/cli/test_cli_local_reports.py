"""`dpstudio query` in the local model: every row reports, and heavy hitters work.

Issue 10: the released n (and --export-records) counted only the users with a declared
value (item 2), and ``--query heavy_hitters``, offered in --help, always failed (item 6).
"""

import csv
import json
import math

import numpy as np
import pytest

from dpstudio.cli import main

PLANTED = {"privacy": 0.12, "hello": 0.08, "sketch": 0.06}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def words_csv(tmp_path_factory):
    """20,000 rows: three planted words, 5% missing, the rest random 8-letter strings."""
    rng = np.random.default_rng(5)
    n = 20_000
    words = list(PLANTED)
    p = list(PLANTED.values())
    pick = rng.choice(len(words) + 2, size=n, p=p + [0.05, 1 - sum(p) - 0.05])
    tail = rng.integers(ord("a"), ord("z") + 1, size=(n, 8), dtype=np.uint8)
    tail = tail.view("S8").reshape(-1).astype(str)
    column = [words[k] if k < len(words) else ("" if k == len(words) else tail[i])
              for i, k in enumerate(pick.tolist())]
    path = tmp_path_factory.mktemp("words") / "words.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        w = csv.writer(handle)
        w.writerow(["id", "word"])
        w.writerows([i, c] for i, c in enumerate(column))
    return path, column


@pytest.mark.parametrize("mechanism", ["sfp", "cms"])
def test_heavy_hitters_recovers_the_planted_words(capsys, words_csv, mechanism):
    path, column = words_csv
    code, out, err = run(capsys, "query", path, "--column", "word", "--query",
                         "heavy_hitters", "--mechanism", mechanism, "--epsilon", "6",
                         "--simulate", "1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["query"] == "heavy_hitters" and data["mechanism"] == mechanism
    assert data["trust_model"] == "local" and data["epsilon"] == 6.0 and data["delta"] == 0.0
    assert data["n"] == len(column)  # every row, the 5% missing ones included
    assert data["notes"] and data["charged"] is False
    items = {i["item"]: i for i in data["items"]}
    assert set(items) == set(PLANTED)  # all planted words, nothing else
    assert [i["item"] for i in data["items"]] == list(PLANTED)  # most frequent first
    for word, item in items.items():
        true = column.count(word)
        assert abs(item["count"] - true) < 5 * item["stderr"], (word, item, true)
        assert item["ci_low"] < item["count"] < item["ci_high"]
        assert data["estimate"][word] == item["count"]
        assert data["ci_low"][word] == item["ci_low"]
    assert data["parameters"]["hash_seed"] != 0  # drawn for this release


def test_heavy_hitters_prints_counts_and_intervals(capsys, words_csv):
    path, _ = words_csv
    code, out, err = run(capsys, "query", path, "--column", "word", "--query",
                         "heavy_hitters", "--mechanism", "sfp", "--epsilon", "6",
                         "--simulate", "1")
    assert code == 0, err
    lines = out.splitlines()
    assert "heavy hitters of 'word'" in lines[0] and "SIMULATION" in lines[0]
    for word in PLANTED:
        (line,) = [x for x in lines if x.strip().startswith(word)]
        assert "95% interval [" in line
    assert any(x.strip() == "n            20000" for x in lines)


def test_heavy_hitters_export_records_one_per_row(capsys, words_csv, tmp_path):
    path, column = words_csv
    target = tmp_path / "records.csv"
    code, _, err = run(capsys, "query", path, "--column", "word", "--query",
                       "heavy_hitters", "--mechanism", "sfp", "--epsilon", "2",
                       "--hashes", "8", "--buckets", "64", "--simulate", "2",
                       "--export-records", target, "--json")
    assert code == 0, err
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert len(rows) == 1 + len(column)
    assert not any("privacy" in ",".join(r) for r in rows)


@pytest.mark.parametrize("extra,needle", [
    (["--mechanism", "sfp", "--query", "histogram"], "sfp answers heavy_hitters"),
    (["--mechanism", "sfp", "--query", "heavy_hitters", "--categories", "a,b"],
     "drop --categories"),
    (["--mechanism", "laplace", "--query", "heavy_hitters"], "use --mechanism sfp"),
    (["--mechanism", "krr", "--query", "heavy_hitters"], "krr answers histogram"),
    (["--mechanism", "sfp", "--query", "heavy_hitters", "--fragment-share", "1.5"],
     "fragment_share"),
    (["--mechanism", "sfp", "--query", "heavy_hitters", "--epsilon", "0"], "epsilon"),
])
def test_heavy_hitters_bad_input_is_one_line(capsys, words_csv, extra, needle):
    path, _ = words_csv
    argv = ["query", path, "--column", "word", "--query", "heavy_hitters", "--epsilon", "1",
            "--simulate", "0", *extra]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err, err


# ------------------------------------------------------------------ released n


@pytest.fixture(scope="module")
def religious_csv(tmp_path_factory):
    """The issue's example: 6,366 rows, 5,710 in the declared 1, 2, 3, 656 others."""
    rng = np.random.default_rng(0)
    values = rng.choice(["1", "2", "3"], size=6366, p=[0.5, 0.3, 0.2]).astype(object)
    others = rng.choice(6366, size=656, replace=False)
    values[others[:400]] = ""  # missing
    values[others[400:]] = rng.choice(["4", "5", "7"], size=256)  # undeclared
    hours = rng.uniform(0, 40, 6366).round(1).astype(object)
    hours[others[:300]] = ""
    path = tmp_path_factory.mktemp("religious") / "religious.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        w = csv.writer(handle)
        w.writerow(["religious", "hours"])
        w.writerows(zip(values.tolist(), hours.tolist(), strict=True))
    return path


@pytest.mark.parametrize("mechanism", ["krr", "oue", "olh", "cms"])
def test_released_n_is_the_number_of_rows(capsys, religious_csv, tmp_path, mechanism):
    target = tmp_path / "records.csv"
    code, out, err = run(capsys, "query", religious_csv, "--column", "religious", "--query",
                         "histogram", "--mechanism", mechanism, "--categories", "1,2,3",
                         "--epsilon", "1", "--simulate", "3", "--export-records", target,
                         "--json", "--analyst")
    assert code == 0, err
    data = json.loads(out)
    assert data["n"] == 6366  # before: 5,710, which revealed the 656 others
    assert list(data["estimate"]) == ["1", "2", "3", "(other or missing)"]
    with target.open(newline="", encoding="utf-8") as handle:
        assert sum(1 for _ in handle) == 1 + 6366  # one report per row
    assert data["analyst_only"]["missing"] == 400 and data["analyst_only"]["clamped"] == 256


def test_local_mean_n_is_the_number_of_rows(capsys, religious_csv):
    code, out, err = run(capsys, "query", religious_csv, "--column", "hours", "--query",
                         "mean", "--mechanism", "duchi", "--bounds", "0,40", "--epsilon", "1",
                         "--simulate", "4", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["n"] == 6366  # before: 6,066
    assert any("middle of the declared bounds (20)" in note for note in data["notes"])
    assert "analyst_only" not in data


def test_a_stated_epsilon_that_is_not_the_randomizers_is_refused(capsys):
    """rr with p = 0.75 is ln 3-DP: --epsilon 1 is refused in one line before any noise (as
    a release spec is); the randomizer's own ε is accepted and is the one stated."""
    from dpstudio.data.samples import sample_path

    base = ["query", str(sample_path("survey")), "--column", "cheated_on_exam",
            "--query", "histogram", "--mechanism", "rr", "--p", "0.75", "--json"]
    assert main(base + ["--epsilon", "1"]) == 2
    err = capsys.readouterr().err
    assert "disagrees with p = 0.75" in err and len(err.strip().splitlines()) == 1
    assert main(base + ["--epsilon", "1.0986122886681098"]) == 0
    assert json.loads(capsys.readouterr().out)["epsilon"] == pytest.approx(math.log(3))
