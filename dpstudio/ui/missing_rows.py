"""The Analysis panel's missing-value rows: "Missing values: drop / impute with [value]".

Shown for a central sum, mean or variance only. Below the choice, one line says what it
means under the chosen neighbouring relation (the sum's sensitivity, whether n is public)
or why a typed value is refused; with imputation, a second line (for the analyst, unless
true values are hidden) says how far imputing moves the statistic from that of the present
values. :class:`MissingValueRows` is a part of
:class:`~dpstudio.ui.analysis_panel.AnalysisPanel`: it reads and writes the panel's
``session``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QWidget

from dpstudio.analysis.utility import imputation_shift
from dpstudio.engine.missing import midpoint
from dpstudio.engine.queries import sum_sensitivity
from dpstudio.ui.result_panel import shift_line
from dpstudio.ui.style import MUTED
from dpstudio.ui.texts import GLOSSARY

__all__ = ["MissingValueRows"]


class MissingValueRows:
    """Mixin of :class:`~dpstudio.ui.analysis_panel.AnalysisPanel`: the missing-value
    choice (``missing_combo``, ``impute_edit``) and its consequence (``missing_hint``),
    built into the "Column and query" form and refreshed from ``session``."""

    def _missing_rows(self, box: QWidget, form: QFormLayout) -> None:
        """"Missing values: drop (default) / impute with [value]" (central sum, mean,
        variance); the line below states the consequence, or why the value is refused."""
        self.missing_row = QWidget(box)
        row = QHBoxLayout(self.missing_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.missing_combo = QComboBox(self.missing_row)
        self.missing_combo.addItem("drop (default)", "drop")
        self.missing_combo.addItem("impute with", "impute")
        self.missing_combo.activated.connect(
            lambda i: self.session.set_missing(self.missing_combo.itemData(i)))
        self.impute_edit = QLineEdit(self.missing_row)
        self.impute_edit.setAccessibleName("Imputed value")
        # Committed on Enter or when focus leaves: typing "5" on the way to "50" must not
        # flash an error or start a computation.
        self.impute_edit.editingFinished.connect(
            lambda: self.session.set_impute(self.impute_edit.text()))
        row.addWidget(self.missing_combo)
        row.addWidget(self.impute_edit, 1)
        self.missing_label = QLabel("Missing values", box)
        for w in (self.missing_label, self.missing_combo, self.impute_edit):
            w.setToolTip(GLOSSARY["missing"])
        self.missing_label.setBuddy(self.missing_combo)
        form.addRow(self.missing_label, self.missing_row)
        self.missing_hint = QLabel(box)
        self.missing_hint.setWordWrap(True)
        self.missing_hint.setStyleSheet(f"color: {MUTED}; font-size: 9pt;")
        self.missing_hint.setTextFormat(Qt.TextFormat.RichText)
        form.addRow(self.missing_hint)

    def _refresh_missing(self) -> None:
        """The missing-value row: shown for central sums, means and variances only."""
        s = self.session
        form = self.missing_row.parentWidget().layout()
        applies = s.missing_applies
        form.setRowVisible(self.missing_row, applies)
        form.setRowVisible(self.missing_hint, applies)
        if not applies:
            return
        self.missing_combo.setCurrentIndex(max(self.missing_combo.findData(s.missing), 0))
        impute = s.missing == "impute"
        self.impute_edit.setEnabled(impute)
        if not self.impute_edit.hasFocus():
            self.impute_edit.setText(s.impute_text)
        bounds = s.spec.bounds if s.spec is not None else None
        if bounds is not None:
            # Empty: the engine imputes the bounds' middle.
            self.impute_edit.setPlaceholderText(f"{midpoint(*bounds):g}")
        problem = s.missing_problem()
        if problem:
            self.missing_hint.setText(f"<span style='color:#b42318'>{problem[0].upper()}"
                                      f"{problem[1:]}.</span>")
        else:
            self.missing_hint.setText(self._missing_consequence())

    def _missing_consequence(self) -> str:
        """One line: what the chosen treatment means under the chosen relation; with
        imputation, a second (analyst only, unless true values are hidden): how far
        imputing moves the statistic from that of the present values."""
        s = self.session
        settings = s.settings()
        if settings is None or settings.bounds is None:
            return ""
        spec = settings.spec()
        lo, hi = spec.bounds
        sens = sum_sensitivity(lo, hi, spec.relation, spec.missing)
        if spec.missing == "drop":
            if spec.relation == "replace":
                return (f"Dropped: a value may appear where one was missing, so the sum's "
                        f"sensitivity is max(hi − lo, |lo|, |hi|) = {sens:g}.")
            return f"Dropped: n stays private (a noisy count); the sum's sensitivity {sens:g}."
        if spec.n_public():
            line = (f"Imputed: every row counts, n is public; the sum's sensitivity "
                    f"hi − lo = {sens:g}"
                    + ("; the mean spends the whole budget on the sum." if s.query == "mean"
                       else "."))
        else:
            line = (f"Imputed: every row counts; n stays private (a noisy count); the sum's "
                    f"sensitivity {sens:g}.")
        shift = None if s.hide_true else imputation_shift(settings, s.values)
        if shift is not None:
            line += f"<br>{shift_line(s.query, shift)}."
        return line
