"""Issue 12, the plots' side: the readout tells the analyst the whole error (bias + noise,
the simulation where the line disagrees, an amber warning) and nothing of the data with
true values hidden; one caption of assumptions under the privacy–utility plot; the
trade-off plot's plain caption, three legend entries and a "Details" toggle; the error axis
in the column's units; short legend names with full ones in tooltips; tick labels that
differ; bars from zero; the chosen model's dot on top; a readout that covers no data.

Each test drives the main window as a person does (clicks, typing) and asserts on what is
shown."""

from __future__ import annotations

import math
import re

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtWidgets import QCheckBox
from ui_helpers import close_window, open_window, pick, type_into, write_declared_csv

from dpstudio.data import sample_path
from dpstudio.ui import analysis_jobs
from dpstudio.ui.style import current_palette

ROWS = 2000


@pytest.fixture
def ages_csv(tmp_path):
    """Ages 18–90 declared as 18–30: five in six values clamped, the mean biased by ≈25."""
    rng = np.random.default_rng(7)
    ages = rng.integers(18, 91, ROWS)
    return write_declared_csv(
        tmp_path / "ages.csv", ["age", "group"],
        [(int(a), "abc"[i % 3]) for i, a in enumerate(ages)],
        [{"name": "age", "type": "numeric", "lower": 18, "upper": 30},
         {"name": "group", "type": "categorical", "categories": ["a", "b", "c"]}])


@pytest.fixture
def clamped(qtbot, ages_csv, monkeypatch):
    win = open_window(qtbot, ages_csv, monkeypatch)
    yield win
    close_window(win)


@pytest.fixture
def survey(qtbot, monkeypatch):
    win = open_window(qtbot, sample_path("survey"), monkeypatch)
    yield win
    close_window(win)


def settle(win) -> None:
    assert win.analysis.wait_idle(60)


def click(qtbot, widget) -> None:
    if isinstance(widget, QCheckBox):  # on its box: a wide check box's middle is empty
        qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=QPoint(8, widget.height() // 2))
    else:
        qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def primary_line(win) -> str:
    """The readout's line for the chosen mechanism ("ε = 1 · Central: …")."""
    return win.utility_plot.marker_text().splitlines()[0]


def number_after(text: str, prefix: str) -> float:
    match = re.search(re.escape(prefix) + r"\s*([0-9.e+-]+)", text)
    assert match, (prefix, text)
    return float(match.group(1))


def at_epsilon(eps: np.ndarray, values: np.ndarray, at: float) -> float:
    return float(10 ** np.interp(math.log10(at), np.log10(eps), np.log10(values)))


# -- item 1: the whole error, for the analyst only ------------------------------------------


def test_readout_is_bias_plus_noise_with_an_amber_warning(clamped, qtbot):
    win, plot = clamped, clamped.utility_plot
    x = np.asarray(win.session.values, dtype=float)
    bias = abs(float(np.mean(np.clip(x, 18, 30)) - np.mean(x)))  # ≈ 25.5 years
    eps, err, _low, _high = plot.points()["Central: simulated releases"]
    simulated = at_epsilon(eps, err, 1.0)
    assert simulated == pytest.approx(bias, rel=0.05)  # the releases really miss by ~25
    line = primary_line(win)
    # The number is the whole error (not the noise, 0.06), split into its parts.
    assert number_after(line, "Central:") == pytest.approx(simulated, rel=0.1)
    text = plot.marker_text()
    assert number_after(text, "bias") == pytest.approx(bias, rel=0.02)
    assert number_after(text, "noise") < 0.1
    # The amber warning sits next to the number, in the analysis layer's words.
    warning = plot.clamping_warning()
    assert re.match(r"\d+% of values are outside 18–30: the mean is biased; widen the bounds",
                    warning), warning
    assert "⚠" in line and warning in text
    html = plot.marker_label.textItem.toHtml().lower()
    assert current_palette().warning.lower() in html  # amber
    # The preview's interval says what it covers.
    summary = win.result_panel.summary.text()
    assert "95% interval of the clamped mean" in summary


def test_hide_true_values_shows_the_noise_alone(clamped, qtbot):
    win, plot, panel = clamped, clamped.utility_plot, clamped.analysis_panel
    noise_before = number_after(plot.marker_text(), "noise")
    click(qtbot, panel.hide_true)
    assert panel.hide_true.isChecked() and win.session.hide_true
    text = plot.marker_text()
    # Nothing that needs the data: no bias, no simulation, no warning, no drawn points.
    assert "bias" not in text and "simulated" not in text and "⚠" not in text
    assert number_after(primary_line(win), "Central:") == pytest.approx(noise_before,
                                                                        rel=0.02)
    assert plot.clamping_warning() == ""
    assert not any(item.isVisible() for item in plot._point_items)
    assert all("analyst only" not in note for note in plot.notes())
    # The drawn line is the noise too.
    drawn = next(i for i in plot.listDataItems() if i.name() == "Central: Laplace")
    xs, ys = drawn.getData()
    at_one = 10 ** float(np.interp(0.0, xs, ys)) if plot.log_y else float(np.interp(0.0, xs, ys))
    assert at_one == pytest.approx(noise_before, rel=0.02)
    assert "clamped" not in win.result_panel.summary.text()
    click(qtbot, panel.hide_true)  # and back
    assert "bias" in plot.marker_text() and plot.clamping_warning()


def test_readout_follows_the_simulation_where_the_line_disagrees(qtbot, ages_csv,
                                                                  monkeypatch):
    """A line that leaves the bias out (a mechanism without a bias model): the readout
    takes the simulated releases' error, and says so."""
    real = analysis_jobs._lines_job

    def noise_only(s, values, state=None):
        result = real(s, values, state)
        for c in result.curves:
            bias = getattr(c, "bias", None)
            if bias:  # the noise alone, as an error model without the bias would say
                c.error = np.sqrt(np.maximum(c.error**2 - bias**2, 0.0))
                c.bias = None
        result.clamping = None
        return result

    monkeypatch.setattr(analysis_jobs, "_lines_job", noise_only)
    win = open_window(qtbot, ages_csv, monkeypatch)
    try:
        plot = win.utility_plot
        eps, err, _low, _high = plot.points()["Central: simulated releases"]
        line_eps, line_err = plot.curves()["Central: Laplace"]
        assert at_epsilon(line_eps, line_err, 1.0) < 0.1  # the line: noise only
        first = primary_line(win)
        assert "simulated" in first
        assert number_after(first, "Central:") == pytest.approx(at_epsilon(eps, err, 1.0),
                                                                rel=0.005)  # 3 digits
        assert "the line says" in plot.marker_text()
    finally:
        close_window(win)


# -- item 2: one caption of assumptions, each curve's in its legend entry -------------------


def test_caption_and_assumptions_under_the_privacy_utility_plot(survey, qtbot):
    win, plot = survey, survey.utility_plot
    captions = []
    win.analysis.lines_ready.connect(lambda r: captions.append(r))
    pick(qtbot, win.analysis_panel.relation_combo, "rep")  # a new result arrives
    settle(win)
    assert captions, "no utility result arrived"
    result = captions[-1]
    assert result.caption  # the analysis layer's caption of the comparison
    assert plot.caption.isVisible()
    assert result.caption.split(".")[0] in plot.caption_text()
    # Under the plot, below the legend, inside the widget.
    legend_bottom = plot.mapFromScene(plot.legend.sceneBoundingRect()).boundingRect().bottom()
    geometry = plot.caption.geometry()
    assert geometry.top() >= legend_bottom - 1 and geometry.bottom() <= plot.height()
    # Each line's assumptions in its legend entry's tooltip.
    shown = {label.text: label.toolTip() for _sample, label in plot.legend.items}
    for curve in result.curves:
        if curve.kind == "analytic" and curve.assumptions:
            tips = [tip for tip in shown.values() if curve.name in tip]
            assert tips and curve.assumptions in tips[0], (curve.name, shown)


# -- item 12: the trade-off plot for a stakeholder; the error in the column's units ----------


def test_tradeoff_caption_three_entries_and_details(survey, qtbot):
    plot = survey.tradeoff_plot
    assert plot.caption.isVisible()
    assert "whether Alice is in the data" in plot.caption_text()
    texts = plot.legend_texts()
    assert len(texts) == 3
    assert texts[0].startswith("this release") and texts[1] == "random guessing"
    assert texts[2] == "after 10 releases"
    assert not plot._gdp.isVisible() and not plot._fill.isVisible()
    assert not plot._dots.isVisible()
    click(qtbot, plot.details)
    assert plot.details.isChecked()
    texts = plot.legend_texts()
    assert len(texts) == 6
    assert any(t.startswith("ruled out by ε = 1") for t in texts)
    assert any(t.startswith("Gaussian DP") for t in texts)
    assert any(t.startswith("simulated attack") for t in texts)
    assert plot._gdp.isVisible() and plot._fill.isVisible() and plot._dots.isVisible()
    assert plot.caption.isVisible()  # still there
    click(qtbot, plot.details)
    assert len(plot.legend_texts()) == 3
    # Moving ε keeps the three (the legend follows, the caption stays).
    type_into(qtbot, survey.analysis_panel.epsilon.spin.lineEdit(), "2")
    settle(survey)
    assert len(plot.legend_texts()) == 3 and plot.caption.isVisible()


def test_error_axis_is_in_the_columns_units(survey, qtbot):
    win, plot = survey, survey.utility_plot
    axis = plot.getPlotItem().getAxis("left")
    assert axis.labelText == "± age"
    pick(qtbot, win.analysis_panel.query_combo, "Count")
    settle(win)
    assert win.session.query == "count"
    assert axis.labelText == "± people"
    pick(qtbot, win.analysis_panel.metric_combo, "rel")
    settle(win)
    assert win.session.metric == "relative"
    assert axis.labelText == "relative error"


# -- item 15: legends, ticks, bars, z-order, readout placement --------------------------------


def test_legend_names_are_short_and_whole_with_full_names_in_tooltips(qtbot, monkeypatch):
    monkeypatch.setattr(analysis_jobs.Analysis, "planned_comparisons", True)
    from dpstudio.data import open_dataset
    from dpstudio.ui.main_window import MainWindow

    win = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    try:
        settle(win)
        plot = win.utility_plot
        entries = {label.text: (sample, label) for sample, label in plot.legend.items}
        assert "Shuffle: Invisibility cloak (bound)" in entries
        assert "Distributed: SecAgg + discrete Gaussian (bound)" in entries
        _sample, label = entries["Shuffle: Invisibility cloak (bound)"]
        assert "Invisibility cloak (multi-message)" in label.toolTip()
        view = QRectF(plot.viewport().rect())
        for text, (_sample, label) in entries.items():
            assert not text.endswith("…"), text
            shown = label.item.mapRectToScene(label.item.boundingRect())
            assert view.contains(shown), (text, shown, view)  # not cut by the widget
    finally:
        close_window(win)


def tick_strings(axis) -> list[str]:
    levels = axis._tickLevels or []
    return [text for _value, text in (levels[0] if levels else [])]


def test_ticks_differ_at_a_large_epsilon(survey, qtbot):
    win = survey
    type_into(qtbot, win.analysis_panel.epsilon.spin.lineEdit(), "100")
    settle(win)
    assert win.session.epsilon == pytest.approx(100)
    preview = win.result_panel.preview
    assert preview is not None and float(preview.ci_high[0] - preview.ci_low[0]) < 0.02
    ticks = tick_strings(win.result_panel.plot.getPlotItem().getAxis("bottom"))
    assert len(ticks) >= 3
    assert len(set(ticks)) == len(ticks), ticks  # not "21.37 21.37 21.37"


def test_histogram_bars_start_at_zero(survey, qtbot):
    win = survey
    pick(qtbot, win.analysis_panel.column_combo, "fac")
    settle(win)
    assert win.session.column == "faculty"
    type_into(qtbot, win.analysis_panel.epsilon.spin.lineEdit(), "0.01")
    settle(win)
    preview = win.result_panel.preview
    assert preview.labels and np.min(preview.ci_low) < 0 < np.min(preview.value)
    plot = win.result_panel.plot
    bars = [i for i in plot.getPlotItem().items if isinstance(i, pg.BarGraphItem)]
    assert len(bars) == 2
    for bar in bars:
        _x0, y0, _x1, _y1 = bar._getNormalizedCoords()
        assert np.all(y0 == 0.0)
    assert plot.getPlotItem().vb.viewRange()[1][0] == 0.0  # the axis starts at zero


def test_the_chosen_models_dot_is_drawn_above_the_others(survey, qtbot):
    win, plot = survey, survey.utility_plot
    click(qtbot, win.analysis_panel.trust_buttons["local"])
    settle(win)
    assert win.session.trust_model == "local"
    xs, ys = plot.active_dot.getData()
    assert len(xs) == 1
    local = number_after(primary_line(win), "Local:")
    assert 10 ** ys[0] == pytest.approx(local, rel=0.005)  # the readout's 3 digits
    others_x, _ = plot.marker_dots.getData()
    assert len(others_x) >= 1
    assert plot.active_dot.zValue() > plot.marker_dots.zValue()
    z_lines = [i.zValue() for i in plot._items]
    assert plot.active_dot.zValue() > max(z_lines)


def _covered(plot) -> list[str]:
    """Data the readout box covers, found independently of the plot's placement code:
    every drawn point's symbol, and every line sampled every pixel or so."""
    label = plot.marker_label
    rect = label.mapRectToScene(label.boundingRect())
    vb = plot.getPlotItem().vb
    hits = []
    for item in plot.listDataItems():
        if not isinstance(item, pg.PlotDataItem) or not item.isVisible():
            continue
        xs, ys = item.getData()
        if xs is None or not len(xs):
            continue
        ok = np.isfinite(xs) & np.isfinite(ys)
        xs, ys = xs[ok], ys[ok]
        if item.opts.get("symbol") is not None:
            half = item.opts.get("symbolSize", 8) / 2
            for x, y in zip(xs, ys, strict=True):
                p = vb.mapViewToScene(QPointF(x, y))
                if rect.intersects(QRectF(p.x() - half, p.y() - half, 2 * half, 2 * half)):
                    hits.append(f"{item.name()} point at {x:.2f}")
        if item.opts.get("pen") is not None and len(xs) > 1:
            fine = np.linspace(xs.min(), xs.max(), 2000)
            for x, y in zip(fine, np.interp(fine, xs, ys), strict=True):
                if rect.contains(vb.mapViewToScene(QPointF(x, y))):
                    hits.append(f"{item.name()} line at {x:.2f}")
                    break
    return hits


@pytest.mark.parametrize("epsilon", ["1", "0.05", "30"])
def test_readout_covers_no_data(survey, qtbot, epsilon):
    win, plot = survey, survey.utility_plot
    type_into(qtbot, win.analysis_panel.epsilon.spin.lineEdit(), epsilon)
    settle(win)
    assert plot.marker_epsilon() == pytest.approx(float(epsilon))
    label = plot.marker_label
    readout = label.mapRectToScene(label.boundingRect())
    assert label.isVisible() and readout.width() > 50
    assert _covered(plot) == []
    assert plot.getPlotItem().vb.sceneBoundingRect().contains(readout)


def test_readout_covers_no_data_where_the_data_fill_the_plot(clamped, qtbot):
    plot = clamped.utility_plot
    for epsilon in ("1", "0.01", "100"):
        type_into(qtbot, clamped.analysis_panel.epsilon.spin.lineEdit(), epsilon)
        settle(clamped)
        assert _covered(plot) == [], epsilon


@pytest.fixture
def undeclared_csv(tmp_path):
    """A group column with 120 of 600 values ("z") outside its declared categories."""
    rows = [("z",) if i % 5 == 4 else ("abc"[i % 3],) for i in range(600)]
    return write_declared_csv(
        tmp_path / "groups.csv", ["group"], rows,
        [{"name": "group", "type": "categorical", "categories": ["a", "b", "c"]}])


def test_undeclared_categories_are_not_called_clamped(qtbot, undeclared_csv, monkeypatch):
    """Item 7: values that are not declared categories are left out of a central
    histogram's counts, or counted in the local model's "other or missing" cell; neither
    is "clamping"."""
    win = open_window(qtbot, undeclared_csv, monkeypatch)
    try:
        settle(win)
        assert win.session.query == "histogram"
        notes = win.result_panel.notes
        assert notes.text() == ("120 values are not among the declared categories: left out "
                                "of the counts (only you see this)")
        click(qtbot, win.analysis_panel.trust_buttons["local"])
        settle(win)
        assert notes.text() == ("120 values are not among the declared categories: counted "
                                "in the \u201c(other or missing)\u201d cell (only you see this)")
        assert "clamped" not in notes.toolTip()
    finally:
        close_window(win)


# -- review: the local preview's error includes the bias (issue 12 item 1) ------------------


def test_local_preview_error_includes_the_clamping_bias(clamped, qtbot):
    """Ages up to 90 declared 18–30, local model at ε = 20: the preview's true value is the
    mean of the ages (≈ 54), not the clamped mean (≈ 29), so its error shows the bias the
    readout states (≈ −25), not just the noise."""
    win, plot = clamped, clamped.utility_plot
    click(qtbot, win.analysis_panel.trust_buttons["local"])
    settle(win)
    type_into(qtbot, win.analysis_panel.epsilon.spin.lineEdit(), "20")
    settle(win)
    assert win.session.trust_model == "local" and win.session.epsilon == pytest.approx(20)
    x = np.asarray(win.session.values, dtype=float)
    summary = win.result_panel.summary.text()
    truth = number_after(summary, "true value")
    assert truth == pytest.approx(float(np.mean(x)), rel=1e-3)
    bias = number_after(plot.marker_text(), "bias")
    error = number_after(summary, "(error")
    assert error == pytest.approx(-abs(bias), rel=0.05)  # the clamped mean sits ≈25 below
    assert abs(error) > 20


def test_the_warning_blames_missing_values_when_they_cause_the_bias(survey, qtbot):
    """Survey gpa under shuffle: no value outside 0–4, but 4.5% missing sent as the middle
    (2) bias the mean by −0.037, 4× the noise at ε = 1: the amber warning names the missing
    values, not the bounds (before: no warning at all)."""
    win, plot = survey, survey.utility_plot
    pick(qtbot, win.analysis_panel.column_combo, "gpa")
    settle(win)
    assert win.session.column == "gpa" and win.session.query == "mean"
    assert plot.clamping_warning() == ""  # central drops the missing values: no bias
    click(qtbot, win.analysis_panel.trust_buttons["shuffle"])
    settle(win)
    assert win.session.trust_model == "shuffle"
    warning = plot.clamping_warning()
    assert warning.startswith("4.5% of values are missing and sent as the middle of the "
                              "bounds (2): they bias the mean by -0.03"), warning
    assert "the price of hiding who is missing" in warning and "widen" not in warning
    assert "⚠" in primary_line(win) and warning in plot.marker_text()


def test_a_large_columns_shuffle_preview_is_drawn_from_the_plan(survey, qtbot,
                                                                monkeypatch):
    """Switching to Shuffle on a column too large to shuffle on every change (here: the
    threshold lowered below the survey's 2,000 × ~110 messages) draws the preview from the
    plan, and the preview's notes say so; the protocol itself never runs."""
    from dpstudio.analysis import dispatch
    from dpstudio.engine import shuffle

    def refuse(*a, **k):
        raise AssertionError("the shuffle protocol ran on every row")

    monkeypatch.setattr(dispatch, "QUICK_MESSAGES", 1_000, raising=False)
    monkeypatch.setattr(shuffle, "run_shuffle_sum", refuse)
    win = survey
    click(qtbot, win.analysis_panel.trust_buttons["shuffle"])
    settle(win)
    assert win.session.trust_model == "shuffle"
    panel = win.result_panel
    assert panel.preview is not None and panel.preview.trust_model == "shuffle"
    assert "preview drawn from the protocol's planned error" in panel.notes.toolTip()
    assert "people's messages shuffled" in panel.notes.toolTip()
    assert "n = 2,000 reports" in panel.summary.text()
