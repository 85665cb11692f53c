"""Forms generated from registry :class:`~dpstudio.engine.registry.Param` descriptions.

No widget code per mechanism: a float becomes a spin box (with a logarithmic slider when
the parameter asks for ``log_scale``), an int a spin box, a choice a combo box, a bool a
check box; labels, units, ranges and tooltips all come from the ``Param``. A parameter
whose range starts at 0 with default 0 and whose help says what 0 means ("0 chooses
automatically") shows "auto" at 0.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QWidget,
)

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.registry import Param

__all__ = ["LogSliderSpin", "ParamForm", "ScientificSpinBox", "SignificantSpinBox"]

_INT_MAX = 2**31 - 1


class SignificantSpinBox(QDoubleSpinBox):
    """A float spin box that shows 3 significant digits (0.0123, 1.5, 42) and steps
    multiplicatively when ``log_steps`` is set (×10^(1/steps_per_decade) per arrow press)."""

    def __init__(self, parent: QWidget | None = None, digits: int = 3,
                 steps_per_decade: int = 0) -> None:
        super().__init__(parent)
        self._digits = digits
        self._per_decade = steps_per_decade
        self.setDecimals(12)
        self.setKeyboardTracking(False)
        self.setAccelerated(True)

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt override
        return f"{value:.{self._digits}g}"

    def valueFromText(self, text: str) -> float:  # noqa: N802 - Qt override
        try:
            return float(text.replace(",", ".").strip())
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):  # noqa: D102 - Qt override
        from PySide6.QtGui import QValidator

        stripped = text.replace(",", ".").strip()
        if stripped in ("", "-", ".", "e", "-."):
            return QValidator.State.Intermediate, text, pos
        try:
            float(stripped)
        except ValueError:
            if stripped.endswith(("e", "e-", "e+")):
                return QValidator.State.Intermediate, text, pos
            return QValidator.State.Invalid, text, pos
        return QValidator.State.Acceptable, text, pos

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt override
        if self._per_decade and self.value() > 0:
            factor = 10.0 ** (steps / self._per_decade)
            self.setValue(min(max(self.value() * factor, self.minimum()), self.maximum()))
            return
        super().stepBy(steps)


class ScientificSpinBox(SignificantSpinBox):
    """δ-style values: shown as 1e-06, stepped by a factor of 10 per arrow press."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, digits=2, steps_per_decade=1)
        self.setDecimals(15)

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt override
        if value <= 0:
            return "0"
        mantissa, exponent = f"{value:.1e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"


class LogSliderSpin(QWidget):
    """A logarithmic slider and a spin box showing the same positive number, kept in sync.

    ``value_changed`` fires on every slider step (drags are live) and when a typed value
    is committed; the value is clamped to [low, high].
    """

    value_changed = Signal(float)

    def __init__(self, low: float, high: float, value: float, steps_per_decade: int = 100,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.low, self.high = float(low), float(high)
        self._per_decade = steps_per_decade
        self._value = float(value)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        decades = math.log10(self.high / self.low)
        self.slider.setRange(0, int(round(decades * steps_per_decade)))
        self.slider.setPageStep(steps_per_decade // 4 or 1)
        self.spin = SignificantSpinBox(self, steps_per_decade=max(steps_per_decade // 10, 1))
        self.spin.setRange(self.low, self.high)
        self.spin.setMinimumWidth(72)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.spin)
        self.slider.valueChanged.connect(self._slider_moved)
        self.spin.valueChanged.connect(self._spin_changed)
        self.set_value(value)

    def value(self) -> float:
        return self._value

    def _to_position(self, value: float) -> int:
        return int(round(math.log10(value / self.low) * self._per_decade))

    def _from_position(self, position: int) -> float:
        return self.low * 10.0 ** (position / self._per_decade)

    def set_value(self, value: float) -> None:
        """Show ``value`` without emitting ``value_changed``."""
        v = min(max(float(value), self.low), self.high)
        self._value = v
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.slider.setValue(self._to_position(v))
        self.spin.setValue(v)
        for w in (self.slider, self.spin):
            w.blockSignals(False)

    def _slider_moved(self, position: int) -> None:
        v = float(f"{self._from_position(position):.3g}")
        v = min(max(v, self.low), self.high)
        self._value = v
        self.spin.blockSignals(True)
        self.spin.setValue(v)
        self.spin.blockSignals(False)
        self.value_changed.emit(v)

    def _spin_changed(self, value: float) -> None:
        self._value = float(value)
        self.slider.blockSignals(True)
        self.slider.setValue(self._to_position(self._value))
        self.slider.blockSignals(False)
        self.value_changed.emit(self._value)

    def setToolTip(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setToolTip(text)
        self.slider.setToolTip(text)
        self.spin.setToolTip(text)


def _label(p: Param) -> str:
    text = p.label or p.name.replace("_", " ")
    text = text[:1].upper() + text[1:] if not p.label else text
    return f"{text} ({p.unit})" if p.unit else text


def _auto_at_zero(p: Param) -> bool:
    return p.low == 0 and p.default == 0 and "0" in p.help


class ParamForm(QWidget):
    """One row per parameter; ``value_changed(name, value)`` for each valid edit.

    ``fields`` maps a parameter's name to its editing widget; ``kinds`` to the widget kind
    (``"spin"``, ``"log"``, ``"combo"``, ``"check"``) for tests and layout.
    """

    value_changed = Signal(str, object)

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

    def set_params(self, params: tuple[Param, ...] | list[Param],
                   values: dict[str, Any] | None = None) -> None:
        """Rebuild the form for ``params`` (current ``values`` override the defaults).

        The same parameters as shown keep their widgets (and the keyboard focus).
        """
        if tuple(params) == self.params and self.fields:
            self.set_values(values or {})
            return
        while self.layout_.rowCount():
            self.layout_.removeRow(0)
        self.fields.clear()
        self.kinds.clear()
        self.labels.clear()
        self.params = tuple(params)
        values = values or {}
        for p in self.params:
            widget, kind = self._make(p, values.get(p.name, p.default))
            label = QLabel(_label(p), self)
            label.setToolTip(p.help)
            widget.setToolTip(p.help)
            self.layout_.addRow(label, widget)
            self.fields[p.name], self.kinds[p.name], self.labels[p.name] = widget, kind, label
        self.setVisible(bool(self.params))

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p in self.params:
            w = self.fields[p.name]
            if isinstance(w, QCheckBox):
                out[p.name] = w.isChecked()
            elif isinstance(w, QComboBox):
                out[p.name] = w.currentText()
            elif isinstance(w, LogSliderSpin):
                out[p.name] = w.value()
            else:
                out[p.name] = w.value()
        return out

    def set_values(self, values: dict[str, Any]) -> None:
        """Show ``values`` without emitting ``value_changed``."""
        for p in self.params:
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
        if p.kind == "int":
            spin = QSpinBox(self)
            lo = int(p.low) if p.low is not None else -_INT_MAX
            hi = min(int(p.high), _INT_MAX) if p.high is not None else _INT_MAX
            if p.low_open:
                lo += 1
            if p.high_open:
                hi -= 1
            spin.setRange(lo, hi)
            spin.setKeyboardTracking(False)
            spin.setAccelerated(True)
            if _auto_at_zero(p):
                spin.setSpecialValueText("auto")
            spin.setValue(int(value))
            spin.valueChanged.connect(lambda v, p=p: self._emit(p, int(v)))
            return spin, "spin"
        lo = p.low if p.low is not None else -1e12
        hi = p.high if p.high is not None else 1e12
        if p.log_scale and hi > 0:
            lo_pos = lo if lo > 0 else hi * 1e-6
            field = LogSliderSpin(lo_pos, hi, float(value) if value else lo_pos,
                                  steps_per_decade=50, parent=self)
            field.value_changed.connect(lambda v, p=p: self._emit(p, float(v)))
            return field, "log"
        spin = SignificantSpinBox(self, digits=4)
        step = 10.0 ** math.floor(math.log10(max(hi - lo, 1e-12))) / 100.0
        spin.setSingleStep(step)
        spin.setRange(lo, hi - (step * 1e-3 if p.high_open else 0.0))
        if _auto_at_zero(p):
            spin.setSpecialValueText("auto")
        spin.setValue(float(value))
        spin.valueChanged.connect(lambda v, p=p: self._emit(p, float(v)))
        return spin, "spin"

    def _emit(self, p: Param, value: Any) -> None:
        widget = self.fields.get(p.name)
        try:
            checked = p.validate(value)
        except ParameterError as exc:
            if widget is not None:
                widget.setStyleSheet("border: 1px solid #b42318;")
                widget.setToolTip(f"{p.help}\n\n{exc}")
            return
        if widget is not None and widget.styleSheet():
            widget.setStyleSheet("")
            widget.setToolTip(p.help)
        self.value_changed.emit(p.name, checked)
