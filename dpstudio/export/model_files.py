"""Every file of a released trained model, rendered in memory (``query = "train"``).

As for every release (:mod:`dpstudio.export.bundle`), nothing is written here: the
project records each file's SHA-256 before the first byte reaches the output folder.

- ``<stem>.csv`` / ``.json`` (any chosen format): the coefficients in the features' own
  units, the intercept last (logistic and linear models); each value as released
  (CSV holds the shortest decimal that reads back to the same double);
- ``<stem>.npz`` (MLP): the layers ``W1`` (p × H: one row per model input, the intercept
  column's last), ``w2``, ``b2``, the input names and declared bounds, and how an input
  row is made (``x = clip(2(v − lo)/(hi − lo) − 1, −1, 1)``, an intercept 1, all over
  √p), enough to reproduce every prediction with numpy alone;
- ``<stem>.model-card.md``: the model card (:mod:`~dpstudio.export.model_card`);
- ``<stem>.report.html`` / ``.report.pdf``: the stakeholder report
  (:mod:`~dpstudio.export.train_report`);
- ``<stem>.py`` or ``.ipynb``: the reproducible script (:mod:`~dpstudio.export
  .train_script`);
- ``<stem>.manifest.json``: what was trained, the declaration, the method and its plan,
  ε, δ and the accountant, every file's SHA-256 — and, in place of held-out metrics, why
  none is published.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpstudio import __version__
from dpstudio.data.folders import FILES_ALGORITHM
from dpstudio.export.manifest import MANIFEST_KIND, MANIFEST_VERSION, file_entry, manifest_bytes
from dpstudio.export.model_card import METRICS_SENTENCE, model_card, model_card_html
from dpstudio.export.tables import ExportTable
from dpstudio.export.train_public import mlp_weights
from dpstudio.export.writers import FORMATS, normalize_format, render_table

__all__ = ["render_train_bundle", "train_file_names", "weights_npz"]


def train_file_names(stem: str, formats: Sequence[str], model: str, report: bool,
                     script: bool, script_format: str = "py") -> list[str]:
    """The names a train release writes, the manifest last.

    Parameters
    ----------
    stem : str
        The release's file stem.
    formats : sequence of str
        The coefficient table's formats (a linear model's).
    model : str
        ``"logistic"``, ``"linear"`` or ``"mlp"`` (weights in ``.npz`` instead).
    report, script : bool
        Whether the report and the script are written.
    script_format : str, optional
        ``"py"`` or ``"ipynb"``.

    Returns
    -------
    list of str
    """
    names = ([f"{stem}.npz"] if model == "mlp" else
             [stem + FORMATS[normalize_format(f)] for f in formats])
    names.append(f"{stem}.model-card.md")
    if report:
        names += [f"{stem}.report.html", f"{stem}.report.pdf"]
    if script:
        names.append(f"{stem}.{script_format}")
    return names + [f"{stem}.manifest.json"]


def weights_npz(pub: dict[str, Any]) -> bytes:
    """The MLP's layers and its input map, as a NumPy ``.npz`` (no pickled objects).

    Parameters
    ----------
    pub : dict
        The release's public fields (an MLP's).

    Returns
    -------
    bytes
    """
    names = list(pub["design"])
    layers = mlp_weights(np.asarray(pub["normalized_theta"]), len(names) + 1,
                         int(pub["hidden"]))
    bounds = np.array([pub["feature_bounds"][n] for n in names], dtype=np.float64)
    buf = io.BytesIO()
    np.savez(buf, **layers, inputs=np.array(names, dtype=str), lower=bounds[:, 0],
             upper=bounds[:, 1], activation=np.array(pub.get("activation", "tanh")),
             label=np.array(str(pub["label"])),
             input_map=np.array("x_j = clip(2 (v_j - lower_j) / (upper_j - lower_j) - 1, "
                                "-1, 1); row = [x, 1] / sqrt(len(inputs) + 1); "
                                "P(label = yes) = sigmoid(tanh(row @ W1) @ w2 + b2)"))
    return buf.getvalue()


def _coefficients(pub: dict[str, Any]) -> ExportTable:
    rows = tuple((str(r["feature"]), float(r["coefficient"])) for r in pub["coefficients"])
    units = ("logit P(label = yes)" if pub["model"] == "logistic" else
             f"{pub['label']} in its own units")
    return ExportTable("coefficients", (("feature", "text"), ("coefficient", "number")),
                       rows, f"{pub['model']} regression of {pub['label']} ({units})")


def _model_section(pub: dict[str, Any]) -> dict[str, Any]:
    keys = ("model", "method", "mechanism", "fed_variant", "trusts", "label", "features",
            "design", "feature_bounds", "feature_categories", "yes_no_features",
            "label_bounds", "lambda", "hidden", "activation", "weights_shape", "plan",
            "split", "n", "accountant", "training")
    out = {k: pub[k] for k in keys if k in pub}
    out["metrics"] = {"published": False, "why": METRICS_SENTENCE}
    out["neighbours"] = ("replace one record (n public)" if pub["relation"] == "replace"
                         else "add or remove one record (n private)")
    return out


def render_train_bundle(inp: Any) -> list[Any]:
    """Every file of a train release, the manifest last.

    Parameters
    ----------
    inp : BundleInput
        The release (``public`` from :func:`~dpstudio.export.train_public.train_public`).

    Returns
    -------
    list of RenderedFile
    """
    from dpstudio.export.rendered import RenderedFile
    from dpstudio.export.rendered import exact_text as _exact_text

    pub = inp.public
    stem = inp.stem
    meta = {"release_id": inp.release_id, "release_uid": inp.uid,
            "created_at": inp.created_at, "dataset_fingerprint": inp.fingerprint,
            "query": "train", "model": pub["model"], "method": pub["method"],
            "mechanism": pub["mechanism"], "epsilon": float(inp.epsilon),
            "delta": float(inp.delta), "relation": pub["relation"],
            "engine_version": __version__}
    files: list[Any] = []
    if pub["model"] == "mlp":
        files.append(RenderedFile(f"{stem}.npz", "weights/npz", weights_npz(pub)))
    else:
        table = _coefficients(pub)
        files += [RenderedFile(stem + FORMATS[f], f"export/{f}", render_table(table, f, meta))
                  for f in (normalize_format(x) for x in inp.formats)]
    names = train_file_names(stem, inp.formats, pub["model"], inp.report, inp.script,
                             inp.script_format)
    card = model_card(pub, release_id=inp.release_id, created_at=inp.created_at,
                      version=__version__, dataset_name=inp.dataset_name,
                      fingerprint=inp.fingerprint,
                      files=[n for n in names if not n.endswith(".model-card.md")])
    files.append(RenderedFile(f"{stem}.model-card.md", "model-card/markdown",
                              card.encode("utf-8")))
    if inp.report:
        from dpstudio.export.train_report import render_train_report

        html_doc, pdf_doc = render_train_report(
            pub, model_card_html(card), release_id=inp.release_id, history=inp.history,
            budget=(float(inp.budget_epsilon), float(inp.budget_delta)))
        files += [RenderedFile(f"{stem}.report.html", "report/html", html_doc),
                  RenderedFile(f"{stem}.report.pdf", "report/pdf", pdf_doc)]
    if inp.script:
        from dpstudio.export.train_script import train_script

        training = dict(pub["training"])
        text = train_script(release_id=inp.release_id, created_at=inp.created_at,
                            version=__version__, dataset_name=inp.dataset_name,
                            dataset_path=inp.dataset_path, fingerprint=inp.fingerprint,
                            schema=inp.schema, training=training, public=pub,
                            script_name=f"{stem}.py", header=inp.header)
        if inp.script_format == "ipynb":
            from dpstudio.export.notebook import script_notebook

            files.append(RenderedFile(f"{stem}.ipynb", "script/notebook",
                                      script_notebook(text)))
        else:
            files.append(RenderedFile(f"{stem}.py", "script/python", text.encode("utf-8")))
    manifest = {
        "schema_version": MANIFEST_VERSION, "kind": MANIFEST_KIND,
        "release": {"id": inp.release_id, "uid": inp.uid, "created_at": inp.created_at},
        "engine": {"name": "dpstudio", "version": __version__},
        "dataset": {"name": inp.dataset_name, "fingerprint": inp.fingerprint,
                    "fingerprint_algorithm": "sha256" if inp.dataset_files is None
                    else FILES_ALGORITHM, "schema": inp.schema,
                    "declared": {"column": pub["label"],
                                 "features": {n: {"lower": b[0], "upper": b[1]}
                                              for n, b in pub["feature_bounds"].items()}}},
        "execution": {"engine": "pandas"},
        "trust_model": inp.trust_model,
        "query": {"statistic": "train", "column": pub["label"], "relation": pub["relation"],
                  "features": list(pub["features"])},
        "mechanism": {"name": pub["mechanism"], "method": pub["method"],
                      "params": dict(pub["training"]["params"]), "plan": pub.get("plan")},
        "privacy": {"epsilon": float(inp.epsilon), "delta": float(inp.delta),
                    "epsilon_exact": _exact_text(inp.epsilon),
                    "delta_exact": _exact_text(inp.delta), "relation": pub["relation"],
                    "accountant": inp.accountant, "training_accountant": pub["accountant"]},
        "randomness": pub.get("source", ""),
        "model": _model_section(pub),
        "files": [file_entry(f.name, f.role, f.data) for f in files],
    }
    files.append(RenderedFile(f"{stem}.manifest.json", "manifest", manifest_bytes(manifest)))
    return files
