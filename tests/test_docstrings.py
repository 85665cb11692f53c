"""The engine's and the analysis layer's public API carries numpy-style docstrings.

Issue 11 asks that public functions keep numpy-style docstrings. This test reads every
module under ``dpstudio/engine`` and ``dpstudio/analysis`` with :mod:`ast` (nothing is
imported) and, for each public top-level function or class, checks that

- it has a docstring;
- a function that takes parameters (besides ``self``/``cls``) has a ``Parameters``
  section;
- a class has a ``Parameters`` or an ``Attributes`` section.

A name is public when it is listed in the module's ``__all__`` or, if the module has no
``__all__``, when it does not start with an underscore. There is one test per module
(its id is the dotted module name) and a failure lists every name still missing, with
what is missing, so the remaining work reads straight from the report.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dpstudio/engine", "dpstudio/analysis")

# A numpy-style section is its title on one line, underlined by dashes on the next.
_SECTION = r"^[ \t]*{title}[ \t]*\n[ \t]*-{{3,}}[ \t]*$"


def has_section(doc: str, *titles: str) -> bool:
    """Tell whether a docstring holds one of the given numpy-style sections.

    Parameters
    ----------
    doc : str
        The docstring, already dedented by :func:`ast.get_docstring`.
    *titles : str
        Section titles accepted, such as ``"Parameters"``.

    Returns
    -------
    bool
        True when a title is followed by a line of at least three dashes.
    """
    return any(re.search(_SECTION.format(title=re.escape(t)), doc, re.MULTILINE)
               for t in titles)


def _declared_all(tree: ast.Module) -> set[str] | None:
    """Names in a literal ``__all__`` of the module, or None when there is none."""
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            try:
                return set(ast.literal_eval(node.value))
            except (ValueError, TypeError, SyntaxError):
                # A computed __all__ cannot be read statically: judge by the names.
                return None
    return None


def _takes_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    args = node.args
    named = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    named = [a for a in named if a not in ("self", "cls")]
    return bool(named or args.vararg or args.kwarg)


def missing_docs(source: str) -> list[str]:
    """List the public names of a module whose docstring falls short.

    Parameters
    ----------
    source : str
        Python source of one module.

    Returns
    -------
    list of str
        One entry per offending name, ``"name: what is missing"``, in source order.
    """
    tree = ast.parse(source)
    public = _declared_all(tree)
    problems = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        name = node.name
        if public is not None and name not in public:
            continue
        if public is None and name.startswith("_"):
            continue
        doc = ast.get_docstring(node) or ""
        if not doc.strip():
            problems.append(f"{name}: no docstring")
        elif isinstance(node, ast.ClassDef):
            if not has_section(doc, "Parameters", "Attributes"):
                problems.append(f"{name}: no Parameters or Attributes section")
        elif _takes_parameters(node) and not has_section(doc, "Parameters"):
            problems.append(f"{name}: no Parameters section")
    return problems


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _module_id(path: Path) -> str:
    dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return dotted.removesuffix(".__init__")


@pytest.mark.parametrize("path", _modules(), ids=_module_id)
def test_public_api_has_numpy_docstrings(path: Path):
    problems = missing_docs(path.read_text(encoding="utf-8"))
    assert not problems, (f"{_module_id(path)}: {len(problems)} public name(s) lack a "
                          "numpy-style docstring:\n  " + "\n  ".join(problems))


def test_modules_were_found():
    # An empty walk (moved package, wrong root) would make every check pass vacuously.
    ids = {_module_id(p) for p in _modules()}
    assert {"dpstudio.engine.calibration", "dpstudio.analysis"} <= ids


CHECKER_CASES = {
    "no docstring": ("def f(x):\n    return x\n", ["f: no docstring"]),
    "summary only": ('def f(x):\n    """Do f."""\n', ["f: no Parameters section"]),
    "returns only": ('def f(x):\n    """Do f.\n\n    Returns\n    -------\n    int\n    """\n',
                     ["f: no Parameters section"]),
    "word without underline": ('def f(x):\n    """Parameters\n    x : int\n    """\n',
                               ["f: no Parameters section"]),
    "keyword-only": ('def f(*, x):\n    """Do f."""\n', ["f: no Parameters section"]),
    "complete": ('def f(x):\n    """Do f.\n\n    Parameters\n    ----------\n    x : int\n'
                 '        The x.\n    """\n', []),
    "no parameters": ('def f():\n    """Do f."""\n', []),
    "method self only": ('def f(self):\n    """Do f."""\n', []),
    "private skipped": ("def _f(x):\n    return x\n", []),
    "__all__ restricts": ('__all__ = ["g"]\ndef f(x):\n    pass\ndef g():\n    pass\n',
                          ["g: no docstring"]),
    "class bare": ('class C:\n    """A C."""\n', ["C: no Parameters or Attributes section"]),
    "class attributes": ('class C:\n    """A C.\n\n    Attributes\n    ----------\n'
                         '    x : int\n    """\n', []),
}


@pytest.mark.parametrize("case", CHECKER_CASES, ids=list(CHECKER_CASES))
def test_checker_flags_what_it_should(case):
    source, expected = CHECKER_CASES[case]
    assert missing_docs(source) == expected
