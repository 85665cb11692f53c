"""One result shape for every kind of analysis, and what of it may be published.

Whatever the trust model, :func:`dpstudio.analysis.run` returns an :class:`AnalysisResult`:
the engine object that drew the noise (the one source of ε and δ), the fields a client may
print or publish, the analyst-only figures kept apart (read off the raw data without noise:
values clamped, missing values, a model's accuracy), the records a local collector received,
and the description of the noise that a ledger stores.

The allow-lists below decide what leaves the machine: a field added to an engine result
later stays private until someone lists it here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpstudio.analysis.request import AnalysisSpec
from dpstudio.engine.registry import REGISTRY

__all__ = [
    "LOCAL_PUBLIC_FIELDS",
    "MODEL_PUBLIC_FIELDS",
    "N_PUBLIC_QUERIES",
    "PUBLIC_FIELDS",
    "AnalysisResult",
    "central_n_public",
    "local_public",
    "model_public",
    "plain",
    "public_result",
    "shape_of",
]

#: Fields of a central release that are functions of the noisy output and the declaration.
#: The engine's result does not hold n; :meth:`AnalysisResult.public` adds it as ``n``
#: where the engine makes it public (:func:`central_n_public`), and nowhere else.
PUBLIC_FIELDS = (
    "query", "column", "mechanism", "epsilon", "delta", "relation", "value", "sensitivity",
    "noise_scale", "variance", "ci_low", "ci_high", "confidence", "variance_exact",
    "components", "notes", "simulated", "source",
)

#: Central statistics whose engine divides by the number of rows instead of a noisy count
#: when the spec makes it public (:meth:`~dpstudio.engine.queries.QuerySpec.n_public`).
N_PUBLIC_QUERIES = ("sum", "mean", "variance")

#: Fields of a local-model result that are functions of the users' reports only (the
#: analyst-only ``clamped`` count, a function of the raw values, is left out).
LOCAL_PUBLIC_FIELDS = (
    "query", "mechanism", "epsilon", "delta", "n", "value", "stderr", "ci_low", "ci_high",
    "unbiased", "confidence", "trust_model", "postprocess", "messages_bits", "central_stderr",
    "parameters", "notes", "simulated", "source",
)

#: Fields of a model release (``ModelRelease.to_dict()``) that are functions of the noisy
#: coefficients and the declaration only. ``ModelRelease.utility`` (accuracy, objective,
#: excess risk: read off the data without noise) is analyst-only and never listed here.
MODEL_PUBLIC_FIELDS = (
    "mechanism", "model", "coefficients", "normalized_theta", "bounds", "epsilon", "delta",
    "rho", "noise_family", "noise_scale", "grid", "sensitivity_l2", "sensitivity_l1", "n",
    "lambda", "calibration", "simulated",
)


#: How each trust model's statistics read (see :func:`shape_of`).
_SHAPES = {"central": "statistic"}


def shape_of(trust_model: str, query: str, is_model: bool = False) -> str:
    """How a result reads, which decides how it is printed, tabled and exported.

    Parameters
    ----------
    trust_model : str
        The analysis's trust model.
    query : str
        The query.
    is_model : bool
        Whether the analysis fits a model.

    Returns
    -------
    str
        ``"model"`` (coefficients), ``"heavy_hitters"`` (discovered items),
        ``"statistic"`` (a central release with its interval) or ``"estimate"`` (a
        protocol's estimate with standard errors).
    """
    if is_model:
        return "model"
    if query == "heavy_hitters":
        return "heavy_hitters"
    return _SHAPES.get(trust_model, "estimate")


def central_n_public(query: Any) -> bool:
    """Whether a central release of ``query`` publishes n, the number of rows.

    The engine makes n public for a sum, mean or variance with imputed missing values
    under replace-one neighbours (every row contributes and neighbours have the same
    size: a mean divides by n, with no noisy count). Under add-remove, or when missing
    values are dropped, n stays private.

    Parameters
    ----------
    query : QuerySpec
        The central query as drawn.

    Returns
    -------
    bool
    """
    return query.query in N_PUBLIC_QUERIES and bool(query.n_public())


def plain(value: Any) -> Any:
    """numpy scalars → Python numbers, tuples → lists, recursively (JSON-ready).

    Parameters
    ----------
    value : Any
        A number, string, mapping or sequence, possibly holding numpy scalars.

    Returns
    -------
    Any
        The same structure with plain Python values.
    """
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _as_dict(result: Any) -> dict[str, Any]:
    return result.to_dict() if hasattr(result, "to_dict") else dict(result)


def _refuse_simulation(data: Mapping[str, Any]) -> None:
    if data.get("simulated"):
        raise ValueError("a simulation (seeded generator) is not a release and is not exported")


def public_result(release: Any) -> dict[str, Any]:
    """The exportable fields of a central release (a ``Release`` or its ``to_dict()``).

    Parameters
    ----------
    release : Release or mapping
        The engine's central release.

    Returns
    -------
    dict
        The allow-listed fields (:data:`PUBLIC_FIELDS`), JSON-ready.

    Raises
    ------
    ValueError
        For a simulation: a seeded run is not a release.
    """
    data = _as_dict(release)
    _refuse_simulation(data)
    return {k: plain(data[k]) for k in PUBLIC_FIELDS if k in data}


def local_public(result: Any, column: str | None, relation: str = "replace") -> dict[str, Any]:
    """The exportable fields of a local-model result, shaped like :func:`public_result`'s.

    Parameters
    ----------
    result : LocalResult or mapping
        The engine's local-model result.
    column : str or None
        The column the users answered about.
    relation : str
        The neighbouring relation the guarantee is stated under.

    Returns
    -------
    dict
        ``value`` is the histogram's estimated counts (label → count) or the mean;
        ``stderr`` is per cell for histograms.

    Raises
    ------
    ValueError
        For a simulation, or a query other than a histogram or a mean.
    """
    data = _as_dict(result)
    _refuse_simulation(data)
    if data.get("query") not in ("histogram", "mean"):
        raise ValueError(f"a local {data.get('query')!r} release is not exported")
    out = {k: plain(data[k]) for k in LOCAL_PUBLIC_FIELDS if k in data}
    if data["query"] == "histogram":
        out["value"] = plain(data["estimate"])
    out["column"] = column
    out["relation"] = relation
    out["trust_model"] = "local"
    return out


def model_public(result: Any, label: str, relation: str = "replace",
                 source: str = "") -> dict[str, Any]:
    """The exportable fields of a model release, by an allow-list (never its ``utility``).

    Parameters
    ----------
    result : ModelRelease or mapping
        The engine's model release.
    label : str
        The label column.
    relation : str
        The neighbouring relation (``replace`` for models).
    source : str
        The randomness source's label.

    Returns
    -------
    dict
        ``value`` is the coefficients (feature → coefficient, the intercept last as
        ``(intercept)``).

    Raises
    ------
    ValueError
        For a simulation, or a model other than logistic regression.
    """
    data = _as_dict(result)
    _refuse_simulation(data)
    if data.get("model") != "logistic_regression":
        raise ValueError(f"a {data.get('model')!r} model is not exported")
    out = {k: plain(data[k]) for k in MODEL_PUBLIC_FIELDS if k in data}
    coefs = out["coefficients"]
    out.update(
        query="logistic_regression", column=label,
        features=[c["feature"] for c in coefs[:-1]],
        value={c["feature"]: c["coefficient"] for c in coefs},
        sensitivity={"l1": out["sensitivity_l1"], "l2": out["sensitivity_l2"]},
        relation=relation, trust_model="central", confidence=None, source=source,
        notes=[],
    )
    return out


@dataclass
class AnalysisResult:
    """What one run of an analysis gives, whatever its trust model.

    Attributes
    ----------
    analysis : AnalysisSpec
        The resolved analysis that ran.
    engine : Any
        The engine object that drew the noise: ``Release``, ``LocalResult``,
        ``ShuffleResult``, ``SecureSumResult`` or ``ModelRelease``. ε and δ are read off it.
    fields : dict
        Everything a client may print (the CLI's JSON contract keys), without the
        analyst-only figures.
    analyst_only : dict
        Figures read off the raw data without noise (values clamped, missing values, a
        model's accuracy): for the analyst's eyes, never published.
    records : callable, optional
        Local model: returns the columns of reports the untrusted collector received.
    source_label : str
        The random source's label (exported with a model release).
    """

    analysis: AnalysisSpec
    engine: Any
    fields: dict[str, Any]
    analyst_only: dict[str, Any] = field(default_factory=dict)
    records: Callable[[], dict[str, Any]] | None = None
    source_label: str = ""

    @property
    def epsilon(self) -> float:
        """ε of the engine object that drew the noise (the one that is charged)."""
        return float(self.engine.epsilon)

    @property
    def delta(self) -> float:
        """δ of the engine object that drew the noise."""
        return float(getattr(self.engine, "delta", 0.0) or 0.0)

    @property
    def simulated(self) -> bool:
        """True when a seeded generator drew the noise: a simulation, never a release."""
        return bool(getattr(self.engine, "simulated", False))

    @property
    def trust_model(self) -> str:
        """The analysis's trust model."""
        return self.analysis.trust_model

    @property
    def shape(self) -> str:
        """How the result reads: ``"statistic"`` (a central release with its interval),
        ``"estimate"`` (a protocol's estimate with standard errors), ``"heavy_hitters"``
        (discovered items) or ``"model"`` (coefficients)."""
        a = self.analysis
        return shape_of(a.trust_model, a.query.query, a.is_model)

    def to_dict(self, analyst: bool = False) -> dict[str, Any]:
        """The printable fields (the CLI's JSON), with ``analyst_only`` when asked.

        Parameters
        ----------
        analyst : bool
            Include the analyst-only figures under the key ``"analyst_only"``.

        Returns
        -------
        dict
            A copy of :attr:`fields` (and of :attr:`analyst_only`).
        """
        out = dict(self.fields)
        if analyst:
            out["analyst_only"] = dict(self.analyst_only)
        return out

    def public(self, rows: int | None = None) -> dict[str, Any]:
        """The fields that may be exported (an allow-list per kind of release).

        Parameters
        ----------
        rows : int, optional
            The number of rows the analysis read. A central release exports it as ``n``
            only where the engine makes n public (:func:`central_n_public`); anywhere
            else it is ignored (a local or model result states its own ``n``).

        Returns
        -------
        dict
            :func:`public_result`, :func:`local_public` or :func:`model_public` of the
            engine object, JSON-ready.

        Raises
        ------
        ValueError
            For a simulation, a training run, or a kind of release not exported yet.
        """
        a = self.analysis
        if a.training is not None:
            raise ValueError("a training run is not exported yet: its metrics are read off "
                             "held-out rows without noise")
        if a.is_model:
            return model_public(self.engine, a.query.column, a.query.relation,
                                self.source_label)
        if a.trust_model == "local":
            out = local_public(self.engine, a.query.column, a.query.relation)
        elif a.trust_model == "central":
            out = public_result(self.engine)
            if rows is not None and central_n_public(a.query):
                out["n"] = int(rows)
        else:
            raise ValueError(f"a {a.trust_model}-model release is not exported yet")
        return out

    def noise_description(self, public: Mapping[str, Any]) -> dict[str, Any]:
        """What a ledger stores about the noise drawn (sensitivity, scale, parameters).

        Parameters
        ----------
        public : mapping
            The exported fields (:meth:`public`).

        Returns
        -------
        dict
            ``sensitivity``, ``noise_scale``, ``variance``, the resolved ``params`` and
            ``components``; a model's noise family, grid, sensitivities, ρ, n, λ and
            calibration; a local release's ``randomizer``, ``reports`` and
            ``messages_bits``.
        """
        q = self.analysis.query
        noise = {"sensitivity": public.get("sensitivity"),
                 "noise_scale": public.get("noise_scale"),
                 "variance": public.get("variance"),
                 "params": REGISTRY.get(q.mechanism).resolve(q.mechanism_params()),
                 "components": public.get("components", [])}
        if self.analysis.is_model:
            noise |= {k: public.get(k) for k in (
                "noise_family", "grid", "sensitivity_l1", "sensitivity_l2", "rho", "n",
                "lambda", "calibration")}
        elif self.analysis.trust_model == "local":
            noise |= {"randomizer": public.get("parameters", {}), "reports": public.get("n"),
                      "messages_bits": public.get("messages_bits")}
        return noise
