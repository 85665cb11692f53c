"""The one registry of mechanisms: a plain container of :class:`MechanismInfo` entries.

What an entry is lives in :mod:`dpstudio.engine.entry`; which entries are built in is the
explicit list of :mod:`dpstudio.engine.mechanisms`. :data:`REGISTRY` loads that list the
first time anyone reads it (``get``, iteration, ``in``, ``names``, ``select``), so callers
import only this module. The mechanism modules never import this one: they expose their
entries (a module-level ``ENTRIES``) and :mod:`~dpstudio.engine.mechanisms` registers them,
so the registry and the mechanisms do not import each other.

``Param``, ``MechanismInfo``, ``EPSILON``, ``DELTA`` and ``TRUST_MODELS`` are re-exported
here for the callers that import them from the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dpstudio.engine.entry import DELTA, EPSILON, KINDS, VALUE_TYPES, MechanismInfo, Param
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.trust_models import TRUST_MODELS

__all__ = [
    "DELTA",
    "EPSILON",
    "KINDS",
    "REGISTRY",
    "TRUST_MODELS",
    "VALUE_TYPES",
    "MechanismInfo",
    "Param",
    "Registry",
]


class Registry:
    """Mechanisms by name, in registration order.

    Parameters
    ----------
    loader : callable, optional
        Called once with the registry before its first read or registration, to fill it
        (the built-in entries for :data:`REGISTRY`). Without one the registry starts
        empty, e.g. a temporary registry in a test.
    """

    def __init__(self, loader: Callable[[Registry], None] | None = None) -> None:
        self._entries: dict[str, MechanismInfo] = {}
        self._loader = loader

    def _ensure_loaded(self) -> None:
        loader, self._loader = self._loader, None
        if loader is None:
            return
        try:
            loader(self)
        except BaseException:
            # A failed load leaves nothing half-registered and is tried again next read.
            self._entries.clear()
            self._loader = loader
            raise

    def register(self, info: MechanismInfo) -> MechanismInfo:
        """Add ``info``; the built-in entries are loaded first, so names stay unique.

        Parameters
        ----------
        info : MechanismInfo
            The entry to add.

        Returns
        -------
        MechanismInfo
            ``info`` itself.

        Raises
        ------
        ValueError
            When an entry of the same name is already registered.
        """
        self._ensure_loaded()
        if info.name in self._entries:
            raise ValueError(f"mechanism {info.name!r} is registered twice")
        self._entries[info.name] = info
        return info

    def get(self, name: str) -> MechanismInfo:
        """The entry called ``name``.

        Parameters
        ----------
        name : str
            A registry name, such as ``"laplace"``.

        Returns
        -------
        MechanismInfo

        Raises
        ------
        ParameterError
            For an unknown name (the message lists the known ones).
        """
        self._ensure_loaded()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self._entries)
            raise ParameterError(f"unknown mechanism {name!r} (known: {known})") from None

    def __iter__(self) -> Iterator[MechanismInfo]:
        self._ensure_loaded()
        return iter(list(self._entries.values()))

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        self._ensure_loaded()
        return name in self._entries

    def names(self) -> list[str]:
        """Every entry's name, in registration order."""
        return [info.name for info in self]

    def select(
        self,
        trust_model: str | None = None,
        value_type: str | None = None,
        kind: str | None = None,
        query: str | None = None,
    ) -> list[MechanismInfo]:
        """Entries matching every filter given (e.g. what a form offers for a column).

        Parameters
        ----------
        trust_model, value_type, kind, query : str, optional
            Keep the entries that list this trust model, value type or query, or are of
            this kind; ``None`` does not filter.

        Returns
        -------
        list of MechanismInfo
            In registration order.
        """
        return [
            info
            for info in self
            if (trust_model is None or trust_model in info.trust_models)
            and (value_type is None or value_type in info.value_types)
            and (kind is None or info.kind == kind)
            and (query is None or query in info.queries)
        ]


def _load_builtin(registry: Registry) -> None:
    """Register the built-in entries (:mod:`dpstudio.engine.mechanisms`) into ``registry``.

    Imported on the first read, not when this module is imported: importing the registry
    for a ``Param`` stays cheap, and whatever order the engine's modules are imported in,
    none finds the registry half-built.
    """
    from dpstudio.engine import mechanisms

    mechanisms.register_builtins(registry)


#: The registry every layer reads; the built-in entries load on its first read.
REGISTRY = Registry(loader=_load_builtin)
