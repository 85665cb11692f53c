"""The import graph of ``dpstudio.engine``, read from the source files (AST, no import).

An edge A → B means module A has an import statement naming B, or a name in B (``from B
import name``), anywhere in the file: at the top, under a condition or inside a function.
A deferred import is still a dependency, and the registry's own loader is one. Two kinds of
import statement are left out, both because they never run while anything is imported:

* those under ``if TYPE_CHECKING:`` (read by type checkers only);
* those in a module-level ``def __getattr__`` (PEP 562): a package's lazy re-exports for its
  callers, which run only when a caller asks the package for that name.

Importing a submodule runs its package's ``__init__`` first, so every module also has an
edge to each package that contains it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpstudio.engine

ENGINE = "dpstudio.engine"
ROOT = Path(dpstudio.engine.__file__).parent


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([ENGINE, *parts])


def engine_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the engine by dotted name (packages by their own name)."""
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.Module):
    """Import statements of a module, without the two kinds left out (module docstring)."""
    stack: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            continue
        stack.append(node)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _targets(node: ast.Import | ast.ImportFrom, here: str, is_package: bool) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    base = node.module or ""
    if node.level:
        package = here if is_package else here.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    # ``from pkg import sub`` names the submodule when there is one.
    return {base} | {f"{base}.{alias.name}" for alias in node.names}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module → the engine modules it imports (edges as in the module docstring)."""
    modules = engine_modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges: set[str] = set()
        for node in _import_nodes(tree):
            for target in _targets(node, name, path.name == "__init__.py"):
                while target and target not in modules:  # a name inside a module
                    target = target.rpartition(".")[0]
                if target:
                    edges.add(target)
        # Each import runs the __init__ of every package above the module imported.
        for target in list(edges) + [name]:
            parent = target.rpartition(".")[0]
            while parent in modules:
                edges.add(parent)
                parent = parent.rpartition(".")[0]
        edges.discard(name)
        graph[name] = edges
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module reachable from ``start`` by one edge or more."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def cycle_through(graph: dict[str, set[str]], module: str) -> list[str]:
    """A shortest cycle module → … → module, or [] when there is none (breadth first)."""
    previous: dict[str, str] = {}
    frontier = [module]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph.get(node, ())):
                if nxt == module:
                    path = [node]
                    while path[-1] != module:
                        path.append(previous[path[-1]])
                    return [module, *reversed(path[:-1]), module] if node != module else [
                        module, module]
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return []
