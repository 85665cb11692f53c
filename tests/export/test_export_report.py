"""The stakeholder report: a real PDF, self-contained HTML, and plots that are not blank."""

import base64
import json
import re

import numpy as np
import pytest
from PySide6.QtGui import QImage, QTextDocument

from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.rng import SecureSource
from dpstudio.export import public_result
from dpstudio.export.report import ReportInput, render_report, report_images, utility_series

PAGE = re.compile(rb"/Type\s*/Page(?![s\w])")


def _input(spec, values, history=None):
    pub = public_result(release(values, spec, SecureSource()))
    hist = history or [{"id": 1, "time": "2024-01-01T00:00:00Z", "query": "count",
                        "column": "x", "mechanism": "laplace", "epsilon": 0.2, "delta": 0.0,
                        "status": "done"},
                       {"id": 2, "time": "2024-01-02T00:00:00Z", "query": "count",
                        "column": "x", "mechanism": "laplace", "epsilon": 0.2, "delta": 0.0,
                        "status": "aborted"}]
    hist = hist + [{"id": 3, "time": "2024-01-03T00:00:00Z", "query": spec.query,
                    "column": spec.column, "mechanism": spec.mechanism,
                    "epsilon": spec.epsilon, "delta": spec.delta, "status": "this release"}]
    return ReportInput(release_id=3, uid="a" * 32, created_at="2024-01-03T00:00:00Z",
                       dataset_name="survey.csv", fingerprint="b" * 64, spec=spec, public=pub,
                       epsilon=spec.epsilon, delta=spec.delta, accountant="basic",
                       budget_epsilon=3.0, budget_delta=1e-5, history=hist,
                       engine_version="0.1.0")


def not_blank(image: QImage) -> bool:
    """More than 2% of the pixels are not white and there are many distinct colours."""
    img = image.convertToFormat(QImage.Format.Format_RGB32)
    arr = np.frombuffer(img.constBits(), dtype=np.uint8).reshape(img.height(),
                                                                  img.bytesPerLine())
    px = arr[:, : img.width() * 4].reshape(img.height(), img.width(), 4)[:, :, :3]
    non_white = np.any(px < 250, axis=2).mean()
    packed = px.astype(np.uint32)
    colours = len(np.unique((packed[:, :, 0] << 16) | (packed[:, :, 1] << 8) | packed[:, :, 2]))
    return non_white > 0.02 and colours > 20


SPECS = [
    (QuerySpec(query="mean", mechanism="laplace", epsilon=0.5, bounds=(0, 100), column="age"),
     np.linspace(10, 90, 400)),
    (QuerySpec(query="histogram", mechanism="gaussian", epsilon=1.0, delta=1e-6,
               categories=("a", "b", "c"), column="g"),
     np.array(["a", "b", "c", "a"] * 50, dtype=object)),
    (QuerySpec(query="median", mechanism="exponential", epsilon=1.0, bounds=(0, 100),
               column="age"), np.linspace(10, 90, 400)),
]


@pytest.mark.parametrize(("spec", "values"), SPECS, ids=["mean", "histogram", "median"])
def test_the_report_renders_to_pdf_and_html(qapp, spec, values):
    inp = _input(spec, values)
    html_bytes, pdf = render_report(inp)
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    assert len(PAGE.findall(pdf)) >= 1
    assert pdf.count(b"/Subtype /Image") >= 4
    html = html_bytes.decode("utf-8")
    assert "cannot do better than the curve shown" in html
    sources = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(sources) == 4
    for src in sources:
        image = QImage.fromData(base64.b64decode(src), "PNG")
        assert not image.isNull() and not_blank(image)
    doc = QTextDocument()  # the HTML renders (laid out by Qt, no browser)
    doc.setHtml(html)
    doc.setTextWidth(800)
    assert doc.size().height() > 1000 and "Budget history" in doc.toPlainText()
    # The public clamping note states the procedure; the analyst-only figures (how many
    # values were clamped, the bias) never appear (issue 12 asks for the note: item 14).
    # Without the embedded images: base64 holds any four letters now and then.
    low = re.sub(r"data:image/[a-z]+;base64,[A-Za-z0-9+/=]+", "", html).lower()
    assert ("clamping: values outside the declared bounds" in low) == (spec.query == "mean")
    for analyst_only in ("values are outside", "records used", "analyst's copy", "bias",
                         "widen the bounds"):
        assert analyst_only not in low


def test_each_plot_is_drawn(qapp):
    images = report_images(_input(*SPECS[0]))
    assert set(images) == {"errorbars", "tradeoff", "utility", "budget"}
    for name, image in images.items():
        assert image.width() >= 600 and not_blank(image), name


def test_the_utility_curve_uses_no_data():
    spec, values = SPECS[0]
    pub = public_result(release(values, spec, SecureSource()))
    eps, err, at, label, _ = utility_series(spec, pub)
    assert np.all(np.diff(err) < 0)  # more ε, less error
    assert at == pytest.approx(pub["variance"] ** 0.5)
    assert err[list(eps).index(spec.epsilon)] == pytest.approx(at)
    count = QuerySpec(query="count", mechanism="laplace", epsilon=0.5, column="x")
    pub = public_result(release(np.ones(10), count, SecureSource()))
    _, _, at, _, _ = utility_series(count, pub)
    assert at == pytest.approx(np.sqrt(2) * 2.0)  # Laplace b = 1/0.5: sd = √2·b


def test_a_project_release_with_report_and_no_raw_data(qapp, tmp_path):
    from dpstudio.project import Project, ReleaseSpec

    data = tmp_path / "d.csv"
    data.write_text("age,note\n" + "".join(f"{20 + i % 50},SECRET-{i}-4.2424242\n"
                                           for i in range(200)), encoding="utf-8")
    spec = ReleaseSpec(dataset=str(data), report=True, script=True,
                       formats=("csv", "json", "parquet", "xlsx"),
                       query=QuerySpec(query="mean", mechanism="laplace", epsilon=0.5,
                                       bounds=(0, 120), column="age"))
    with Project.create(tmp_path / "p.dpstudio", epsilon=2) as project:
        rec = project.release(spec, tmp_path / "out")
    names = {f.name for f in rec.files}
    assert {"r0001-mean-age.report.html", "r0001-mean-age.report.pdf"} <= names
    for f in rec.files:
        if f.name.endswith(".pdf"):
            continue  # compressed bytes; rendered from the very HTML checked here
        body = re.sub(rb"data:image/[a-z]+;base64,[A-Za-z0-9+/=]+", b"", f.path.read_bytes())
        assert b"SECRET" not in body and b"4.2424242" not in body
        # Only the report's public clamping note may name clamping; no file carries the
        # analyst-only figures (the count clamped, the bias, the analyst's copy).
        assert b"clamped" not in body or f.name.endswith((".report.html", ".report.pdf"))
        for analyst_only in (b"values are outside", b"records used", b"Analyst's copy",
                             b"bias", b"widen the bounds"):
            assert analyst_only not in body
    manifest = json.loads((tmp_path / "out" / "r0001-mean-age.manifest.json").read_text())
    assert {e["role"] for e in manifest["files"]} >= {"report/html", "report/pdf"}
