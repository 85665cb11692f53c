"""All the files of one release, rendered in memory: exports, report, script, manifest.

Rendering everything before anything is written lets the project ledger record every
file's SHA-256 *before* the first byte reaches the output folder, which is what makes a
release recoverable after a crash (see :mod:`dpstudio.project`).

The analyst's copy of the report (:func:`render_analyst_report`) is not one of these
files: it holds figures read off the raw data (n, values outside the bounds, the clamping
bias), so it is never in the output folder, never in the manifest, and never in the
ledger's list of files. The project writes it to a private folder of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from dpstudio import __version__
from dpstudio.analysis.capabilities import Capability, capability
from dpstudio.analysis.result import shape_of
from dpstudio.data.folders import FILES_ALGORITHM
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.registry import REGISTRY
from dpstudio.export.manifest import (
    MANIFEST_KIND,
    MANIFEST_VERSION,
    file_entry,
    manifest_bytes,
    missing_treatment,
)
from dpstudio.export.manifest_parties import protocol_sections
from dpstudio.export.rendered import RenderedFile
from dpstudio.export.rendered import exact_text as _exact_text
from dpstudio.export.report_analyst import AnalystFigures
from dpstudio.export.report_input import ReportInput
from dpstudio.export.script import release_script
from dpstudio.export.tables import local_table, model_table, records_table, release_table
from dpstudio.export.writers import FORMATS, normalize_format, render_table

__all__ = ["BundleInput", "RenderedFile", "file_names", "render_analyst_report",
           "render_bundle"]

#: The table of a release's values, by how the result reads (:func:`shape_of`).
_TABLES = {"statistic": release_table, "estimate": local_table, "model": model_table}


@dataclass
class BundleInput:
    """What a release's files are made of; all public except ``dataset_path`` (local) and
    ``analyst`` (read off the raw data: only :func:`render_analyst_report` uses it)."""

    release_id: int
    uid: str
    created_at: str
    stem: str
    dataset_name: str
    dataset_path: str
    fingerprint: str
    schema: dict[str, Any]
    spec: QuerySpec
    public: dict[str, Any]
    epsilon: Decimal
    delta: Decimal
    accountant: str
    budget_epsilon: Decimal
    budget_delta: Decimal
    formats: tuple[str, ...] = ("csv", "json")
    report: bool = False
    script: bool = False
    #: How the script is written: ``"py"`` (a Python script) or ``"ipynb"`` (the same code
    #: as a Jupyter notebook, runnable top to bottom).
    script_format: str = "py"
    reader: str = "numeric_column"
    history: list[dict[str, Any]] = field(default_factory=list)
    trust_model: str = "central"
    #: Local model: the columns the untrusted collector received (already randomized on
    #: each user's side), exported as ``<stem>.records.<ext>`` in every chosen format.
    records: dict[str, Any] | None = None
    #: Why a local release has no records (it ran where the data is: no individual report
    #: left its file); then no records file is written and the manifest says so.
    records_note: str | None = None
    #: Whether the dataset's first line is a header (False: read with ``header=False``).
    header: bool = True
    #: Figures measured on the raw data at release time
    #: (:func:`~dpstudio.export.report_analyst.measure_clamping`) for the analyst's copy
    #: of the report; never in a published file.
    analyst: AnalystFigures | None = None
    #: Where the sums were computed (:meth:`dpstudio.execution.engines.Cluster.describe`:
    #: engine, scheduler, workers, threads, memory, partitions); None: pandas, in process.
    execution: dict[str, Any] | None = None
    #: A dataset of many files: each file's name, size, mtime and SHA-256 as the release
    #: read it (:class:`dpstudio.data.folders.FileEntry`); None for one file.
    dataset_files: list[dict[str, Any]] | None = None
    #: A user-level release: ``{"identifier": column, "max_rows": k}``
    #: (:func:`~dpstudio.export.manifest_contributions.contributions_section`); None: rows.
    contributions: dict[str, Any] | None = None

    @property
    def shape(self) -> str:
        """How the release reads (:func:`~dpstudio.analysis.result.shape_of`):
        ``"statistic"``, ``"estimate"``, ``"heavy_hitters"`` or ``"model"``."""
        return shape_of(self.trust_model, self.spec.query, _is_model(self))

    @property
    def capability(self) -> Capability:
        """The capability row the release falls under (``"model"`` for a model, else its
        trust model's): its ``options`` say which manifest sections and files it has."""
        return capability("model" if self.shape == "model" else self.trust_model)


def file_names(stem: str, formats: tuple[str, ...], report: bool, script: bool,
               records: bool = False, script_format: str = "py") -> list[str]:
    """The names a release with these options writes (the manifest last)."""
    names = [stem + FORMATS[normalize_format(f)] for f in formats]
    if records:
        names += [f"{stem}.records{FORMATS[normalize_format(f)]}" for f in formats]
    if report:
        names += [f"{stem}.report.html", f"{stem}.report.pdf"]
    if script:
        names.append(f"{stem}.{script_format}")
    return names + [f"{stem}.manifest.json"]


def _is_model(inp: BundleInput) -> bool:
    return inp.public.get("model") == "logistic_regression"


def _declared_domain(spec: QuerySpec, public: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"column": spec.column}
    if public.get("model") is not None:  # the label, and each feature's declared bounds
        out["features"] = {f: {"lower": float(public["bounds"][f][0]),
                               "upper": float(public["bounds"][f][1])}
                           for f in public["features"]}
        return out
    if spec.categories is not None:
        out["categories"] = list(spec.categories)
    if spec.bounds is not None:
        out["lower"], out["upper"] = float(spec.bounds[0]), float(spec.bounds[1])
    if spec.bins is not None and spec.categories is None:
        out["bins"] = int(spec.bins)
    return out


def _meta(inp: BundleInput) -> dict[str, Any]:
    pub = inp.public
    return {
        "release_id": inp.release_id, "release_uid": inp.uid, "created_at": inp.created_at,
        "dataset_fingerprint": inp.fingerprint, "query": pub["query"],
        "column": pub.get("column"), "mechanism": pub["mechanism"],
        "epsilon": float(inp.epsilon), "delta": float(inp.delta), "relation": pub["relation"],
        "confidence": pub.get("confidence"), "sensitivity": pub.get("sensitivity"),
        "noise_scale": pub.get("noise_scale"), "notes": list(pub.get("notes", [])),
        "engine_version": __version__, "trust_model": inp.trust_model,
    }


def _manifest(inp: BundleInput, files: list[RenderedFile]) -> dict[str, Any]:
    spec, pub = inp.spec, inp.public
    info = REGISTRY.get(spec.mechanism)
    options = inp.capability.options
    return {
        "schema_version": MANIFEST_VERSION,
        "kind": MANIFEST_KIND,
        "release": {"id": inp.release_id, "uid": inp.uid, "created_at": inp.created_at},
        "engine": {"name": "dpstudio", "version": __version__},
        "dataset": {"name": inp.dataset_name, "fingerprint": inp.fingerprint,
                    "fingerprint_algorithm": "sha256" if inp.dataset_files is None
                    else FILES_ALGORITHM, "schema": inp.schema,
                    "declared": _declared_domain(spec, pub),
                    **({"files": inp.dataset_files} if inp.dataset_files is not None
                       else {})},
        "execution": dict(inp.execution) if inp.execution else {"engine": "pandas"},
        "trust_model": inp.trust_model,
        "query": {"statistic": spec.query, "column": spec.column,
                  "quantile": spec.quantile,
                  "relation": pub.get("relation", spec.relation),
                  **({"features": list(pub["features"])} if inp.shape == "model" else {}),
                  **({"missing": m} if "missing" in options
                     and (m := missing_treatment(spec)) else {})},
        "mechanism": {"name": spec.mechanism, "label": info.label,
                      "params": info.resolve(spec.mechanism_params()),
                      "sensitivity": pub.get("sensitivity"),
                      "noise_scale": pub.get("noise_scale"),
                      "components": pub.get("components", [])},
        "privacy": {"epsilon": float(inp.epsilon), "delta": float(inp.delta),
                    "epsilon_exact": _exact_text(inp.epsilon),
                    "delta_exact": _exact_text(inp.delta),
                    "relation": pub.get("relation", spec.relation),
                    "accountant": inp.accountant},
        **({"contributions": dict(inp.contributions)} if inp.contributions else {}),
        "confidence": spec.confidence,
        "randomness": pub.get("source", ""),
        **({"local": _local_section(inp)} if "records" in options else {}),
        **({"model": _model_section(inp)} if inp.shape == "model" else {}),
        **protocol_sections(pub),  # shuffle, secure aggregation: who sees what
        "files": [file_entry(f.name, f.role, f.data) for f in files],
    }


def _local_section(inp: BundleInput) -> dict[str, Any]:
    """What a local release's manifest adds: the randomizer and what the records hold."""
    pub, spec = inp.public, inp.spec
    out: dict[str, Any] = {
        "guarantee": f"each record was randomized on its owner's side with "
                     f"{float(inp.epsilon):g}-local differential privacy"
                     + (f" (δ = {float(inp.delta):g})" if inp.delta else "")
                     + " before it was collected; raw values never left it",
        "randomizer": pub.get("parameters", {}),
        "reports": pub.get("n"),
        "messages_bits": pub.get("messages_bits"),
        "record_columns": list(inp.records or {}),
    }
    if inp.records_note is not None:
        out.update(records=None, records_note=inp.records_note)
    if spec.categories is not None:
        out["codes"] = {"meaning": "category codes: code i is declared category i",
                        "categories": list(spec.categories)}
        from dpstudio.engine.local.respond import OTHER_LABEL, has_other_cell

        if has_other_cell(spec.mechanism):  # every row reports: the extra code is "other"
            k = len(spec.categories)
            out["codes"]["meaning"] += (f"; code {k} is {OTHER_LABEL!r}: a missing or "
                                        "undeclared value (every row sends a report)")
            out["codes"]["other_code"] = k
    return out


def _model_section(inp: BundleInput) -> dict[str, Any]:
    """What a model release's manifest adds: how the coefficients were privatized. Only
    public fields (the analyst-only utility — accuracy, objective — is never here)."""
    pub = inp.public
    return {
        "model": pub["model"], "label": pub.get("column"), "features": list(pub["features"]),
        "mechanism": pub["mechanism"], "lambda": pub["lambda"], "epsilon": pub["epsilon"],
        "delta": pub["delta"], "rho": pub.get("rho"), "noise_family": pub["noise_family"],
        "noise_scale": pub["noise_scale"], "grid": pub["grid"],
        "sensitivity_l1": pub["sensitivity_l1"], "sensitivity_l2": pub["sensitivity_l2"],
        "calibration": pub.get("calibration"),
        "feature_bounds": {f: list(pub["bounds"][f]) for f in pub["features"]},
        "n": pub["n"],
        "neighbours": "replace one record (n public)",
        "coefficient_units": "logit P(label = yes | x) = (intercept) + Σ coefficient·x, with "
                             "x clipped to its declared bounds",
    }


def _report_input(inp: BundleInput, analyst: bool) -> ReportInput:
    """The report's input: the stakeholder copy's, or with the analyst's figures."""
    return ReportInput(
        release_id=inp.release_id, uid=inp.uid, created_at=inp.created_at,
        dataset_name=inp.dataset_name, fingerprint=inp.fingerprint, spec=inp.spec,
        public=({**inp.public, "contributions": dict(inp.contributions)}
                if inp.contributions else inp.public),
        epsilon=float(inp.epsilon), delta=float(inp.delta),
        accountant=inp.accountant, budget_epsilon=float(inp.budget_epsilon),
        budget_delta=float(inp.budget_delta), history=inp.history,
        engine_version=__version__, trust_model=inp.trust_model,
        analyst=inp.analyst if analyst else None)


def render_analyst_report(inp: BundleInput) -> bytes | None:
    """The analyst's copy of the release's report (HTML), never a published file.

    Parameters
    ----------
    inp : BundleInput
        The release as :func:`render_bundle` renders it, with ``analyst`` set.

    Returns
    -------
    bytes or None
        The self-contained HTML page (the stakeholder report plus a banner, n and the
        error as bias + noise measured on the data); None when the release writes no
        report or has no analyst's figures (a model release).

    Raises
    ------
    ExportError
        If the report cannot be rendered.
    """
    if not inp.report or inp.analyst is None or inp.shape == "model":
        return None
    from dpstudio.export.report import render_report

    html_doc, _ = render_report(_report_input(inp, analyst=True))
    return html_doc


def render_bundle(inp: BundleInput) -> list[RenderedFile]:
    """Every file of the release, the manifest last.

    Parameters
    ----------
    inp : BundleInput
        The release's public fields, declaration and options (``analyst`` is not read:
        see :func:`render_analyst_report`).

    Returns
    -------
    list of RenderedFile
        The value tables in each format, the collector's records (local model), the
        stakeholder report, the script, then the manifest (which lists every other
        file's SHA-256).

    Raises
    ------
    ValueError
        For a kind of result that has no export table, or a local release without its
        collector's records.
    """
    if inp.public.get("query") == "train":  # a trained model: weights, a model card
        from dpstudio.export.model_files import render_train_bundle

        return render_train_bundle(inp)
    make_table = _TABLES.get(inp.shape)
    if make_table is None:
        raise ValueError(f"a {inp.shape} result is not exported")
    table = make_table(inp.public)
    if "parties" in inp.public:  # shuffle, secure aggregation: not a local estimate
        table = replace(table, title=f"{inp.capability.title} {inp.public['query']} of "
                                     f"{inp.public.get('column')}")
    meta = _meta(inp)
    formats = [normalize_format(x) for x in inp.formats]
    files = [RenderedFile(inp.stem + FORMATS[f], f"export/{f}", render_table(table, f, meta))
             for f in formats]
    if "records" in inp.capability.options and inp.records_note is None:
        if inp.records is None:
            raise ValueError("a local release exports the collector's records")
        records = records_table(inp.records)
        files += [RenderedFile(f"{inp.stem}.records{FORMATS[f]}", f"records/{f}",
                               render_table(records, f, meta)) for f in formats]
    if inp.report:
        from dpstudio.export.report import render_report

        html_doc, pdf_doc = render_report(_report_input(inp, analyst=False))
        files += [RenderedFile(f"{inp.stem}.report.html", "report/html", html_doc),
                  RenderedFile(f"{inp.stem}.report.pdf", "report/pdf", pdf_doc)]
    if inp.script:
        name = f"{inp.stem}.py"
        text = release_script(release_id=inp.release_id, created_at=inp.created_at,
                              version=__version__, dataset_name=inp.dataset_name,
                              dataset_path=inp.dataset_path, fingerprint=inp.fingerprint,
                              spec=inp.spec, reader=inp.reader, script_name=name,
                              trust_model=inp.trust_model, header=inp.header,
                              files=inp.dataset_files is not None,
                              engine=(inp.execution or {}).get("engine", "pandas"),
                              scheduler=(inp.execution or {}).get("scheduler"),
                              public=inp.public, contributions=inp.contributions,
                              model={"label": inp.public["column"],
                                     "features": list(inp.public["features"]),
                                     "bounds": dict(inp.public["bounds"]),
                                     "lambda": inp.public["lambda"]}
                              if inp.shape == "model" else None)
        if inp.script_format == "ipynb":
            from dpstudio.export.notebook import script_notebook

            files.append(RenderedFile(f"{inp.stem}.ipynb", "script/notebook",
                                      script_notebook(text)))
        else:
            files.append(RenderedFile(name, "script/python", text.encode("utf-8")))
    manifest = _manifest(inp, files)
    files.append(RenderedFile(f"{inp.stem}.manifest.json", "manifest",
                              manifest_bytes(manifest)))
    return files
