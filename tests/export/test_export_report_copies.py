"""The report says what each figure shows, n, what ε means in odds, and the clamping note;
the analyst's copy shows the error as bias + noise, the stakeholder copy never does
(issue 12, items 1 and 14).

Reports are rendered as a release renders them (``render_report``) and read as a reader
would: the HTML text, and the figures decoded from the page (their drawn caption is the
PNG's ``Description``). Numbers are checked against independent computations: e^ε with
``math.exp``, the bias as mean(clip(x)) − mean(x) with numpy.
"""

from __future__ import annotations

import base64
import html as html_lib
import math
import re
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtGui import QImage

import dpstudio.export.plots as plots
from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.rng import SecureSource
from dpstudio.export import public_result
from dpstudio.export.report import ReportInput, render_report
from dpstudio.export.report_analyst import measure_clamping
from dpstudio.export.report_words import odds_factor

#: The report's figures, in order, as their captions title them.
FIGURE_TITLES = ("What was released, with its interval", "What an attacker can achieve",
                 "Expected error at other privacy levels", "Privacy budget spent on this dataset")

AGES = np.concatenate([np.linspace(18.0, 30.0, 50), np.linspace(31.0, 90.0, 250)])
TIGHT = QuerySpec("mean", "laplace", 0.5, bounds=(18.0, 30.0), column="age")


def _input(spec=TIGHT, values=AGES, earlier=1, epsilon=None):
    pub = public_result(release(values, spec, SecureSource()))
    eps = spec.epsilon if epsilon is None else epsilon
    history = [{"id": i + 1, "time": "2024-01-01T00:00:00Z", "query": "count",
                "column": "age", "mechanism": "laplace", "epsilon": 0.2, "delta": 0.0,
                "status": "done"} for i in range(earlier)]
    history.append({"id": earlier + 1, "time": "2024-01-02T00:00:00Z", "query": spec.query,
                    "column": spec.column, "mechanism": spec.mechanism, "epsilon": eps,
                    "delta": spec.delta, "status": "this release"})
    return ReportInput(release_id=earlier + 1, uid="a" * 32,
                       created_at="2024-01-02T00:00:00Z", dataset_name="affairs.csv",
                       fingerprint="b" * 64, spec=spec, public=pub, epsilon=eps,
                       delta=spec.delta, accountant="basic", budget_epsilon=5.0,
                       budget_delta=1e-5, history=history, engine_version="0.1.0")


def _text(html_bytes: bytes) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, spaces collapsed."""
    text = re.sub(r"<[^>]+>", " ", html_bytes.decode("utf-8"))
    return re.sub(r"\s+", " ", html_lib.unescape(text))


def _figures(html_bytes: bytes) -> list[QImage]:
    return [QImage.fromData(base64.b64decode(src), "PNG") for src in
            re.findall(r'src="data:image/png;base64,([^"]+)"', html_bytes.decode("utf-8"))]


def test_every_figure_has_a_caption_with_dataset_column_statistic_mechanism_epsilon(qapp):
    html_bytes, _pdf = render_report(_input())
    text = _text(html_bytes)
    facts = ("Dataset affairs.csv · column age · mean · Laplace mechanism · ε = 0.5 "
             "(δ = 0) · release #2")
    for i, title in enumerate(FIGURE_TITLES, start=1):
        assert f"Figure {i}. {title}. {facts}." in text, title
    images = _figures(html_bytes)
    assert len(images) == 4
    for image in images:  # the caption is drawn into each figure, and stored with it
        assert image.text("Description") == facts


def test_the_report_states_n_and_the_odds_with_e_to_the_epsilon(qapp):
    for eps in (0.1, 0.5, 1.0, 3.0, 8.0):
        inp = _input(QuerySpec("mean", "laplace", eps, bounds=(18.0, 90.0), column="age"))
        text = _text(render_report(inp)[0])
        m = re.search(r"changes the odds of any conclusion about one person \(for instance, "
                      r"that they are in the data\) by at most ×([0-9.,]+) \(that is e\^ε, "
                      r"with ε = ([0-9.]+)\)", text)
        assert m is not None, text
        shown = float(m.group(1).replace(",", ""))
        assert float(m.group(2)) == eps
        assert shown == pytest.approx(math.exp(eps), rel=0.006)  # 3 significant digits
        together = re.search(r"All 2 releases from this dataset together: at most "
                             r"×([0-9.,]+) \(ε = ([0-9.]+)\)", text)
        assert together is not None
        assert float(together.group(1).replace(",", "")) == pytest.approx(
            math.exp(0.2 + eps), rel=0.006)
        assert ("n, the number of records, is not published: the noise protects whether "
                "any one person is in the data") in text
    assert odds_factor(1.0) == "2.72" and odds_factor(20.0) == "485 million"


def test_a_local_release_states_its_number_of_reports(qapp):
    from dpstudio.analysis import AnalysisSpec, run

    values = np.array(["a", "b", "c", "a"] * 100, dtype=object)
    spec = QuerySpec("histogram", "krr", 1.0, categories=("a", "b", "c"), column="g")
    result = run(AnalysisSpec("local", spec), values, SecureSource())
    inp = replace(_input(), spec=spec, public=result.public(), trust_model="local",
                  epsilon=1.0, delta=0.0)
    text = _text(render_report(inp)[0])
    assert "n = 400 reports, one per person (public with this release)." in text
    assert "about one person's value by at most ×2.72" in text


def test_the_analyst_copy_shows_bias_plus_noise_and_the_public_copy_never(qapp):
    inp = _input()
    public_html, public_pdf = render_report(inp)
    from dpstudio.export.report import analyst_copy

    analyst_html, _ = render_report(analyst_copy(inp, AGES))
    public, analyst = _text(public_html), _text(analyst_html)

    # The clamping note is public: it states the procedure, not the data.
    note = ("Clamping: values outside the declared bounds 18–30 are clamped to the nearest "
            "bound before the noise is added.")
    assert note in public and note in analyst

    # The analyst's copy: n, the share outside, the bias in the column's units, the advice.
    outside = np.count_nonzero((AGES < 18) | (AGES > 30))
    bias = float(np.mean(np.clip(AGES, 18, 30)) - np.mean(AGES))
    share = round(100 * outside / AGES.size)
    assert f"{share}% of values are outside 18–30: the mean is biased; widen the bounds." \
        in analyst
    assert "n = 300 records used" in analyst
    assert f"bias from clamping {bias:+.4g} (units of the column)" in analyst
    noise = math.sqrt(inp.public["variance"])
    assert f"√(bias² + noise²) = {math.hypot(bias, noise):.4g}" in analyst
    assert "The 95% interval above covers the clamped mean" in analyst
    assert "Analyst's copy — for your eyes only" in analyst

    # The stakeholder copy: none of it, in the HTML, the PDF or the figures.
    for secret in ("values are outside", "widen the bounds", "bias", "Analyst's copy",
                   "records used", f"{bias:+.4g}", f"{share}%"):
        assert secret not in public, secret
    assert b"bias" not in public_pdf and b"widen" not in public_pdf
    assert all("bias" not in image.text("Legend") for image in _figures(public_html))
    (utility,) = [im for im in _figures(analyst_html) if "Expected error" in im.text("Title")]
    assert "bias + noise" in utility.text("Legend")


def test_no_bias_section_when_the_bounds_hold_every_value(qapp):
    spec = QuerySpec("mean", "laplace", 0.5, bounds=(0.0, 100.0), column="age")
    inp = _input(spec)
    text = _text(render_report(replace(inp, analyst=measure_clamping(spec, AGES)))[0])
    assert "values are outside" not in text and "widen the bounds" not in text
    assert "bias from clamping +0 (units of the column)" in text


def test_legends_are_whole_and_text_scales_with_the_figure(qapp, monkeypatch):
    from dpstudio.export.plots import LegendEntry, legend_layout

    drawn = []
    finish = plots._Chart.finish

    def spy(self):
        drawn.append(self)
        return finish(self)

    monkeypatch.setattr(plots._Chart, "finish", spy)
    long_label = ("this release (Laplace sum + Laplace count, exact, every noisy statistic "
                  "composed): ε = 0.5, δ = 0")
    a = np.linspace(0, 1, 50)
    for width in (760, 1520):
        image = plots.tradeoff_image([(long_label, a, 1 - a), ("all 3 releases: ε = 1.2, "
                                      "δ = 0", a, (1 - a) ** 2)], width=width)
        chart = drawn[-1]
        bounds = image.rect().toRectF()
        assert chart.font.pixelSize() == round(plots.TEXT_SHARE * width)
        for text, rect in chart.texts:
            assert bounds.contains(rect), (text, rect)
        assert long_label in [t for t, _ in chart.texts]  # the whole label, never "…"
        assert image.text("Legend").split("\n")[0] == long_label
    entries = [LegendEntry(long_label, plots.BLUE), LegendEntry("guessing", plots.GREY)]
    placed, height = legend_layout(entries, plots._font(19), 400)
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QFontMetricsF

    fm = QFontMetricsF(plots._font(19))
    for entry, _swatch, rect in placed:
        need = fm.boundingRect(QRectF(0, 0, rect.width(), 1e6),
                               int(Qt.TextFlag.TextWordWrap), entry.text)
        assert need.height() <= rect.height() and rect.right() <= 400
    assert height >= 3 * fm.height()  # the long label wraps over lines, it is not cut


def test_close_ticks_read_differently():
    assert plots.tick_texts([29.09, 29.092, 29.094]) == ["29.09", "29.092", "29.094"]
