"""Forms generated from registry :class:`~dpstudio.engine.registry.Param` descriptions.

No widget code per mechanism: a float becomes a spin box (with a logarithmic slider when
the parameter asks for ``log_scale``), an int a spin box, a choice a combo box, a bool a
check box; labels, units, ranges and tooltips all come from the ``Param``. A parameter
whose range starts at 0 with default 0 and whose help says what 0 means ("0 chooses
automatically") shows "auto" at 0.

A number typed outside a parameter's range is kept as typed, never replaced by the
nearest limit: the box is marked, the sentence of the engine's range check
(:meth:`Param.validate`) is shown under it, and the form sends ``refused`` instead of a
value. The spin boxes themselves are in :mod:`dpstudio.ui.number_boxes`.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QWidget

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.registry import Param
from dpstudio.ui.number_boxes import (
    LogSliderSpin,
    ScientificSpinBox,
    SignificantSpinBox,
    WholeSpinBox,
    mark,
    typed_number,
)

__all__ = ["LogSliderSpin", "ParamForm", "ScientificSpinBox", "SignificantSpinBox",
           "WholeSpinBox", "typed_number"]

#: The sentence under a refused number.
REFUSED_STYLE = "color: #b42318; font-size: 9pt;"


def _label(p: Param) -> str:
    text = p.label or p.name.replace("_", " ")
    text = text[:1].upper() + text[1:] if not p.label else text
    return f"{text} ({p.unit})" if p.unit else text


class ParamForm(QWidget):
    """One row per parameter; ``value_changed(name, value)`` for each valid edit.

    ``refused(name, text, why)`` for a number that cannot be used: the box keeps it,
    marked, with ``why`` (one sentence) under it, until a valid value replaces it.
    ``fields`` maps a parameter's name to its editing widget; ``kinds`` to the widget kind
    (``"spin"``, ``"log"``, ``"combo"``, ``"check"``) for tests and layout; ``hints`` to the
    line under a number that says why it was refused.
    """

    value_changed = Signal(str, object)
    refused = Signal(str, str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.layout_ = QFormLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.setHorizontalSpacing(10)
        self.layout_.setVerticalSpacing(6)
        self.layout_.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.params: tuple[Param, ...] = ()
        self.fields: dict[str, QWidget] = {}
        self.kinds: dict[str, str] = {}
        self.labels: dict[str, QLabel] = {}
        self.hints: dict[str, QLabel] = {}

    def set_params(self, params: tuple[Param, ...] | list[Param],
                   values: dict[str, Any] | None = None,
                   refused: dict[str, str] | None = None) -> None:
        """Rebuild the form for ``params`` (current ``values`` override the defaults).

        The same parameters as shown keep their widgets (and the keyboard focus).

        Parameters
        ----------
        params : sequence of Param
        values : dict, optional
            The values to show (the defaults for the others).
        refused : dict, optional
            Parameter name → why the number its box holds was refused (those boxes keep
            their text; see :meth:`set_values`).
        """
        if tuple(params) == self.params and self.fields:
            self.set_values(values or {}, refused)
            return
        while self.layout_.rowCount():
            self.layout_.removeRow(0)
        self.fields.clear()
        self.kinds.clear()
        self.labels.clear()
        self.hints.clear()
        self.params = tuple(params)
        values = values or {}
        for p in self.params:
            widget, kind = self._make(p, values.get(p.name, p.default))
            label = QLabel(_label(p), self)
            label.setToolTip(p.help)
            widget.setToolTip(p.help)
            self.layout_.addRow(label, widget)
            self.fields[p.name], self.kinds[p.name], self.labels[p.name] = widget, kind, label
            if kind in ("spin", "log"):
                hint = QLabel(self)
                hint.setWordWrap(True)
                hint.setStyleSheet(REFUSED_STYLE)
                self.layout_.addRow(hint)
                self.layout_.setRowVisible(hint, False)
                self.hints[p.name] = hint
        self.setVisible(bool(self.params))
        for name, why in (refused or {}).items():
            if name in self.fields:
                self._show_refusal(name, why)

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p in self.params:
            w = self.fields[p.name]
            if isinstance(w, QCheckBox):
                out[p.name] = w.isChecked()
            elif isinstance(w, QComboBox):
                out[p.name] = w.currentText()
            else:
                out[p.name] = w.value()
        return out

    def set_values(self, values: dict[str, Any], refused: dict[str, str] | None = None
                   ) -> None:
        """Show ``values`` without emitting ``value_changed``.

        Parameters
        ----------
        values : dict
            Parameter name → value.
        refused : dict, optional
            Parameter name → why its typed number was refused: that box keeps what was
            typed and stays marked (the session holds the refusal, not a value).
        """
        refused = refused or {}
        for p in self.params:
            if p.name in refused:
                self._show_refusal(p.name, refused[p.name])
                continue
            self._show_refusal(p.name, None)
            if p.name not in values:
                continue
            w, v = self.fields[p.name], values[p.name]
            w.blockSignals(True)
            if isinstance(w, QCheckBox):
                w.setChecked(bool(v))
            elif isinstance(w, QComboBox):
                w.setCurrentText(str(v))
            elif isinstance(w, LogSliderSpin):
                w.set_value(float(v))
            else:
                w.setValue(v)
            w.blockSignals(False)

    def refusal(self, name: str) -> str | None:
        """Why the number in ``name``'s box was refused, or None (tests)."""
        hint = self.hints.get(name)
        return hint.text() if hint is not None and hint.text() else None

    # -- construction -------------------------------------------------------------------

    def _make(self, p: Param, value: Any) -> tuple[QWidget, str]:
        if p.kind == "bool":
            box = QCheckBox(self)
            box.setChecked(bool(value))
            box.toggled.connect(lambda v, p=p: self._emit(p, bool(v)))
            return box, "check"
        if p.kind == "choice":
            combo = QComboBox(self)
            combo.addItems(list(p.choices))
            combo.setCurrentText(str(value))
            combo.currentTextChanged.connect(lambda v, p=p: self._emit(p, v))
            return combo, "combo"
        zero = "auto" if p.auto_at_zero else ""
        if p.kind == "int":
            spin = WholeSpinBox(self, zero_text=zero)
            # The arrows offer the valid range; a typed number out of it is refused.
            lo = int(p.low) if p.low is not None else -(2**31)
            hi = min(int(p.high), 2**31 - 1) if p.high is not None else 2**31 - 1
            spin.setRange(lo + int(p.low_open), hi - int(p.high_open))
            spin.setValue(int(value))
            spin.valueChanged.connect(lambda _v, p=p, w=spin: self._typed(p, w.typed_text()))
            return spin, "spin"
        lo = p.low if p.low is not None else -1e12
        hi = p.high if p.high is not None else 1e12
        if p.log_scale and hi > 0:
            lo_pos = lo if lo > 0 else hi * 1e-6
            field = LogSliderSpin(lo_pos, hi, float(value) if value else lo_pos,
                                  steps_per_decade=50, parent=self)
            field.value_changed.connect(lambda v, p=p: self._emit(p, float(v)))
            field.typed.connect(lambda text, p=p: self._typed(p, text))
            return field, "log"
        spin = SignificantSpinBox(self, digits=4, keep_typed=True, zero_text=zero)
        step = 10.0 ** math.floor(math.log10(max(hi - lo, 1e-12))) / 100.0
        spin.setSingleStep(step)
        spin.setRange(lo, hi - (step * 1e-3 if p.high_open else 0.0))
        spin.setValue(float(value))
        spin.valueChanged.connect(lambda _v, p=p, w=spin: self._typed(p, w.typed_text()))
        return spin, "spin"

    def _typed(self, p: Param, text: str) -> None:
        """A number typed (or stepped to) in ``p``'s box: checked as the engine checks it."""
        widget = self.fields.get(p.name)
        zero = widget is not None and text == getattr(widget, "_zero_text", None)
        value: Any = 0 if zero else typed_number(text)
        try:
            checked = p.validate(value)
        except ParameterError as exc:
            why = str(exc)
            self._show_refusal(p.name, why)
            self.refused.emit(p.name, text, why)
            return
        self._show_refusal(p.name, None)
        self.value_changed.emit(p.name, checked)

    def _show_refusal(self, name: str, why: str | None) -> None:
        widget, hint = self.fields.get(name), self.hints.get(name)
        p = next((q for q in self.params if q.name == name), None)
        if widget is None or p is None:
            return
        if isinstance(widget, LogSliderSpin):
            widget.mark(why, p.help)
        elif hint is not None:
            mark(widget, why, p.help)
        if hint is not None:
            text = f"{why}." if why else ""  # the CLI's sentence, word for word
            if hint.text() != text:
                hint.setText(text)
                self.layout_.setRowVisible(hint, bool(why))

    def _emit(self, p: Param, value: Any) -> None:
        try:
            checked = p.validate(value)
        except ParameterError as exc:  # a slider or a choice cannot leave the range
            self._show_refusal(p.name, str(exc))
            return
        self._show_refusal(p.name, None)
        self.value_changed.emit(p.name, checked)
