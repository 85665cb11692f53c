"""Start-up: a command imports only what it uses.

Counted in a fresh interpreter (``sys.modules``), never timed: pandas and pyarrow cost a
command that reads no data most of its start-up, ``scipy.optimize`` another fifth.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_PROBE = textwrap.dedent("""
    import contextlib, io, json, sys
    from dpstudio.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(json.loads(sys.argv[1]))
    heavy = ("pandas", "pyarrow", "scipy.optimize", "PySide6", "pyqtgraph", "matplotlib")
    print(json.dumps({"code": code, "imported": [m for m in heavy if m in sys.modules]}))
""")


def _imports(argv: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argv)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def test_mechanisms_imports_no_pandas_pyarrow_or_optimizer():
    for argv in (["mechanisms", "--json"], ["mechanisms"]):
        seen = _imports(argv)
        assert seen == {"code": 0, "imported": []}, argv


def test_a_query_on_a_small_file_imports_no_gui_and_no_optimizer():
    from dpstudio.data.samples import sample_path

    seen = _imports(["query", str(sample_path("survey")), "--column", "age", "--query",
                     "mean", "--mechanism", "laplace", "--epsilon", "1", "--bounds", "0,100",
                     "--json"])
    assert seen["code"] == 0
    assert seen["imported"] == ["pandas", "pyarrow"]  # it reads a table: those, and no more


def test_the_data_package_imports_its_parts_on_first_use():
    probe = ("import sys, dpstudio.data.errors, dpstudio.data as d\n"
             "before = 'pandas' in sys.modules\n"
             "names = {n: getattr(d, n) for n in d.__all__}\n"
             "from dpstudio.data.loading import load_table\n"
             "print(before, names['load_table'] is load_table, set(names) <= set(dir(d)))")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == ["False", "True", "True"]


#: Engine modules that call scipy.special (or scipy.fft) only inside functions.
_SCIPY_ON_FIRST_USE = (
    "release_curve", "sampling", "utility", "calibration", "audit", "accounting.gdp",
    "accounting.composition", "accounting.pld", "accounting.rdp", "shuffle.amplification",
    "tradeoff.curves", "distributed.skellam", "distributed.sparse_graph", "local.run",
    "local.sfp",
)


def test_engine_modules_import_scipy_special_and_fft_on_first_use():
    probe = textwrap.dedent("""
        import importlib, json, sys
        for name in sys.argv[1:]:
            importlib.import_module("dpstudio.engine." + name)
        loaded = [m for m in ("scipy.special", "scipy.fft") if m in sys.modules]
        from dpstudio.engine.special import log_ndtr, ndtri
        first = [float(ndtri(0.975)), float(log_ndtr(-3.0))]
        then = "scipy.special" in sys.modules  # the first call imported it
        import scipy.special as s
        print(json.dumps({"loaded": loaded, "then": then,
                          "same": first == [float(s.ndtri(0.975)), float(s.log_ndtr(-3.0))]}))
    """)
    out = subprocess.run([sys.executable, "-c", probe, *_SCIPY_ON_FIRST_USE], check=True,
                         capture_output=True, text=True)
    assert json.loads(out.stdout) == {"loaded": [], "then": True, "same": True}
