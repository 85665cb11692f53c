"""The analysis controls: trust model, column and query, mechanism and its generated form,
the privacy budget (ε slider and spin box, δ), and the trade-off view's options.

Every control writes to the :class:`~dpstudio.ui.session.Session` and redraws from it when
it changes; nothing here knows a mechanism by name (forms come from the registry). The
missing-value rows are :mod:`dpstudio.ui.missing_rows`'s; the budget bar is
:mod:`dpstudio.ui.budget_panel`'s.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from dpstudio.analysis.capabilities import capability
from dpstudio.analysis.choices import fixed_epsilon
from dpstudio.engine.entry import DELTA, EPSILON
from dpstudio.engine.trust_models import DEFAULT_TRUST_MODEL
from dpstudio.ui.budget_panel import BudgetPanel
from dpstudio.ui.missing_rows import MissingValueRows
from dpstudio.ui.number_boxes import mark
from dpstudio.ui.param_form import REFUSED_STYLE, LogSliderSpin, ParamForm, ScientificSpinBox
from dpstudio.ui.session import DELTA_RANGE, EPS_RANGE, Session
from dpstudio.ui.style import MUTED
from dpstudio.ui.table_model import NAME_CHARS, elide_name, name_tooltip
from dpstudio.ui.texts import GLOSSARY, METRICS, QUERY_LABELS, QUERY_PARAMS, TRUST_MODELS

__all__ = ["AnalysisPanel", "short_mechanism_label"]

CONFIDENCES = (0.8, 0.9, 0.95, 0.99)
COLUMN_TIP = "The column to release a statistic about"
STRUCTURE = {"dataset", "column", "schema", "trust_model", "query", "query_params",
             "mechanism", "refresh"}


def short_mechanism_label(label: str) -> str:
    """A mechanism's label short enough for the combo box (the full one is the item's
    tooltip): without its parenthesis ("Invisibility cloak (multi-message)" →
    "Invisibility cloak") or the protocol the distributed ones share ("Secure
    aggregation + Skellam" → "Skellam")."""
    short = label.split(" (")[0]
    prefix = "Secure aggregation + "
    if short.startswith(prefix):
        rest = short[len(prefix):]
        short = rest[:1].upper() + rest[1:]
    return short


def _dot(colour: str, size: int = 10) -> QIcon:
    pix = QPixmap(size, size)
    pix.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pix)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(colour))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(0, 0, size, size)
    painter.end()
    return QIcon(pix)


def _muted(text: str = "", parent: QWidget | None = None) -> QLabel:
    label = QLabel(text, parent)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
    return label


class AnalysisPanel(MissingValueRows, QScrollArea):
    """The right-hand controls; reads and writes one :class:`Session`."""

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget(self)
        self.setWidget(body)
        outer = QVBoxLayout(body)
        outer.setContentsMargins(6, 4, 6, 6)
        outer.setSpacing(4)

        self.problem_label = QLabel(body)
        self.problem_label.setWordWrap(True)
        self.problem_label.setStyleSheet(
            "background:#fff4e5; border:1px solid #f0c36d; border-radius:4px; padding:6px;"
            "color:#7a4a00;")
        self.problem_label.hide()
        outer.addWidget(self.problem_label)

        outer.addWidget(self._trust_box(body))
        outer.addWidget(self._query_box(body))
        outer.addWidget(self._mechanism_box(body))
        outer.addWidget(self._budget_box(body))
        # The budget right under ε: what this release costs and what is left stay in view
        # at 1400×900 (the views' settings follow).
        budget = QGroupBox("Budget (this session)", body)
        budget.setToolTip("The session's privacy budget for this dataset")
        self.budget_box = budget
        budget_layout = QVBoxLayout(budget)
        budget_layout.setContentsMargins(2, 2, 2, 2)
        self.budget_panel = BudgetPanel(session, budget)
        budget_layout.addWidget(self.budget_panel)
        outer.addWidget(budget)
        outer.addWidget(self._view_box(body))
        outer.addStretch(1)

        session.changed.connect(self._on_changed)
        self._on_changed("refresh")

    # -- construction -------------------------------------------------------------------

    def _trust_box(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Trust model", parent)
        box.setToolTip(GLOSSARY["trust"])
        layout = QVBoxLayout(box)
        row = QGridLayout()
        row.setSpacing(4)
        self.trust_group = QButtonGroup(box)
        self.trust_group.setExclusive(True)
        self.trust_buttons: dict[str, QPushButton] = {}
        for i, (name, meta) in enumerate(TRUST_MODELS.items()):
            button = QPushButton(_dot(meta["colour"]), meta["label"], box)
            button.setCheckable(True)
            button.setToolTip(meta["tooltip"])
            button.setStyleSheet(  # palette-relative: readable in light and dark palettes
                "QPushButton { padding: 4px 6px; background: palette(button);"
                " color: palette(button-text); border: 1px solid palette(mid);"
                " border-radius: 4px; }"
                "QPushButton:disabled { color: palette(mid); }"
                f"QPushButton:checked {{ font-weight: bold; border: 2px solid {meta['colour']};"
                " }")
            button.setMinimumWidth(0)
            button.clicked.connect(lambda _c=False, n=name: self.session.set_trust_model(n))
            self.trust_group.addButton(button)
            self.trust_buttons[name] = button
            row.addWidget(button, i // 2, i % 2)
        layout.addLayout(row)
        self.trust_text = _muted("", box)
        layout.addWidget(self.trust_text)
        return box

    def _query_box(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Column and query", parent)
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.column_combo = QComboBox(box)
        self._combo_columns: list[tuple[str, str]] | None = None
        # Sized by a fixed number of characters, not by its longest item: measuring every
        # item of a 5,000-column file (or a 100,000-character name) is slow and useless.
        self.column_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.column_combo.setMinimumContentsLength(16)
        self.column_combo.setToolTip(COLUMN_TIP)
        self.column_combo.activated.connect(
            lambda i: self.session.set_column(self.column_combo.itemData(i)))
        form.addRow("Column", self.column_combo)
        self.domain_label = QLabel(box)
        self.domain_label.setWordWrap(True)
        self.domain_label.setToolTip(GLOSSARY["sensitivity"])
        form.addRow("Declared", self.domain_label)
        self.query_combo = QComboBox(box)
        self.query_combo.setToolTip(GLOSSARY["query"])
        self.query_combo.activated.connect(
            lambda i: self.session.set_query(self.query_combo.itemData(i)))
        form.addRow("Query", self.query_combo)
        self.query_form = ParamForm(box)
        self.query_form.value_changed.connect(self.session.set_query_param)
        self.query_form.refused.connect(
            lambda name, text, why: self.session.refuse(f"query_params.{name}", text, why))
        form.addRow(self.query_form)
        self._missing_rows(box, form)
        return box

    def _mechanism_box(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Mechanism", parent)
        box.setToolTip(GLOSSARY["mechanism"])
        layout = QVBoxLayout(box)
        self.mechanism_combo = QComboBox(box)
        # Short names, never wider than the dock (full names in the items' tooltips).
        self.mechanism_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mechanism_combo.setMinimumContentsLength(16)
        self.mechanism_combo.activated.connect(
            lambda i: self.session.set_mechanism(self.mechanism_combo.itemData(i)))
        layout.addWidget(self.mechanism_combo)
        self.mechanism_text = _muted("", box)
        layout.addWidget(self.mechanism_text)
        self.param_form = ParamForm(box)
        self.param_form.value_changed.connect(self.session.set_param)
        self.param_form.refused.connect(
            lambda name, text, why: self.session.refuse(f"params.{name}", text, why))
        layout.addWidget(self.param_form)
        return box

    def _budget_box(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Privacy budget", parent)
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.epsilon = LogSliderSpin(*EPS_RANGE, self.session.epsilon, parent=box)
        self._epsilon_tip = GLOSSARY["epsilon"]
        self.epsilon.setToolTip(self._epsilon_tip)
        self.epsilon.value_changed.connect(self.session.set_epsilon)
        # Typed: kept as typed, and checked as the command line checks it.
        self.epsilon.typed.connect(self.session.enter_epsilon)
        eps_label = QLabel(EPSILON.label, box)
        eps_label.setToolTip(GLOSSARY["epsilon"])
        eps_label.setBuddy(self.epsilon.spin)
        form.addRow(eps_label, self.epsilon)
        self.delta = ScientificSpinBox(box, keep_typed=True)
        self.delta.setRange(*DELTA_RANGE)
        self.delta.setValue(self.session.delta)
        self.delta.setToolTip(GLOSSARY["delta"])
        self.delta.valueChanged.connect(
            lambda _v: self.session.enter_delta(self.delta.typed_text()))
        self.delta_hint = _muted("", box)
        delta_row = QHBoxLayout()
        delta_row.addWidget(self.delta)
        delta_row.addWidget(self.delta_hint, 1)
        delta_label = QLabel(DELTA.label, box)
        delta_label.setToolTip(GLOSSARY["delta"])
        form.addRow(delta_label, delta_row)
        # Why a typed ε or δ is refused: one sentence, the command line's, beside the boxes.
        self.input_hint = QLabel(box)
        self.input_hint.setWordWrap(True)
        self.input_hint.setStyleSheet(REFUSED_STYLE)
        form.addRow(self.input_hint)
        form.setRowVisible(self.input_hint, False)
        self.relation_combo = QComboBox(box)
        for relation, text in (("add-remove", "add or remove one person"),
                               ("replace", "replace one person's value")):
            self.relation_combo.addItem(text, relation)
        self.relation_combo.setToolTip(GLOSSARY["relation"] + " Applies to the central model "
                                       "(also where it is drawn for comparison).")
        self.relation_combo.activated.connect(
            lambda i: self.session.set_relation(self.relation_combo.itemData(i)))
        relation_label = QLabel("Neighbours", box)
        relation_label.setToolTip(GLOSSARY["relation"])
        form.addRow(relation_label, self.relation_combo)
        # A declared identifier column: releases protect people (up to k rows each).
        self.user_level_label = _muted("", box)
        self.user_level_label.setToolTip("A column of the schema identifies a person: each "
                                         "person's rows beyond the declared maximum are "
                                         "dropped at random before a release, and every "
                                         "sensitivity scales with it; the preview and "
                                         "curves here are the user-level ones.")
        self.user_level_label.setVisible(False)
        form.addRow(self.user_level_label)
        self.confidence_combo = QComboBox(box)
        for c in CONFIDENCES:
            self.confidence_combo.addItem(f"{c:.0%}", c)
        self.confidence_combo.setToolTip(GLOSSARY["confidence"])
        self.confidence_combo.activated.connect(
            lambda i: self.session.set_confidence(self.confidence_combo.itemData(i)))
        form.addRow("Confidence", self.confidence_combo)
        return box

    def _view_box(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Views", parent)
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.k_slider = QSlider(Qt.Orientation.Horizontal, box)
        self.k_slider.setRange(1, 100)
        self.k_spin = QSpinBox(box)
        self.k_spin.setRange(1, 100)
        self.k_spin.setKeyboardTracking(False)
        for w in (self.k_slider, self.k_spin):
            w.setToolTip(GLOSSARY["compositions"])
            w.valueChanged.connect(self.session.set_compositions)
        k_row = QHBoxLayout()
        k_row.addWidget(self.k_slider, 1)
        k_row.addWidget(self.k_spin)
        k_label = QLabel("Releases k", box)
        k_label.setToolTip(GLOSSARY["compositions"])
        form.addRow(k_label, k_row)
        self.metric_combo = QComboBox(box)
        self.metric_combo.setToolTip(GLOSSARY["metric"])
        self.metric_combo.activated.connect(
            lambda i: self.session.set_metric(self.metric_combo.itemData(i)))
        form.addRow("Error", self.metric_combo)
        self.hide_true = QCheckBox("Hide true values", box)
        self.hide_true.setToolTip(GLOSSARY["hide_true"])
        self.hide_true.toggled.connect(self.session.set_hide_true)
        form.addRow(self.hide_true)
        return box

    # -- refresh from the session ------------------------------------------------------

    def focus_epsilon(self) -> None:
        self.epsilon.spin.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.epsilon.spin.selectAll()

    def _on_changed(self, aspect: str) -> None:
        s = self.session
        if aspect in ("budget", "dataset", "refresh"):
            self._refresh_budget_title()
        if aspect == "epsilon":  # the hot path of a slider drag: only what ε changes
            self.epsilon.set_value(s.epsilon)
            return
        refused = s.refused
        widgets = [self.column_combo, self.query_combo, self.mechanism_combo, self.delta,
                   self.relation_combo, self.confidence_combo, self.k_slider, self.k_spin,
                   self.metric_combo, self.hide_true, self.missing_combo]
        for w in widgets:
            w.blockSignals(True)
        try:
            if aspect in STRUCTURE:
                self._refresh_structure()
            if aspect in STRUCTURE or aspect in ("params", "input"):
                self.param_form.set_values(s.params, s.refused_for("params."))
            if aspect in STRUCTURE or aspect in ("query_params", "input"):
                self.query_form.set_values(s.query_params, s.refused_for("query_params."))
            # A refused number stays in its box as typed (the session holds the refusal).
            if "epsilon" not in refused:
                self.epsilon.set_value(s.epsilon)
            self._refresh_fixed_epsilon()
            if "delta" not in refused:
                self.delta.setValue(s.delta)
            self._refresh_delta()
            self._refresh_refusals()
            self.relation_combo.setCurrentIndex(max(self.relation_combo.findData(s.relation),
                                                    0))
            # Only where the trust model states its guarantee under more than one relation.
            self.relation_combo.setEnabled(capability(s.trust_model).chooses_relation)
            self.confidence_combo.setCurrentIndex(
                max(self.confidence_combo.findData(s.confidence), 0))
            self.k_slider.setValue(s.compositions)
            self.k_spin.setValue(s.compositions)
            self.hide_true.setChecked(s.hide_true)
            self._refresh_metrics()
            self._refresh_missing()
            problem = s.problem()
            # A refused number is said beside its box, and what a half-declared column
            # lacks in the Declared row (whether or not the Columns panel is shown):
            # neither again up here.
            shown = problem if problem and problem != s.input_problem() else None
            if shown and shown == s.column_problem and s.lacks is not None:
                shown = None
            self.problem_label.setText(shown or "")
            self.problem_label.setVisible(bool(shown) and s.dataset is not None)
        finally:
            for w in widgets:
                w.blockSignals(False)

    def _refresh_refusals(self) -> None:
        """Mark the ε and δ boxes that hold a refused number, and say why beside them."""
        s = self.session
        eps = s.refused.get("epsilon")
        delta = s.refused.get("delta") if s.needs_delta else None
        self.epsilon.mark(eps[1] if eps else None, self._epsilon_tip)
        mark(self.delta, delta[1] if delta else None, GLOSSARY["delta"])
        text = " ".join(f"{why}." for _typed, why in (r for r in (eps, delta) if r))
        if self.input_hint.text() != text:
            self.input_hint.setText(text)
        self.input_hint.parentWidget().layout().setRowVisible(self.input_hint, bool(text))

    def _refresh_fixed_epsilon(self) -> None:
        """Where the mechanism's parameters fix ε (randomized response with a chosen p),
        the slider would change nothing: disabled, its tooltip says which ε holds."""
        settings = self.session.settings()
        fixed = None if settings is None else fixed_epsilon(settings)
        self.epsilon.setEnabled(fixed is None)
        names = [k for k, v in self.session.params.items() if v]
        who = f"{names[0]} fixes" if len(names) == 1 else "The mechanism's parameters fix"
        self._epsilon_tip = (GLOSSARY["epsilon"] if fixed is None else
                             f"{who} ε = {fixed:.4g}: that is the ε shown, charged and "
                             "recorded (set it to 0 to choose ε here).")
        self.epsilon.setToolTip(self._epsilon_tip)

    def _refresh_budget_title(self) -> None:
        pb = self.session.project_budget
        if pb is None:
            self.budget_box.setTitle("Budget (this session)")
            self.budget_box.setToolTip("The session's privacy budget for this dataset")
        else:
            self.budget_box.setTitle(f"Budget (project {pb.project})")
            self.budget_box.setToolTip(f"The privacy budget of {pb.dataset} in the project "
                                       f"{pb.project}, from its ledger of real releases")

    def _refresh_structure(self) -> None:
        s = self.session
        for name, button in self.trust_buttons.items():
            available = (s.trust_model_available(name) if s.queries()
                         else name == DEFAULT_TRUST_MODEL)
            button.setEnabled(available)
            button.setChecked(name == s.trust_model)
            tip = TRUST_MODELS[name]["tooltip"]
            if not available:
                tip += "\nNo mechanism of this trust model answers a query on this column yet."
            button.setToolTip(tip)
        self.trust_text.setText(TRUST_MODELS[s.trust_model]["explanation"])

        self._fill_columns([(spec.name, spec.type.label) for spec in s.analysable_columns()])
        self.column_combo.setCurrentIndex(max(self.column_combo.findData(s.column), 0))
        tip = COLUMN_TIP
        if s.column is not None and len(s.column) > NAME_CHARS:  # shown elided
            tip += f":\n{name_tooltip(s.column)}"
        self.column_combo.setToolTip(tip)
        self.domain_label.setText(self._domain_text())
        self._refresh_user_level()

        self.query_combo.clear()
        model = self.query_combo.model()
        for i, q in enumerate(s.queries()):
            self.query_combo.addItem(QUERY_LABELS.get(q, q), q)
            if not s.query_available(q):
                item = model.item(i)
                item.setEnabled(False)
                item.setToolTip(f"No {s.trust_model}-model mechanism answers this query")
        self.query_combo.setCurrentIndex(max(self.query_combo.findData(s.query), 0))
        numeric = s.column_kind == "numeric"
        query_params = QUERY_PARAMS.get(s.query, ()) if numeric else ()
        self.query_form.set_params(query_params, s.query_params,
                                   s.refused_for("query_params."))

        self._fill_mechanisms(s.mechanisms())
        self.mechanism_combo.setCurrentIndex(
            max(self.mechanism_combo.findData(s.mechanism), 0))
        info = s.info
        self.mechanism_text.setText(info.description if info else
                                    "No mechanism for this combination yet.")
        params = [p for p in info.params if p.name not in ("epsilon", "delta")] if info else []
        self.param_form.set_params(params, s.params, s.refused_for("params."))

    def _refresh_user_level(self) -> None:
        """"user-level: up to k rows per person" while the schema declares an identifier."""
        from dpstudio.analysis.contribution import declared_identifier, user_level_text

        schema = self.session.schema
        name = declared_identifier(schema)
        k = schema.get(name).max_rows if name is not None else None
        text = (user_level_text(k) if k is not None else
                f"identifier {name!r}: declare its rows per person" if name else "")
        self.user_level_label.setText(text)
        self.user_level_label.setVisible(bool(text))

    def _fill_mechanisms(self, infos: list[Any]) -> None:
        """The mechanism combo's items: short names (the full name and what it does in
        the item's tooltip), and a list wide enough for the full names."""
        combo = self.mechanism_combo
        combo.clear()
        for i, info in enumerate(infos):
            combo.addItem(short_mechanism_label(info.label), info.name)
            combo.setItemData(i, f"{info.label}: {info.description}",
                              Qt.ItemDataRole.ToolTipRole)
        combo.setEnabled(combo.count() > 0)
        metrics = combo.view().fontMetrics()
        widest = max((metrics.horizontalAdvance(short_mechanism_label(i.label))
                      for i in infos), default=0)
        combo.view().setMinimumWidth(widest + 48)  # the item's margins and a scroll bar

    def _fill_columns(self, columns: list[tuple[str, str]]) -> None:
        """The column combo's items: elided names (full name in the tooltip). Refilled only
        when the columns or their types change: every structural change of the session
        (query, mechanism, an edit of any bound) comes here, and a 5,000-column file would
        rebuild 5,000 items each time."""
        if columns == self._combo_columns:
            return
        self._combo_columns = columns
        combo = self.column_combo
        combo.clear()
        for i, (name, label) in enumerate(columns):
            combo.addItem(f"{elide_name(name)}  ({label})", name)
            if len(name) > NAME_CHARS:
                combo.setItemData(i, name_tooltip(name), Qt.ItemDataRole.ToolTipRole)

    def _domain_text(self) -> str:
        s = self.session
        spec = s.spec
        if spec is None:
            return "—"
        # Where the declaration comes from follows declare, save and undo (the schema
        # the Columns panel sends carries it): guessed, declared unsaved, or saved.
        where = s.schema.source(spec.name).label if s.schema is not None else "guessed"
        if spec.bounds is not None:
            return f"{spec.lower:g} to {spec.upper:g} · {where}"
        if spec.categories:
            cats = ", ".join(spec.categories[:6]) + (" …" if len(spec.categories) > 6 else "")
            return f"{cats} · {where}"
        if s.column_kind == "text":  # nothing to declare: the words are discovered
            return f"free text: frequent words found without a dictionary · {where}"
        lacks = s.lacks
        if lacks is not None:  # one bound typed: say which one is missing, here once
            return f"<span style='color:#b45309'>{html.escape(lacks)}</span> · {where}"
        if where != "guessed":  # the type is the analyst's: the domain is what is missing
            domain = "bounds" if s.column_kind == "numeric" else "categories"
            return (f"<span style='color:#b45309'>{domain} not declared yet</span> · type "
                    f"{where}")
        return f"<span style='color:#b45309'>nothing declared</span> · {where}"

    def _refresh_delta(self) -> None:
        s = self.session
        needs = s.needs_delta
        self.delta.setEnabled(needs)
        n = s.n
        if not needs:
            self.delta_hint.setText("not used: pure ε-DP")
        elif n and s.delta >= 1.0 / n:
            self.delta_hint.setText(f"<span style='color:#b42318'>≥ 1/n = {1 / n:.0e}: "
                                    "too large</span>")
        else:
            self.delta_hint.setText(f"1/n = {1 / n:.0e}" if n else "")

    def _refresh_metrics(self) -> None:
        s = self.session
        wanted = s.metrics()
        current = [self.metric_combo.itemData(i) for i in range(self.metric_combo.count())]
        if current != wanted:
            self.metric_combo.clear()
            for m in wanted:
                self.metric_combo.addItem(METRICS[m], m)
        self.metric_combo.setCurrentIndex(max(self.metric_combo.findData(s.metric), 0))

    def values(self) -> dict[str, Any]:
        """What the controls show (tests)."""
        return {
            "trust_model": next((n for n, b in self.trust_buttons.items() if b.isChecked()),
                                None),
            "column": self.column_combo.currentData(),
            "query": self.query_combo.currentData(),
            "mechanism": self.mechanism_combo.currentData(),
            "epsilon": self.epsilon.value(),
            "delta": self.delta.value(),
            "params": self.param_form.values(),
        }
