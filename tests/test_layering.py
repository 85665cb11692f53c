"""The engine runs without Qt, pyqtgraph or pandas (besides import-linter's static check).

A fresh interpreter imports every engine module and the registry's mechanisms; none of the
forbidden packages may end up in ``sys.modules`` — this also catches imports made
indirectly or at call time, which a static check can miss.
"""

import json
import subprocess
import sys

FORBIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "pandas", "dpstudio.ui", "dpstudio.data")

SCRIPT = """
import importlib, json, pkgutil, sys
import dpstudio.engine as engine
for mod in pkgutil.walk_packages(engine.__path__, "dpstudio.engine."):
    importlib.import_module(mod.name)
from dpstudio.engine.registry import REGISTRY
names = REGISTRY.names()
print(json.dumps({"modules": sorted(sys.modules), "mechanisms": names}))
"""


def test_engine_imports_nothing_forbidden():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True)
    report = json.loads(out.stdout)
    leaked = [m for m in report["modules"]
              if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert leaked == []
    assert len(report["mechanisms"]) >= 6
