"""The export layer draws with QtGui only: never widgets, pyqtgraph or the UI.

import-linter (pyproject.toml) lets three export modules import PySide6 but cannot forbid
an external subpackage, so this test checks QtWidgets statically (every import statement of
dpstudio.export) and at run time (a fresh interpreter that renders a report).
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import dpstudio.export

FORBIDDEN = ("PySide6.QtWidgets", "pyqtgraph", "dpstudio.ui", "PySide6.QtPrintSupport")
EXPORT = Path(dpstudio.export.__file__).parent


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def test_no_export_module_imports_widgets():
    for path in EXPORT.rglob("*.py"):
        for name in _imports(path):
            assert not any(name == f or name.startswith(f + ".") for f in FORBIDDEN), (path,
                                                                                      name)


SCRIPT = """
import json, sys
import numpy as np
import dpstudio.export, dpstudio.project, dpstudio.commands.release, dpstudio.commands.ledger
before = sorted(m for m in sys.modules if m.startswith("PySide6"))
from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.rng import SecureSource
from dpstudio.export import public_result
from dpstudio.export.report import ReportInput, render_report
spec = QuerySpec(query="count", mechanism="laplace", epsilon=1.0, column="x")
pub = public_result(release(np.ones(50), spec, SecureSource()))
html, pdf = render_report(ReportInput(1, "u", "t", "d.csv", "f" * 64, spec, pub, 1.0, 0.0,
                                      "basic", 2.0, 0.0, [{"id": 1, "time": "t",
                                      "query": "count", "column": "x", "mechanism": "laplace",
                                      "epsilon": 1.0, "delta": 0.0, "status": "this release"}]))
from PySide6.QtGui import QGuiApplication
print(json.dumps({"before": before, "modules": sorted(sys.modules), "pdf": pdf[:5].decode(),
                  "platform": QGuiApplication.platformName()}))
"""


def test_rendering_a_report_needs_no_widgets_and_no_display():
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True, env=env, timeout=120)
    report = json.loads(out.stdout)
    assert report["before"] == []  # importing project/export/commands loads no Qt at all
    leaked = [m for m in report["modules"] if any(m == f or m.startswith(f + ".")
                                                  for f in FORBIDDEN)]
    assert leaked == []
    assert report["pdf"] == "%PDF-" and report["platform"] == "offscreen"
