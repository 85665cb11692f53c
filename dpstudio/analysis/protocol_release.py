"""Releasing a shuffle-model or secure-aggregation sum (or mean) through a project.

The two sum protocols run through the one dispatch (:mod:`dpstudio.analysis.dispatch`);
this module holds what a *release* of them adds to an analysis:

- :func:`resolve_protocol_query` completes the query from the declared schema (bounds,
  never the data) and refuses in one line what the protocol cannot release;
- :func:`protocol_public` is the allow-list of the engine result's fields that may leave
  the machine (the analyst-only counts of clamped and missing values never do);
- :func:`parties` says what each party sees and what is trusted, and, where the protocol
  is a local randomizer shuffled, each user's own ε₀ beside the central ε.

Neighbouring datasets differ in one user's value (replace-one): the number of users is
public in both protocols (the shuffler and the analyzer count the messages; the server
counts the clients).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from dpstudio.analysis.result import plain
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY

__all__ = [
    "PROTOCOL_PUBLIC_FIELDS",
    "PROTOCOL_TRUST_MODELS",
    "is_protocol",
    "local_epsilon",
    "parties",
    "protocol_noise",
    "protocol_public",
    "resolve_protocol_query",
]

#: Trust models whose releases are a sum protocol's (one runner in the dispatch each).
PROTOCOL_TRUST_MODELS = ("shuffle", "distributed")

#: Fields of a shuffle or secure-aggregation result that are functions of the messages the
#: analyzer (or server) received and of the declaration only. ``clamped`` and
#: ``missing_count`` are read off the raw values: analyst-only, never listed here.
PROTOCOL_PUBLIC_FIELDS = (
    "query", "mechanism", "value", "stderr", "error_bound", "confidence", "epsilon", "delta",
    "n", "messages_per_user", "bits_per_message", "accounting", "details", "notes",
    "simulated", "source",
    # secure aggregation
    "n_clients", "dropouts", "max_dropouts", "precision", "noise", "noise_variance",
    "central_stderr", "overflow_probability", "corrupt_fraction", "corrupt_clients",
    "honest_clients", "honest_noise_variance",
    # a local frequency oracle shuffled (a histogram): counts per cell, each user's ε₀
    "estimate", "unbiased", "ci_low", "ci_high", "epsilon_local", "postprocess", "bound",
)

_QUERIES = ("sum", "mean")


def is_protocol(trust_model: str) -> bool:
    """Whether releases under ``trust_model`` are a sum protocol's (shuffle, secure
    aggregation).

    Parameters
    ----------
    trust_model : str
        A trust model's name.

    Returns
    -------
    bool
    """
    return trust_model in PROTOCOL_TRUST_MODELS


def resolve_protocol_query(spec: QuerySpec, declared: Any, trust_model: str = ""
                           ) -> tuple[QuerySpec, list[str]]:
    """A shuffle or secure-aggregation sum (or mean) completed from the declared schema.

    Bounds come from the spec or the dataset's declaration (never the data); the relation
    is ``replace`` (the number of users is public); δ > 0 is required (both protocols are
    approximate DP); the mechanism must be one of the trust model's protocols.

    Parameters
    ----------
    spec : QuerySpec
        The query as described (its mechanism names the protocol).
    declared : schema-like or None
        The dataset's declared schema (``get(column)``).
    trust_model : str, optional
        ``"shuffle"`` or ``"distributed"``: the mechanism must be one of its protocols
        (default: of either).

    Returns
    -------
    (QuerySpec, list of str)
        The completed spec and a note for each thing filled.

    Raises
    ------
    QueryError
        For another query, a mechanism that is not a protocol, missing bounds, another
        relation or a bad confidence.
    ParameterError
        For a bad ε, δ or protocol parameter.
    """
    from dpstudio.engine.calibration import validate_delta, validate_epsilon
    from dpstudio.engine.queries import check_bounds

    info = REGISTRY.get(spec.mechanism)
    if trust_model == "shuffle" and spec.query == "histogram":  # a local oracle shuffled
        from dpstudio.analysis.shuffled_local import resolve_shuffled_histogram

        return resolve_shuffled_histogram(spec, declared)
    models = {trust_model} if trust_model in PROTOCOL_TRUST_MODELS else set(
        PROTOCOL_TRUST_MODELS)
    protocols = [e.name for e in REGISTRY
                 if e.kind == "randomizer" and set(e.trust_models) & models]
    if info.kind != "randomizer" or not set(info.trust_models) & models:
        what = {"shuffle": "shuffle-model", "distributed": "secure-aggregation"}.get(
            trust_model, "shuffle or secure-aggregation")
        # A local randomizer that does not run shuffled: name the ones that do.
        from dpstudio.engine.shuffle.shuffled_local import SHUFFLED_RANDOMIZERS

        local = ("; the local randomizers that run shuffled (histograms) are "
                 + ", ".join(SHUFFLED_RANDOMIZERS)
                 if "local" in info.trust_models and trust_model == "shuffle" else "")
        raise QueryError(f"{spec.mechanism} is not a {what} protocol ({' or '.join(protocols)})"
                         + local)
    if spec.query not in _QUERIES or spec.query not in info.queries:
        if "histogram" in info.queries:  # a local frequency oracle shuffled
            raise QueryError(f"{info.label} ({spec.mechanism}) runs shuffled for a histogram "
                             f"of declared categories, not a {spec.query}")
        raise QueryError(f"{info.label} releases a sum or a mean, not a {spec.query}")
    if spec.relation != "replace":
        raise QueryError(f"a {info.label} release bounds changing one person's value: set "
                         "relation = \"replace\" (the number of users is public)")
    if not 0.0 < float(spec.confidence) < 1.0:
        raise QueryError(f"confidence must lie strictly between 0 and 1, got {spec.confidence}")
    validate_epsilon(spec.epsilon)
    validate_delta(spec.delta, required=True)
    notes: list[str] = []
    bounds = spec.bounds
    column = declared.get(spec.column) if declared is not None and spec.column else None
    if bounds is None and column is not None and column.bounds is not None:
        bounds = (float(column.bounds[0]), float(column.bounds[1]))
        notes.append(f"bounds {bounds[0]:g},{bounds[1]:g} as declared in the dataset's schema")
    if bounds is None:
        raise QueryError(f"a {info.label} {spec.query} needs declared bounds [lower, upper]")
    check_bounds(bounds)
    info.resolve(spec.mechanism_params())  # a bad parameter is refused before any data
    return replace(spec, bounds=bounds, categories=None, bins=None), notes


def protocol_public(result: Any) -> dict[str, Any] | None:
    """The exportable fields of a shuffle or secure-aggregation release; None for any
    other kind of result.

    The interval is the engine's rigorous error bound around the value (``ci_low``,
    ``ci_high`` at ``confidence``), not a normal approximation.

    Parameters
    ----------
    result : AnalysisResult
        The result the release drew.

    Returns
    -------
    dict or None
        The allow-listed fields, JSON-ready, with ``column``, ``relation``,
        ``trust_model``, ``ci_low``/``ci_high`` and ``parties`` (:func:`parties`).

    Raises
    ------
    ValueError
        For a simulation: a seeded run is not a release.
    """
    if not is_protocol(result.trust_model) or result.analysis.is_model:
        return None
    data = result.engine.to_dict()
    if data.get("simulated"):
        raise ValueError("a simulation (seeded generator) is not a release and is not exported")
    out = {k: plain(data[k]) for k in PROTOCOL_PUBLIC_FIELDS if k in data}
    if data.get("query") == "histogram" and data.get("estimate") is not None:
        out["value"] = plain(data["estimate"])  # counts per cell, as a local histogram's
    q = result.analysis.query
    value, half = out.get("value"), out.get("error_bound")
    if value is not None and half is not None:
        out["ci_low"], out["ci_high"] = float(value) - float(half), float(value) + float(half)
    out.update(column=q.column, relation=q.relation, trust_model=result.trust_model)
    # The (ε, δ) the protocol was calibrated for (its noise and encoding are a function of
    # these and n): what a script or an audit re-plans with. The guarantee met is
    # ``epsilon``/``delta`` (the cloak's δ may be below the request).
    out["calibrated_for"] = {"epsilon": float(q.epsilon), "delta": float(q.delta)}
    out["parties"] = parties(result.trust_model, out, q.mechanism)
    return out


def protocol_noise(public: Mapping[str, Any]) -> dict[str, Any]:
    """What a ledger stores about a protocol's noise, beside the resolved parameters.

    Parameters
    ----------
    public : mapping
        :func:`protocol_public`'s fields.

    Returns
    -------
    dict
        The protocol's plan figures (messages, details, secure aggregation's noise family,
        variances, dropout tolerance and colluding clients).
    """
    keys = ("messages_per_user", "bits_per_message", "details", "n", "n_clients",
            "max_dropouts", "dropouts", "noise", "noise_variance", "honest_clients",
            "honest_noise_variance", "corrupt_clients", "corrupt_fraction", "accounting")
    return {"protocol": {k: public[k] for k in keys if k in public}}


def local_epsilon(mechanism: str, details: Mapping[str, Any]) -> float | None:
    """Each user's own ε₀ where the protocol is a local randomizer before the shuffler.

    The privacy blanket is (k+1)-ary randomized response on the rounded value with
    blanket probability γ: a message equals the value with probability 1 − γ + γ/(k+1)
    and any other level with γ/(k+1), so ε₀ = ln(1 + (k+1)(1 − γ)/γ). The cloak's
    messages are additive shares of the value plus a small noise share: one user's
    messages together reveal that noisy value, with no useful local guarantee (None).

    Parameters
    ----------
    mechanism : str
        The protocol's registry name.
    details : mapping
        The engine result's ``details`` (``precision``, ``gamma`` for the blanket;
        ``epsilon_local`` for a local frequency oracle shuffled).

    Returns
    -------
    float or None
    """
    if details.get("epsilon_local") is not None:  # a local frequency oracle shuffled
        return float(details["epsilon_local"])
    if mechanism != "blanket":
        return None
    k, gamma = int(details["precision"]), float(details["gamma"])
    return math.log1p((k + 1) * (1.0 - gamma) / gamma)


def parties(trust_model: str, public: Mapping[str, Any], mechanism: str) -> dict[str, Any]:
    """What each party of a protocol release sees, and what is trusted.

    Parameters
    ----------
    trust_model : str
        ``"shuffle"`` or ``"distributed"``.
    public : mapping
        The release's public fields (:data:`PROTOCOL_PUBLIC_FIELDS`).
    mechanism : str
        The protocol's registry name.

    Returns
    -------
    dict
        ``sees`` (party → sentence), ``trusted`` (sentences), ``central_epsilon`` and,
        for a shuffled local randomizer, ``local_epsilon`` (each user's ε₀).
    """
    n = int(public.get("n") or 0)
    eps, delta = float(public["epsilon"]), float(public["delta"])
    if trust_model == "shuffle":
        m = int(public.get("messages_per_user") or 1)
        total = n * m
        out: dict[str, Any] = {
            "sees": {
                "analyzer": f"the shuffled multiset of n = {total:,} messages "
                            + (f"({m} per user, from {n:,} users)" if m > 1 else
                               "(one per user)") + ", never who sent which"
                            + (" (what it computes with is their counts per category)"
                               if public.get("query") == "histogram" else ""),
                "shuffler": "every message and its sender, but not the analysis",
                "user": "only its own value and its own messages",
            },
            "trusted": [
                "the shuffler is trusted not to link messages to senders and not to collude "
                "with the analyzer",
                "every user follows the protocol (its messages are randomized on its own "
                "device from the OS CSPRNG)",
            ],
            "central_epsilon": eps, "central_delta": delta,
        }
        eps0 = local_epsilon(mechanism, public.get("details") or {})
        if eps0 is not None:
            out["local_epsilon"] = eps0
            how = ("(k+1)-ary randomized response" if mechanism == "blanket"
                   else REGISTRY.get(mechanism).label)
            out["local_guarantee"] = (f"each user's message alone is ε₀ = {eps0:.4g}-local DP "
                            f"({how}); after shuffling the analyzer's view is (ε, δ) = "
                            f"({eps:g}, {delta:.3g})")
        else:
            out["local_guarantee"] = ("a user's messages alone carry no useful local guarantee "
                            "(shares of its value): all privacy is the shuffled view's, "
                            f"(ε, δ) = ({eps:g}, {delta:.3g})")
        return out
    t = int(public.get("corrupt_clients") or 0)
    d = int(public.get("max_dropouts") or 0)
    clients = int(public.get("n_clients") or n)
    return {
        "sees": {
            "server": f"only the masked sum of the {clients:,} clients' noisy values (each "
                      "message is masked and looks uniform alone)",
            "client": "only its own value, noise share and masks",
        },
        "trusted": [
            f"fewer than t = {t + 1:,} parties collude with the server (up to {t:,} "
            "colluding clients are planned for: their noise shares protect no one)",
            f"at most d = {d:,} clients drop out (max_dropouts): the noise of the "
            f"{int(public.get('honest_clients') or 0):,} honest clients sure to survive "
            "alone gives (ε, δ); more dropouts abort the release",
            "the server follows the protocol (semi-honest) and each client draws its noise "
            "share and mask seeds from the OS CSPRNG",
        ],
        "central_epsilon": eps, "central_delta": delta,
        "corrupt_clients": t, "max_dropouts": d,
    }
