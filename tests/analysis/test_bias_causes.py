"""The bias split into its causes (issue 12 item 1, review): clamping to the bounds, and
filling missing values with the middle of the bounds (or the imputed value). The warning
names the cause that dominates.

Before: survey ``income`` (6% missing, sent as 50,000) was blamed on the 0.16% of values
above 100,000 ("widen the bounds"), and survey ``gpa`` (4.5% missing, no value outside its
bounds) had a bias 13× the noise at ε = 1 and no warning at all."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpstudio.analysis.bias import analyst_bias, bias_parts, clamping_report, clamping_warning
from dpstudio.analysis.choices import Choices, registry_value_types
from dpstudio.analysis.compare import comparison_at
from dpstudio.analysis.footing import like_for_like
from dpstudio.data import column_values, open_dataset, sample_path


@pytest.fixture(scope="module")
def survey():
    ds = open_dataset(sample_path("survey"))
    return {c: column_values(ds.frame, ds.schema[c]) for c in ("income", "gpa", "age")}


def _mean(column, values, bounds, **kw) -> Choices:
    s = Choices(column=column, column_type="numeric",
                value_types=registry_value_types("numeric", values), trust_model="central",
                query="mean", mechanism="laplace", bounds=bounds)
    return replace(s, **kw)


def test_the_parts_add_up_and_are_what_they_say():
    # 8 present values (two above 10), 2 missing; bounds 0–10, middle 5.
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 20.0, 30.0, np.nan, np.nan])
    s = like_for_like(_mean("x", x, (0.0, 10.0)), "shuffle")
    parts = bias_parts(s, x)
    present = x[np.isfinite(x)]
    clamped = np.clip(present, 0, 10)
    assert parts["clamping_bias"] == pytest.approx(clamped.mean() - present.mean())
    sent = np.r_[clamped, 5.0, 5.0]
    assert parts["missing_bias"] == pytest.approx(sent.mean() - clamped.mean())
    assert parts["clamping_bias"] + parts["missing_bias"] == pytest.approx(
        analyst_bias(s, x), rel=1e-12)
    assert parts["missing_fraction"] == 0.2 and parts["missing_value"] == 5.0
    assert parts["cause"] == "clamping"
    # Central dropping the missing values: all of the bias is clamping's.
    central = _mean("x", x, (0.0, 10.0))
    parts = bias_parts(central, x)
    assert parts["missing_bias"] == 0.0 and parts["missing_value"] is None
    assert parts["clamping_bias"] == pytest.approx(clamped.mean() - present.mean())


def test_income_blames_the_missing_values_not_the_bounds(survey):
    x = survey["income"]
    s = like_for_like(_mean("income", x, (0.0, 100000.0)), "shuffle")
    report = clamping_report(s, x, np.array([1.0]), np.array([200.0]))
    missing = np.isnan(np.asarray(x, dtype=float)).mean()
    assert report["cause"] == "missing" and report["missing_fraction"] == pytest.approx(missing)
    assert report["missing_bias"] == pytest.approx(report["bias"] - report["clamping_bias"])
    assert report["missing_bias"] > 2000 and abs(report["clamping_bias"]) < 100
    assert report["fraction_outside"] == pytest.approx(0.0016, abs=1e-4)  # the old key
    assert report["warning"] == (
        f"{100 * missing:.2g}% of values are missing and sent as the middle of the bounds "
        f"(50,000): they bias the mean by +{report['missing_bias']:,.0f}; the price of "
        "hiding who is missing")
    assert "widen the bounds" not in report["warning"]


def test_gpa_warns_though_no_value_is_outside(survey):
    """No value outside 0–4, 4.5% missing sent as 2: a bias 13× the noise at ε = 1."""
    x = survey["gpa"]
    s = like_for_like(_mean("gpa", x, (0.0, 4.0)), "central")
    noise = 0.0028
    report = clamping_report(s, x, np.array([1.0]), np.array([noise]))
    assert report is not None and report["fraction_outside"] == 0.0
    assert report["clamping_bias"] == 0.0 and report["bias"] < -10 * noise
    assert report["warning"].startswith("4.5% of values are missing and imputed as the "
                                        "middle of the bounds (2): they bias the mean by "
                                        "-0.03")
    assert report["warning"].endswith("drop them or impute a better value")
    # Where the noise hides it, no warning; and nothing to report when they are dropped.
    assert clamping_warning(report, 1.0) is not None
    quiet = clamping_report(s, x, np.array([1.0]), np.array([1.0]))
    assert quiet["warning"] is None
    assert clamping_report(_mean("gpa", x, (0.0, 4.0)), x) is None


def test_an_imputed_value_is_named(survey):
    x = survey["gpa"]
    s = _mean("gpa", x, (0.0, 4.0), missing="impute", impute=0.0)
    report = clamping_report(s, x, np.array([1.0]), np.array([0.003]))
    assert report["missing_value"] == 0.0
    assert report["warning"].startswith("4.5% of values are missing and imputed as 0: they "
                                        "bias the mean by -0.1")


def test_compare_reports_the_split_and_speaks_to_every_model(survey):
    x = survey["income"]
    report = comparison_at(_mean("income", x, (0.0, 100000.0), relation="replace"), x, 1.0)
    clamping = report["clamping"]
    for key in ("fraction_outside", "bounds", "bias", "warning", "query", "clamping_bias",
                "missing_bias", "missing_fraction", "missing_value"):
        assert key in clamping
    assert clamping["warning"].endswith("central can drop them or impute a better value; "
                                        "protocols that send every row pay this to hide who "
                                        "is missing")
    # Clamping still wins where it dominates: the old sentence, word for word.
    ages = survey["age"]
    tight = comparison_at(_mean("age", ages, (18.0, 30.0), relation="replace"), ages,
                          1.0)["clamping"]
    assert tight["cause"] == "clamping" and tight["missing_bias"] == 0.0
    assert tight["warning"].endswith("of values are outside 18–30: the mean is biased; "
                                     "widen the bounds")
