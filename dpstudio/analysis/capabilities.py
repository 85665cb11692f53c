"""The one capability table: which trust models, queries and relations can be previewed
in the application, and released (charged to a ledger and exported) through a project.

The CLI's ``query`` runs whatever the engine supports (a simulation or a one-off release
that no ledger records); a project release, the application's Release… action and the
export go through :func:`release_refusal` so the three agree on what is releasable and say
so in the same sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpstudio.analysis.request import MODEL_QUERIES, AnalysisSpec
from dpstudio.engine.errors import QueryError
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.trust_models import TRUST_MODELS, trust_model

__all__ = [
    "CAPABILITIES",
    "Capability",
    "capability",
    "release_refusal",
    "releasable_trust_models",
    "require_release",
]

_CENTRAL_QUERIES = ("count", "sum", "mean", "variance", "median", "quantile", "histogram")
_LOCAL_QUERIES = ("histogram", "mean", "heavy_hitters")


@dataclass(frozen=True)
class Capability:
    """What the analysis layer does under one trust model (or for models: ``"model"``).

    Attributes
    ----------
    kind : str
        A trust model's name, or ``"model"`` for a fitted model.
    title : str
        How outputs name it ("local model", "secure aggregation").
    queries : tuple of str
        Queries an analysis runs under it (``dpstudio query``: a simulation or a one-off
        release that no ledger records).
    preview : tuple of str
        Queries the application previews (simulated releases, utility and trade-off).
    release : tuple of str
        Queries released through a project: charged to its ledger and exported.
    relations : tuple of str
        Neighbouring relations a release may be stated under.
    mechanism_kinds : tuple of str
        Registry kinds whose entries release under it.
    options : tuple of str
        Options that only make sense under it (``missing``: a missing-value treatment;
        ``records``: the reports the collector received; ``postprocess``; ``dropouts``).
    """

    kind: str
    title: str
    queries: tuple[str, ...] = ()
    preview: tuple[str, ...] = ()
    release: tuple[str, ...] = ()
    relations: tuple[str, ...] = ("replace",)
    mechanism_kinds: tuple[str, ...] = ()
    options: tuple[str, ...] = ()


CAPABILITIES: dict[str, Capability] = {c.kind: c for c in (
    Capability("central", "central model", _CENTRAL_QUERIES, _CENTRAL_QUERIES,
               _CENTRAL_QUERIES, ("add-remove", "replace"), ("additive", "selection"),
               ("missing",)),
    Capability("local", "local model", _LOCAL_QUERIES, _LOCAL_QUERIES, ("histogram", "mean"),
               ("replace",), ("randomizer",), ("records", "postprocess")),
    Capability("shuffle", "shuffle model", ("sum", "mean"), ("sum", "mean"), (),
               ("replace",), ("randomizer",)),
    Capability("distributed", "secure aggregation", ("sum", "mean"), ("sum", "mean"), (),
               ("replace",), ("randomizer",), ("dropouts",)),
    Capability("model", "model", MODEL_QUERIES, (), MODEL_QUERIES, ("replace",), ("model",)),
)}


def capability(kind: str) -> Capability:
    """The capability row of a trust model (or ``"model"``).

    A known trust model without a row (federated learning, for now) can do nothing yet.

    Raises
    ------
    ParameterError
        For a name that is neither a trust model nor ``"model"``.
    """
    if kind in CAPABILITIES:
        return CAPABILITIES[kind]
    tm = trust_model(kind)
    return Capability(tm.name, f"{tm.label.lower()} model")


def releasable_trust_models() -> tuple[str, ...]:
    """Trust models with at least one query that a project releases, in table order."""
    return tuple(t for t in TRUST_MODELS if capability(t).release)


def release_refusal(analysis: AnalysisSpec) -> str | None:
    """Why this analysis cannot be released through a project, in one sentence; or None.

    Only what the capability table decides (trust model, query, mechanism kind); the budget,
    the dataset's relation and the declared schema are checked by the release itself.
    """
    if analysis.trust_model not in TRUST_MODELS:
        return (f"unknown trust model {analysis.trust_model!r} "
                f"({' or '.join(releasable_trust_models())})")
    row = capability(analysis.kind)
    if not row.release:
        return (f"{analysis.trust_model}-model releases are not supported yet "
                f"({' or '.join(releasable_trust_models())})")
    if analysis.is_model and analysis.trust_model != "central":
        return f"a {analysis.query.query} release is central-model only"
    if analysis.query.query not in row.release:
        info = REGISTRY.get(analysis.query.mechanism)
        tm = analysis.trust_model
        return (f"{info.label} cannot release a {tm} {analysis.query.query} ({tm} releases: "
                f"{' or '.join(q for q in row.release if q in info.queries) or 'none'})")
    return None


def require_release(analysis: AnalysisSpec) -> None:
    """Raise :class:`QueryError` with :func:`release_refusal`'s sentence, if any."""
    problem = release_refusal(analysis)
    if problem is not None:
        raise QueryError(problem)
