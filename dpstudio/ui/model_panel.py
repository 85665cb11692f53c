"""The Models tab's form: label, features, model, the ways of training compared, parameters.

Only declared columns are offered: a yes/no or bounded numeric label, and features that
are bounded numbers, yes/no or declared categories (their bounds and categories are
public; nothing is read off the data). The ways of training to compare (central methods
and FedAvg's privacy variants, :mod:`~dpstudio.ui.model_variants`) are a ticked list; one
that the analysis layer refuses for the chosen model is greyed with its sentence. Both
lists span the form's width and elide long names in the middle, the full name in the
row's tooltip (:class:`~dpstudio.ui.elided_list.ElidedList`): no sideways scrolling. The
methods' parameters (ε, δ, λ, DP-SGD's steps) are a
:class:`~dpstudio.ui.param_form.ParamForm` generated from the ticked methods' registry
entries (one value of each shared by all, so they are compared at equal settings).
``changed`` fires after each edit; :meth:`request` is the comparison the form describes,
or a sentence saying what is missing; :meth:`choices` / :meth:`apply_choices` are what the
tab remembers per dataset.
"""

from __future__ import annotations

from dataclasses import replace
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

from dpstudio.ui.elided_list import ElidedList
from dpstudio.ui.model_jobs import ModelRequest
from dpstudio.ui.model_variants import AUTO_DELTA_TIP, VARIANT_KEYS, variant
from dpstudio.ui.param_form import ParamForm

__all__ = ["DEFAULT_VARIANTS", "METHOD_TEXT", "SHORT_LABELS", "ModelForm"]

#: Method → how it is named in captions.
METHOD_TEXT = {"nonprivate": "non-private (baseline, no guarantee)",
               "output": "output perturbation", "objective": "objective perturbation",
               "dpsgd": "DP-SGD"}
#: Ticked when nothing is remembered: two central methods and federated training under
#: secure aggregation (seconds on the bundled samples).
DEFAULT_VARIANTS = ("output", "dpsgd", "fed-secagg")
_MODEL_TIPS = {"logistic": "Logistic regression: a yes/no label.",
               "linear": "Ridge regression: a numeric label with declared bounds.",
               "mlp": "A one-hidden-layer network: a yes/no label (trained with DP-SGD)."}
#: Variant key → the compare list's shorter name (the full one, :attr:`Variant.label`, is
#: in the row's tooltip and on the plot's legend): the form is ~260 px wide.
SHORT_LABELS = {"fed-secagg": "FedAvg, secure agg.", "fed-cape": "FedAvg, CAPE noise"}
#: The parameters' order in the form (the union of the ticked methods' entries).
_ORDER = ("epsilon", "delta", "lambda", "epochs", "batch_rate", "expected_batch", "clip",
          "learning_rate")


class ModelForm(QWidget):
    """The form; ``changed`` fires after every edit (the tab recomputes, newest wins)."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._schema: Any = None
        self._filling = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        outer.addLayout(form)
        self.label_box = QComboBox(self)
        self.label_box.setToolTip("The column the model predicts: a declared yes/no column "
                                  "or a number with declared bounds.")
        form.addRow("Label", self.label_box)
        # The lists take the form's whole width under their label, and their names are
        # elided in the middle (full in the tooltip): no sideways scrolling.
        self.features = ElidedList(self)
        self.features.setToolTip("Tick the columns the model learns from (declared bounds "
                                 "or categories only: nothing is read off the data).")
        self.features.setMinimumHeight(110)
        form.addRow(QLabel("Features", self))
        form.addRow(self.features)
        self.model_box = _combo(self, {m: (m, t) for m, t in _MODEL_TIPS.items()})
        self.model_box.setToolTip("The model trained: logistic regression or a small "
                                  "network for a yes/no label, ridge regression for a number.")
        form.addRow("Model", self.model_box)
        self.variants = ElidedList(self)
        self.variants.setToolTip("Tick the ways of training to compare on one plot: central "
                                 "methods (a trusted curator) and federated averaging under "
                                 "each trust model.")
        for key in VARIANT_KEYS:
            self.variants.add(SHORT_LABELS.get(key, variant(key).label), key,
                              _variant_tip(key))
        self.variants.setMinimumHeight(8 * 19 + 6)
        form.addRow(QLabel("Compare", self))
        form.addRow(self.variants)
        self.sites_by = QComboBox(self)
        self.sites_by.setToolTip("Federated sites: one per value of a declared category, or a "
                                 "random split of the rows.")
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
                               "server averages their (noisy) updates.")
        form.addRow("Rounds", self.rounds)
        self.local_steps = QSpinBox(self)
        self.local_steps.setRange(1, 1000)
        self.local_steps.setValue(5)
        self.local_steps.setToolTip("Gradient steps each site takes per round (noisy under "
                                    "the private variants).")
        form.addRow("Local steps", self.local_steps)
        self.runs = QSpinBox(self)
        from dpstudio.analysis.training import MAX_RUNS

        self.runs.setRange(1, MAX_RUNS)
        self.runs.setValue(3)
        self.runs.setToolTip("R: each point is trained R times with fresh seeded noise; the "
                             "line is their mean and the band their range (min to max).")
        form.addRow("Runs (R)", self.runs)
        self.params = ParamForm(self)
        outer.addWidget(self.params)
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b42318;")
        outer.addWidget(self.problem)
        outer.addStretch(1)
        self.label_box.currentIndexChanged.connect(self._label_changed)
        self.features.itemChanged.connect(lambda _i: self._emit())
        self.variants.itemChanged.connect(lambda _i: self._variants_changed())
        self.model_box.currentIndexChanged.connect(lambda _i: self._model_changed())
        self.sites_by.currentIndexChanged.connect(lambda _i: self._emit())
        for spin in (self.sites, self.rounds, self.local_steps, self.runs):
            spin.valueChanged.connect(lambda _v: self._emit())
        self.params.value_changed.connect(lambda *_: self._emit())
        for box in (self.label_box, self.model_box, self.sites_by):
            # Narrow: the plot beside the form gets most of a 1400-pixel window.
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(10)
        self._model_changed()

    # -- reading -------------------------------------------------------------------------

    def ticked_variants(self) -> tuple[str, ...]:
        """The keys of the ticked ways of training that the chosen model allows."""
        return tuple(self.variants.item(i).data(Qt.ItemDataRole.UserRole)
                     for i in range(self.variants.count())
                     if self.variants.item(i).checkState() == Qt.CheckState.Checked
                     and self.variants.item(i).flags() & Qt.ItemFlag.ItemIsEnabled)

    def primary(self) -> str | None:
        """The variant a single run stands for: the current row if ticked, else the first
        ticked one."""
        ticked = self.ticked_variants()
        item = self.variants.currentItem()
        key = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return key if key in ticked else (ticked[0] if ticked else None)

    def request(self) -> ModelRequest | str:
        """The comparison described, or one sentence saying what is missing.

        ``method``/``fed_variant`` are those of :meth:`primary`; ``variants`` all ticked.
        """
        label = self.label_box.currentData()
        if label is None:
            return ("declare a yes/no column or a numeric column's bounds in the Columns "
                    "panel to train a model on it")
        features = tuple(self._ticked())
        if not features:
            return "tick at least one feature"
        ticked = self.ticked_variants()
        if not ticked:
            return "tick at least one way of training to compare"
        values = self.params.values()
        first = variant(self.primary() or ticked[0])
        return ModelRequest(label, features, model=self.model_box.currentData(),
                            method=first.method, fed_variant=first.fed_variant,
                            fedavg=first.federated, sites_by=self.sites_by.currentData(),
                            sites=self.sites.value(), rounds=self.rounds.value(),
                            local_steps=self.local_steps.value(),
                            epsilon=float(values.get("epsilon", 1.0)), params=values,
                            variants=ticked, runs=self.runs.value())

    def choices(self) -> dict[str, Any]:
        """What the tab remembers for a dataset (JSON types only)."""
        return {"label": self.label_box.currentData(), "features": self._ticked(),
                "model": self.model_box.currentData(),
                "variants": [self.variants.item(i).data(Qt.ItemDataRole.UserRole)
                             for i in range(self.variants.count())
                             if self.variants.item(i).checkState() == Qt.CheckState.Checked],
                "sites_by": self.sites_by.currentData(), "sites": self.sites.value(),
                "rounds": self.rounds.value(), "local_steps": self.local_steps.value(),
                "runs": self.runs.value(), "params": self.params.values()}

    # -- filling -------------------------------------------------------------------------

    def set_schema(self, schema: Any, remembered: dict[str, Any] | None = None,
                   fresh: bool = False) -> None:
        """Offer the declared columns of ``schema``. For a ``fresh`` dataset, then its
        ``remembered`` choices (what the data still allows), or — with none — first-run
        defaults: a yes/no label, every bounded numeric and yes/no feature ticked and
        :data:`DEFAULT_VARIANTS`; otherwise the current choices survive the refresh."""
        self._schema = schema
        self._filling = True
        try:
            kept_label = None if fresh else self.label_box.currentData()
            kept = set() if fresh else set(self._ticked())
            first = fresh and not remembered
            self.label_box.clear()
            self.sites_by.clear()
            self.sites_by.addItem("random split", None)
            for spec in schema or ():
                kind = _kind(spec)
                if kind in ("yes/no", "number"):
                    self.label_box.addItem(f"{spec.name}  ({kind})", spec.name)
                if kind == "category":
                    self.sites_by.addItem(f"one per {spec.name}", spec.name)
            yes_no = [spec.name for spec in schema or () if _kind(spec) == "yes/no"]
            wanted = kept_label if kept_label is not None else (yes_no[0] if yes_no else None)
            if fresh and remembered:
                wanted = remembered.get("label", wanted)
            i = self.label_box.findData(wanted) if wanted is not None else -1
            if i >= 0:
                self.label_box.setCurrentIndex(i)
            label = self.label_box.currentData()
            if fresh and remembered:
                kept = set(remembered.get("features") or ())
            elif first:
                kept = {spec.name for spec in schema or ()
                        if _kind(spec) in ("yes/no", "number") and spec.name != label}
            self._fill_features(kept)
            self._match_model()
            if fresh and remembered:
                self._apply(remembered)
            elif first:
                self._tick_variants(DEFAULT_VARIANTS)
            self._model_changed(emit=False)
        finally:
            self._filling = False
        self._emit()

    def _apply(self, c: dict[str, Any]) -> None:
        i = self.model_box.findData(c.get("model"))
        if i >= 0:
            self.model_box.setCurrentIndex(i)
        self._tick_variants(tuple(c.get("variants") or ()))
        i = self.sites_by.findData(c.get("sites_by"))
        self.sites_by.setCurrentIndex(max(i, 0))
        for spin, name in ((self.sites, "sites"), (self.rounds, "rounds"),
                           (self.local_steps, "local_steps"), (self.runs, "runs")):
            value = c.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                spin.setValue(value)
        params = c.get("params")
        if isinstance(params, dict):
            self._rebuild_params(params)

    def _tick_variants(self, keys: tuple[str, ...]) -> None:
        self.variants.blockSignals(True)
        for i in range(self.variants.count()):
            item = self.variants.item(i)
            item.setCheckState(Qt.CheckState.Checked
                               if item.data(Qt.ItemDataRole.UserRole) in keys
                               else Qt.CheckState.Unchecked)
        self.variants.blockSignals(False)

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
            item = self.features.add(f"{spec.name} ({kind})", spec.name)
            if spec.name in ticked:
                item.setCheckState(Qt.CheckState.Checked)
        self.features.blockSignals(False)

    def item(self, name: str) -> QListWidgetItem | None:
        """The feature list's row of column ``name`` (tests click it)."""
        return _find(self.features, name)

    def variant_item(self, key: str) -> QListWidgetItem | None:
        """The compare list's row of variant ``key`` (tests click it)."""
        return _find(self.variants, key)

    # -- reactions -----------------------------------------------------------------------

    def _label_changed(self) -> None:
        if self._filling:
            return
        self._filling = True
        try:
            self._fill_features(set(self._ticked()))
            self._match_model()
            self._model_changed(emit=False)
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

    def _model_changed(self, emit: bool = True) -> None:
        """Grey the variants the analysis layer refuses for this model, with its sentence."""
        model = self.model_box.currentData()
        self.variants.blockSignals(True)
        for i in range(self.variants.count()):
            item = self.variants.item(i)
            key = item.data(Qt.ItemDataRole.UserRole)
            why = _refusal(model, key)
            flags = item.flags()
            item.setFlags(flags & ~Qt.ItemFlag.ItemIsEnabled if why
                          else flags | Qt.ItemFlag.ItemIsEnabled)
            self.variants.set_tip(item, f"{variant(key).label}: not for the {model} model: "
                                  f"{why}." if why else _variant_tip(key))
        self.variants.blockSignals(False)
        self._variants_changed(emit=emit)

    def _variants_changed(self, emit: bool = True) -> None:
        ticked = self.ticked_variants()
        federated = any(variant(k).federated for k in ticked)
        for w in (self.sites_by, self.sites, self.rounds, self.local_steps):
            w.setEnabled(federated)
        self._rebuild_params(self.params.values())
        if emit:
            self._emit()

    def _rebuild_params(self, values: dict[str, Any]) -> None:
        """The union of the ticked methods' parameters, δ shown as "auto" at 0."""
        from dpstudio.analysis.training import METHOD_MECHANISMS
        from dpstudio.engine.entry import DELTA
        from dpstudio.engine.registry import REGISTRY

        ticked = self.ticked_variants() or ("output",)
        found: dict[str, Any] = {}
        for key in ticked:  # in the list's order: λ's default is the first method's
            v = variant(key)
            mech = METHOD_MECHANISMS.get(v.method) or METHOD_MECHANISMS["dpsgd"]
            # FedAvg without privacy takes only λ and its steps' size and rate.
            names = None if v.private else {"lambda", "batch_rate", "learning_rate"}
            for p in REGISTRY.get(mech).params:
                if names is None or p.name in names or p.name == "epsilon":
                    found.setdefault(p.name, p)
        if not any(variant(k).method == "dpsgd" and not variant(k).federated
                   for k in ticked):
            found.pop("epochs", None)  # a federated run is set by rounds and local steps
        found["delta"] = replace(DELTA, default=0.0, low=0.0, low_open=False,
                                 log_scale=False, help=AUTO_DELTA_TIP)
        params = tuple(found[n] for n in _ORDER if n in found)
        names = {p.name for p in params}
        self.params.set_params(params, {k: v for k, v in values.items() if k in names})

    def _spec(self, name: str | None) -> Any:
        for spec in self._schema or ():
            if spec.name == name:
                return spec
        return None

    def _emit(self) -> None:
        if not self._filling:
            self.changed.emit()


def _refusal(model: str, key: str) -> str | None:
    """The analysis layer's sentence if it cannot train ``model`` by variant ``key``."""
    from dpstudio.analysis.training import describe_training
    from dpstudio.engine.errors import EngineError
    from dpstudio.ui.model_variants import auto_delta

    v = variant(key)
    try:
        describe_training("y", ("x",), model, v.method, 1.0 if v.private else None,
                          delta=auto_delta(v.method) if v.private else 0.0,
                          fed_variant=v.fed_variant,
                          federated={"sites": 2} if v.federated else None)
    except EngineError as err:
        return str(err).rstrip(".")
    return None


def _variant_tip(key: str) -> str:
    """A compare row's tooltip: the variant's full name, then its sentence."""
    v = variant(key)
    return f"{v.label}: {v.tip}"


def _find(lst: QListWidget, key: str) -> QListWidgetItem | None:
    for i in range(lst.count()):
        if lst.item(i).data(Qt.ItemDataRole.UserRole) == key:
            return lst.item(i)
    return None


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
