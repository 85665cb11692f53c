"""The one registry of mechanisms, with their metadata as data.

Each entry says what a mechanism is (name, one-sentence description, trust models, value
types it accepts) and what it takes (parameters with type, range, default, unit and help).
The GUI's forms, the CLI's help, the docs and the contract test suite are generated from
these entries; adding a mechanism means registering one :class:`MechanismInfo`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dpstudio.engine.errors import ParameterError

__all__ = ["REGISTRY", "MechanismInfo", "Param", "Registry", "TRUST_MODELS", "VALUE_TYPES"]

TRUST_MODELS = ("central", "local", "shuffle", "distributed", "federated")
VALUE_TYPES = ("numeric", "integer", "categorical", "boolean", "scores", "text")
KINDS = ("additive", "selection", "randomizer", "model")


@dataclass(frozen=True)
class Param:
    """One parameter of a mechanism, described well enough to build a form field.

    ``kind`` is ``"float"``, ``"int"``, ``"choice"`` or ``"bool"``. ``low``/``high`` bound a
    number (``low_open``/``high_open`` make that end exclusive); ``log_scale`` asks a UI
    for a logarithmic slider.
    """

    name: str
    kind: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    unit: str = ""
    choices: tuple[str, ...] = ()
    log_scale: bool = False
    label: str = ""

    def validate(self, value: Any) -> Any:
        """Return ``value`` converted to this parameter's type, or raise ParameterError."""
        if self.kind == "choice":
            if value not in self.choices:
                raise ParameterError(
                    f"{self.name} must be one of {', '.join(self.choices)}; got {value!r}"
                )
            return value
        if self.kind == "bool":
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ParameterError(f"{self.name} must be true or false; got {value!r}")
            return bool(value)
        try:
            number = int(value) if self.kind == "int" else float(value)
        except (TypeError, ValueError):
            raise ParameterError(f"{self.name} must be a number; got {value!r}") from None
        if self.kind == "int" and float(value) != number:
            raise ParameterError(f"{self.name} must be a whole number; got {value!r}")
        if not math.isfinite(number):
            raise ParameterError(f"{self.name} must be finite; got {value!r}")
        if self.low is not None and (number < self.low or (self.low_open and number == self.low)):
            raise ParameterError(f"{self.name} must be {self._range_text()}; got {value!r}")
        if self.high is not None and (
            number > self.high or (self.high_open and number == self.high)
        ):
            raise ParameterError(f"{self.name} must be {self._range_text()}; got {value!r}")
        return number

    def _range_text(self) -> str:
        lo = "(" if self.low_open else "["
        hi = ")" if self.high_open else "]"
        low = "-∞" if self.low is None else f"{self.low:g}"
        high = "∞" if self.high is None else f"{self.high:g}"
        return f"in {lo}{low}, {high}{hi}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON description, as listed by ``dpstudio mechanisms --json``."""
        out: dict[str, Any] = {
            "name": self.name,
            "label": self.label or self.name,
            "type": self.kind,
            "default": self.default,
            "help": self.help,
            "unit": self.unit,
        }
        if self.kind in ("float", "int"):
            out.update(low=self.low, high=self.high, low_open=self.low_open,
                       high_open=self.high_open, log_scale=self.log_scale)
        if self.choices:
            out["choices"] = list(self.choices)
        return out


@dataclass(frozen=True)
class MechanismInfo:
    """A registry entry: metadata plus the factory that builds the calibrated mechanism.

    ``kind`` says which contract the built object follows: ``"additive"`` mechanisms add
    integer noise to an integer-valued statistic (:mod:`dpstudio.engine.additive`),
    ``"selection"`` mechanisms pick one candidate from scores
    (:mod:`dpstudio.engine.selection`), ``"randomizer"`` mechanisms randomize each record.
    """

    name: str
    label: str
    description: str
    trust_models: tuple[str, ...]
    value_types: tuple[str, ...]
    kind: str
    params: tuple[Param, ...]
    factory: Callable[..., Any] = field(repr=False, compare=False)
    needs_delta: bool = False
    queries: tuple[str, ...] = ()
    references: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown mechanism kind {self.kind!r}")
        unknown = set(self.trust_models) - set(TRUST_MODELS)
        if unknown:
            raise ValueError(f"unknown trust models {sorted(unknown)}")

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def resolve(self, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """Defaults overlaid with ``given``, each value validated; unknown names refused."""
        given = dict(given or {})
        unknown = set(given) - {p.name for p in self.params}
        if unknown:
            raise ParameterError(
                f"{self.name} has no parameter {', '.join(sorted(unknown))} "
                f"(it takes: {', '.join(p.name for p in self.params) or 'none'})"
            )
        return {p.name: p.validate(given.get(p.name, p.default)) for p in self.params}

    def build(self, **kwargs: Any) -> Any:
        """Build the mechanism; keyword arguments are its resolved parameters and context."""
        return self.factory(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "trust_models": list(self.trust_models),
            "value_types": list(self.value_types),
            "kind": self.kind,
            "needs_delta": self.needs_delta,
            "queries": list(self.queries),
            "params": [p.to_dict() for p in self.params],
            "references": list(self.references),
        }


class Registry:
    """Mechanisms by name, in registration order."""

    def __init__(self) -> None:
        self._entries: dict[str, MechanismInfo] = {}

    def register(self, info: MechanismInfo) -> MechanismInfo:
        if info.name in self._entries:
            raise ValueError(f"mechanism {info.name!r} is registered twice")
        self._entries[info.name] = info
        return info

    def get(self, name: str) -> MechanismInfo:
        """The entry called ``name``; an unknown name raises ParameterError listing the known."""
        _load_builtin()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self._entries)
            raise ParameterError(f"unknown mechanism {name!r} (known: {known})") from None

    def __iter__(self) -> Iterator[MechanismInfo]:
        _load_builtin()
        return iter(list(self._entries.values()))

    def __contains__(self, name: object) -> bool:
        _load_builtin()
        return name in self._entries

    def names(self) -> list[str]:
        return [info.name for info in self]

    def select(
        self,
        trust_model: str | None = None,
        value_type: str | None = None,
        kind: str | None = None,
        query: str | None = None,
    ) -> list[MechanismInfo]:
        """Entries matching every filter given (e.g. what a form offers for a column)."""
        return [
            info
            for info in self
            if (trust_model is None or trust_model in info.trust_models)
            and (value_type is None or value_type in info.value_types)
            and (kind is None or info.kind == kind)
            and (query is None or query in info.queries)
        ]


REGISTRY = Registry()

_loaded = False


def _load_builtin() -> None:
    """Import the modules that register the built-in mechanisms (once, lazily).

    Lazy so that ``registry`` itself has no import cycle with the mechanism modules.
    """
    global _loaded
    if _loaded:
        return
    _loaded = True
    # Each trust model's package registers its mechanisms when imported.
    from dpstudio.engine import (  # noqa: F401
        additive,
        distributed,
        learning,
        local,
        selection,
        shuffle,
    )
