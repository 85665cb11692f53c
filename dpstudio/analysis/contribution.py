"""User-level analyses: a declared identifier column bounds each person's rows.

An analysis naming an ``identifier`` (and a declared ``max_rows`` = k, from the analysis
or the identifier's declaration in the schema) protects people, not rows: neighbouring
datasets differ by adding or removing one person with up to k rows. Resolution
(:func:`resolve_user_level`) checks what such a release can be — the central model's
count, sum, mean, variance and histogram under add-remove — and the run
(:func:`run_user_level`) drops each person's rows beyond k at random before anything else
(:func:`dpstudio.engine.contribution.bound_contributions`), then calibrates every noise
to k × the row-level sensitivity. The number of rows dropped is never part of the
result, printed or exported.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from dpstudio.analysis.choices import Choices
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.result import AnalysisResult
from dpstudio.engine.errors import QueryError
from dpstudio.engine.rng import SimulationSource, Source

__all__ = ["PersonChoices", "bounds_people", "declared_identifier", "is_user_level", "person_ids",
           "resolve_user_level", "run_user_level", "user_level_text", "with_identifier"]


@dataclass(frozen=True)
class PersonChoices(Choices):
    """The application's choices on a dataset whose schema declares an identifier column.

    The preview and the utility curves of such choices are the user-level ones: each
    person's rows beyond ``max_rows`` dropped at random, every noise k × a row's
    (:func:`dpstudio.engine.contribution.run_user_level`), as the release will be.

    Attributes
    ----------
    identifier : str
        The column identifying a person.
    max_rows : int
        The declared maximum of rows per person.
    ids : numpy.ndarray
        Each row's identifier (not part of the choices' equality or hash: the column is
        named by ``identifier``).
    """

    identifier: str = ""
    max_rows: int = 1
    ids: Any = field(default=None, compare=False, hash=False, repr=False)

    def utility_key(self) -> tuple:
        """:meth:`Choices.utility_key` with the identifier and k (the noise follows k).

        Returns
        -------
        tuple
        """
        return super().utility_key() + ("person", self.identifier, self.max_rows)

    def analysis(self, epsilon: float | None = None) -> AnalysisSpec:
        """The user-level central analysis of these choices (at ``epsilon`` if given).

        Parameters
        ----------
        epsilon : float, optional
            ε of the analysis; the chosen one by default.

        Returns
        -------
        AnalysisSpec
            With ``identifier`` and ``max_rows`` set (resolved: bounds and categories
            are the declared ones the choices hold).
        """
        return AnalysisSpec("central", self.spec(epsilon), identifier=self.identifier,
                            max_rows=self.max_rows)


def bounds_people(trust_model: str) -> bool:
    """Whether a release in this trust model can be user-level (bound each person's rows).

    Parameters
    ----------
    trust_model : str

    Returns
    -------
    bool
        Only the central model: each person's rows are bounded where all of them are seen.
    """
    return trust_model == "central"


def person_ids(s: Any) -> Any:
    """Each row's identifier when ``s`` is a :class:`PersonChoices`, else None.

    Parameters
    ----------
    s : Choices

    Returns
    -------
    numpy.ndarray or None
    """
    return s.ids if isinstance(s, PersonChoices) else None


def declared_identifier(declared: Any) -> str | None:
    """The column a declared schema marks as identifying a person, if any.

    Parameters
    ----------
    declared : schema-like or None
        The dataset's declared schema: iterating it gives column declarations with
        ``name`` and ``type``.

    Returns
    -------
    str or None
        The first column of type ``identifier``.
    """
    if declared is None:
        return None
    try:
        columns = list(declared)
    except TypeError:  # a schema-like object that only answers get(column)
        return None
    return next((c.name for c in columns if str(getattr(c, "type", "")) == "identifier"),
                None)


def with_identifier(analysis: AnalysisSpec, identifier: str | None, max_rows: int | None,
                    declared: Any) -> AnalysisSpec:
    """The analysis made user-level when an identifier is named or declared.

    A declared identifier column makes every release on the dataset user-level; a named
    one (a spec's ``identifier``, ``--identifier``) takes precedence.

    Parameters
    ----------
    analysis : AnalysisSpec
        The analysis as described.
    identifier : str or None
        The identifier named by the analyst.
    max_rows : int or None
        The maximum of rows per person named by the analyst.
    declared : schema-like or None
        The dataset's declared schema.

    Returns
    -------
    AnalysisSpec
        With ``identifier`` and ``max_rows`` set, or unchanged when neither is named nor
        declared.

    Raises
    ------
    QueryError
        For ``max_rows`` without any identifier.
    """
    name = identifier or declared_identifier(declared)
    if name is None:
        if max_rows is not None:
            raise QueryError("max_rows bounds each person's rows: it needs an identifier "
                             "column (identifier = \"col\")")
        return analysis
    return replace(analysis, identifier=name, max_rows=max_rows)


def is_user_level(analysis: AnalysisSpec) -> bool:
    """Whether the analysis names an identifier column (a user-level release).

    Parameters
    ----------
    analysis : AnalysisSpec

    Returns
    -------
    bool
    """
    return analysis.identifier is not None


def user_level_text(max_rows: int) -> str:
    """What the application and reports say of a user-level analysis.

    Parameters
    ----------
    max_rows : int
        The declared maximum of rows per person.

    Returns
    -------
    str
        ``"user-level: up to k rows per person"``.
    """
    from dpstudio.engine.contribution import check_max_rows

    k = check_max_rows(max_rows)
    return f"user-level: up to {k} row{'s' if k != 1 else ''} per person"


def resolve_user_level(analysis: AnalysisSpec, declared: Any
                       ) -> tuple[AnalysisSpec, list[str]]:
    """A user-level analysis completed from the declared schema and checked.

    Parameters
    ----------
    analysis : AnalysisSpec
        An analysis with ``identifier`` set.
    declared : schema-like or None
        The dataset's declared schema (``get(column)``); the identifier's declaration may
        give ``max_rows``.

    Returns
    -------
    (AnalysisSpec, list of str)
        The resolved analysis with ``max_rows`` set, and notes.

    Raises
    ------
    QueryError, ParameterError
        In one line: another trust model, a model, a query other than count, sum, mean,
        variance or histogram, the replace relation, no declared ``max_rows``, or the
        identifier being the column released.
    """
    from dpstudio.analysis.resolve import resolve_query
    from dpstudio.engine.contribution import USER_LEVEL_QUERIES, check_max_rows

    q = analysis.query
    name = analysis.identifier
    if not isinstance(name, str) or not name.strip():
        raise QueryError("the identifier must name a column of the dataset")
    if analysis.is_model or analysis.kind != "central":
        raise QueryError("a user-level release (identifier) runs under the central model "
                         "only: each person's rows must be bounded where all of them are "
                         "seen")
    if q.query not in USER_LEVEL_QUERIES:
        raise QueryError(f"a user-level release answers {', '.join(USER_LEVEL_QUERIES)}, "
                         f"not a {q.query}")
    if q.relation != "add-remove":
        raise QueryError("a user-level release protects adding or removing one person's "
                         "rows: use relation add-remove")
    if q.column == name:
        raise QueryError(f"{name!r} identifies people: release another column")
    notes: list[str] = []
    max_rows = analysis.max_rows
    column = declared.get(name) if declared is not None else None
    if max_rows is None:
        max_rows = getattr(column, "max_rows", None)
        if max_rows is None:
            raise QueryError(f"declare the maximum number of rows per person for {name!r} "
                             "(max_rows = k, or --max-rows K): it is never read off the data")
        notes.append(f"at most {max_rows} rows per person, as declared in the dataset's "
                     "schema")
    k = check_max_rows(max_rows)
    query, filled = resolve_query(q, declared)
    return replace(analysis, query=query, max_rows=k), notes + filled


def run_user_level(analysis: AnalysisSpec, values: Any, ids: Any, source: Source,
                   notes: list[str]) -> AnalysisResult:
    """Run a resolved user-level analysis on the column and its identifiers.

    Parameters
    ----------
    analysis : AnalysisSpec
        Resolved by :func:`resolve_user_level` (``max_rows`` set).
    values : numpy.ndarray
        The column's values (floats with NaN, or labels with None).
    ids : numpy.ndarray
        Each row's identifier (same length).
    source : Source
        A :class:`~dpstudio.engine.rng.SecureSource` for a release (the drops and the
        noise), a seeded one for a simulation.
    notes : list of str
        Notes from resolution.

    Returns
    -------
    AnalysisResult
        As a central release's; ``relation`` says "add or remove one person (up to k
        rows)". The number of rows dropped is in none of its fields.

    Raises
    ------
    QueryError
        Without identifiers, or for an analysis not resolved as user-level.
    """
    from dpstudio.engine.contribution import release_user_level
    from dpstudio.engine.contribution import run_user_level as run_engine

    if ids is None:
        raise QueryError(f"a user-level release reads the identifier column "
                         f"{analysis.identifier!r}: it was not given")
    if analysis.max_rows is None:
        raise QueryError("a user-level analysis needs its declared max_rows (resolve it "
                         "first)")
    draw = run_engine if isinstance(source, SimulationSource) else release_user_level
    result = draw(values, ids, analysis.query, analysis.max_rows, source)
    result.notes = notes + list(result.notes)
    fields = result.to_dict()
    analyst = {"clamped": fields.pop("clamped", 0)}
    if "missing_count" in fields:
        analyst["missing"] = fields.pop("missing_count")
    if "non_finite_count" in fields:
        analyst["non_finite"] = fields.pop("non_finite_count")
    fields.update(trust_model="central", identifier=analysis.identifier,
                  max_rows=analysis.max_rows)
    return AnalysisResult(analysis, result, fields, analyst, source_label=source.label)
