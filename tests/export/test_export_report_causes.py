"""The analyst's copy names the bias's cause in the application's own sentence (issue 12,
item 1): on the bundled survey sample, released through the project API, an income mean
whose missing values are imputed as the middle of the bounds is biased by the missing
values, not the bounds; an age mean with too tight bounds is biased by clamping. The
sentence is the one :func:`dpstudio.analysis.bias.clamping_warning` gives the readout, and
the published files hold none of it."""

import html
import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from dpstudio.analysis.bias import clamping_report, clamping_warning
from dpstudio.analysis.choices import Choices
from dpstudio.data import sample_path
from dpstudio.engine.queries import QuerySpec
from dpstudio.project import Project, ReleaseSpec


def _survey(folder, age_upper=100):
    """The bundled survey and its schema, copied; ``age_upper`` declares age 18–upper."""
    src = sample_path("survey")
    data = folder / src.name
    shutil.copy(src, data)
    schema = json.loads(src.with_name(src.name + ".schema.json").read_text(encoding="utf-8"))
    for col in schema["columns"]:
        if col["name"] == "age":
            col["upper"] = age_upper
    (folder / (src.name + ".schema.json")).write_text(json.dumps(schema), encoding="utf-8")
    return data


def _release(folder, column, age_upper=100, **query):
    data = _survey(folder, age_upper)
    q = QuerySpec("mean", "laplace", 1.0, column=column, **query)
    with Project.create(folder / "study.dpstudio", epsilon=5, delta=1e-5) as project:
        record = project.release(ReleaseSpec(dataset=str(data), report=True, query=q),
                                 folder / "out")
    assert record.status == "done" and record.analyst_report is not None
    return record


def _text(page: str) -> str:
    page = re.sub(r"<style>.*?</style>", "", re.sub(r'src="data:[^"]*"', "", page), flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _warning(page: str) -> str:
    found = re.findall(r"<p class='warning'>([^<]*)</p>", page)
    assert len(found) == 1, found  # said once
    return html.unescape(found[0])


def _column(name: str) -> np.ndarray:
    return pd.read_csv(sample_path("survey"))[name].to_numpy(dtype=float)


def _app_sentence(column, bounds, epsilon=1.0, missing="drop"):
    """What the application's readout says for the same choices at ε (noise small)."""
    s = Choices(column=column, column_type="numeric", value_types=("numeric",),
                trust_model="central", query="mean", mechanism="laplace", epsilon=epsilon,
                bounds=bounds, missing=missing)
    report = clamping_report(s, _column(column), np.array([epsilon]), np.array([1e-9]))
    return clamping_warning(report, epsilon)


def _published(record, folder) -> str:
    return " ".join(p.read_bytes().decode("utf-8", "replace") for p in (folder / "out").iterdir())


def test_income_missing_values_are_named_as_the_cause(qapp, tmp_path):
    record = _release(tmp_path, "income", missing="impute")
    page = record.analyst_report.read_text(encoding="utf-8")
    # Independently: 6.15% missing, imputed as 50,000 (middle of 0–100,000); their part
    # of the bias is mean(clip(filled)) − mean(clip(present)).
    x = _column("income")
    present = x[np.isfinite(x)]
    filled = np.where(np.isfinite(x), x, 50_000.0)
    missing_part = np.clip(filled, 0, 1e5).mean() - np.clip(present, 0, 1e5).mean()
    assert f"{missing_part:+,.0f}" == "+2,816"
    sentence = ("6.2% of values are missing and imputed as the middle of the bounds (50,000): "
                "they bias the mean by +2,816; drop them or impute a better value")
    assert _warning(page) == sentence + "."
    assert _app_sentence("income", (0.0, 1e5), missing="impute") == sentence
    text = _text(page)
    assert "widen the bounds" not in text  # the bounds are not to blame
    clamping = np.clip(present, 0, 1e5).mean() - present.mean()
    assert (f"clamping moves the mean by {clamping:+.4g} and filling in the missing values "
            f"by {missing_part:+.4g}, {clamping + missing_part:+.4g} in all") in text
    assert (f"bias from missing values (each sent as 50,000) "
            f"{missing_part:+.4g} (units of the column)") in text
    assert "The 95% interval above covers the clamped and filled-in mean" in text
    assert "bias from clamping and missing values measured on the data" in text
    published = _published(record, tmp_path)
    for secret in ("values are missing", "2,816", f"{missing_part:+.4g}", "bias"):
        assert secret not in published, secret


def test_a_too_tight_age_blames_the_bounds(qapp, tmp_path):
    record = _release(tmp_path, "age", age_upper=20)
    page = record.analyst_report.read_text(encoding="utf-8")
    x = _column("age")
    outside = np.count_nonzero(x > 20) / x.size
    assert f"{100 * outside:.0f}%" == "44%"
    sentence = "44% of values are outside 18–20: the mean is biased; widen the bounds"
    assert _warning(page) == sentence + "."
    assert _app_sentence("age", (18.0, 20.0)) == sentence
    text = _text(page)
    assert "values are missing" not in text and "bias from missing values" not in text
    bias = np.clip(x, 18, 20).mean() - x.mean()
    assert f"clamping moves the mean by {bias:+.4g}, so the expected error" in text
    published = _published(record, tmp_path)
    for secret in ("values are outside", "widen the bounds", f"{bias:+.4g}", "44%"):
        assert secret not in published, secret


@pytest.mark.parametrize("missing", ["impute", "drop"])
def test_gpa_bias_from_missing_values_with_nothing_clamped(qapp, tmp_path, missing):
    """gpa's bounds hold every value: imputing the middle still biases the mean (the
    table says by how much); dropping the missing values biases nothing."""
    record = _release(tmp_path, "gpa", missing=missing)
    text = _text(record.analyst_report.read_text(encoding="utf-8"))
    x = _column("gpa")
    present = x[np.isfinite(x)]
    if missing == "drop":
        assert "the error is the noise alone" in text
        assert "bias from missing values" not in text
        return
    part = np.where(np.isfinite(x), x, 2.0).mean() - present.mean()
    assert f"bias from missing values (each sent as 2) {part:+.4g}" in text
    assert "widen the bounds" not in text
    assert "the error is the noise alone" not in text
    assert "the solid line adds the bias from missing values measured on the data" in text
