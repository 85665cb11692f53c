"""No import circle among modules split apart to remove one: the spec formats and their
door, the row-level and user-level utility curves, the parts of a training run.

Every ``import`` is counted, at the top of a module or inside a function (a lazy import
still ties two modules together). A circle is two modules that reach each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _arrows(modules: list[str], root: Path = ROOT) -> dict[str, set[str]]:
    """For each module, which of ``modules`` it imports (``from a import b`` counts for
    ``a`` and for ``a.b``)."""
    out: dict[str, set[str]] = {}
    for name in modules:
        tree = ast.parse((root / (name.replace(".", "/") + ".py")).read_text("utf-8"))
        seen: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                seen.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                seen.update({node.module, *(f"{node.module}.{a.name}" for a in node.names)})
        out[name] = (seen & set(modules)) - {name}
    return out


def _circles(arrows: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every arrow a → b where b reaches a back."""
    def reach(start: str) -> set[str]:
        found, todo = set(), [start]
        while todo:
            for nxt in arrows[todo.pop()] - found:
                found.add(nxt)
                todo.append(nxt)
        return found
    return sorted((a, b) for a in arrows for b in arrows[a] if a in reach(b))


GROUPS = {
    "specs": ["dpstudio.project.spec", "dpstudio.project.spec_fields",
              "dpstudio.project.spec_statistic", "dpstudio.project.spec_plan",
              "dpstudio.project.train_spec"],
    "utility": ["dpstudio.analysis.utility", "dpstudio.analysis.contribution_utility",
                "dpstudio.analysis.sample_error"],
    "training": ["dpstudio.analysis.training", "dpstudio.analysis.training_data",
                 "dpstudio.analysis.training_detail", "dpstudio.analysis.training_measures",
                 "dpstudio.analysis.training_methods"],
}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_no_circle(group):
    assert _circles(_arrows(GROUPS[group])) == []


def test_the_circle_finder_finds_a_lazy_import_back(tmp_path):
    # A tree where b imports a only inside a function: still a circle.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("from pkg.b import f\n", encoding="utf-8")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from pkg import a\n",
                                           encoding="utf-8")
    assert _circles(_arrows(["pkg.a", "pkg.b"], tmp_path)) == [("pkg.a", "pkg.b"),
                                                               ("pkg.b", "pkg.a")]


def test_the_spec_dispatcher_sits_on_top_and_the_field_readers_below():
    arrows = _arrows(GROUPS["specs"])
    assert arrows["dpstudio.project.spec_fields"] == set()
    assert not any("dpstudio.project.spec" in arrows[m] for m in GROUPS["specs"])


def test_the_parts_of_a_training_run_stay_small():
    for name in GROUPS["training"]:
        lines = (ROOT / (name.replace(".", "/") + ".py")).read_text("utf-8").count("\n")
        assert lines < 420, (name, lines)
