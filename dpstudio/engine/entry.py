"""What a registry entry is: a mechanism's metadata and parameters, as data.

A :class:`MechanismInfo` says what a mechanism is (name, one-sentence description, trust
models, value types it accepts) and what it takes (:class:`Param`: type, range, default,
unit and help). The GUI's forms, the CLI's help, the docs and the contract test suite are
generated from these entries.

This module refers to no mechanism and to no registry, so the mechanism modules import it
to describe themselves without importing what collects them
(:mod:`dpstudio.engine.registry`, filled by :mod:`dpstudio.engine.mechanisms`).

ε and δ are declared once, here (:data:`EPSILON`, :data:`DELTA`); an entry that needs
another range derives it with :func:`dataclasses.replace` and says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dpstudio.engine.checks import number
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.trust_models import TRUST_MODELS

__all__ = ["DELTA", "EPSILON", "KINDS", "VALUE_TYPES", "MechanismInfo", "NotAnEntryError",
           "Param", "entry_named"]

VALUE_TYPES = ("numeric", "integer", "categorical", "boolean", "scores", "text")
KINDS = ("additive", "selection", "randomizer", "model")


@dataclass(frozen=True)
class Param:
    """One parameter of a mechanism, described well enough to build a form field.

    Attributes
    ----------
    name : str
        The name used in specs, flags and JSON.
    kind : str
        ``"float"``, ``"int"``, ``"choice"`` or ``"bool"``.
    default : Any
        A valid value of the parameter.
    help : str
        One sentence for people (tooltip, ``--help``).
    low, high : float or None
        Bounds of a number; ``low_open``/``high_open`` make that end exclusive.
    unit : str
        Unit shown next to the value (empty when the number has none).
    choices : tuple of str
        The values of a ``"choice"``.
    log_scale : bool
        Asks a UI for a logarithmic slider.
    label : str
        Short name for people (``"ε"``); the name when empty.
    shown_low, shown_high : float or None
        The range a slider shows, where it is narrower than the valid one (ε is valid up
        to 100 but no slider can start at the open end 0); None: the valid limit.
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
    shown_low: float | None = None
    shown_high: float | None = None

    @property
    def auto_at_zero(self) -> bool:
        """Whether 0 asks the mechanism to choose the value itself: the range starts at 0,
        the default is 0 and the help says what 0 does ("0 chooses k for the least
        error"). Forms and release summaries show "auto" for it, not a meaningless 0."""
        return self.low == 0 and self.default == 0 and "0" in self.help

    @property
    def shown_range(self) -> tuple[float, float]:
        """The (low, high) a slider or spin box offers: the shown range within the valid one.

        A display range, not a validity range: a value outside it may still be valid (a
        spec or a flag may give it). An entry that narrows the valid range with
        :func:`dataclasses.replace` (ε ≤ 1 for the privacy blanket) narrows what is
        shown with it.

        Returns
        -------
        tuple of float
            (low, high), low < high.

        Raises
        ------
        ValueError
            When the parameter has no finite range to show (neither a shown nor a valid
            limit on one side).
        """
        ends = []
        for shown, valid, pick in ((self.shown_low, self.low, max),
                                   (self.shown_high, self.high, min)):
            if shown is None and valid is None:
                raise ValueError(f"{self.name} has no range to show")
            ends.append(valid if shown is None else shown if valid is None
                        else pick(shown, valid))
        return ends[0], ends[1]

    def validate(self, value: Any) -> Any:
        """``value`` converted to this parameter's type and checked against its range.

        The range check is :func:`dpstudio.engine.checks.number`, the engine's one
        numeric range validator.

        Parameters
        ----------
        value : Any
            A value as given (number, or text from a flag or a spec).

        Returns
        -------
        Any
            The value as this parameter's type (``int``, ``float``, ``bool`` or the choice).

        Raises
        ------
        ParameterError
            With a one-line message naming the parameter and, for numbers, its range.
        """
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
        checked = number(self.name, value, low=self.low, low_open=self.low_open,
                         high=self.high, high_open=self.high_open)
        if self.kind != "int":
            return checked
        if checked != int(checked):
            raise ParameterError(f"{self.name} must be a whole number; got {value!r}")
        return int(checked)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON description, as listed by ``dpstudio mechanisms --json``.

        Returns
        -------
        dict
            ``name``, ``label``, ``type``, ``default``, ``help``, ``unit``; the range for
            numbers and ``choices`` for a choice.
        """
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


#: The privacy-loss bound ε of every entry. The upper end 100 is the form's: beyond it no
#: release is private in any useful sense, and e^ε stays far from overflowing.
#: Its help is the one sentence every client shows (the app's tooltip, ``--help``, the
#: registry's JSON); sliders show 0.01 to 100, five decades around the usual ε = 1.
EPSILON = Param("epsilon", "float", 1.0,
                "ε (privacy-loss budget): how much one person's data may change what is "
                "released; smaller ε means stronger privacy and more noise.",
                low=0.0, low_open=True, high=100.0, log_scale=True, label="ε",
                shown_low=0.01, shown_high=100.0)

#: The probability δ that the ε bound may fail, for the entries that take one. Spin boxes
#: offer 1e-12 to 0.1: below, δ is beneath any dataset's 1/n; above, it is no guarantee.
DELTA = Param("delta", "float", 1e-6,
              "δ: the small probability with which the ε guarantee may fail; keep it well "
              "below 1/n (one over the number of people).",
              low=0.0, low_open=True, high=1.0, high_open=True, log_scale=True, label="δ",
              shown_low=1e-12, shown_high=0.1)


@dataclass(frozen=True)
class MechanismInfo:
    """A registry entry: metadata plus the factory that builds the calibrated mechanism.

    ``kind`` says which contract the built object follows: ``"additive"`` mechanisms add
    integer noise to an integer-valued statistic (:mod:`dpstudio.engine.additive`),
    ``"selection"`` mechanisms pick one candidate from scores
    (:mod:`dpstudio.engine.selection`), ``"randomizer"`` mechanisms randomize each record
    (local randomizers, and the shuffle and secure-aggregation sum protocols), ``"model"``
    mechanisms release a fitted model (:mod:`dpstudio.engine.learning`).

    Attributes
    ----------
    name : str
        The registry name used in specs, flags and JSON (``"laplace"``).
    label : str
        The name for people.
    description : str
        One sentence on what the mechanism does.
    trust_models : tuple of str
        The trust models it runs in (:data:`~dpstudio.engine.trust_models.TRUST_MODELS`).
    value_types : tuple of str
        The :data:`VALUE_TYPES` it accepts.
    kind : str
        One of :data:`KINDS`: the contract the built object follows.
    params : tuple of Param
        Its parameters, ε (and δ) first.
    factory : callable
        Builds the calibrated mechanism from the resolved parameters.
    needs_delta : bool
        Whether its guarantee is (ε, δ) with δ > 0.
    queries : tuple of str
        The queries it answers (a registry lookup by query finds it only for these).
    references : tuple of str
        The papers it follows.

    Raises
    ------
    ValueError
        At construction, for an unknown kind or trust model.
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
        """The parameter called ``name``.

        Parameters
        ----------
        name : str
            A parameter's name.

        Returns
        -------
        Param

        Raises
        ------
        KeyError
            When the entry has no such parameter.
        """
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def resolve(self, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """Defaults overlaid with ``given``, each value validated; unknown names refused.

        Parameters
        ----------
        given : dict, optional
            Parameter values by name.

        Returns
        -------
        dict
            Every parameter of the entry, validated.

        Raises
        ------
        ParameterError
            For an unknown name or a value out of its parameter's range (one line).
        """
        given = dict(given or {})
        unknown = set(given) - {p.name for p in self.params}
        if unknown:
            raise ParameterError(
                f"{self.name} has no parameter {', '.join(sorted(unknown))} "
                f"(it takes: {', '.join(p.name for p in self.params) or 'none'})"
            )
        return {p.name: p.validate(given.get(p.name, p.default)) for p in self.params}

    def build(self, **kwargs: Any) -> Any:
        """Build the mechanism.

        Parameters
        ----------
        **kwargs
            Its resolved parameters (:meth:`resolve`) and context (e.g. the number of
            users).

        Returns
        -------
        Any
            The calibrated mechanism, of the type its :attr:`kind` promises.
        """
        return self.factory(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON description, as listed by ``dpstudio mechanisms --json``.

        Returns
        -------
        dict
            The entry's metadata and its parameters' :meth:`Param.to_dict`.
        """
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


class NotAnEntryError(ParameterError, QueryError):
    """A mechanism name that is none of the entries a function runs.

    Both a bad parameter (an unknown name) and a query those entries cannot answer (a
    mechanism of another trust model): the modules that raise it look among their own
    entries only, never in the registry, so they cannot tell the two apart, and a caller
    catching either error sees it.

    Parameters
    ----------
    message : str
        "``name`` is not ``what``", one line.
    """


def entry_named(entries: tuple[MechanismInfo, ...], name: str, what: str) -> MechanismInfo:
    """The entry called ``name`` among ``entries`` (one module's ``ENTRIES``).

    Parameters
    ----------
    entries : tuple of MechanismInfo
        Where to look.
    name : str
        The mechanism's registry name.
    what : str
        What the entries are, for the message (``"a shuffle-model mechanism"``).

    Returns
    -------
    MechanismInfo

    Raises
    ------
    NotAnEntryError
        When no entry has that name: "``name`` is not ``what``".
    """
    for info in entries:
        if info.name == name:
            return info
    raise NotAnEntryError(f"{name} is not {what}")
