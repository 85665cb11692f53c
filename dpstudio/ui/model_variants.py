"""The ways of training the Models tab compares: central methods and FedAvg's variants.

Each :class:`Variant` names a training method of the analysis layer (and, for federated
averaging, the engine's privacy variant), with the words, colour and marker the plot shows.
The federated ones come from the engine's own list
(:data:`dpstudio.engine.learning.federated.VARIANTS`) and carry its sentence of what each
trusts. :func:`auto_delta` is the δ a variant trains with when the form's δ is "auto": the
registry entry's own default, said in :data:`AUTO_DELTA_TIP`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpstudio.engine.learning.federated import TRUSTS, VARIANTS

__all__ = ["AUTO_DELTA_TIP", "CENTRAL", "VARIANT_KEYS", "Variant", "auto_delta", "variant"]


@dataclass(frozen=True)
class Variant:
    """One way of training: ``method`` and ``fed_variant`` as ``dpstudio train`` takes them."""

    key: str
    method: str
    fed_variant: str
    federated: bool
    label: str
    tip: str
    colour: str
    symbol: str

    @property
    def private(self) -> bool:
        return self.method != "nonprivate"


#: The centralized methods (key, label, one sentence): a trusted curator holds the rows.
CENTRAL = (
    ("output", "output perturbation",
     "Central: trains the regularized model exactly, then adds noise scaled to how far one "
     "person's record can move it (2/(nλ))."),
    ("objective", "objective perturbation",
     "Central: adds a random linear term to the training objective, so the minimizer is "
     "private without noise added afterwards."),
    ("dpsgd", "DP-SGD (central)",
     "Central: gradient descent on Poisson-sampled batches, each record's gradient clipped "
     "to norm C and Gaussian noise added at every step."),
)
#: Shown names of the engine's federated variants, in its order.
_FED_LABELS = ("FedAvg, no privacy", "FedAvg, local DP", "FedAvg, secure aggregation",
               "FedAvg, correlated noise (CAPE)", "FedAvg, shuffle")
# Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), then two
# more; each variant also has its own marker.
_COLOURS = ("#0072B2", "#56B4E9", "#009E73", "#6e7781", "#D55E00", "#CC79A7", "#E69F00",
            "#8c564b")
_SYMBOLS = ("o", "s", "t", "x", "d", "star", "h", "p")


def _table() -> dict[str, Variant]:
    out: dict[str, Variant] = {}
    rows = [(key, key, "none", False, label, tip) for key, label, tip in CENTRAL]
    for fed, label in zip(VARIANTS, _FED_LABELS, strict=True):
        method = "nonprivate" if fed == "none" else "dpsgd"
        rows.append((f"fed-{fed}", method, fed, True, label, "Federated averaging (sites keep "
                     f"their rows, DP-SGD at each site): {TRUSTS[fed][:1].lower()}"
                     f"{TRUSTS[fed][1:]}"))
    for (key, method, fed, federated, label, tip), colour, symbol in zip(
            rows, _COLOURS, _SYMBOLS, strict=True):
        out[key] = Variant(key, method, fed, federated, label, tip, colour, symbol)
    return out


_VARIANTS = _table()
#: Every variant's key, in the order the form lists them.
VARIANT_KEYS = tuple(_VARIANTS)


def variant(key: str) -> Variant:
    """The variant named ``key`` (one of :data:`VARIANT_KEYS`)."""
    return _VARIANTS[key]


def auto_delta(method: str) -> float:
    """δ of a method when the form says "auto": its registry entry's default δ.

    Parameters
    ----------
    method : str
        ``"nonprivate"``, ``"output"``, ``"objective"`` or ``"dpsgd"``.

    Returns
    -------
    float
        0 for the non-private fit and for the pure-ε forms of output and objective
        perturbation; the DP-SGD entry's default (its accountant needs δ > 0).
    """
    from dpstudio.analysis.training import METHOD_MECHANISMS
    from dpstudio.engine.registry import REGISTRY

    mechanism = METHOD_MECHANISMS.get(method)
    if mechanism is None:
        return 0.0
    for p in REGISTRY.get(mechanism).params:
        if p.name == "delta":
            return float(p.default)
    return 0.0


def _auto_tip() -> str:
    sgd = auto_delta("dpsgd")
    pure = auto_delta("output") == 0 and auto_delta("objective") == 0
    return ("δ, the small probability that the ε guarantee fails; auto (0) takes each "
            "method's own default: "
            + ("0 (pure ε-DP) for output and objective perturbation, " if pure else "")
            + f"{sgd:g} for DP-SGD and the federated variants, whose accountants need δ > 0 "
            "(keep δ well below 1/n).")


#: The tooltip of the form's δ.
AUTO_DELTA_TIP = _auto_tip()
