"""The analysis workflow in the main window, end to end on the bundled survey sample:
controls, live plots (asserted on their data), ε slider, trust models, generated forms,
cancelling the Monte-Carlo job, hiding true values, shortcuts."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QSpinBox

from dpstudio.analysis import utility as compute
from dpstudio.data import open_dataset, sample_path
from dpstudio.engine.registry import REGISTRY
from dpstudio.jobs import check
from dpstudio.ui import analysis_jobs as session_module
from dpstudio.ui.main_window import MainWindow
from dpstudio.ui.param_form import LogSliderSpin, SignificantSpinBox
from dpstudio.ui.result_panel import RELEASE_TOOLTIP

TIMEOUT = 20.0


def _window(qtbot, tmp_path, monkeypatch, planned: bool):
    monkeypatch.setenv("DPSTUDIO_CONFIG_DIR", str(tmp_path))  # no user settings
    # The shuffle/secure-aggregation overlays calibrate noise for a second per ε: only the
    # test of those overlays waits for them.
    monkeypatch.setattr(session_module.Analysis, "planned_comparisons", planned)
    win = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    assert win.analysis.wait_idle(TIMEOUT)
    return win


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    win = _window(qtbot, tmp_path, monkeypatch, planned=False)
    yield win
    win.analysis.shutdown()


@pytest.fixture
def full_window(qtbot, tmp_path, monkeypatch):
    win = _window(qtbot, tmp_path, monkeypatch, planned=True)
    yield win
    win.analysis.shutdown()


def settle(win: MainWindow) -> None:
    assert win.analysis.wait_idle(TIMEOUT)


def test_defaults_and_declared_bounds(window):
    s, panel = window.session, window.analysis_panel
    assert (s.column, s.trust_model, s.query, s.mechanism, s.epsilon) == (
        "age", "central", "mean", "laplace", 1.0)
    shown = panel.values()
    assert shown["column"] == "age" and shown["mechanism"] == "laplace"
    assert shown["trust_model"] == "central" and shown["epsilon"] == 1.0
    assert panel.domain_label.text().startswith("18 to 100")
    assert "saved in the schema file" in panel.domain_label.text()  # where it comes from
    assert not panel.delta.isEnabled()  # Laplace is pure ε-DP
    assert "curator" in panel.trust_text.text()
    assert window.tabs.currentWidget() is window.analysis_view


def test_plots_show_curves_points_marker_and_preview(full_window):
    window = full_window
    utility = window.utility_plot
    lines, points = utility.curves(), utility.points()
    assert "Central: Laplace" in lines and "Local: Local Laplace" in lines
    models = {name.split(":")[0] for name in lines}
    assert models == {"Central", "Local", "Shuffle", "Distributed"}  # a legend of trust models
    assert all(name.endswith("(bound)") for name in lines
               if name.startswith(("Shuffle", "Distributed")))
    legend = [label.text for _sample, label in utility.legend.items]
    assert any("Shuffle" in t for t in legend) and any("Central" in t for t in legend)
    eps, err, low, high = points["Central: simulated releases"]
    assert len(eps) >= 15 and np.all(err > 0)
    assert np.corrcoef(np.log(eps), np.log(err))[0, 1] < -0.95  # error falls as ε grows
    assert np.all(low <= err) and np.all(err <= high)
    assert utility.marker_epsilon() == 1.0 and utility.log_y
    assert set(window.tradeoff_plot.curves()) == {"bound", "gdp", "composed", "mechanism"}
    attack = window.tradeoff_plot.attack()
    assert attack is not None and len(attack["alpha"]) > 5
    assert np.all(attack["alpha_low"] <= attack["alpha"])
    shown = window.result_panel.plotted()
    assert shown["truth"] is not None and shown["labels"] is None
    assert shown["ci_low"][0] <= shown["value"][0] <= shown["ci_high"][0]
    assert "simulation" in window.result_panel.header.text()
    release = window.result_panel.release_button
    assert not release.isEnabled() and release.toolTip() == RELEASE_TOOLTIP


def test_epsilon_slider_moves_the_marker_and_the_tradeoff_only(window):
    before_lines = window.utility_plot.curves()
    before_tradeoff = window.tradeoff_plot.curves()["mechanism"][1].copy()
    lines_emitted = []
    window.analysis.lines_ready.connect(lines_emitted.append)
    window.analysis.points_ready.connect(lines_emitted.append)
    slider = window.analysis_panel.epsilon.slider
    slider.setValue(slider.value() + 80)  # ×10^0.8
    eps = window.session.epsilon
    assert eps == pytest.approx(10**0.8, rel=0.01)
    assert window.analysis_panel.epsilon.spin.value() == pytest.approx(eps)
    assert window.utility_plot.marker_epsilon() == pytest.approx(eps)  # at once
    settle(window)
    after = window.tradeoff_plot.curves()["mechanism"][1]
    assert np.max(np.abs(after - before_tradeoff)) > 0.05
    assert "6.31" in window.tradeoff_plot.getPlotItem().titleLabel.text
    assert lines_emitted == []  # the utility curves were neither recomputed nor resent
    for name, (_x, y) in before_lines.items():
        np.testing.assert_array_equal(window.utility_plot.curves()[name][1], y)
    # The spin box drives the slider the same way.
    window.analysis_panel.epsilon.spin.setValue(0.1)
    assert window.session.epsilon == pytest.approx(0.1)
    assert window.analysis_panel.epsilon.slider.value() == 100


def test_each_trust_model_with_mechanisms(window):
    s = window.session
    s.set_column("cheated_on_exam")
    settle(window)
    assert s.query == "histogram"
    buttons = window.analysis_panel.trust_buttons
    assert buttons["local"].isEnabled() and not buttons["distributed"].isEnabled()
    central = window.utility_plot.curves()["Central: Laplace"][1]
    buttons["local"].click()
    settle(window)
    assert (s.trust_model, s.mechanism) == ("local", "rr")
    local = window.utility_plot.curves()["Local: Randomized response"][1]
    # Beside a local choice the central line stands on the local model's footing (same ε,
    # replace-one, n known): never above the local one, far below it.
    central = window.utility_plot.curves()["Central: curator's best"][1]
    assert np.all(central <= local * (1 + 1e-9))  # equal where the curator runs RR itself
    assert np.all(local[:40] > 10 * central[:40])  # the local model's price
    assert window.result_panel.plotted()["labels"] == ["yes", "no"]
    assert window.tradeoff_plot.curves()["mechanism"] is not None
    assert "each person" in window.analysis_panel.trust_text.text().lower()
    s.set_column("age")
    for model, mechanism in (("distributed", "secagg_gaussian"), ("shuffle", "blanket")):
        buttons[model].click()
        s.set_mechanism(mechanism)  # before the coalesced jobs start
        settle(window)
        assert s.trust_model == model and s.query in ("mean", "sum")
        assert window.analysis_panel.delta.isEnabled()
        assert window.result_panel.plotted()["value"].size == 1
        own = [n for n in window.utility_plot.curves() if n.startswith(model.title())]
        assert own, model


def _check_form(panel, info):
    params = [p for p in info.params if p.name not in ("epsilon", "delta")]
    form = panel.param_form
    assert list(form.fields) == [p.name for p in params]
    expected = {"choice": QComboBox, "bool": QCheckBox, "int": QSpinBox}
    for p in params:
        widget = form.fields[p.name]
        if p.kind == "float":
            assert isinstance(widget, LogSliderSpin if p.log_scale else SignificantSpinBox)
        else:
            assert isinstance(widget, expected[p.kind])
        assert widget.toolTip() == p.help


def test_forms_follow_the_registry(window):
    s, panel = window.session, window.analysis_panel
    for i in range(panel.mechanism_combo.count()):
        name = panel.mechanism_combo.itemData(i)
        s.set_mechanism(name)
        info = REGISTRY.get(name)
        _check_form(panel, info)
        assert panel.mechanism_text.text() == info.description
        assert panel.delta.isEnabled() == info.needs_delta
    s.set_mechanism("gaussian")
    panel.param_form.fields["calibration"].setCurrentText("classical")
    assert s.params["calibration"] == "classical"
    s.set_query("median")
    assert s.mechanism == "exponential"
    _check_form(panel, REGISTRY.get("exponential"))
    s.set_query("histogram")
    assert list(panel.query_form.fields) == ["bins"]
    s.set_trust_model("local")
    _check_form(panel, s.info)
    s.set_column("faculty")
    names = [panel.mechanism_combo.itemData(i) for i in range(panel.mechanism_combo.count())]
    assert "rr" not in names and "krr" in names  # six categories: not binary RR
    settle(window)


def _slow_points(settings, values, state=None):
    for i in range(400):
        check(state)
        time.sleep(0.01)
        state.progress((i + 1) / 400)
    return compute.utility(settings, values, analytic=False, compare=False, reps=5,
                           mc_epsilons=compute.MC_EPSILONS[:3])


def test_cancel_a_long_monte_carlo(window, qtbot, monkeypatch):
    monkeypatch.setattr(session_module, "_points_job", _slow_points)
    view = window.analysis_view
    arrived = []
    window.analysis.points_ready.connect(arrived.append)
    window.session.set_query("sum")
    qtbot.waitUntil(lambda: "montecarlo" in window.analysis.busy(), timeout=5000)
    qtbot.waitUntil(lambda: view.progress_bar.value() > 0, timeout=5000)
    assert view.progress_strip.isVisibleTo(view) and view.cancel_button.isVisibleTo(view)
    assert "Monte-Carlo" in window.compute_label.text()
    view.cancel_button.click()
    assert "cancelled" in view.progress_text.text()
    assert not view.cancel_button.isVisibleTo(view)
    assert view.recompute_button.isVisibleTo(view)
    settle(window)
    qtbot.wait(300)
    assert arrived == [] and window.utility_plot.points() == {}
    assert "Central: Laplace" in window.utility_plot.curves()  # analytic lines stay
    monkeypatch.undo()
    view.recompute_button.click()
    settle(window)
    assert len(arrived) == 1 and window.utility_plot.points()


def test_hide_true_values_draws_nothing_true(window):
    panel = window.result_panel
    window.analysis_panel.hide_true.setChecked(True)
    assert panel.plotted()["truth"] is None
    assert "true value" not in panel.summary.text()
    window.session.set_column("faculty")
    settle(window)
    assert panel.plotted()["truth"] is None and len(panel.plotted()["labels"]) == 6
    bars = [i for i in panel.plot.getPlotItem().items if type(i).__name__ == "BarGraphItem"]
    assert len(bars) == 1  # only the noisy bars
    window.analysis_panel.hide_true.setChecked(False)
    assert panel.plotted()["truth"] is not None
    bars = [i for i in panel.plot.getPlotItem().items if type(i).__name__ == "BarGraphItem"]
    assert len(bars) == 2


def test_declared_bounds_drive_the_release(window):
    s = window.session
    s.set_column("income")
    settle(window)
    spec = s.spec
    s.set_column_spec(replace(spec, lower=0.0, upper=1000.0))
    settle(window)
    assert s.settings().bounds == (0.0, 1000.0)
    shown = window.result_panel.plotted()
    assert shown["ci_high"][0] <= 1000.0
    assert window.analysis_panel.domain_label.text().startswith("0 to 1000")


def test_undeclared_column_says_what_to_do(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("DPSTUDIO_CONFIG_DIR", str(tmp_path))
    path = tmp_path / "plain.csv"
    path.write_text("x,y\n1,a\n2,b\n3,a\n", encoding="utf-8")
    win = MainWindow(open_dataset(path))
    qtbot.addWidget(win)
    assert win.analysis.wait_idle(TIMEOUT)
    problem = win.session.problem()
    assert problem and "declare" in problem
    assert win.analysis_panel.problem_label.isVisibleTo(win.analysis_panel)
    assert win.utility_plot.curves() == {} and win.tradeoff_plot.curves() == {}
    assert "declare" in win.utility_plot.hint.textItem.toPlainText()
    win.analysis.shutdown()


def test_budget_and_questionnaire_hook(window):
    window.session.set_budget(0.5, 1e-7)
    assert (window.session.epsilon, window.session.delta) == (0.5, 1e-7)
    figures = window.analysis_panel.budget_panel.figures()
    assert figures["this_epsilon"] == 0.5 and figures["remaining_epsilon"] == 2.5
    assert window.analysis_panel.epsilon.value() == 0.5
    settle(window)
    assert window.tradeoff_plot.result.epsilon == 0.5


def test_shortcuts_switch_tabs_and_focus_epsilon(window, qtbot):
    window.show()
    qtbot.waitExposed(window)
    window.data_tab_action.trigger()
    assert window.tabs.currentWidget() is window.table_view
    window.analysis_tab_action.trigger()
    assert window.tabs.currentWidget() is window.analysis_view
    assert window.analysis_tab_action.shortcut().toString() == "Ctrl+1"
    assert window.data_tab_action.shortcut().toString() == "Ctrl+2"
    assert window.focus_epsilon_action.shortcut().toString() == "Ctrl+E"
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    window.focus_epsilon_action.trigger()
    qtbot.waitUntil(window.analysis_panel.epsilon.spin.hasFocus, timeout=3000)
    window.show_view("tradeoff")
    assert not window.analysis_view.utility_box.isVisibleTo(window.analysis_view)
    window.show_view("analysis")
    assert window.analysis_view.utility_box.isVisibleTo(window.analysis_view)
    window.hide()


def test_tooltips_explain_the_terms(window):
    panel = window.analysis_panel
    assert "privacy" in panel.epsilon.slider.toolTip().lower()
    assert "fail" in panel.delta.toolTip()
    assert "add-remove" in panel.relation_combo.toolTip()
    assert "Type I" in window.tradeoff_plot.toolTip()
    assert "false alarm" in window.tradeoff_plot.getAxis("bottom").toolTip()
    assert "missed detection" in window.tradeoff_plot.getAxis("left").toolTip()
    for name, button in panel.trust_buttons.items():
        assert button.toolTip(), name
    assert "sensitivity" in panel.domain_label.toolTip().lower()
