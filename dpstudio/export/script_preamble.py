"""What every generated release script says and checks first, written once.

Each script DP Studio writes (a single release's, a protocol's, a user-level release's, a
trained model's, a release plan's) opens the same way: its docstring warns that running it
draws fresh noise and spends the budget again outside the project's ledger; ``main()``
says so again on stderr, then checks the dataset's SHA-256 (read in 1 MiB chunks by
:func:`dpstudio.data.sha256_file`, whatever the file's size) before reading anything
else. The templates paste these fragments into their text — a script stays
self-contained and never imports them — and the spec's fields are written as explicit
keyword arguments (:func:`spec_lines`), one a line, never through ``repr``.

The fragments are :meth:`str.format` templates: they hold ``{epsilon}``, ``{delta}``,
``{release_id}``, ``{script_name}``, ``{dataset_path}`` and ``{fingerprint}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpstudio.engine.queries import QuerySpec

__all__ = ["DATASET_LINES", "END", "READERS", "USAGE", "Preamble", "doc_safe", "literal",
           "preamble", "spec_lines", "warning"]

#: How a column is read for a query (the function of :mod:`dpstudio.data` a script calls).
READERS = ("numeric_column", "category_column", "yes_no_column")


def warning(drawn: str = "noise", private: str = "differentially", output: str = "result",
            *, also: str | None = None) -> str:
    """The docstring paragraph saying that running the script spends the budget again.

    Parameters
    ----------
    drawn : str
        What the script draws afresh (``"noise"``, ``"randomness"``).
    private : str
        The kind of privacy of its output (``"differentially"``, ``"locally"``).
    output : str
        What the user publishes (``"result"``, ``"model"``).
    also : str, optional
        Something else drawn afresh, named after ``drawn`` in parentheses; the longer
        opening sentence then stands on its own line.

    Returns
    -------
    str
        The paragraph (a template holding ``{epsilon}`` and ``{delta}``), lines ≤ 90
        columns once formatted with short numbers.
    """
    if also is None:
        return (f"WARNING: running this script draws FRESH {drawn}. Its output is a NEW "
                f"{private}\nprivate release: publishing it spends epsilon = {{epsilon}} "
                "(delta = {delta}) again, and\nthis spending is NOT recorded in the DP Studio "
                "project ledger. Use it to audit or repeat\nthe procedure, and record any "
                f"{output} you publish with `dpstudio release` instead.\n")
    return (f"WARNING: running this script draws FRESH {drawn} (and {also}).\n"
            f"Its output is a NEW {private} private release: publishing it spends\n"
            "epsilon = {epsilon} (delta = {delta}) again, and this spending is NOT recorded "
            "in the\nDP Studio project ledger. Use it to audit or repeat the procedure, and "
            f"record any {output}\nyou publish with `dpstudio release` instead.\n")


def _note(drawn: str) -> str:
    # Wrapped where the sentence fits 88 columns for either word.
    first, rest = (("this draws fresh noise; publishing the output is a new release that is ",
                    "not in the project ledger") if drawn == "noise" else
                   ("this draws fresh randomness; publishing the output is a new release "
                    "that ", "is not in the project ledger"))
    return f'    print("note: {first}"\n          "{rest}", file=sys.stderr)\n'


def _sha_check(released: str) -> str:
    return ('    if sha256_file(DATASET) != FINGERPRINT:\n'
            '        print(f"error: {{DATASET}} is not the dataset of '
            f'{released} #{{release_id}} "\n'
            '              "(its SHA-256 differs)", file=sys.stderr)\n'
            '        return 2\n')


@dataclass(frozen=True)
class Preamble:
    """The two places a script's preamble goes.

    Attributes
    ----------
    warning : str
        The docstring's warning paragraph (:func:`warning`).
    main : str
        The opening of ``main()``: its ``def`` line, the stderr note and, unless the
        script checks a folder's fingerprint of its own, the dataset's SHA-256 check
        (which needs ``DATASET``, ``FINGERPRINT`` and ``sha256_file``).
    """

    warning: str
    main: str


def preamble(drawn: str = "noise", private: str = "differentially", output: str = "result",
             *, also: str | None = None, check: bool = True,
             released: str = "release") -> Preamble:
    """The warning, stderr note and SHA-256 check of one kind of script.

    Parameters
    ----------
    drawn, private, output, also : str
        As :func:`warning`; ``drawn`` also picks the stderr note (noise or randomness).
    check : bool
        False: no SHA-256 check (a folder of files checks its files' fingerprint after
        summing them, before drawing anything).
    released : str
        What the dataset was released as, in the check's error ("release",
        "release plan").

    Returns
    -------
    Preamble
    """
    return Preamble(warning(drawn, private, output, also=also),
                    "def main() -> int:\n" + _note(drawn)
                    + (_sha_check(released) if check else ""))


#: The usage line closing a script's docstring (the dataset is its only argument).
USAGE = '\nUsage: python {script_name} [DATASET]   (default: the path below)\n"""\n'
#: The dataset's path (argument or default) and the SHA-256 it was released on.
DATASET_LINES = ("DATASET = Path(sys.argv[1]) if len(sys.argv) > 1 else "
                 "Path({dataset_path!r})\nFINGERPRINT = {fingerprint!r}\n")
#: The end of ``main()`` and the script's entry point.
END = '    return 0\n\n\nif __name__ == "__main__":\n    sys.exit(main())\n'


def literal(value: Any) -> str:
    """A Python literal for a spec field (repr round-trips str, float, int, tuples, dicts).

    Parameters
    ----------
    value : str, float, int, bool, None, tuple or dict of these

    Returns
    -------
    str

    Raises
    ------
    TypeError
        For any other type (a script must not depend on how an object prints).
    """
    if isinstance(value, tuple):
        return "(" + ", ".join(literal(v) for v in value) + ("," if len(value) == 1 else "") \
            + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float | int | str | bool) or value is None:
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} into a script")


def doc_safe(text: str) -> str:
    """Text that can sit inside a script's docstring (or a comment) whatever it contains.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
        Unprintable characters, backslashes and double quotes replaced by ``?``.
    """
    return "".join(ch if ch.isprintable() and ch not in '\\"' else "?" for ch in str(text))


def spec_lines(spec: QuerySpec, indent: str = "    ") -> str:
    """A :class:`QuerySpec`'s fields as keyword arguments, one a line.

    Parameters
    ----------
    spec : QuerySpec
    indent : str
        Put before each line.

    Returns
    -------
    str
        ``query='mean',`` … ``missing='drop',`` (and ``impute=`` for imputed values),
        without a final newline.
    """
    fields = {
        "query": spec.query, "mechanism": spec.mechanism, "epsilon": float(spec.epsilon),
        "delta": float(spec.delta),
        "bounds": None if spec.bounds is None else tuple(float(b) for b in spec.bounds),
        "categories": None if spec.categories is None else tuple(spec.categories),
        "bins": spec.bins, "quantile": spec.quantile, "relation": spec.relation,
        "confidence": float(spec.confidence), "params": dict(spec.params),
        "column": spec.column,
        # How missing values (empty, NaN, ±inf) are treated: part of the procedure.
        "missing": spec.missing,
        **({"impute": float(spec.impute_value())} if spec.missing == "impute" else {}),
    }
    return "\n".join(f"{indent}{k}={literal(v)}," for k, v in fields.items())
