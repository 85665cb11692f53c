"""The reproducible script of a release as a Jupyter notebook, runnable top to bottom.

:func:`script_notebook` turns the text :func:`~dpstudio.export.script.release_script`
writes into notebook cells: the script's docstring (what it reproduces, and the warning
that running it is a new release outside the ledger) as the first, markdown, cell; its
imports and constants; its functions; and a last cell that runs ``main()``. The code is
the script's own, statement for statement, so the two cannot drift apart; a notebook
takes no command-line arguments, so its first code cell empties ``sys.argv`` and the
paths written in the constants are used.

Written as nbformat 4.5 JSON by hand (no Jupyter package needed to write one).
"""

from __future__ import annotations

import ast
import json

__all__ = ["NOTEBOOK_SUFFIX", "script_notebook"]

#: The file suffix of a release's notebook.
NOTEBOOK_SUFFIX = ".ipynb"
_ARGV_LINE = ("import sys\n"
              "sys.argv = sys.argv[:1]  # a notebook takes no arguments: the paths below")


def _lines(text: str) -> list[str]:
    """A cell's ``source``: its lines, each but the last ending in a newline."""
    parts = text.strip("\n").split("\n")
    return [p + "\n" for p in parts[:-1]] + parts[-1:]


def _code(index: int, text: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": f"cell-{index}",
            "metadata": {}, "outputs": [], "source": _lines(text)}


def _markdown(index: int, text: str) -> dict:
    return {"cell_type": "markdown", "id": f"cell-{index}", "metadata": {},
            "source": _lines(text)}


def _is_main_guard(node: ast.stmt) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def script_notebook(script: str) -> bytes:
    """The notebook of a release script (nbformat 4.5 JSON, UTF-8).

    Parameters
    ----------
    script : str
        The source of a release's script, as
        :func:`~dpstudio.export.script.release_script` writes it: a docstring, imports
        and constants, functions, and an ``if __name__ == "__main__"`` guard.

    Returns
    -------
    bytes
        The notebook: a markdown cell from the docstring, a code cell of imports and
        constants (``sys.argv`` emptied first), one of the functions, and one that
        runs ``main()`` and shows its exit code (0: done; 2: the data is not the
        release's).

    Raises
    ------
    ValueError
        If ``script`` is not Python with a docstring and a ``main`` function.
    """
    try:
        tree = ast.parse(script)
    except SyntaxError as exc:
        raise ValueError(f"not a release script ({exc.msg})") from None
    doc = ast.get_docstring(tree)
    body = tree.body[1:] if doc is not None else tree.body
    if doc is None or not any(isinstance(n, ast.FunctionDef) and n.name == "main"
                              for n in body):
        raise ValueError("not a release script (no docstring or no main function)")
    title, _, rest = doc.partition("\n")
    # The script's command-line usage means nothing in a notebook.
    rest = "\n\n".join(p for p in rest.strip().split("\n\n")
                        if not p.lstrip().startswith("Usage:"))
    setup = [_ARGV_LINE]
    functions = []
    for node in body:
        if _is_main_guard(node):
            continue  # the notebook's last cell runs main() instead
        text = ast.get_source_segment(script, node, padded=True) or ""
        (functions if isinstance(node, ast.FunctionDef) else setup).append(text)
    cells = [_markdown(1, f"# {title.strip()}\n\n{rest.strip()}"),
             _code(2, "\n".join(setup)),
             _code(3, "\n\n\n".join(functions)),
             _code(4, "exit_code = main()  # 0: released again; 2: not the release's data\n"
                      "exit_code")]
    notebook = {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
