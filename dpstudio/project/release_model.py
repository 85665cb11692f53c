"""A trained model released through a project (``query = "train"``).

The release transaction (:mod:`dpstudio.project.release`) charges, writes and confirms
every release the same way (:mod:`dpstudio.project.release_charge`); a trained model
differs in two steps, kept here:

- :func:`prepare_train` — the dataset identified and its budget checked as any release;
  the training run described from the spec, resolved against the **declared** schema
  (a classifier's label must be declared yes/no, never guessed from the data), the
  relation the method's guarantee is stated under checked against the dataset's, and
  objective perturbation's conditions on λ, ε and n refused in one line before anything
  is drawn;
- :func:`draw_train` — the one training, through the analysis layer's run
  (:func:`dpstudio.analysis.run`) with a fresh :class:`~dpstudio.engine.rng.SecureSource`.
  ε and δ charged are the engine object's: the accountant's for the (q, σ, T) DP-SGD ran,
  the federated variant's accountant, or the perturbation's calibration.

**Held-out metrics are not published.** The training run measures accuracy/AUC/RMSE on
held-out rows without noise: a function of private records, so itself a release that
this charge does not cover. The public files (coefficients, weights, manifest, report,
model card) hold the model, its declaration and its guarantee only; the model card says
so. The analyst sees the metrics with ``dpstudio train --simulate`` or in the application.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from dpstudio.analysis import AnalysisResult, AnalysisSpec
from dpstudio.analysis import run as run_analysis
from dpstudio.engine.errors import EngineError
from dpstudio.engine.rng import SecureSource
from dpstudio.project.errors import ProjectError
from dpstudio.project.release_checks import budget_root, check_budget, identify_file
from dpstudio.project.release_output import output_folder
from dpstudio.project.release_prepare import Prepared

__all__ = ["TrainInput", "TrainRelease", "draw_train", "prepare_train", "summary_lines",
           "train_file_names", "train_spec"]


def train_spec(fields: dict[str, Any], base: str | os.PathLike[str] | None = None) -> Any:
    """The GUI's Release… of a trained model: a release spec from the form's fields.

    Parameters
    ----------
    fields : dict
        The keys of a train spec (``dataset``, ``label``, ``features``, ``model``,
        ``method``, ``epsilon``, ``delta``, ``lambda``, ``epochs``, ``batch_rate``,
        ``clip``, ``hidden``, ``sites_by``/``sites``/``imbalance``, ``fed_variant``,
        ``rounds``, ``local_steps``, ``report``, ``script``, ``budget``…).
    base : str or os.PathLike, optional
        The folder a relative ``dataset`` is relative to.

    Returns
    -------
    ReleaseSpec

    Raises
    ------
    SpecError
        In one line.
    """
    from dpstudio.project.train_spec import train_spec as make

    return make(fields, base)


class TrainInput:
    """The columns a training release reads (as :class:`~dpstudio.execution
    .training_input.TrainingInput`), with the features the ledger records."""

    #: A release publishes the model only: the non-private baseline and the held-out
    #: metrics (private, never published) are not computed (analysis/training.py).
    publish_only = True

    def __init__(self, columns: dict[str, Any], imputed: int, features: tuple[str, ...],
                 state: Any = None):
        self.columns, self.imputed, self.features = columns, imputed, features
        #: Progress and cancel of the training (:mod:`dpstudio.jobs`): a cancel inside the
        #: charge transaction rolls it back, nothing charged or written.
        self.state = state


class TrainRelease(AnalysisResult):
    """The analysis layer's result of a released training run, with its public fields
    (:func:`~dpstudio.export.train_public.train_public`) and the ledger's noise
    description; ε and δ stay the engine object's."""

    def public(self, rows: int | None = None) -> dict[str, Any]:
        """The exportable fields (never the held-out metrics).

        Parameters
        ----------
        rows : int, optional
            Ignored (a training release states its own n where it is public).

        Returns
        -------
        dict
        """
        from dpstudio.export.train_public import train_public

        return train_public(self)

    def noise_description(self, public: dict[str, Any]) -> dict[str, Any]:
        """What the ledger stores about the noise: the method's plan.

        Parameters
        ----------
        public : dict
            :meth:`public`.

        Returns
        -------
        dict
        """
        return {"method": public.get("method"), "mechanism": public.get("mechanism"),
                "fed_variant": public.get("fed_variant"), "plan": public.get("plan"),
                "accountant": public.get("accountant"), "n": public.get("n")}


def _declare_label(analysis: AnalysisSpec, declared: Any) -> None:
    """A classifier's label must be declared yes/no: its classes are never read off data."""
    if analysis.training.model == "linear":
        return
    label = analysis.query.column
    column = declared.get(label) if declared is not None else None
    kind = str(getattr(getattr(column, "type", None), "value", "")).lower()
    if kind != "boolean":
        raise ProjectError(f"declare the label {label!r} as yes/no (type \"boolean\") in the "
                           "dataset's schema: a classifier's two classes are declared, never "
                           "read off the data")


def _train_rows(analysis: AnalysisSpec, n: int) -> int:
    return n - math.ceil(analysis.training.test_fraction * n)


def _check_conditions(analysis: AnalysisSpec, design: int, n_train: int) -> None:
    """Objective perturbation's conditions (λ, ε, n), refused before any noise is drawn."""
    t, q = analysis.training, analysis.query
    if t.method != "objective" or t.federated is not None:
        return
    from dpstudio.engine.learning.objective_perturbation import (
        calibrate_objective_perturbation,
    )

    lam = float(analysis.info.resolve(q.mechanism_params())["lambda"])
    try:
        calibrate_objective_perturbation(design, n_train, lam, float(q.epsilon),
                                         float(q.delta))
    except EngineError as exc:
        raise ProjectError(f"objective perturbation cannot be released here: {exc}") from None


def _design_width(analysis: AnalysisSpec) -> int:
    cats = dict(analysis.training.feature_categories or {})
    width = sum(len(cats[f]) if f in cats else 1 for f in analysis.features or ())
    return width + 1  # the intercept


def prepare_train(project: Any, spec: Any, out_dir: str | os.PathLike[str],
                  create_out: bool, state: Any = None) -> Prepared:
    """Check a train release and read its columns: nothing drawn, nothing charged.

    Parameters
    ----------
    project : Project
        The project (its identity, budget and ledger methods).
    spec : ReleaseSpec
        A train spec (``spec.training`` set).
    out_dir : str or os.PathLike
        The output folder.
    create_out : bool
        Create the output folder (a release) or only check it (:meth:`check`).
    state : State, optional
        Progress and cancel of the training (:func:`draw_train`).

    Returns
    -------
    Prepared
        As :func:`~dpstudio.project.release_prepare.prepare_release` returns for a
        statistic.

    Raises
    ------
    ProjectError, DatasetChangedError, BudgetExceededError
        In one line, before anything is drawn.
    """
    from dpstudio.analysis.training import resolve_training
    from dpstudio.execution.training_input import training_column_names, training_columns
    from dpstudio.project.accountant import get_accountant
    from dpstudio.project.errors import SpecError
    from dpstudio.project.identity import declared_dict
    from dpstudio.project.store import absolute
    from dpstudio.project.train_spec import train_analysis

    if spec.accountant is not None:
        get_accountant(spec.accountant)
    project._require_intact()
    try:
        analysis = train_analysis(spec)
    except SpecError as exc:
        raise ProjectError(str(exc)) from None
    path = Path(absolute(spec.dataset))
    if not path.is_file():
        raise ProjectError(f"dataset {spec.dataset}: no such file (a trained model is "
                           "released from one file)")
    fingerprint, data, content, record, budget_of, notes, declared = identify_file(
        project, spec, path)
    for name in training_column_names(analysis):
        if name not in data.frame.columns:
            raise ProjectError(f"{path.name} has no column {name!r}")
    try:
        analysis, more = resolve_training(analysis, declared)
        _declare_label(analysis, declared)
        frame = data.frame[training_column_names(analysis)]
        read = training_columns(frame, analysis)
    except EngineError as exc:
        raise ProjectError(str(exc)) from None
    _check_conditions(analysis, _design_width(analysis), _train_rows(analysis, len(frame)))
    model = TrainInput(read.columns, read.imputed, tuple(analysis.features or ()), state)
    return _settle(project, spec, analysis, path, fingerprint, content, record, budget_of,
                   notes + more, declared, declared_dict(data.declared), model, out_dir,
                   create_out)


def _settle(project: Any, spec: Any, analysis: AnalysisSpec, path: Path, fingerprint: str,
            content: Any, record: Any, budget_of: int | None, notes: list[str],
            declared: Any, declared_schema: dict[str, Any], model: TrainInput,
            out_dir: Any, create_out: bool) -> Prepared:
    """Budget, relation and accountant checked; the output folder (as a statistic's)."""
    from dpstudio.analysis.resolve import reader_for
    from dpstudio.project.accountant import get_accountant

    query = analysis.query
    budget, relation, accountant, schema = budget_root(
        project, spec, path, record, budget_of, None, declared_schema)
    if query.relation != relation:
        method = analysis.training.method
        why = ("a DP-SGD or FedAvg guarantee bounds adding or removing one record"
               if method == "dpsgd" else
               f"{method} perturbation's guarantee bounds replacing one record (n public)")
        raise ProjectError(f"{path.name} is budgeted under the {relation} relation, but "
                           f"{why}: release it from a dataset budgeted under {query.relation}")
    # DP-SGD's step divisor is declared, never q·n (n is private under add/remove):
    # refused here, before anything is charged, drawn or written.
    from dpstudio.analysis.expected_batch import require_declared_batch

    try:
        require_declared_batch(analysis)
    except EngineError as exc:
        raise ProjectError(str(exc)) from None
    acc = get_accountant(accountant)
    charge = acc.charge(query)
    with project._db() as conn:
        of = record.id if record is not None else budget_of
        charges, losses = project._losses(conn, of) if of is not None else ([], [])
    label = path.name
    check_budget(acc, budget, charges, losses, charge, None, label)
    out, created = output_folder(out_dir, create_out)
    return Prepared(spec, query, notes, path, fingerprint, path.name, schema, record,
                    budget, relation, accountant, charge, None,
                    reader_for(query, declared), out, created, "central", model,
                    content, budget_of, analysis, None, False, None)


def draw_train(prep: Any) -> tuple[dict[str, Any], None, TrainRelease]:
    """Train once, drawing every random bit from the OS CSPRNG: the release's noise.

    Parameters
    ----------
    prep : Prepared
        From :func:`prepare_train`.

    Returns
    -------
    (dict, None, TrainRelease)
        The public fields, no collector's records, and the result whose engine object's
        ε and δ are charged.

    Raises
    ------
    ProjectError
        If the run was not drawn from the OS CSPRNG (never a seeded simulation).
    """
    result = run_analysis(prep.analysis, prep.model, SecureSource(), notes=[],
                          state=prep.model.state)
    if result.simulated or getattr(result.engine, "simulated", True):
        raise ProjectError("a trained model is released only from the OS CSPRNG, never "
                           "from a seeded simulation")
    released = TrainRelease(result.analysis, result.engine, result.fields,
                            result.analyst_only, source_label=result.source_label)
    return released.public(), None, released


def train_file_names(stem: str, spec: Any) -> list[str]:
    """The names a train release writes (:func:`~dpstudio.export.model_files
    .train_file_names`)."""
    from dpstudio.export.model_files import train_file_names as names

    return names(stem, spec.formats, (spec.training or {}).get("model", "logistic"),
                 spec.report, spec.script, spec.script_format)


def summary_lines(public: dict[str, Any]) -> list[str]:
    """What ``dpstudio release`` prints for a trained model (public fields only).

    Parameters
    ----------
    public : dict
        The release's public fields (the ledger's result).

    Returns
    -------
    list of str
    """
    lines = [f"  model        {public.get('model')} by {public.get('method')}"
             + (f", FedAvg {public['fed_variant']}" if public.get("fed_variant") not in
                (None, "none") else "")
             + f" ({public.get('accountant')})"]
    for row in public.get("coefficients") or []:
        lines.append(f"  {row['feature']:<24} {row['coefficient']:>12.6g}")
    if public.get("weights_shape"):
        lines.append(f"  weights      {public['weights_shape']}")
    lines.append("  metrics      held-out accuracy is not published (it is read off private "
                 "rows without noise)")
    return lines
