"""Issue 10, items 10–12 at the command line: what used to crash, mislead or flood now
answers in one line (exit 2), and the process ends cleanly.

Each test here failed on the code before the fix (noted per test).
"""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from dpstudio.cli import main
from dpstudio.engine.checks import MAX_BOUND, MIN_BOUNDS_WIDTH, bounds_pair
from dpstudio.engine.errors import QueryError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "project"))
from dps_project_helpers import make_dataset, write_spec  # noqa: E402


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err, needle):
    assert code == 2, (code, out, err)
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("dpstudio: error: "), err
    assert "Traceback" not in err
    assert needle in err, err


@pytest.fixture
def numbers_csv(tmp_path):
    """A file of numbers without a header line."""
    path = tmp_path / "nums.csv"
    path.write_text("1,2\n3,4\n5,6\n", encoding="utf-8")
    return path


@pytest.fixture
def data_csv(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("x,y\n1,2\n3,4\n5,6\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------- 11a: huge bounds


@pytest.mark.parametrize("query", ["sum", "mean", "variance"])
def test_bounds_beyond_the_samplers_scale_are_refused_in_one_line(capsys, data_csv, query):
    # Before: 0,1e300 overflowed the noise variance to inf and the JSON output ended in a
    # ValueError traceback (exit 1).
    result = run(capsys, "query", data_csv, "--column", "x", "--query", query,
                 "--bounds=0,1e300", "--mechanism", "laplace", "--epsilon", "1", "--json")
    one_line_error(*result, "too large for exact noise")


def test_bounds_at_the_limit_still_release_finite_json(capsys, data_csv):
    # The limit is not arbitrary-small: ±2^100 and the smallest ε still give finite output,
    # the variance query included (it squares the bounds, its noise variance squares again).
    code, out, err = run(capsys, "query", data_csv, "--column", "x", "--query", "variance",
                         f"--bounds={-MAX_BOUND!r},{MAX_BOUND!r}", "--mechanism", "laplace",
                         "--epsilon", "1e-9", "--json", "--simulate", "3")
    assert code == 0, err
    assert np.isfinite(json.loads(out)["variance"])


def test_bounds_pair_limits():
    assert bounds_pair((-MAX_BOUND, MAX_BOUND)) == (-MAX_BOUND, MAX_BOUND)
    assert bounds_pair((0.0, MIN_BOUNDS_WIDTH)) == (0.0, MIN_BOUNDS_WIDTH)
    for bad in [(0.0, 1e300), (-1e308, 1e308), (0.0, 1e-300), (0.0, 2 * MAX_BOUND)]:
        with pytest.raises(QueryError, match="for exact noise"):
            bounds_pair(bad)


@pytest.mark.parametrize("mechanism", ["duchi", "local_laplace"])
def test_local_means_share_the_bounds_limit(capsys, data_csv, mechanism):
    # Before: an OverflowError traceback from the local mean's variance.
    result = run(capsys, "query", data_csv, "--column", "x", "--query", "mean",
                 "--bounds=0,1e300", "--mechanism", mechanism, "--epsilon", "1")
    one_line_error(*result, "too large for exact noise")


def test_an_epsilon_too_small_for_the_samplers_is_refused_in_one_line(capsys, data_csv):
    # Before: "ValueError: scale must be at most 1e+12" in a traceback.
    result = run(capsys, "query", data_csv, "--column", "x", "--query", "sum",
                 "--bounds", "0,10", "--mechanism", "laplace", "--epsilon", "1e-300")
    one_line_error(*result, "too small to release with exact noise")


# ------------------------------------------------------------ 11c: δ of a pure mechanism


@pytest.mark.parametrize("mechanism,query", [("laplace", "mean"), ("discrete_laplace", "count"),
                                             ("exponential", "median")])
def test_a_pure_mechanism_refuses_a_delta(capsys, data_csv, mechanism, query):
    # Before: accepted; δ = 0 at the top of the output and 0.25 in each component.
    result = run(capsys, "query", data_csv, "--column", "x", "--query", query,
                 "--bounds", "0,10", "--mechanism", mechanism, "--epsilon", "1",
                 "--delta", "0.5", "--json")
    one_line_error(*result, f"{mechanism} is pure ε-DP: drop --delta")


def test_pure_mechanisms_without_delta_and_gaussian_with_delta_still_release(capsys,
                                                                            data_csv):
    code, out, err = run(capsys, "query", data_csv, "--column", "x", "--query", "mean",
                         "--bounds", "0,10", "--mechanism", "laplace", "--epsilon", "1",
                         "--json", "--simulate", "1")
    assert code == 0, err
    data = json.loads(out)
    assert data["delta"] == 0 and all(c["delta"] == 0 for c in data["components"])
    code, out, err = run(capsys, "query", data_csv, "--column", "x", "--query", "sum",
                         "--bounds", "0,10", "--mechanism", "gaussian", "--epsilon", "1",
                         "--delta", "1e-6", "--json", "--simulate", "1")
    assert code == 0, err
    assert json.loads(out)["delta"] == 1e-6


# ------------------------------------------------------------- 10: headerless numbers


def test_a_header_of_numbers_is_noted_and_no_header_keeps_the_first_row(capsys, numbers_csv):
    # Before: no note, and --no-header was an unknown option.
    code, out, err = run(capsys, "query", numbers_csv, "--column", "1", "--query", "sum",
                         "--bounds", "0,10", "--mechanism", "laplace", "--epsilon", "1",
                         "--json", "--simulate", "1")
    assert code == 0
    assert err.count("\n") == 1 and "every column name is a number" in err
    assert "--no-header" in err
    assert "every column name" not in out  # the note is the analyst's, not the release's
    code, out, err = run(capsys, "query", numbers_csv, "--no-header", "--column", "2",
                         "--query", "count", "--mechanism", "laplace", "--epsilon", "1",
                         "--json", "--simulate", "1")
    assert code == 0, err
    assert err == ""


# ------------------------------------------------------------- 12a: long echoed text


def test_a_huge_header_gives_a_short_one_line_error(capsys, tmp_path):
    # Before: a 100,049-character "one-line" error listing the 100,000-character name.
    path = tmp_path / "long.csv"
    path.write_text("a" * 100_000 + ",b\n1,2\n", encoding="utf-8")
    result = run(capsys, "query", path, "--column", "zz", "--query", "count",
                 "--mechanism", "laplace", "--epsilon", "1")
    one_line_error(*result, "no column 'zz'")
    assert len(result[2]) < 400 and "(100,000 characters)" in result[2]


def test_every_cli_error_is_capped_even_when_nobody_shortened_it(capsys, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x\n1\n", encoding="utf-8")
    result = run(capsys, "query", path, "--column", "x", "--query", "count",
                 "--mechanism", "laplace", "--epsilon", "1", "--relation", "r" * 100_000)
    assert result[0] == 2 and result[2].count("\n") == 1 and len(result[2]) < 1100


# ------------------------------------------------------------- 12b: a closed pipe


def test_a_closed_pipe_ends_quietly():
    # Before: "dpstudio: error: [Errno 32] Broken pipe" and exit code 2.
    proc = subprocess.Popen([sys.executable, "-m", "dpstudio", "mechanisms", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    proc.stdout.close()  # the reader (`| head`) is gone before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert err == ""


# ------------------------------------------------------------- 11d: the native abort

CHILD = """
import atexit, sys
atexit.register(lambda: open(sys.argv[1], "w").write("finalized"))
sys.argv = ["dpstudio", "query", sys.argv[2], "--column", "1", "--query", "count",
            "--mechanism", "laplace", "--epsilon", "1", "--json", "--no-header"]
from dpstudio.cli import main
main()
"""


def test_the_program_ends_without_finalization_and_with_its_output_flushed(tmp_path,
                                                                           numbers_csv):
    # pyarrow's C++ worker threads (started by loading a table) were torn down by static
    # destructors at interpreter exit, racing the workers: about 1 run in 150 under load
    # aborted with "terminate called without an active exception" (SIGABRT). The program
    # now flushes its output and ends with os._exit, so no finalization (atexit, static
    # destructors) runs. Before: the atexit handler ran.
    marker = tmp_path / "finalized.txt"
    out = tmp_path / "out.json"
    with open(out, "wb") as handle:  # a file: block-buffered, lost unless flushed
        proc = subprocess.run([sys.executable, "-c", CHILD, str(marker), str(numbers_csv)],
                              stdout=handle, stderr=subprocess.PIPE, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["query"] == "count"
    assert not marker.exists()


def test_main_with_arguments_returns_to_its_caller(capsys, numbers_csv):
    # In-process callers (tests, scripts) pass argv and get the code back.
    code, out, _ = run(capsys, "query", numbers_csv, "--no-header", "--column", "1",
                       "--query", "count", "--mechanism", "laplace", "--epsilon", "1",
                       "--simulate", "1")
    assert code == 0 and "count" in out


# ------------------------------------------------------------- 12c: releases wait


class _FastClock:
    """time for dpstudio.project._fs: each sleep advances the clock by a whole second."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now += 1.0
        time.sleep(0.0005)


def test_a_release_waits_its_turn_past_the_old_thirty_seconds(tmp_path, monkeypatch):
    # Before: a release gave up with "busy" after 30 s behind other releases.
    from dpstudio.engine.queries import QuerySpec
    from dpstudio.project import Project, ReleaseSpec, _fs
    from dpstudio.project._fs import ProjectLock

    data = make_dataset(tmp_path)
    path = tmp_path / "p.dpstudio"
    Project.create(path, epsilon=5.0, delta=1e-5).close()
    clock = _FastClock()
    monkeypatch.setattr(_fs, "time", clock)
    other = ProjectLock(path)  # a release in progress in another process
    assert other.acquire(0)
    outcome = {}

    def release():
        try:
            with Project.open(path) as p:
                outcome["record"] = p.release(ReleaseSpec(
                    dataset=str(data), query=QuerySpec("sum", "laplace", 0.1, column="x"),
                    formats=("csv",)), tmp_path / "out")
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = exc

    worker = threading.Thread(target=release)
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while clock.now < 120 and worker.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert worker.is_alive(), outcome  # still waiting two "minutes" later
    finally:
        other.release()
    worker.join(60)
    assert "error" not in outcome, outcome
    assert outcome["record"].status == "done"


def test_concurrent_releases_all_get_a_definitive_answer_and_never_overspend(tmp_path):
    n, fits = 16, 10
    data = make_dataset(tmp_path)
    spec = write_spec(tmp_path / "s.toml", data, epsilon=0.1,
                      budget={"epsilon": 1.0, "delta": 0.0})
    proj = tmp_path / "p.dpstudio"
    assert main(["project", "init", str(proj)]) == 0
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-m", "dpstudio", "release", str(spec),
                               "--project", str(proj), "--out", str(tmp_path / f"o{i}")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
             for i in range(n)]
    results = [(p.wait(timeout=300), p.stderr.read().decode()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0] * fits + [3] * (n - fits), results  # released, or budget exceeded
    assert not any("busy" in err for _, err in results)
    from dpstudio.project import Project

    with Project.open(proj) as p:
        done = [r for r in p.ledger() if r.status == "done"]
    assert len(done) == fits
    assert sum(r.epsilon for r in done) <= 1.0


def test_a_release_spec_reads_a_headerless_file_with_header_false(tmp_path, capsys):
    # Before: "unknown key 'header'".
    data = tmp_path / "n.csv"
    data.write_text("10,20\n30,40\n50,60\n", encoding="utf-8")
    proj = tmp_path / "p.dpstudio"
    assert main(["project", "init", str(proj)]) == 0
    common = dict(column="1", query="count", epsilon=0.1,
                  budget={"epsilon": 1.0, "delta": 0.0})
    plain = write_spec(tmp_path / "plain.toml", data, **common)
    code = main(["release", str(plain), "--project", str(proj), "--out", str(tmp_path / "a")])
    assert code == 2 and "no column '1'" in capsys.readouterr().err  # "10" and "20" instead
    spec = write_spec(tmp_path / "s.toml", data, header=False, **common)
    code = main(["release", str(spec), "--project", str(proj), "--out", str(tmp_path / "b"),
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["status"] == "done"


def test_header_false_survives_saving_a_spec(tmp_path):
    from dpstudio.engine.queries import QuerySpec
    from dpstudio.project.spec import ReleaseSpec, load_spec, save_spec

    spec = ReleaseSpec(dataset=str(tmp_path / "n.csv"),
                       query=QuerySpec("count", "laplace", 1.0, column="1"), header=False)
    assert load_spec(save_spec(spec, tmp_path / "s.toml")).header is False


def test_the_script_of_a_headerless_release_reads_it_without_a_header(tmp_path, capsys):
    """The reproducible script and the ledger record say how the file was read."""
    import subprocess
    import sys

    from dpstudio.project import Project

    data = tmp_path / "n.csv"
    data.write_text("10,20\n30,40\n50,60\n", encoding="utf-8")
    proj = tmp_path / "p.dpstudio"
    assert main(["project", "init", str(proj)]) == 0
    spec = write_spec(tmp_path / "s.toml", data, header=False, column="1", query="count",
                      epsilon=0.1, budget={"epsilon": 1.0, "delta": 0.0}, script=True)
    out_dir = tmp_path / "out"
    assert main(["release", str(spec), "--project", str(proj), "--out", str(out_dir)]) == 0
    capsys.readouterr()
    (script,) = out_dir.glob("*.py")
    assert "header=False" in script.read_text(encoding="utf-8")
    run_it = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert run_it.returncode == 0, run_it.stderr
    with Project.open(proj) as p:
        (record,) = p.ledger()
    assert record.spec["header"] is False
