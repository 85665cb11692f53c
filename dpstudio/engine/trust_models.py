"""The one table of trust models: who is trusted with what, and what each is called.

Every other layer reads the names and labels from here (the registry checks its entries'
trust models against it; the analysis layer's capability table, the CLI's choices and the
application's labels derive from it). A new trust model starts with one row here.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpstudio.engine.errors import ParameterError

__all__ = ["DEFAULT_TRUST_MODEL", "TRUST_MODELS", "TrustModel", "trust_model"]


@dataclass(frozen=True)
class TrustModel:
    """One trust model.

    Attributes
    ----------
    name : str
        The name used in specs, flags and JSON (``"central"``, ``"local"``, …).
    label : str
        Its name for people (``"Central"``).
    trusted : str
        One sentence: who must be trusted with what.
    relation : str
        The neighbouring relation its guarantee is stated under by default.
    """

    name: str
    label: str
    trusted: str
    relation: str


_TABLE = (
    TrustModel("central", "Central",
               "A trusted curator sees the raw data and adds noise once to the result.",
               "add-remove"),
    TrustModel("local", "Local",
               "Each person randomizes their own value before it leaves their device.",
               "replace"),
    TrustModel("shuffle", "Shuffle",
               "An anonymizing shuffler breaks the link between people and messages.",
               "replace"),
    TrustModel("distributed", "Distributed",
               "Secure aggregation: the server sees only the noisy sum of masked values.",
               "replace"),
    TrustModel("federated", "Federated",
               "Sites train one model together; only (noisy) model updates leave a site.",
               "replace"),
)

#: Every trust model's name, in the order shown.
TRUST_MODELS: tuple[str, ...] = tuple(t.name for t in _TABLE)

#: The trust model a spec or a flag means when it names none.
DEFAULT_TRUST_MODEL = "central"

_BY_NAME = {t.name: t for t in _TABLE}


def trust_model(name: str) -> TrustModel:
    """The trust model called ``name``.

    Parameters
    ----------
    name : str
        A name from :data:`TRUST_MODELS`.

    Returns
    -------
    TrustModel

    Raises
    ------
    ParameterError
        For an unknown name (the message lists the known ones).
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ParameterError(f"unknown trust model {name!r} (known: "
                             f"{', '.join(TRUST_MODELS)})") from None
