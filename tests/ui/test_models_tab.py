"""The Models tab, driven as a person would: tick the ways of training to compare, watch the
privacy–utility overlay with its bands, the training curves, cancel a run, come back.

The plotted values are checked against ``dpstudio train --simulate 1 --runs R --json``
(another path to the same seeded training runs), not against the view's own numbers.
"""

from __future__ import annotations

import contextlib
import io
import json
import time

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem
from ui_helpers import pick, type_into

from dpstudio.ui.model_jobs import ModelRequest
from dpstudio.ui.model_panel import DEFAULT_VARIANTS
from dpstudio.ui.model_view import VIEWS

TIMEOUT_MS = 30_000
#: A short grid keeps the tests fast (the tab's own has 4 points).
GRID = (0.3, 1.0)
#: Remembered choices for the sample: two central methods, two features, R = 2.
LIGHT = {"label": "works_part_time", "features": ["age", "gpa"], "model": "logistic",
         "variants": ["output", "objective"], "sites_by": None, "sites": 5, "rounds": 3,
         "local_steps": 2, "runs": 2,
         "params": {"epsilon": 1.0, "delta": 0.0, "lambda": 0.01}}


def _write_memory(config_dir, choices) -> None:
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "settings.json").write_text(json.dumps(
        {"schema_version": 2, "last_choices": {"models": {"survey.csv": choices}}}))


def _open(qtbot, window):
    window.resize(1400, 900)
    window.model_view.grid = GRID
    window.show()
    qtbot.waitExposed(window)
    # View ▸ Models (Ctrl+4), as the other tabs' tests switch.
    assert window.models_tab_action.shortcut().toString() == "Ctrl+4"
    window.models_tab_action.trigger()
    assert window.tabs.currentWidget() is window.model_view
    return window.model_view


def _close(window):
    window.model_view.shutdown()
    window.analysis.shutdown()
    window.projects.shutdown()


@pytest.fixture
def fresh(qtbot, window):
    """The tab with nothing remembered (first run)."""
    yield _open(qtbot, window)
    _close(window)


@pytest.fixture
def models(qtbot, config_dir):
    """The tab on the survey sample with :data:`LIGHT` remembered."""
    from dpstudio.data import sample_path
    from dpstudio.data.dataset import open_dataset
    from dpstudio.ui.main_window import MainWindow

    _write_memory(config_dir, LIGHT)
    win = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(win)
    yield _open(qtbot, win)
    _close(win)


def _click_check(qtbot, lst, item) -> None:
    """Click the check box of ``item`` in the list ``lst``."""
    lst.scrollToItem(item)
    rect = lst.visualItemRect(item)
    opt = QStyleOptionViewItem()
    opt.rect = rect
    opt.features |= QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
    box = lst.style().subElementRect(QStyle.SubElement.SE_ItemViewItemCheckIndicator, opt, lst)
    before = item.checkState()
    qtbot.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=box.center())
    assert item.checkState() != before, f"the click did not toggle {item.text()}"


def _toggle_variant(qtbot, view, key: str) -> None:
    _click_check(qtbot, view.form.variants, view.form.variant_item(key))


def _finished(qtbot, view, **fields) -> None:
    def done():
        r = view.result
        return (r is not None and not view.jobs.busy
                and not view._later._timer.isActive()
                and all(getattr(r.request, k) == v for k, v in fields.items()))
    try:
        qtbot.waitUntil(done, timeout=TIMEOUT_MS)
    except Exception:
        raise AssertionError(f"no result: {view.form.problem.text()!r}, "
                             f"{view.status.text()!r}, busy={view.jobs.busy}, "
                             f"{view.progress.format()!r}") from None


def _cli(*argv: str) -> dict:
    from dpstudio.commands import train

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert train.run(["sample:survey", *argv, "--simulate", "1", "--json"]) == 0
    return json.loads(out.getvalue())


def test_first_run_ticks_numeric_and_yes_no_features_and_says_what_auto_delta_is(fresh):
    form = fresh.form
    assert form.label_box.currentData() == "works_part_time"
    # Numbers with declared bounds and yes/no columns; not the label, categories or text.
    assert set(form._ticked()) == {"age", "hours_studied_per_week", "income", "gpa",
                                   "cheated_on_exam"}
    assert form.ticked_variants() == DEFAULT_VARIANTS
    assert form.runs.value() == 3
    delta = form.params.fields["delta"]
    assert delta.text() == "auto"
    tip = delta.toolTip()
    assert "auto" in tip and "pure ε-DP" in tip and "1e-06" in tip and tip.count(". ") == 0
    for w in (form.label_box, form.features, form.model_box, form.variants, form.sites_by,
              form.sites, form.rounds, form.local_steps, form.runs,
              *form.params.fields.values()):
        assert w.toolTip(), f"{w} has no tooltip"
    # The hook for a Release… action: one run of the first ticked way, δ resolved.
    req = fresh.current_request()
    assert isinstance(req, ModelRequest) and req.method == "output" and req.runs == 1
    assert req.delta == 0.0
    sgd = fresh.current_request("dpsgd")
    assert sgd.method == "dpsgd" and sgd.delta == 1e-6
    # The plot gets most of the tab's width at 1400×900; the form scrolls.
    sizes = fresh.splitter.sizes()
    assert sizes[1] > 1.4 * sizes[0], sizes


def test_overlay_curves_bands_and_the_headless_numbers(qtbot, models):
    view = models
    _finished(qtbot, view, variants=("output", "objective"))
    r = view.result
    # A classifier opens on AUC (accuracy hides differences at an unbalanced label).
    assert view.metric_box.currentData() == "auc"
    pick(qtbot, view.metric_box, "acc")
    assert view.metric_box.currentData() == "accuracy"
    assert set(view.drawn.curves) == {"output", "objective"}
    eps = 10 ** np.asarray(view.drawn.curves["output"].xData)
    np.testing.assert_allclose(eps, GRID)
    cli = _cli("--label", "works_part_time", "--features", "age,gpa", "--method", "output",
               "--epsilon", "1", "--runs", "2")
    mean = view.drawn.curves["output"].yData
    assert mean[GRID.index(1.0)] == pytest.approx(cli["spread"]["accuracy"]["mean"])
    lo, hi = (c.yData[GRID.index(1.0)] for c in view.drawn.bands["output"])
    assert (lo, hi) == pytest.approx((cli["spread"]["accuracy"]["min"],
                                      cli["spread"]["accuracy"]["max"]))
    assert view.drawn.baseline.value() == pytest.approx(cli["baseline"]["accuracy"])
    assert "min to max" in view.caption.text() and "R = 2" in view.caption.text()
    # AUC is one choice away, from the same runs (accuracy sits at the majority class on
    # two features; AUC moves with every run).
    pick(qtbot, view.metric_box, "AUC")
    assert view.metric_box.currentData() == "auc"
    assert view.drawn.curves["output"].yData[GRID.index(1.0)] == pytest.approx(
        cli["spread"]["auc"]["mean"])
    lo, hi = (c.yData[GRID.index(1.0)] for c in view.drawn.bands["output"])
    assert (lo, hi) == pytest.approx((cli["spread"]["auc"]["min"],
                                      cli["spread"]["auc"]["max"]))
    # The band: the runs' min to max, containing the mean, wider than 0 with R = 2.
    for key in ("output", "objective"):
        lo, hi = (np.asarray(c.yData) for c in view.drawn.bands[key])
        y = np.asarray(view.drawn.curves[key].yData)
        assert np.all(lo <= y + 1e-12) and np.all(y <= hi + 1e-12)
        assert np.all(hi - lo > 0), key
    # Coefficients at the form's ε: one way's model, with its noise bars and its confusion
    # matrix; the "Model" combo picks the way.
    pick(qtbot, view.view_box, "Coef")
    assert view.stack.currentWidget() is view.detail and view.way_box.isVisible()
    assert view.way_box.currentData() == "output"
    bars = view.detail.coefficient_bars()
    assert list(bars) == ["age", "gpa", "(intercept)"]
    cli1 = _cli("--label", "works_part_time", "--features", "age,gpa", "--method", "output",
                "--epsilon", "1", "--runs", "2")
    assert bars["age"][0] == pytest.approx(cli1["coefficients"][0]["coefficient"], rel=1e-3)
    assert bars["age"][1] == pytest.approx(cli1["coefficients"][0]["noise_sd"], rel=1e-6)
    assert sum(view.detail.confusion_counts().values()) > 0
    pick(qtbot, view.way_box, "objective")
    assert view.detail.fields is r.at_epsilon["objective"]
    assert view.detail.coefficient_bars()["age"][1] is None  # no per-coefficient noise
    assert "objective perturbation at ε = 1" in view.caption.text()
    assert r.request.runs == 2


def test_every_view_fits_at_1400_by_900_with_both_docks_open(qtbot, models):
    """At the default size, with the Columns and Analysis docks beside the tab, no view of
    the plot side needs sideways scrolling: a long confusion-matrix title and a row of four
    combos used to hold it at 460-550 px, cutting the plot off."""
    view = models
    _finished(qtbot, view, variants=("output", "objective"))
    win = view.window()
    for dock in (win.columns_dock, win.analysis_dock):
        assert dock.isVisible() and not dock.isFloating()
    side = view.splitter.widget(1)
    for name in VIEWS:
        pick(qtbot, view.view_box, name[:5])
        assert view.view_box.currentText() == name
        qtbot.wait(100)  # the layout settles
        page = view.stack.currentWidget()
        assert page.width() > 0 and page.isVisible()
        assert not side.horizontalScrollBar().isVisible(), (name, side.widget().width(),
                                                          side.viewport().width())
    # The coefficients view of a classifier has its confusion matrix and its title.
    pick(qtbot, view.view_box, "Coeff")
    assert view.detail.confusion_title.text().startswith("Held-out confusion matrix")


def test_federated_training_curves_and_each_site_alone(qtbot, models):
    view = models
    _finished(qtbot, view, variants=("output", "objective"))
    _toggle_variant(qtbot, view, "objective")
    _toggle_variant(qtbot, view, "fed-secagg")
    type_into(qtbot, view.form.runs, "1")
    view.grid = (1.0,)
    _finished(qtbot, view, variants=("output", "fed-secagg"), runs=1, grid=(1.0,))
    cli = _cli("--label", "works_part_time", "--features", "age,gpa", "--method", "dpsgd",
               "--epsilon", "1", "--delta", "1e-6", "--lambda", "0.01", "--sites", "5",
               "--fed-variant", "secagg", "--rounds", "3", "--local-steps", "2",
               "--sites-alone")
    assert view.drawn.curves["fed-secagg"].yData[0] == pytest.approx(cli["auc"])
    alone = [s["auc"] for s in cli["sites_alone"] if "auc" in s]
    assert view.drawn.alone.yData[0] == pytest.approx(np.mean(alone))
    assert "each site alone" in view.caption.text()
    pick(qtbot, view.view_box, "Train")
    assert view.stack.currentWidget() is view.rounds_plot
    # Every metric after each round: AUC (the "Show" choice) and accuracy.
    assert view.metric_box.isEnabled() and view.metric_box.currentData() == "auc"
    curve = view.drawn_rounds.curves["fed-secagg"]
    assert list(curve.xData) == [1.0, 2.0, 3.0]
    np.testing.assert_allclose(curve.yData, cli["rounds_by_metric"]["auc"])
    assert "AUC on held-out rows after each FedAvg round at ε = 1" in view.caption.text()
    pick(qtbot, view.metric_box, "acc")
    np.testing.assert_allclose(view.drawn_rounds.curves["fed-secagg"].yData, cli["rounds"])
    assert cli["rounds_by_metric"]["accuracy"] == cli["rounds"]
    assert "output" not in view.drawn_rounds.curves  # central methods have no rounds
    assert "after each FedAvg round at ε = 1" in view.caption.text()


def test_cancel_stops_a_long_run_and_keeps_the_plot(qtbot, models):
    view = models
    _finished(qtbot, view, variants=("output", "objective"))
    shown = np.array(view.drawn.curves["output"].yData)
    view.grid = (0.1, 0.3, 1.0, 3.0)
    _toggle_variant(qtbot, view, "dpsgd")
    type_into(qtbot, view.form.runs, "20")  # 4 ε × 20 DP-SGD trainings: many seconds
    qtbot.waitUntil(lambda: view.jobs.busy and view.cancel_button.isEnabled(),
                    timeout=TIMEOUT_MS)
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert not view.jobs.busy and not view.cancel_button.isEnabled()
    assert view.progress.format() == "cancelled"
    start = time.monotonic()
    view.jobs.runner.wait(view.jobs.KEY, timeout=30)
    assert time.monotonic() - start < 3.0  # the worker stopped at its next check
    qtbot.wait(100)
    assert view.result.request.variants == ("output", "objective")
    np.testing.assert_array_equal(view.drawn.curves["output"].yData, shown)


def test_choices_survive_a_new_view_and_a_restart(qtbot, models, config_dir):
    from dpstudio.ui.model_view import ModelView
    from dpstudio.ui.settings import AppSettings

    view = models
    _finished(qtbot, view, variants=("output", "objective"))
    _toggle_variant(qtbot, view, "objective")
    _toggle_variant(qtbot, view, "fed-local")
    type_into(qtbot, view.form.rounds, "4")
    _click_check(qtbot, view.form.features, view.form.item("income"))
    eps = view.form.params.fields["epsilon"]
    type_into(qtbot, eps.spin if hasattr(eps, "spin") else eps, "2")
    wanted = view.form.choices()
    assert wanted["variants"] == ["output", "fed-local"] and wanted["rounds"] == 4
    assert wanted["params"]["epsilon"] == 2.0
    assert set(wanted["features"]) == {"age", "gpa", "income"}
    again = ModelView(view.session, settings=view.settings)
    qtbot.addWidget(again)
    assert again.form.choices() == wanted
    assert again.form.request() == view.form.request()
    again.shutdown()
    # Across a restart: the settings file, as the window saves it on closing.
    assert view.settings.save()
    later = ModelView(view.session, settings=AppSettings.load(config_dir / "settings.json"))
    qtbot.addWidget(later)
    assert later.form.choices() == wanted
    later.shutdown()


def test_a_method_the_model_cannot_take_is_greyed_with_its_sentence(qtbot, models):
    view = models
    pick(qtbot, view.form.model_box, "mlp")
    assert view.form.model_box.currentData() == "mlp"
    item = view.form.variant_item("output")
    assert not item.flags() & Qt.ItemFlag.ItemIsEnabled
    assert "logistic regression only" in item.toolTip()
    assert view.form.request() == "tick at least one way of training to compare"
    _toggle_variant(qtbot, view, "dpsgd")
    assert view.form.ticked_variants() == ("dpsgd",)


def test_a_slider_drag_is_one_run_that_trains_only_at_the_new_epsilon(qtbot, models):
    view = models
    _finished(qtbot, view, variants=("output", "objective"))
    before = {k: np.array(c.yData) for k, c in view.drawn.curves.items()}
    cached = len(view.jobs.cache)
    submitted = []
    real = view.jobs.submit
    view.jobs.submit = lambda req, *a: (submitted.append(req.epsilon), real(req, *a))
    slider = view.form.params.fields["epsilon"].slider
    slider.setFocus()
    for _ in range(6):  # a drag: six steps to the right within the coalescing delay
        qtbot.keyClick(slider, Qt.Key.Key_Right)
    _finished(qtbot, view, epsilon=view.form.params.values()["epsilon"])
    assert len(submitted) == 1 and submitted[0] > 1.0
    # Each way of training once more, at the new ε; the grid's points came from the cache.
    assert len(view.jobs.cache) == cached + 2
    for k, y in before.items():
        np.testing.assert_array_equal(view.drawn.curves[k].yData, y)
        mark = view.drawn.marks[k]
        assert 10 ** mark.xData[0] == pytest.approx(submitted[0])


def test_a_release_line_does_not_outlive_its_dataset(qtbot, models):
    """The line a release leaves under the plot stays through later comparisons, and goes
    when another dataset is opened: it is not that dataset's release."""
    from dpstudio.data import sample_path
    from dpstudio.data.dataset import open_dataset

    view = models
    _finished(qtbot, view, variants=("output", "objective"))
    view.release_status("Released as #1: ε = 1, δ = 0 charged; files in out.")
    assert view.status.text().splitlines()[-1].startswith("Released as #1")
    view.window().set_dataset(open_dataset(sample_path("health")))
    assert "Released as" not in view.status.text()
