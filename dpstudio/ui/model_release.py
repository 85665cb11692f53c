"""Release… of a trained model from the Models tab into the open project.

The Models tab's way of training at the form's ε (:meth:`~dpstudio.ui.model_view.ModelView
.current_request`) becomes a ``query = "train"`` release spec
(:func:`dpstudio.project.release_model.train_spec`) and goes the way every release goes
through the window's :class:`~dpstudio.ui.project_controller.ProjectController`: a check
in the worker (budget, dataset, relation, the method's conditions: a refusal is one
sentence), a confirmation (:class:`ModelReleaseDialog`: what is charged, that the
held-out metrics are not published, where the files go), then the release in the worker
with progress and Cancel (noise from the OS CSPRNG, charged and written as one
transaction), after which the controller refreshes the Ledger tab and shows the release.
The seeded simulations on the tab are never released: the release trains anew.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from dpstudio.ui.done_kinds import charge_number as _num

__all__ = ["HELD_OUT_TEXT", "ModelRelease", "ModelReleaseDialog", "release_fields"]

#: What the confirmation says of the metrics the tab shows (the charge does not cover them).
HELD_OUT_TEXT = ("Not published: the held-out accuracy, AUC or RMSE the tab shows are read "
                 "off private rows without noise; the release's files hold the model, its "
                 "declarations and its guarantee only (the model card says so).")
#: The training parameters a train spec takes as top-level keys.
_PARAMS = ("lambda", "epochs", "batch_rate", "expected_batch", "clip", "learning_rate")


def release_fields(req: Any, dataset: str, header: bool = True,
                   budget: tuple[float, float] | None = None) -> dict[str, Any]:
    """The keys of a train spec for one training run of the Models tab.

    Parameters
    ----------
    req : ModelRequest
        One resolved run (:meth:`ModelView.current_request`): its method, federated
        variant, ε, δ and parameters.
    dataset : str
        The data file's path.
    header : bool, optional
        Whether its first line names the columns.
    budget : (float, float), optional
        The ``[budget]`` that registers the dataset on its first release (when the
        project has no default budget).

    Returns
    -------
    dict
        For :func:`~dpstudio.project.release_model.train_spec`.
    """
    fields: dict[str, Any] = {
        "dataset": dataset, "label": req.label, "features": list(req.features),
        "model": req.model, "method": req.method, "epsilon": float(req.epsilon),
        "delta": float(req.delta), "header": bool(header), "report": True, "script": True}
    for key in _PARAMS:
        if req.params.get(key) is not None:
            fields[key] = float(req.params[key])
    if req.params.get("hidden") is not None:
        fields["hidden"] = int(req.params["hidden"])
    fed = req.federated
    if fed is not None:
        fields["fed_variant"] = req.fed_variant
        fields["rounds"], fields["local_steps"] = int(fed["rounds"]), int(fed["local_steps"])
        if fed.get("sites_by"):
            fields["sites_by"] = fed["sites_by"]
        elif fed.get("sites"):
            fields["sites"] = int(fed["sites"])
    if budget is not None and budget[0] is not None:
        fields["budget"] = {"epsilon": float(budget[0]), "delta": float(budget[1] or 0.0)}
    return fields


class ModelReleaseDialog(QDialog):
    """The confirmation before a trained model is released: what, what it costs, where.

    Parameters
    ----------
    spec : ReleaseSpec
        The train spec.
    check : dict
        :meth:`Project.check`'s answer for it (the charge, the budget left).
    planned : (float, float) or None
        The ε and δ the engine's calibration gives for this run (the tab's simulated run
        of the same settings), or None when it is not known yet.
    project : str
        The project file's name.
    out_dir : pathlib.Path
        Where the files go.
    what : list of (str, str)
        The rows saying which model is released (label, text).
    """

    def __init__(self, spec: Any, check: dict[str, Any], planned: tuple[float, float] | None,
                 *, project: str, out_dir: Path, what: list[tuple[str, str]],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumWidth(560)
        from dpstudio.ui.project_dialogs import (
            REAL_RELEASE,
            REAL_RELEASE_MORE,
            WARNING_STYLE,
            fit_height,
        )

        self.setWindowTitle(f"Release a model of {spec.query.column} — a real release")
        dataset = check.get("dataset") or Path(spec.dataset).name
        banner = QLabel(f"<b style='font-size:12pt'>{REAL_RELEASE}</b><br>"
                        f"{REAL_RELEASE_MORE}", self)
        banner.setWordWrap(True)
        banner.setStyleSheet(WARNING_STYLE)
        box = QGroupBox("What will be released", self)
        form = QFormLayout(box)
        form.addRow("Dataset", QLabel(str(dataset), box))
        for label, text in what:
            row = QLabel(text, box)
            row.setWordWrap(True)
            form.addRow(label, row)
        cost = QGroupBox(f"Budget of {dataset} in {project}", self)
        costs = QFormLayout(cost)
        e, d = float(check["epsilon"]), float(check["delta"])
        left_e, left_d = (float(x) for x in check["remaining"])
        self.charge_label = QLabel(f"<b>at most ε = {_num(e)}, δ = {_num(d)}</b>", cost)
        self.charge_label.setTextFormat(Qt.TextFormat.RichText)
        costs.addRow("This release charges", self.charge_label)
        #: The engine's calibration for these settings (None when not known yet).
        self.planned_label: QLabel | None = None
        if planned is not None and planned[0] is not None:
            # Six digits: DP-SGD's accountant lands just under the target (0.99996 is not 1).
            self.planned_label = QLabel(f"ε = {float(planned[0]):.6g}, δ = "
                                        f"{_num(planned[1])}: the ledger records these",
                                        cost)
            self.planned_label.setToolTip(
                "The accountant's (ε, δ) for the noise the method calibrates to the target "
                "(for DP-SGD, for the (q, σ, T) it runs): the same calibration the tab's "
                "simulation ran, so the release is charged these.")
            costs.addRow("Engine's calibration", self.planned_label)
        costs.addRow("Left before", QLabel(f"ε = {_num(left_e)}, δ = {_num(left_d)}", cost))
        costs.addRow("Left after", QLabel(f"at least ε = {_num(left_e - e)}, δ = "
                                          f"{_num(left_d - d)}", cost))
        notes = list(check.get("notes", []))
        if check.get("registers_dataset"):
            notes.insert(0, f"First release of {dataset}: it will be registered in the "
                            "project with this budget, and its SHA-256 recorded.")
        self.held_out = QLabel(HELD_OUT_TEXT, self)
        self.held_out.setWordWrap(True)
        self.notes = QLabel("\n".join(f"• {n}" for n in notes), self)
        self.notes.setWordWrap(True)
        self.notes.setVisible(bool(notes))
        out = QGroupBox("Output", self)
        outs = QFormLayout(out)
        self.out_edit = QLineEdit(str(out_dir), out)
        self.out_edit.setMinimumWidth(360)
        self.out_edit.setToolTip("The folder the release's files are written to: the "
                                 "coefficients (CSV, JSON; an MLP's weights as .npz), the "
                                 "manifest, the model card, the report and the script.")
        outs.addRow("Folder", self.out_edit)
        self.report_box = QCheckBox("Stakeholder report and model card", out)
        self.report_box.setChecked(bool(spec.report))
        self.script_box = QCheckBox("Reproducible script", out)
        self.script_box.setChecked(bool(spec.script))
        outs.addRow("", self.report_box)
        outs.addRow("", self.script_box)
        buttons = QDialogButtonBox(self)
        self.release_button = buttons.addButton("Release",
                                                QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        col = QVBoxLayout(self)
        for w in (banner, box, cost, self.held_out, self.notes, out, buttons):
            col.addWidget(w)
        fit_height(self)

    def values(self) -> dict[str, Any]:
        """The output options chosen."""
        return {"out_dir": Path(self.out_edit.text().strip()),
                "report": self.report_box.isChecked(), "script": self.script_box.isChecked()}


class ModelRelease(QObject):
    """The Models tab's Release… button, through the window's project controller.

    ``dialog`` is the open confirmation (tests accept it); ``refused`` carries a refusal's
    sentence (also shown under the tab's plot).
    """

    refused = Signal(str)

    def __init__(self, view: Any, projects: Any) -> None:
        super().__init__(view)
        self.view, self.projects = view, projects
        self.dialog: ModelReleaseDialog | None = None
        self._releasing = False
        self._spec: Any = None
        self._out: Path | None = None
        self._planned: tuple[float, float] | None = None
        projects.plan_checked.connect(self._checked)
        projects.project_changed.connect(lambda _p: self.update_state())
        projects.busy_changed.connect(self._busy_changed)
        projects.release_done.connect(self._done)
        projects.release_refused.connect(self._release_refused)
        view.release_button.clicked.connect(self.start)
        self.update_state()

    # -- state -----------------------------------------------------------------------

    def problem(self) -> str | None:
        """Why the tab's model cannot be released now (one line), or None."""
        from dpstudio.ui.folder_open import is_folder
        from dpstudio.ui.model_variants import variant
        from dpstudio.ui.result_panel import RELEASE_TOOLTIP

        p = self.projects
        if p.project is None:
            return RELEASE_TOOLTIP
        if p.busy == "release" or self._releasing:
            return "A release is under way…"
        if p.busy == "check":
            return "Checking the budget…"
        if p.tamper:
            return (f"The ledger of {p.project.path.name} was changed outside DP Studio "
                    f"({p.tamper[0]}): new releases are refused until you acknowledge it "
                    "in the Ledger tab.")
        dataset = self.view.session.dataset
        if dataset is None:
            return "Nothing to release: open a dataset and train a model on it."
        if is_folder(dataset):
            return ("A trained model is released from one file: train on a folder's file "
                    "with dpstudio train, then release it with dpstudio release.")
        key = self.view.selected_way()
        req = self.view.current_request(key)
        if isinstance(req, str):
            return f"Nothing to release: {req}."
        if not variant(key).private:
            return (f"{variant(key).label} is trained without privacy and is never "
                    "released: choose a private way of training.")
        if req.method == "dpsgd" and not req.params.get("expected_batch"):
            return (f"To release {variant(key).label}, declare B, the public expected batch "
                    "each step divides by (e.g. q × a public row count): it is never read "
                    "off the data.")
        return None

    def update_state(self) -> None:
        """The button: enabled, or disabled with the reason as its tooltip."""
        problem = self.problem()
        button = self.view.release_button
        button.setEnabled(problem is None)
        if problem is None:
            from dpstudio.ui.model_variants import variant

            problem = (f"Release the model trained by {variant(self.view.selected_way()).label}"
                       " at the form's ε for real: noise from the OS CSPRNG, charged to the "
                       "project's budget and recorded in its ledger (you confirm first).")
        button.setToolTip(problem)

    def _busy_changed(self, _busy: bool) -> None:
        self.update_state()

    # -- releasing -------------------------------------------------------------------

    def spec(self) -> Any:
        """The train spec of the tab's selected way at the form's ε (None if none)."""
        from dpstudio.project.release_model import train_spec

        p, dataset = self.projects, self.view.session.dataset
        req = self.view.current_request(self.view.selected_way())
        if isinstance(req, str) or dataset is None or p.project is None:
            return None
        budget = None
        record = getattr(p, "_record", None)
        if record is None and p.project.defaults()["epsilon"] is None:
            s = self.view.session
            budget = (s.total_epsilon, s.total_delta)
        fields = release_fields(req, str(Path(dataset.path).resolve()),
                                bool(dataset.frame.attrs.get("header", True)), budget)
        return train_spec(fields)

    def planned(self) -> tuple[float, float] | None:
        """ε and δ of the tab's simulated run of the same way at the same ε (the engine's
        calibration: a release of the same settings is charged these), or None."""
        r = self.view.result
        key = self.view.selected_way()
        req = self.view.current_request(key)
        if r is None or isinstance(req, str) or r.request.epsilon != req.epsilon:
            return None
        at = r.at_epsilon.get(key) or {}
        if at.get("epsilon") is None:
            return None
        return float(at["epsilon"]), float(at.get("delta") or 0.0)

    def start(self) -> bool:
        """Release…: check in the worker, then confirm, then release."""
        from dpstudio.engine.errors import EngineError
        from dpstudio.project import ProjectError

        self.projects.refresh()  # another process may have used the project
        problem = self.problem()
        if problem is not None:
            self._say(problem)
            return False
        try:
            spec = self.spec()
        except (ProjectError, EngineError) as exc:  # SpecError is a ProjectError
            self._say(f"Cannot release: {exc}")
            return False
        if spec is None:
            return False
        self._spec, self._out = spec, self.projects.default_out_dir()
        self._planned = self.planned()
        self._releasing = True
        self._say("Checking the budget…")
        if not self.projects.start_plan_check(spec, self._out):
            self._releasing = False
            return False
        return True

    def _checked(self, outcome: Any) -> None:
        if not self._releasing or self._spec is None or self._spec.training is None:
            return  # the plan view's check
        if outcome.error is not None:
            self._releasing = False
            self._say(f"Cannot release: {outcome.error}")
            self.refused.emit(str(outcome.error))
            self.update_state()
            return
        self._say("")
        from dpstudio.ui.model_variants import variant

        req = self.view.current_request(self.view.selected_way())
        how = variant(self.view.selected_way()).label
        what = [("Model", f"{self._spec.training.get('model', 'logistic')}, predicting "
                          f"{self._spec.query.column}"),
                ("Features", ", ".join(self._spec.features or ())),
                ("Trained by", how if isinstance(req, str) else
                 f"{how} at ε = {req.epsilon:g}")]
        self.dialog = ModelReleaseDialog(self._spec, outcome.value, self._planned,
                                         project=self.projects.project.path.name,
                                         out_dir=self._out, what=what, parent=self.view)
        self.dialog.accepted.connect(self._confirmed)
        self.dialog.rejected.connect(self._rejected)
        self.dialog.open()

    def _rejected(self) -> None:
        self._releasing = False
        self._say("Not released: nothing was charged.")
        self.update_state()

    def _confirmed(self) -> None:
        from dataclasses import replace

        assert self.dialog is not None
        v = self.dialog.values()
        spec = replace(self._spec, report=v["report"], script=v["script"])
        self._say("Releasing (noise from the OS CSPRNG)…")
        if not self.projects.start_plan_release(spec, v["out_dir"]):
            self._releasing = False
            self._say("Not released: another job is running; nothing was charged.")

    def _done(self, record: Any) -> None:
        if self._releasing and getattr(record, "query", None) == "train":
            self._releasing = False
            self._say(f"Released as #{record.id}: ε = {float(record.epsilon):.6g}, δ = "
                      f"{_num(record.delta)} charged; files in {record.out_dir}.")
        self.update_state()

    def _release_refused(self, message: str) -> None:
        if self._releasing:
            self._releasing = False
            self._say(f"Not released: {message}")
            self.update_state()

    def _say(self, text: str) -> None:
        self.view.release_status(text)
