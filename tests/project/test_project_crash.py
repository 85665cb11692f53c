"""Crash consistency: kill -9 CLI releases at random moments, then check after recovery.

A fork server (a subprocess that has imported dpstudio once) forks one child per run; the
child runs ``dpstudio release`` (``dpstudio.cli.main``) with the test hook
``DPSTUDIO_TEST_PAUSE`` making it sleep a random moment at every step of the release and
of recovery, and the server kills it with SIGKILL after a random delay (the server, not
the test, kills and reaps it, so the pid cannot have been reused). After most runs the test
opens the project — which runs recovery — and checks that the ledger and the output folder
agree and that SQLite's integrity check passes; after the others it leaves recovery to the
next child, which may itself be killed in the middle of recovering. A few runs are killed
as real ``python -m dpstudio release`` processes as well.
"""

import collections
import os
import random
import statistics
import subprocess
import sys

import pytest
from dps_project_helpers import assert_consistent, fast_dir, make_dataset, write_spec

from dpstudio.project import Project

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

KILLS = 50  # at least this many runs killed with SIGKILL
MAX_RUNS = 110
REAL_RUNS = 3
PAUSE = "0.03"  # seconds, at most, at each step

SERVER = r"""
import os, signal, sys, time
import dpstudio.cli, dpstudio.commands.release, dpstudio.project, dpstudio.export
import dpstudio.data, dpstudio.engine.queries, openpyxl, pyarrow.parquet
from dpstudio.engine.registry import REGISTRY
REGISTRY.names()
argv = sys.argv[1:]
print("ready", flush=True)
for line in sys.stdin:
    cmd, delay = line.split()
    if cmd != "go":
        break
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        try:
            code = dpstudio.cli.main(argv)
        except BaseException:
            code = 99
        os._exit(code)
    deadline = start + float(delay)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)  # not reaped yet: still our child
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.0005)
    took = time.monotonic() - start
    if os.WIFSIGNALED(status):
        print("killed", os.WTERMSIG(status), f"{took:.4f}", flush=True)
    else:
        print("exit", os.WEXITSTATUS(status), f"{took:.4f}", flush=True)
"""


def _classify(before, after, result):
    """What one run did: no charge, aborted (by recovery), completed by recovery, done."""
    new = [r for r in after if r.id not in before]
    if not new:
        return "killed before the charge committed"
    (rec,) = new
    if rec.status == "aborted":
        return "aborted by recovery"
    if "completed by recovery" in rec.note:
        return "completed by recovery"
    return "done" if result[0] == "exit" else "done, killed after confirming"


def test_kill_minus_nine_at_random_moments(tmp_path):
    rng = random.Random(20240607)
    outcomes = collections.Counter()
    with fast_dir() as work:
        data = make_dataset(work)
        spec = write_spec(work / "spec.toml", data, formats=["csv", "json", "xlsx"],
                          script=True)
        project = work / "p.dpstudio"
        out = work / "out"
        Project.create(project, epsilon=1000, delta=1e-5).close()
        env = dict(os.environ, DPSTUDIO_TEST_PAUSE=PAUSE, OPENBLAS_NUM_THREADS="1",
                   OMP_NUM_THREADS="1")
        argv = ["release", str(spec), "--project", str(project), "--out", str(out)]
        with open(tmp_path / "server.err", "w") as err:
            server = subprocess.Popen([sys.executable, "-c", SERVER, *argv], env=env,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                      text=True, cwd=work)
            try:
                assert server.stdout.readline().strip() == "ready"
                # One undisturbed run: how long a release takes here.
                server.stdin.write("go 60\n")
                server.stdin.flush()
                first = server.stdout.readline().split()
                assert first[:2] == ["exit", "0"], first
                known = {r.id for r in assert_consistent(project, out)}
                durations = [float(first[2])]
                pending_check = False
                runs = kills = 0
                while kills < KILLS and runs < MAX_RUNS:
                    # A random moment within a typical (uninterrupted) release.
                    delay = rng.uniform(0.0, 1.05 * statistics.median(durations))
                    server.stdin.write(f"go {delay:.4f}\n")
                    server.stdin.flush()
                    result = server.stdout.readline().split()
                    runs += 1
                    assert result and result[0] in ("exit", "killed"), result
                    if result[0] == "exit":
                        assert result[1] == "0", result
                        durations.append(float(result[2]))
                    else:
                        kills += 1
                    if pending_check or rng.random() < 0.75 or kills == KILLS:
                        records = assert_consistent(project, out)
                        if not pending_check:
                            outcomes[_classify(known, records, result)] += 1
                        known = {r.id for r in records}
                        pending_check = False
                    else:  # leave recovery to the next child (which may be killed in it)
                        pending_check = True
                        outcomes["left to the next run's recovery"] += 1
                full = statistics.median(durations)
            finally:
                server.stdin.close()
                server.wait(timeout=30)
        for _ in range(REAL_RUNS):
            proc = subprocess.Popen([sys.executable, "-m", "dpstudio", *argv], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    cwd=work)
            try:
                proc.wait(timeout=rng.uniform(0.9, 1.2) + full)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            records = assert_consistent(project, out)
            outcomes[_classify(known, records, ("exit",) if proc.returncode == 0 else
                               ("killed",))] += 1
            known = {r.id for r in records}
        final = assert_consistent(project, out)
    print(f"\ncrash test: {runs} fork-server runs ({kills} killed) + {REAL_RUNS} real processes, "
          f"median release {full:.3f} s; outcomes: {dict(outcomes)}; ledger "
          f"{collections.Counter(r.status for r in final)}")
    assert kills >= KILLS
    assert outcomes["killed before the charge committed"] >= 2
    assert outcomes["aborted by recovery"] >= 2
