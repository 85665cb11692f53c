"""Branches on the trust model live in the engine and the analysis layer, nowhere else.

Counted on the syntax tree: a comparison with a trust model's name (``x == "local"``,
``x in ("central", "local")``), and dispatch tables
(a dict literal with two or more trust-model keys). Outside ``engine/`` and ``analysis/``
only the few listed below may remain (texts shown to people, keyed by trust model).
"""

from __future__ import annotations

import ast
from pathlib import Path

from dpstudio.engine.trust_models import TRUST_MODELS

PACKAGE = Path(__file__).resolve().parents[1] / "dpstudio"
NAMES = set(TRUST_MODELS)

#: At most this many branches outside engine/ and analysis/: the application's texts keyed
#: by trust model (ui/texts.py's table, the release dialog's local-model sentence in
#: ui/project_dialogs.py). What can be released, under which relation and with which
#: options is the analysis layer's capability table (the Release… button asks it too).
#: 41 grep hits (74 by this counter) before the analysis layer.
ALLOWED = 2


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def _mentions(node: ast.AST) -> bool:
    if _is_name(node):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_name(e) for e in node.elts)
    return False


def branches(source: str) -> list[int]:
    """Line numbers of the branches on a trust model in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            if any(_mentions(p) for p in parts):
                found.append(node.lineno)
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None and _is_name(k)]
            if len(keys) >= 2:
                found.append(node.lineno)
    return found


def count_outside() -> dict[str, list[int]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(("engine/", "analysis/")):
            continue
        lines = branches(path.read_text(encoding="utf-8"))
        if lines:
            out[rel] = lines
    return out


def test_the_counter_sees_each_kind_of_branch():
    src = ('if s.trust_model == "local": pass\n'
           'if tm in ("central", "local"): pass\n'
           'T = {"shuffle": 1, "distributed": 2}\n'
           'if trust != x: pass\n'
           'if query == "mean": pass\n'
           'if tm not in info.trust_models: pass\n')
    assert branches(src) == [1, 2, 3]


def test_few_branches_on_the_trust_model_outside_the_engine_and_analysis():
    found = count_outside()
    total = sum(len(v) for v in found.values())
    where = "; ".join(f"{k}:{','.join(map(str, v))}" for k, v in found.items())
    assert total <= ALLOWED, f"{total} branches on the trust model outside engine/analysis: {where}"
