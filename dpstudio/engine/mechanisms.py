"""The built-in mechanisms: the explicit list of the modules whose entries fill the registry.

Each module listed exposes its registry entries as a module-level ``ENTRIES`` tuple of
:class:`~dpstudio.engine.entry.MechanismInfo` and does not register them itself;
:data:`dpstudio.engine.registry.REGISTRY` calls :func:`register_builtins` on its first
read. A new mechanism module is added to :data:`BUILTIN_MODULES`; its entries then get
the generated contract tests (``tests/engine/contract``).

The order of the list is the registry's order (central, then local, shuffle and
distributed), which forms and ``dpstudio mechanisms`` follow.
"""

from __future__ import annotations

from types import ModuleType
from typing import Protocol

from dpstudio.engine import additive, selection
from dpstudio.engine.distributed import secure_sum
from dpstudio.engine.entry import MechanismInfo
from dpstudio.engine.learning import dpsgd, erm, objective_perturbation
from dpstudio.engine.local import entries as local_entries
from dpstudio.engine.shuffle import summation

__all__ = ["BUILTIN_MODULES", "builtin_entries", "register_builtins"]

#: The modules holding the built-in entries, in registration order.
BUILTIN_MODULES: tuple[ModuleType, ...] = (
    additive,
    selection,
    erm,
    objective_perturbation,
    dpsgd,
    local_entries,
    summation,
    secure_sum,
)


class _Registers(Protocol):
    """What :func:`register_builtins` needs of a registry (named structurally, so this
    module never imports :mod:`dpstudio.engine.registry`, which imports it)."""

    def register(self, info: MechanismInfo) -> MechanismInfo: ...


def builtin_entries() -> tuple[MechanismInfo, ...]:
    """Every built-in entry, module by module in :data:`BUILTIN_MODULES` order.

    Returns
    -------
    tuple of MechanismInfo
    """
    return tuple(info for module in BUILTIN_MODULES for info in module.ENTRIES)


def register_builtins(registry: _Registers) -> None:
    """Register every built-in entry into ``registry``.

    Parameters
    ----------
    registry : Registry
        Usually :data:`dpstudio.engine.registry.REGISTRY` (which calls this itself).

    Raises
    ------
    ValueError
        When a name is already registered there.
    """
    for info in builtin_entries():
        registry.register(info)
