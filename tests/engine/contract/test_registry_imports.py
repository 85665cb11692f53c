"""The registry and the mechanisms do not import each other.

The registry is a plain container; :mod:`dpstudio.engine.mechanisms` lists the modules
holding the built-in entries and registers them on the registry's first read. Read from
the source (``import_graph.py``), no import cycle of ``dpstudio.engine`` goes through
``registry.py``; run in a fresh interpreter, importing a mechanism module leaves the
registry unimported, and reading the registry loads every built-in entry.
"""

import json
import subprocess
import sys

from import_graph import cycle_through, import_graph, reachable

REGISTRY_MODULE = "dpstudio.engine.registry"


def test_no_import_cycle_goes_through_the_registry():
    graph = import_graph()
    assert {REGISTRY_MODULE, "dpstudio.engine.mechanisms", "dpstudio.engine.entry"} <= set(graph)
    assert cycle_through(graph, REGISTRY_MODULE) == []
    # The registry reaches the mechanisms (its loader), and they never reach it back.
    assert "dpstudio.engine.mechanisms" in reachable(graph, REGISTRY_MODULE)
    assert REGISTRY_MODULE not in reachable(graph, "dpstudio.engine.mechanisms")


def test_the_graph_finds_a_cycle_through_the_registry(tmp_path):
    # The check's power: the old layout (a mechanism module registering itself into the
    # registry, which imports it lazily) is a cycle the graph must find.
    engine = tmp_path / "engine"
    engine.mkdir()
    (engine / "__init__.py").write_text("")
    (engine / "registry.py").write_text(
        "def _load():\n    from dpstudio.engine import additive\n")
    (engine / "additive.py").write_text(
        "from dpstudio.engine.registry import REGISTRY\n")
    (engine / "lazy.py").write_text(
        "def __getattr__(name):\n    from dpstudio.engine import registry\n")
    graph = import_graph(engine)
    assert cycle_through(graph, REGISTRY_MODULE) == [
        REGISTRY_MODULE, "dpstudio.engine.additive", REGISTRY_MODULE]
    assert REGISTRY_MODULE not in graph["dpstudio.engine.lazy"]  # a PEP 562 re-export


SCRIPT = """
import json, sys
import dpstudio.engine.mechanisms as mechanisms
before = "dpstudio.engine.registry" in sys.modules
import dpstudio.engine.registry as registry
loaded_on_import = len(registry.REGISTRY._entries)
names = registry.REGISTRY.names()
print(json.dumps({"registry_imported_by_mechanisms": before,
                  "entries_before_first_read": loaded_on_import,
                  "names": names,
                  "builtin": [e.name for e in mechanisms.builtin_entries()]}))
"""


def test_mechanisms_never_import_the_registry_and_the_first_read_loads_them():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True)
    report = json.loads(out.stdout)
    assert report["registry_imported_by_mechanisms"] is False
    assert report["entries_before_first_read"] == 0
    assert report["names"] == report["builtin"] and len(report["names"]) >= 21
