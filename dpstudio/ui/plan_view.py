"""Analysis ▸ New Release Plan…: several statistics under one budget, released at once.

:class:`PlanDialog` (one per window, non-modal) shows the plan as a table
(:class:`~dpstudio.ui.plan_model.PlanModel`): one row per statistic with its weight or
target, ε and δ shares and expected error, all recomputed as the split changes. Rows are
added from the declared schema only (undeclared columns are greyed with their reason);
weights and targets are edited in place, with undo (Ctrl+Z). A plan that cannot be
released says why in one red sentence under the table, and Release… waits.

Release… runs through the project controller's worker (check, confirm, release — the
same progress, Cancel and one-sentence refusals as a single release): one ledger charge
of the plan's total, one manifest, one report, one script; the Ledger tab then shows it.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from dpstudio.analysis.plan import METHODS
from dpstudio.data.schema import ColumnType
from dpstudio.engine.registry import REGISTRY
from dpstudio.ui.folder_open import is_folder
from dpstudio.ui.param_form import ScientificSpinBox, SignificantSpinBox
from dpstudio.ui.plan_confirm import PlanConfirmDialog, short_number
from dpstudio.ui.plan_model import COL_ERROR, COL_NOTE, COL_VALUE, PlanModel
from dpstudio.ui.plan_texts import (
    SETTING_TIPS,
    column_problem,
    key_problem,
    plan_queries,
)
from dpstudio.ui.style import MUTED
from dpstudio.ui.texts import QUERY_LABELS

__all__ = ["PLAN_MECHANISMS", "PlanDialog"]

#: The mechanisms a plan offers (closed-form errors; δ only for the Gaussian).
PLAN_MECHANISMS = ("laplace", "gaussian")
_METHOD_LABELS = {"weights": "by weights", "accuracy": "by accuracy targets"}
_ERROR_COLOUR = "#b42318"
_NO_KEY = "(none)"
_HISTOGRAM_BINS = 10


class PlanDialog(QDialog):
    """The release plan of the window's dataset (see the module's docstring)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window_ = window
        self.session = window.session
        self.projects = window.projects
        self.setWindowTitle("Release plan")
        self._columns_cache: tuple[Any, dict[str, np.ndarray]] | None = None
        self._releasing = False
        self.confirm: PlanConfirmDialog | None = None
        self._spec: Any = None
        self._out: Path | None = None

        self.model = PlanModel(self.session.schema, self._analyst_columns, self)
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self._build_settings()
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed
                                   | QAbstractItemView.EditTrigger.AnyKeyPressed)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_NOTE, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(70)
        self._build_add_row()
        self.total = QLabel(self)
        self.total.setTextFormat(Qt.TextFormat.RichText)
        self.refusal = QLabel(self)
        self.refusal.setWordWrap(True)
        self.refusal.setStyleSheet(f"color: {_ERROR_COLOUR};")
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setStyleSheet(f"color: {MUTED};")
        self.release_button = QPushButton("Release…", self)
        self.release_button.clicked.connect(self.start_release)
        close = QPushButton("Close", self)
        close.clicked.connect(self.close)
        self.save_button = QPushButton("Save as Spec…", self)
        self.save_button.setToolTip("Write the plan as a TOML spec (schema_version = 2) for "
                                    "dpstudio release PLAN.toml --project P --out DIR")
        self.save_button.clicked.connect(lambda: self.save_spec())
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.save_button)
        bottom.addWidget(self.release_button)
        bottom.addWidget(close)

        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addLayout(self.settings_row)
        layout.addWidget(self.table, 1)
        layout.addLayout(self.add_row)
        layout.addWidget(self.total)
        layout.addWidget(self.refusal)
        layout.addLayout(bottom)

        self.model.changed.connect(self._update)
        self.model.rejected.connect(lambda text: self.status.setText(text[0].upper()
                                                                     + text[1:] + "."))
        self.session.changed.connect(self._session_changed)
        self.projects.project_changed.connect(lambda *_: self._follow_relation())
        self.projects.busy_changed.connect(lambda *_: self._update_release())
        self.projects.plan_checked.connect(self._checked)
        self.projects.release_done.connect(self._released)
        self.projects.release_refused.connect(self._release_refused)
        # Return commits a typed number; it presses no button (a dialog's default would
        # add a statistic again or release).
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)
            button.setDefault(False)
        self._dataset_changed()
        self.resize(1180, 500)

    # -- building ------------------------------------------------------------------------

    def _labelled(self, text: str, widget: QWidget, tip: str) -> None:
        label = QLabel(text, self)
        label.setBuddy(widget)
        label.setToolTip(tip)
        widget.setToolTip(tip)
        self.settings_row.addWidget(label)
        self.settings_row.addWidget(widget)
        self.settings_row.addSpacing(10)

    def _build_settings(self) -> None:
        self.settings_row = QHBoxLayout()
        self.epsilon = SignificantSpinBox(self, digits=4, steps_per_decade=10)
        self.epsilon.setRange(0.001, 100.0)
        self.epsilon.setValue(float(self.session.epsilon or 1.0))
        self._labelled("Total &ε", self.epsilon, SETTING_TIPS["epsilon"])
        self.delta = ScientificSpinBox(self)
        self.delta.setRange(0.0, 0.1)
        self.delta.setValue(float(self.session.delta or 1e-6))
        self._labelled("&δ", self.delta, SETTING_TIPS["delta"])
        self.method = QComboBox(self)
        for m in METHODS:
            self.method.addItem(_METHOD_LABELS[m], m)
        self._labelled("&Split", self.method, SETTING_TIPS["method"])
        self.confidence = QDoubleSpinBox(self)
        self.confidence.setDecimals(3)
        self.confidence.setRange(0.5, 0.999)
        self.confidence.setSingleStep(0.01)
        self.confidence.setKeyboardTracking(False)
        self.confidence.setValue(float(getattr(self.session, "confidence", 0.95) or 0.95))
        self._labelled("&Confidence", self.confidence, SETTING_TIPS["confidence"])
        self.mechanism = QComboBox(self)
        for name in PLAN_MECHANISMS:
            self.mechanism.addItem(REGISTRY.get(name).label, name)
        self._labelled("&Mechanism", self.mechanism, SETTING_TIPS["mechanism"])
        self.rows = QSpinBox(self)
        self.rows.setRange(0, 2_000_000_000)
        self.rows.setSpecialValueText("not stated")
        self.rows.setKeyboardTracking(False)
        self.rows.setGroupSeparatorShown(True)
        self._labelled("Public &rows", self.rows, SETTING_TIPS["rows"])
        self.settings_row.addStretch(1)
        self.epsilon.valueChanged.connect(lambda v: self.model.set_settings(epsilon=v))
        self.delta.valueChanged.connect(lambda v: self.model.set_settings(delta=v))
        self.method.currentIndexChanged.connect(self._method_changed)
        self.confidence.valueChanged.connect(lambda v: self.model.set_settings(confidence=v))
        self.mechanism.currentIndexChanged.connect(self._mechanism_changed)
        self.rows.valueChanged.connect(
            lambda v: self.model.set_settings(public_rows=int(v) or None))
        self.model.epsilon, self.model.delta = self.epsilon.value(), self.delta.value()
        self.model.confidence = self.confidence.value()
        self.delta.setEnabled(REGISTRY.get(self.mechanism.currentData()).needs_delta)

    def _mechanism_changed(self, _index: int = 0) -> None:
        name = self.mechanism.currentData()
        takes = REGISTRY.get(name).needs_delta
        self.delta.setEnabled(takes)
        self.delta.setToolTip(SETTING_TIPS["delta"] if takes else
                              f"{REGISTRY.get(name).label} is pure ε: the plan spends no δ")
        self.model.set_settings(mechanism=name)

    def _method_changed(self, _index: int = 0) -> None:
        method = self.method.currentData()
        if method == "accuracy" and self.model.method == "weights":
            self.model.fill_targets()  # start from what the weights give now
        self.model.set_settings(method=method)

    def _build_add_row(self) -> None:
        self.add_row = QHBoxLayout()
        self.add_column = QComboBox(self)
        self.add_column.setToolTip("A declared column (greyed: why it cannot be planned)")
        self.add_query = QComboBox(self)
        self.add_query.setToolTip("The statistic to release about the column")
        self.add_by = QComboBox(self)
        self.add_by.setToolTip(SETTING_TIPS["by"])
        self.add_by2 = QComboBox(self)
        self.add_by2.setToolTip(SETTING_TIPS["by"])
        self.add_button = QPushButton("&Add statistic", self)
        self.add_button.clicked.connect(self.add_statistic)
        self.remove_button = QPushButton("Remo&ve", self)
        self.remove_button.setToolTip("Remove the selected statistic from the plan")
        self.remove_button.clicked.connect(self.remove_selected)
        stack = self.model.undo_stack
        self.undo_action = stack.createUndoAction(self, "Undo")
        self.undo_action.setShortcut(QKeySequence("Ctrl+Z"))
        self.redo_action = stack.createRedoAction(self, "Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        for action in (self.undo_action, self.redo_action):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(action)
        self.undo_button = QToolButton(self)
        self.undo_button.setText("Undo")
        self.undo_button.clicked.connect(stack.undo)
        stack.canUndoChanged.connect(self.undo_button.setEnabled)
        stack.undoTextChanged.connect(
            lambda text: self.undo_button.setToolTip(f"Undo {text} (Ctrl+Z)" if text else ""))
        self.redo_button = QToolButton(self)
        self.redo_button.setText("Redo")
        self.redo_button.clicked.connect(stack.redo)
        stack.canRedoChanged.connect(self.redo_button.setEnabled)
        stack.redoTextChanged.connect(
            lambda text: self.redo_button.setToolTip(f"Redo {text} (Ctrl+Shift+Z)" if text
                                                     else ""))
        self.undo_button.setEnabled(False)
        self.redo_button.setEnabled(False)
        for combo in (self.add_column, self.add_by, self.add_by2):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(24 if combo is self.add_column else 16)
            combo.view().setMinimumWidth(420)
        for text, w in (("Add:", self.add_column), ("", self.add_query),
                        ("by", self.add_by), ("and", self.add_by2)):
            if text:
                self.add_row.addWidget(QLabel(text, self))
            self.add_row.addWidget(w)
        self.add_row.addWidget(self.add_button)
        self.add_row.addSpacing(12)
        self.add_row.addWidget(self.remove_button)
        self.add_row.addWidget(self.undo_button)
        self.add_row.addWidget(self.redo_button)
        self.add_row.addStretch(1)
        self.add_column.currentIndexChanged.connect(self._column_picked)
        self.add_query.currentIndexChanged.connect(self._query_picked)
        self.add_by.currentIndexChanged.connect(self._by_picked)

    # -- the schema's columns --------------------------------------------------------------

    def _fill_columns(self) -> None:
        """Every column of the schema; undeclared ones greyed with their reason."""
        combo, schema = self.add_column, self.session.schema
        combo.blockSignals(True)
        combo.clear()
        model = combo.model()
        first = -1
        for spec in (schema if schema is not None else ()):
            problem = column_problem(schema, spec.name)
            combo.addItem(spec.name if problem is None else f"{spec.name} — {problem}",
                          spec.name)
            i = combo.count() - 1
            combo.setItemData(i, problem or spec.domain_text(), Qt.ItemDataRole.ToolTipRole)
            if problem is not None and isinstance(model, QStandardItemModel):
                model.item(i).setEnabled(False)
            elif first < 0:
                first = i
        combo.setCurrentIndex(first)
        combo.blockSignals(False)
        self._column_picked()

    def _column_picked(self, *_args: Any) -> None:
        schema, name = self.session.schema, self.add_column.currentData()
        spec = schema.get(name) if schema is not None and name else None
        self.add_query.blockSignals(True)
        self.add_query.clear()
        for q in plan_queries(spec) if spec is not None else ():
            self.add_query.addItem(QUERY_LABELS.get(q, q), q)
        self.add_query.blockSignals(False)
        self._query_picked()

    def _query_picked(self, *_args: Any) -> None:
        """The ``by`` choices: categorical columns with declared keys (others greyed)."""
        query = self.add_query.currentData()
        grouped = query in ("count", "sum", "mean")
        self._fill_keys(self.add_by, grouped, (self.add_column.currentData(),))
        self._by_picked()
        self.add_button.setEnabled(query is not None)

    def _by_picked(self, *_args: Any) -> None:
        """A second key column once a first is chosen (a plan groups by one or two)."""
        first = self.add_by.currentData()
        self._fill_keys(self.add_by2, first is not None,
                        (self.add_column.currentData(), first))

    def _fill_keys(self, combo: QComboBox, enabled: bool, exclude: tuple[Any, ...]) -> None:
        schema = self.session.schema
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(_NO_KEY, None)
        combo.setEnabled(enabled)
        model = combo.model()
        for spec in (schema if schema is not None and enabled else ()):
            if spec.name in exclude:
                continue
            problem = key_problem(schema, spec.name)
            if problem == "not a categorical column":
                continue
            combo.addItem(spec.name if problem is None else f"{spec.name} — {problem}",
                          spec.name)
            i = combo.count() - 1
            combo.setItemData(i, problem or f"{len(spec.categories)} declared keys",
                              Qt.ItemDataRole.ToolTipRole)
            if problem is not None and isinstance(model, QStandardItemModel):
                model.item(i).setEnabled(False)
        combo.blockSignals(False)

    def _analyst_columns(self) -> dict[str, np.ndarray] | None:
        """The analyst's numeric columns (tooltips' clamping bias only; never ε)."""
        d = self.session.dataset
        if d is None or is_folder(d) or getattr(self.session, "hide_true", False):
            return None
        if self._columns_cache is None or self._columns_cache[0] is not d:
            schema = self.session.schema
            cols = {}
            for spec in (schema if schema is not None else ()):
                if spec.type is ColumnType.NUMERIC and spec.name in d.frame:
                    cols[spec.name] = pd.to_numeric(d.frame[spec.name],
                                                    errors="coerce").to_numpy(dtype=float)
            self._columns_cache = (d, cols)
        cols = self._columns_cache[1]
        return cols

    # -- actions ---------------------------------------------------------------------------

    def add_statistic(self) -> None:
        column, query = self.add_column.currentData(), self.add_query.currentData()
        if not column or not query:
            return
        by = tuple(b for b in (self.add_by.currentData(), self.add_by2.currentData())
                   if b is not None)
        spec = self.session.schema.get(column)
        bins = _HISTOGRAM_BINS if query == "histogram" and spec.bounds is not None else None
        self.model.add_row(column, query, by, bins=bins)
        self.table.selectRow(self.model.rowCount() - 1)

    def remove_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.model.remove_row(rows[0].row())

    def edit_value(self, row: int) -> None:
        """Start editing row ``row``'s weight or target (the cell's editor gets focus)."""
        index = self.model.index(row, COL_VALUE)
        self.table.setCurrentIndex(index)
        self.table.edit(index)

    # -- state -----------------------------------------------------------------------------

    def _session_changed(self, aspect: str) -> None:
        if aspect == "dataset":
            self._dataset_changed()
        elif aspect in ("schema", "all"):
            self.model.set_declared(self.session.schema)
            self._fill_columns()
        elif aspect == "hide_true":
            self.model.recompute()
        elif aspect == "budget":  # the project's budget moved (a release, another process)
            self._follow_relation()
            self._update()

    def _follow_relation(self) -> None:
        """Plan under the relation the release will use: the dataset's in the project
        (else the project's default), else the session's."""
        p = self.projects.project
        record = getattr(self.projects, "_record", None)
        relation = (record.relation if record is not None else
                    p.defaults()["relation"] if p is not None else None)
        relation = relation or self.session.relation
        if relation != self.model.relation:
            self.model.set_settings(relation=relation)
        else:
            self._update_release()

    def _dataset_changed(self) -> None:
        d = self.session.dataset
        self._columns_cache = None
        self.title.setText(
            f"<b>Release plan</b> of <b>{escape(d.name) if d is not None else 'no dataset'}"
            f"</b> &nbsp;<span style='color:{MUTED}'>several statistics under one budget, "
            "released in one ledger charge</span>")
        self.model.declared = self.session.schema
        self.model.undo_stack.clear()
        self.model._put_rows([])
        self._fill_columns()
        self._follow_relation()

    def _update(self) -> None:
        t = self.model.table
        if t.total is not None:
            eps, dlt = t.total
            word = ("the targets need" if self.model.method == "accuracy" else "the plan spends")
            text = f"Total: {word} <b>ε = {short_number(eps)}</b>"
            text += f", δ = {short_number(dlt)}" if dlt else ""
            text += (f" of ε = {short_number(self.model.epsilon)} &nbsp;<span "
                     f"style='color:{MUTED}'>({escape(self.model.relation)} neighbours)</span>")
            pb = self.session.project_budget
            if pb is not None:
                left = pb.total_epsilon - pb.spent_epsilon
                text += (f" &nbsp;<span style='color:{MUTED}'>(project {escape(pb.project)}: "
                         f"ε {short_number(left)} left for {escape(pb.dataset)})</span>")
            self.total.setText(text)
        else:
            self.total.setText("")
        refusal = t.refusal
        self.refusal.setText("" if refusal is None else refusal[0].upper() + refusal[1:]
                             + ("" if refusal.endswith(".") else "."))
        self.refusal.setVisible(refusal is not None)
        self.table.resizeColumnToContents(COL_ERROR)
        self._update_release()

    def release_problem(self) -> str | None:
        """Why Release… waits (one line), or None."""
        if self.model.refusal is not None:
            return "the plan cannot be released as it stands (see the red line)"
        if self.projects.project is None:
            return "open or create a project first (File ▸ New Project…)"
        if self.projects.busy:
            return "a release is under way"
        if self.projects.tamper:
            return "the project's ledger was changed outside DP Studio (see the Ledger tab)"
        d = self.session.dataset
        if d is None:
            return "open a dataset first"
        if is_folder(d):
            return "a plan reads one file: open a file, not a folder"
        return None

    def save_spec(self, path: str | None = None) -> Path | None:
        """Save as Spec…: the plan as a version-2 TOML spec (asks where when ``path`` is
        None); the file written, or None."""
        from PySide6.QtWidgets import QFileDialog

        from dpstudio.ui.plan_spec import save_plan_spec

        d = self.session.dataset
        if self.model.plan is None or d is None:
            return None
        if path is None:
            start = str(d.path.parent / f"plan-{d.path.stem}.toml")
            path, _ = QFileDialog.getSaveFileName(self, "Save the plan as a spec", start,
                                                  "Release specs (*.toml);;All files (*)")
            if not path:
                return None
            if not path.lower().endswith(".toml"):
                path += ".toml"
        try:
            written = save_plan_spec(self.model.plan, d.path, path)
        except OSError as exc:
            self.status.setText(f"Could not save the spec: {exc.strerror or exc}.")
            return None
        self.status.setText(f"Plan saved as {written}: dpstudio release {written.name} "
                            "--project P --out DIR repeats it.")
        return written

    def _update_release(self) -> None:
        problem = self.release_problem()
        self.save_button.setEnabled(self.model.plan is not None
                                    and self.session.dataset is not None)
        self.release_button.setEnabled(problem is None)
        self.release_button.setToolTip(
            "Release every statistic of the plan: one ledger charge, one manifest, one "
            "report" if problem is None else problem[0].upper() + problem[1:])
        if problem is not None and self.model.refusal is None and not self._releasing:
            self.status.setText(problem[0].upper() + problem[1:] + ".")

    # -- releasing -------------------------------------------------------------------------

    def current_spec(self) -> Any:
        """The plan as a release spec (:class:`~dpstudio.project.spec_plan.PlanSpec`)."""
        from dpstudio.project.spec_plan import PlanSpec

        d, p = self.session.dataset, self.projects.project
        budget: tuple[float | None, float | None] = (None, None)
        if p is not None and p.defaults()["epsilon"] is None:
            # Registers the dataset on its first release (ignored once it is registered).
            budget = (self.session.total_epsilon, self.session.total_delta)
        return PlanSpec(dataset=str(d.path.resolve()), plan=self.model.plan, report=True,
                        script=True, header=bool(d.frame.attrs.get("header", True)),
                        budget_epsilon=budget[0], budget_delta=budget[1])

    def start_release(self) -> bool:
        """Release…: check in the worker, then confirm, then release."""
        if self.release_problem() is not None or self.model.plan is None:
            return False
        self._spec, self._out = self.current_spec(), self.projects.default_out_dir()
        self._releasing = True
        self.status.setText("Checking the budget…")
        return bool(self.projects.start_plan_check(self._spec, self._out))

    def _checked(self, outcome: Any) -> None:
        if not self._releasing or not hasattr(self._spec, "plan"):
            return  # another view's check (the Models tab's)
        if outcome.error is not None:
            self._releasing = False
            self.status.setText(f"Cannot release: {outcome.error}")
            return
        self.status.setText("")
        n = len(self._spec.plan.statistics)
        self.confirm = PlanConfirmDialog(outcome.value, n, self._out, self)
        self.confirm.accepted.connect(self._confirmed)
        self.confirm.rejected.connect(self._confirm_rejected)
        self.confirm.open()

    def _confirm_rejected(self) -> None:
        self._releasing = False
        self.status.setText("Not released: nothing was charged.")

    def _confirmed(self) -> None:
        from dataclasses import replace

        assert self.confirm is not None
        spec = replace(self._spec, report=self.confirm.report.isChecked(),
                       script=self.confirm.script.isChecked())
        self.status.setText("Releasing (noise from the OS CSPRNG)…")
        self.projects.start_plan_release(spec, self._out)

    def _released(self, record: Any) -> None:
        if not self._releasing or getattr(record, "query", None) != "plan":
            return
        self._releasing = False
        self.status.setText(
            f"Released as #{record.id}: ε = {short_number(record.epsilon)}, δ = "
            f"{short_number(record.delta)} charged once; {len(record.files)} files in "
            f"{record.out_dir}. The Ledger tab shows it.")
        self.window_.show_view("ledger")

    def _release_refused(self, message: str) -> None:
        if self._releasing:
            self._releasing = False
            self.status.setText(message)
        self._update_release()

    def expected(self) -> list[float]:
        """Each row's planned half-width (tests and screenshots)."""
        return [h if math.isfinite(h) else math.nan for h in self.model.half_widths()]
