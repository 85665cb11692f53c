"""The analyst's copy beside a release's bundle (issue 12, item 1): the figures measured on
the data change nothing a release publishes — same files, same bytes, same manifest — and
render only through :func:`render_analyst_report`."""

import json

import numpy as np
import pytest

from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.rng import SecureSource
from dpstudio.export import public_result, render_bundle
from dpstudio.export.bundle import BundleInput, render_analyst_report
from dpstudio.export.report_analyst import measure_clamping

VALUES = np.array([20.0, 25.0, 35.0, 50.0, 61.0, 70.0, 72.0, 80.0, 88.0, 90.0])
SPEC = QuerySpec("mean", "laplace", 1.0, bounds=(18.0, 30.0), column="age")


def _bundle(**kw):
    result = release(VALUES, SPEC, SecureSource())
    return BundleInput(release_id=3, uid="u" * 32, created_at="2024-01-01T00:00:00Z",
                       stem="r0003-mean-age", dataset_name="ages.csv",
                       dataset_path="ages.csv", fingerprint="f" * 64,
                       schema={"schema_version": 1, "columns": []}, spec=SPEC,
                       public=public_result(result), epsilon=1.0, delta=0.0,
                       accountant="basic", budget_epsilon=3, budget_delta=0,
                       formats=("csv", "json"), report=True, script=True,
                       history=[{"id": 3, "time": "t", "query": "mean", "column": "age",
                                 "mechanism": "laplace", "epsilon": 1.0, "delta": 0.0,
                                 "status": "this release"}], **kw)


def _without_pdf(manifest: bytes) -> dict:
    m = json.loads(manifest)
    m["files"] = [f for f in m["files"] if f["role"] != "report/pdf"]
    return m


def test_the_analyst_figures_change_no_published_byte(qapp):
    plain = _bundle()
    with_figures = _bundle(analyst=measure_clamping(SPEC, VALUES))
    with_figures.public = plain.public  # the same draw
    a, b = render_bundle(plain), render_bundle(with_figures)
    assert [f.name for f in a] == [f.name for f in b]
    assert [f.name for f in a if f.role.startswith("report")] == [
        "r0003-mean-age.report.html", "r0003-mean-age.report.pdf"]
    for fa, fb in zip(a, b, strict=True):
        if fa.role == "manifest":  # the same, but for the PDF's hash
            assert _without_pdf(fa.data) == _without_pdf(fb.data)
        elif fa.role != "report/pdf":  # a PDF stamps its own creation time
            assert fa.data == fb.data, fa.name
    for f in b:
        for word in (b"Analyst", b"widen the bounds", b"bias from clamping"):
            assert word not in f.data, (f.name, word)


def test_the_analyst_report_holds_the_bias_measured_on_the_data(qapp):
    figures = measure_clamping(SPEC, VALUES)
    assert figures.outside == 8
    page = render_analyst_report(_bundle(analyst=figures)).decode()
    assert "Analyst&#x27;s copy — for your eyes only" in page
    assert "80% of values are outside 18–30: the mean is biased; widen the bounds." in page
    bias = np.clip(VALUES, 18, 30).mean() - VALUES.mean()
    assert f"{bias:+.4g}" in page and figures.bias == pytest.approx(bias)


@pytest.mark.parametrize("case", ["no report", "no figures"])
def test_no_analyst_report_without_a_report_or_figures(case):
    inp = (_bundle(analyst=measure_clamping(SPEC, VALUES)) if case == "no report"
           else _bundle())
    if case == "no report":
        inp.report = False
    assert render_analyst_report(inp) is None
