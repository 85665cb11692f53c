"""The contract suite's adapters: one per (kind, trust model) of registry entry.

Every registry entry passes four checks (``test_contract.py``), whatever it is; an
adapter says what each means for one kind of entry:

calibration   the built object's noise (or ε) is what the entry claims: a closed form
              where one exists, otherwise an independent computation (scipy's laws, the
              theorem's formula written out again);
distribution  samples of what the built object releases follow the claimed law (χ² or
              binomial tests) and the same test rejects the law at a 1.5× wrong scale;
audit         the empirical ε lower bound (:func:`dpstudio.engine.audit.epsilon_lower_bound`)
              on a worst neighbouring pair stays below the claim, and a copy with half the
              noise (twice the ε spent, for randomizers) is caught claiming it;
bad input     bad values are refused with a one-line ParameterError / EngineError.

An entry whose (kind, trust model) has no adapter in :data:`ADAPTERS` fails with "no
contract adapter for kind …": a new kind of release cannot skip the suite. Inside an
adapter, an entry it cannot describe (a local randomizer without a closed form, say)
fails too.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from contract_central import AdditiveAdapter, ModelAdapter, SelectionAdapter
from contract_common import Adapter, check_common_bad_input
from contract_learning import DPSGDAdapter, ModelAdapters, ObjectiveAdapter
from contract_local import LocalAdapter
from contract_protocols import SecureSumAdapter, ShuffleSumAdapter
from contract_shuffled_local import ShuffledLocalAdapter

from dpstudio.engine.entry import MechanismInfo

#: The four checks, in the order the suite runs them.
CHECKS = ("calibration", "distribution", "audit", "bad_input")


class MissingAdapter(LookupError):
    """An entry whose kind the contract suite does not know."""


class ShuffleAdapters(Adapter):
    """The shuffle model's entries: a sum protocol, or a local randomizer shuffled (an
    entry that also runs in the local model)."""

    def __init__(self, sums: Adapter, shuffled_local: Adapter) -> None:
        self.sums, self.shuffled_local = sums, shuffled_local

    def _pick(self, info) -> Adapter:
        return self.shuffled_local if "local" in info.trust_models else self.sums

    def calibration(self, info):
        self._pick(info).calibration(info)

    def distribution(self, info):
        self._pick(info).distribution(info)

    def audit(self, info):
        self._pick(info).audit(info)

    def bad_input(self, info):
        self._pick(info).bad_input(info)


#: The adapter of each (kind, trust model); every trust model an entry lists needs one.
ADAPTERS: dict[tuple[str, str], Adapter] = {
    ("additive", "central"): AdditiveAdapter(),
    ("selection", "central"): SelectionAdapter(),
    # Output perturbation, objective perturbation and DP-SGD calibrate different things:
    # the object an entry builds picks its adapter.
    ("model", "central"): ModelAdapters(LogisticERM=ModelAdapter(),
                                        ObjectiveERM=ObjectiveAdapter(),
                                        DPSGDTrainer=DPSGDAdapter()),
    ("randomizer", "local"): LocalAdapter(),
    # The sum protocols (cloak, blanket) and the local frequency oracles run shuffled.
    ("randomizer", "shuffle"): ShuffleAdapters(ShuffleSumAdapter(), ShuffledLocalAdapter()),
    ("randomizer", "distributed"): SecureSumAdapter(),
}


def adapters_for(info: MechanismInfo) -> list[Adapter]:
    """The adapters an entry is checked with (one per trust model it lists).

    Raises
    ------
    MissingAdapter
        "no contract adapter for kind …" when one of its trust models has none.
    """
    found = []
    for trust_model in info.trust_models or ("(none)",):
        adapter = ADAPTERS.get((info.kind, trust_model))
        if adapter is None:
            raise MissingAdapter(
                f"no contract adapter for kind {info.kind!r} in trust model {trust_model!r} "
                f"(entry {info.name!r}): add one to tests/engine/contract/adapters.py")
        if adapter not in found:
            found.append(adapter)
    return found


def contract_cases(registry: Iterable[MechanismInfo]) -> list:
    """One pytest case per registry entry, its id the entry's name."""
    return [pytest.param(info, id=info.name) for info in registry]


def run_check(check: str, info: MechanismInfo) -> None:
    """Run one of the four checks (``calibration``, ``distribution``, ``audit``,
    ``bad_input``) on ``info``; a missing adapter is a test failure, not a skip."""
    try:
        adapters = adapters_for(info)
    except MissingAdapter as err:
        pytest.fail(str(err))
    if check == "bad_input":
        check_common_bad_input(info)
    for adapter in adapters:
        getattr(adapter, check)(info)
