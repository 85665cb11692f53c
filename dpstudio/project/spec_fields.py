"""The pieces every release spec is read and written with: one key at a time.

Each reader takes the parsed TOML table, the key and the message prefix (the spec file's
name, :func:`prefix`) and returns the checked value or raises :class:`SpecError` in one
sentence; each writer turns one value into its TOML text. The three formats use them:
a version-1 spec of one statistic (:mod:`dpstudio.project.spec_statistic`), a trained
model (:mod:`dpstudio.project.train_spec`) and a release plan
(:mod:`dpstudio.project.spec_plan`). They sit below all three (and below
:mod:`dpstudio.project.spec`, which hands a spec to its format) so that no format module
imports the dispatcher back.
"""

from __future__ import annotations

import math
from typing import Any

from dpstudio.engine.checks import number
from dpstudio.engine.errors import ParameterError
from dpstudio.project.errors import SpecError

__all__ = ["SCRIPT_FORMATS", "SPEC_VERSION", "check_version", "prefix", "read_accountant",
           "read_bool", "read_bounds", "read_categories", "read_number", "read_script_format",
           "read_string", "toml_key", "toml_str", "toml_value"]

#: The version of a spec of one release (a statistic or a trained model); 2 is a plan.
SPEC_VERSION = 1
#: How the reproducible script is written: a Python file or a Jupyter notebook.
SCRIPT_FORMATS = ("py", "ipynb")


def prefix(source: str) -> str:
    """The prefix of a message about the spec file ``source`` ("" for a spec in memory)."""
    return f"{source}: " if source else ""


def check_version(data: Any, where: str) -> Any:
    """The spec's ``schema_version``, refused in one sentence unless it is 1 or 2.

    Parameters
    ----------
    data : object
        The parsed TOML (refused unless a table).
    where : str
        The message prefix.

    Returns
    -------
    object
        The version as TOML gave it (equal to 1 or 2).

    Raises
    ------
    SpecError
        For a spec that is not a table, or whose version is missing or unsupported.
    """
    if not isinstance(data, dict):
        raise SpecError(f"{where}a release spec is a TOML table")
    version = data.get("schema_version")
    if version is None:
        raise SpecError(f"{where}missing schema_version (write schema_version = {SPEC_VERSION})")
    if version != 2 and version != SPEC_VERSION:
        raise SpecError(f"{where}unsupported schema_version {version!r} (this DP Studio reads "
                        f"{SPEC_VERSION} and 2, a release plan)")
    return version


def read_number(data: dict, key: str, where: str, default=None, integer: bool = False,
                low: float | None = None, what: str = ""):
    """``data[key]`` as TOML gave it (``default`` when absent), checked to be a number (a
    whole one if ``integer``) and, by the engine's range check, finite and ≥ ``low``;
    ``what`` names the value in that check's message ("a dataset id")."""
    if key not in data:
        return default
    value = data[key]
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok:
        kind = "a whole number" if integer else "a number"
        raise SpecError(f"{where}{key} must be {kind}, got {value!r}")
    try:
        number(key, value, low=low,
               what=what or ("a whole number" if integer else "a finite number"))
    except ParameterError as exc:
        raise SpecError(f"{where}{exc}") from None
    return value


def read_string(data: dict, key: str, where: str, default=None) -> str | None:
    """``data[key]`` stripped (``default`` when absent); refused unless a non-empty string."""
    if key not in data:
        return default
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{where}{key} must be a non-empty string, got {value!r}")
    return value.strip()


def read_bool(data: dict, key: str, where: str, default: bool) -> bool:
    """``data[key]`` (``default`` when absent); refused unless true or false."""
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(f"{where}{key} must be true or false, got {value!r}")
    return value


def read_bounds(data: dict, where: str) -> tuple[float, float] | None:
    """``bounds = [lower, upper]`` as two floats; None when absent (the schema's then)."""
    bounds = data.get("bounds")
    if bounds is not None:
        if (not isinstance(bounds, list) or len(bounds) != 2
                or any(isinstance(b, bool) or not isinstance(b, int | float) for b in bounds)):
            raise SpecError(f"{where}bounds must be two numbers [lower, upper], got {bounds!r}")
        bounds = (float(bounds[0]), float(bounds[1]))
    return bounds


def read_categories(data: dict, where: str) -> tuple[str, ...] | None:
    """``categories = ["a", "b"]`` as a tuple; None when absent (the schema's then)."""
    categories = data.get("categories")
    if categories is not None:
        if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
            raise SpecError(f"{where}categories must be a list of strings")
        categories = tuple(categories)
    return categories


def read_accountant(data: dict, where: str) -> str | None:
    """The spec's ``accountant``, checked; None when absent (the project's decides)."""
    from dpstudio.project.accountant import ACCOUNTANTS

    name = read_string(data, "accountant", where)
    if name is not None and name not in ACCOUNTANTS:
        raise SpecError(f"{where}accountant must be one of {', '.join(ACCOUNTANTS)}, got "
                        f"{name!r} (leave it out to use the project's)")
    return name


def read_script_format(data: dict[str, Any], where: str) -> str:
    """``script_format``: ``"py"`` (default) or ``"ipynb"``, in one sentence otherwise."""
    value = data.get("script_format", "py")
    if value not in SCRIPT_FORMATS:
        raise SpecError(f"{where}script_format must be one of {', '.join(SCRIPT_FORMATS)}, "
                        f"got {value!r}")
    return value


# ------------------------------------------------------------------------------ writers


def toml_str(text: str) -> str:
    """``text`` as a TOML basic string (quotes, backslashes and controls escaped)."""
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out) + '"'


def toml_value(value: Any) -> str:
    """A bool, number, string or list as TOML; SpecError for what a spec cannot hold."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SpecError(f"cannot save a non-finite number ({value!r}) in a spec")
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        return toml_str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise SpecError(f"cannot save a {type(value).__name__} in a spec")


def toml_key(key: str) -> str:
    """``key`` bare when TOML allows it, else quoted."""
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else toml_str(key)
