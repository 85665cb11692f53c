"""The Models tab's form: label, features, model, method, federated variant, parameters.

Only declared columns are offered: a yes/no or bounded numeric label, and features that
are bounded numbers, yes/no or declared categories (their bounds and categories are
public; nothing is read off the data). The method's parameters (ε, δ, λ, DP-SGD's steps)
are a :class:`~dpstudio.ui.param_form.ParamForm` generated from the registry entry's
parameter metadata. ``changed`` fires after each edit; :meth:`request` is the training run
the form describes, or a sentence saying what is missing.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from dpstudio.engine.learning.federated import TRUSTS, VARIANTS
from dpstudio.ui.model_jobs import ModelRequest
from dpstudio.ui.param_form import ParamForm

__all__ = ["FED_VARIANTS", "METHOD_TEXT", "ModelForm"]

#: Method → what the combo box shows.
METHOD_TEXT = {"nonprivate": "non-private (baseline, no guarantee)",
               "output": "output perturbation", "objective": "objective perturbation",
               "dpsgd": "DP-SGD"}
#: One sentence for each DP term the form shows.
METHOD_TIPS = {
    "nonprivate": "Trains without noise: the line every private model is compared with, "
                  "never something to release.",
    "output": "Trains the regularized model exactly, then adds noise scaled to how far one "
              "person's record can move it (2/(nλ)).",
    "objective": "Adds a random linear term to the training objective itself, so the "
                 "minimizer is private without noise added afterwards.",
    "dpsgd": "Gradient descent on random batches where each record's gradient is clipped "
             "to norm C and Gaussian noise is added at every step.",
}
#: Shown names of the engine's federated variants, in its order; the tooltip of each is
#: the engine's own sentence of what it trusts (one source for the CLI, the result and here).
_FED_LABELS = ("none (centralized)", "local DP", "secure aggregation",
               "correlated noise (CAPE)", "shuffle")
FED_VARIANTS = {variant: (label, TRUSTS[variant])
                for variant, label in zip(VARIANTS, _FED_LABELS, strict=True)}
_MODEL_TIPS = {"logistic": "Logistic regression: a yes/no label.",
               "linear": "Ridge regression: a numeric label with declared bounds.",
               "mlp": "A one-hidden-layer network: a yes/no label (trained with DP-SGD)."}


class ModelForm(QWidget):
    """The form; ``changed`` fires after every edit (the tab recomputes, newest wins)."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._schema: Any = None
        self._filling = False
        outer = QVBoxLayout(self)
        form = QFormLayout()
        outer.addLayout(form)
        self.label_box = QComboBox(self)
        self.label_box.setToolTip("The column the model predicts: a declared yes/no column "
                                  "or a number with declared bounds.")
        form.addRow("Label", self.label_box)
        self.features = QListWidget(self)
        self.features.setToolTip("Tick the columns the model learns from (declared bounds "
                                 "or categories only).")
        self.features.setMinimumHeight(120)
        form.addRow("Features", self.features)
        self.model_box = _combo(self, {m: (m, t) for m, t in _MODEL_TIPS.items()})
        form.addRow("Model", self.model_box)
        self.fed_box = _combo(self, FED_VARIANTS)
        self.fed_box.setToolTip("Federated averaging: where the records stay and who adds "
                                "the noise.")
        form.addRow("Federated", self.fed_box)
        self.sites_by = QComboBox(self)
        self.sites_by.setToolTip("Sites: one per value of a declared category, or a random "
                                 "split of the rows.")
        form.addRow("Sites", self.sites_by)
        self.sites = QSpinBox(self)
        self.sites.setRange(2, 100)
        self.sites.setValue(5)
        self.sites.setToolTip("How many sites a random split makes.")
        form.addRow("Random sites", self.sites)
        self.rounds = QSpinBox(self)
        self.rounds.setRange(1, 1000)
        self.rounds.setValue(20)
        self.rounds.setToolTip("FedAvg rounds: each round every site trains locally and the "
                               "server averages their noisy updates.")
        form.addRow("Rounds", self.rounds)
        self.local_steps = QSpinBox(self)
        self.local_steps.setRange(1, 1000)
        self.local_steps.setValue(5)
        self.local_steps.setToolTip("Noisy gradient steps each site takes per round.")
        form.addRow("Local steps", self.local_steps)
        self.method_box = _combo(self, {m: (t, METHOD_TIPS[m]) for m, t in METHOD_TEXT.items()})
        self.method_box.setCurrentIndex(1)
        form.addRow("Method", self.method_box)
        self.params = ParamForm(self)
        outer.addWidget(self.params)
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b42318;")
        outer.addWidget(self.problem)
        outer.addStretch(1)
        self.label_box.currentIndexChanged.connect(self._label_changed)
        self.features.itemChanged.connect(lambda _i: self._emit())
        for box in (self.model_box, self.sites_by):
            box.currentIndexChanged.connect(lambda _i: self._emit())
        for spin in (self.sites, self.rounds, self.local_steps):
            spin.valueChanged.connect(lambda _v: self._emit())
        self.fed_box.currentIndexChanged.connect(self._fed_changed)
        self.method_box.currentIndexChanged.connect(self._method_changed)
        self.params.value_changed.connect(lambda *_: self._emit())
        for box in (self.label_box, self.model_box, self.fed_box, self.sites_by,
                    self.method_box):
            # Narrow by default: the form must fit beside the plot in a 1400-pixel window.
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(14)
        self._method_changed()
        self._fed_changed()

    # -- reading -------------------------------------------------------------------------

    def method(self) -> str:
        return self.method_box.currentData()

    def request(self) -> ModelRequest | str:
        """The training run described, or one sentence saying what is missing."""
        label = self.label_box.currentData()
        if label is None:
            return ("declare a yes/no column or a numeric column's bounds in the Columns "
                    "panel to train a model on it")
        features = tuple(self.features.item(i).data(Qt.ItemDataRole.UserRole)
                         for i in range(self.features.count())
                         if self.features.item(i).checkState() == Qt.CheckState.Checked)
        if not features:
            return "tick at least one feature"
        values = self.params.values()
        variant = self.fed_box.currentData()
        sites_by = self.sites_by.currentData() if variant != "none" else None
        return ModelRequest(label, features, model=self.model_box.currentData(),
                            method=self.method(), fed_variant=variant, sites_by=sites_by,
                            sites=self.sites.value(), rounds=self.rounds.value(),
                            local_steps=self.local_steps.value(),
                            epsilon=float(values.get("epsilon", 1.0)), params=values)

    # -- filling -------------------------------------------------------------------------

    def set_schema(self, schema: Any) -> None:
        """Offer the declared columns of ``schema`` (kept ticks survive a refresh)."""
        self._schema = schema
        self._filling = True
        try:
            kept_label = self.label_box.currentData()
            kept = set(self._ticked())
            self.label_box.clear()
            self.sites_by.clear()
            self.sites_by.addItem("random split", None)
            for spec in schema or ():
                kind = _kind(spec)
                if kind in ("yes/no", "number"):
                    self.label_box.addItem(f"{spec.name}  ({kind})", spec.name)
                if kind == "category":
                    self.sites_by.addItem(f"one per {spec.name}", spec.name)
            # The label kept across a refresh; at first a yes/no column (classification,
            # the common first model), with the model to match its kind.
            yes_no = [spec.name for spec in schema or () if _kind(spec) == "yes/no"]
            wanted = kept_label if kept_label is not None else (yes_no[0] if yes_no else None)
            i = self.label_box.findData(wanted) if wanted is not None else -1
            if i >= 0:
                self.label_box.setCurrentIndex(i)
            self._fill_features(kept)
            self._match_model()
        finally:
            self._filling = False
        self._emit()

    def _ticked(self) -> list[str]:
        return [self.features.item(i).data(Qt.ItemDataRole.UserRole)
                for i in range(self.features.count())
                if self.features.item(i).checkState() == Qt.CheckState.Checked]

    def _fill_features(self, ticked: set[str]) -> None:
        label = self.label_box.currentData()
        self.features.blockSignals(True)
        self.features.clear()
        for spec in self._schema or ():
            kind = _kind(spec)
            if kind is None or spec.name == label:
                continue
            item = QListWidgetItem(f"{spec.name}  ({kind})", self.features)
            item.setData(Qt.ItemDataRole.UserRole, spec.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if spec.name in ticked
                               else Qt.CheckState.Unchecked)
        self.features.blockSignals(False)

    def item(self, name: str) -> QListWidgetItem | None:
        """The feature list's row of column ``name`` (tests click it)."""
        for i in range(self.features.count()):
            if self.features.item(i).data(Qt.ItemDataRole.UserRole) == name:
                return self.features.item(i)
        return None

    # -- reactions -----------------------------------------------------------------------

    def _label_changed(self) -> None:
        if self._filling:
            return
        self._filling = True
        try:
            self._fill_features(set(self._ticked()))
            self._match_model()
        finally:
            self._filling = False
        self._emit()

    def _match_model(self) -> None:
        """A numeric label takes the linear model, a yes/no label a classifier."""
        spec = self._spec(self.label_box.currentData())
        numeric = spec is not None and _kind(spec) == "number"
        if numeric and self.model_box.currentData() != "linear":
            self.model_box.setCurrentIndex(self.model_box.findData("linear"))
        elif not numeric and self.model_box.currentData() == "linear":
            self.model_box.setCurrentIndex(self.model_box.findData("logistic"))

    def _fed_changed(self) -> None:
        federated = self.fed_box.currentData() != "none"
        for w in (self.sites_by, self.sites, self.rounds, self.local_steps):
            w.setEnabled(federated)
        if federated and self.method() != "dpsgd":
            # The private variants perturb the sites' gradients: DP-SGD at each site.
            self.method_box.setCurrentIndex(self.method_box.findData("dpsgd"))
        self.method_box.setEnabled(not federated)
        self._epochs_row()
        self._emit()

    def _epochs_row(self) -> None:
        # A federated run is set by its rounds and local steps: DP-SGD's epochs do not apply.
        box = self.params.fields.get("epochs")
        if box is not None:
            self.params.layout_.setRowVisible(box, self.fed_box.currentData() == "none")

    def _method_changed(self) -> None:
        from dpstudio.analysis.training import METHOD_MECHANISMS
        from dpstudio.engine.registry import REGISTRY

        mechanism = METHOD_MECHANISMS.get(self.method())
        params = () if mechanism is None else REGISTRY.get(mechanism).params
        kept = self.params.values()
        self.params.set_params(params, {k: v for k, v in kept.items()
                                        if k in {p.name for p in params}})
        self._epochs_row()
        self._emit()

    def _spec(self, name: str | None) -> Any:
        for spec in self._schema or ():
            if spec.name == name:
                return spec
        return None

    def _emit(self) -> None:
        if not self._filling:
            self.changed.emit()


def _kind(spec: Any) -> str | None:
    """What a declared column can be in a model (None: nothing, e.g. text, no bounds)."""
    t = str(getattr(spec.type, "value", spec.type))
    if t == "boolean":
        return "yes/no"
    if t == "numeric" and spec.lower is not None and spec.upper is not None:
        return "number"
    if t == "categorical" and spec.categories:
        return "category"
    return None


def _combo(parent: QWidget, items: dict[str, tuple[str, str]]) -> QComboBox:
    box = QComboBox(parent)
    for i, (key, (text, tip)) in enumerate(items.items()):
        box.addItem(text, key)
        box.setItemData(i, tip, Qt.ItemDataRole.ToolTipRole)
    return box
