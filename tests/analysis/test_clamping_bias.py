"""Clamping bias is part of the error (issue 12, item 1).

Bounds declared too tight (ages 18–30 when they reach 47 here) move every release's
expectation off the truth. The analytic line, the readout's source, is now
√(noise² + bias²) with the bias measured on the data (analyst only), so it agrees with the
simulated releases at every ε; the result carries the clamping report the UI warns with.
Before: the line was the noise alone ("Central: 0.05" at ε = 1 beside simulated releases
at 0.38), and at ε = 20 it claimed an error a hundred times below the real one.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpstudio.analysis.bias import (
    analyst_bias,
    clamping_report,
    clamping_warning,
)
from dpstudio.analysis.choices import Choices, registry_value_types
from dpstudio.analysis.footing import like_for_like
from dpstudio.analysis.utility import utility
from dpstudio.data import column_values, open_dataset, sample_path

EPS = np.array([0.05, 0.3, 1.0, 5.0, 20.0])


@pytest.fixture(scope="module")
def ages():
    ds = open_dataset(sample_path("survey"))
    return column_values(ds.frame, ds.schema["age"])


def _age(values, **kw) -> Choices:
    s = Choices(column="age", column_type="numeric",
                value_types=registry_value_types("numeric", values), trust_model="central",
                query="mean", mechanism="laplace", bounds=(18.0, 30.0))
    return replace(s, **kw)


def _line(result):
    return next(c for c in result.curves if c.kind == "analytic" and c.primary)


def test_the_line_includes_the_bias_and_agrees_with_the_simulated_releases(ages):
    s = _age(ages)
    bias = float(np.mean(np.clip(ages, 18, 30)) - np.mean(ages))
    result = utility(s, ages, reps=400, mc_epsilons=EPS, line_epsilons=EPS, compare=False)
    line = _line(result)
    sim = next(c for c in result.curves if c.kind == "simulation")
    assert line.bias == pytest.approx(bias) and bias < -0.3
    assert not line.noise_only
    # Where the noise is negligible the line is the bias itself, and so are the releases.
    assert line.error[-1] == pytest.approx(abs(bias), rel=0.01)
    # At every ε the simulated releases' error lies on the line (within their ±2 s.e. band
    # and 15% for the delta method at small ε).
    assert np.all((sim.low <= line.error * 1.15) & (line.error <= sim.high * 1.15))
    np.testing.assert_allclose(sim.error[1:], line.error[1:], rtol=0.1)


@pytest.mark.parametrize("trust", ["shuffle", "distributed", "local"])
def test_every_trust_model_clamps_and_its_line_says_so(ages, trust):
    """The protocols and the local mean clamp each person's value too: their lines include
    the same bias, measured on what they send (a missing value as the middle)."""
    s = like_for_like(_age(ages), trust)
    result = utility(s, ages, simulate=trust == "local", compare=False,
                     mc_epsilons=EPS, line_epsilons=EPS)
    line = _line(result)
    bias = analyst_bias(s, ages)
    assert line.bias == pytest.approx(bias) and bias < -0.3
    assert np.nanmin(line.error) >= abs(bias) * (1 - 1e-12)
    if trust == "local":  # the simulated local releases are off the present mean too
        sim = next(c for c in result.curves if c.kind == "simulation")
        assert sim.error[-1] == pytest.approx(abs(bias), rel=0.05)


def test_the_clamping_report_and_its_warning(ages):
    s = _age(ages)
    result = utility(s, ages, simulate=False, compare=False)
    report = result.clamping
    outside = np.count_nonzero(ages > 30) / ages.size
    assert report["fraction_outside"] == pytest.approx(outside)
    assert report["bounds"] == (18.0, 30.0)
    assert report["bias"] == pytest.approx(_line(result).bias)
    pct = f"{100 * outside:.2g}%"
    assert report["warning"] == (f"{pct} of values are outside 18–30: the mean is biased; "
                                 "widen the bounds")
    # The bias is material (a tenth of the noise) from the smallest ε the plot shows.
    assert report["material_from_epsilon"] == pytest.approx(0.01, rel=0.5)


def test_no_report_when_nothing_is_clamped_and_a_quiet_one_when_the_bias_is_small(ages):
    wide = _age(ages, bounds=(18.0, 100.0))
    assert utility(wide, ages, simulate=False, compare=False).clamping is None
    # One value in two thousand outside: no warning at ε = 1, one where the noise is
    # smaller than ten times the bias.
    x = np.append(ages[:1999], 120.0)
    s = _age(x, bounds=(18.0, 100.0))
    report = utility(s, x, simulate=False, compare=False).clamping
    assert report["fraction_outside"] == pytest.approx(1 / 2000)
    assert report["warning"] is None
    start = report["material_from_epsilon"]
    assert 1.0 < start <= 100.0
    assert clamping_warning(report, start / 2) is None
    assert clamping_warning(report, start) == ("0.05% of values are outside 18–100: the mean "
                                               "is biased; widen the bounds")


def test_more_than_five_percent_outside_warns_whatever_the_noise():
    x = np.r_[np.full(90, 20.0), np.full(10, 200.0)]
    s = Choices(column="x", column_type="numeric", value_types=("integer", "numeric"),
                trust_model="central", query="sum", mechanism="laplace", bounds=(0.0, 100.0))
    report = clamping_report(s, x)  # without the noise: the fraction alone decides
    assert report["bias"] == pytest.approx(10 * (100.0 - 200.0))
    assert report["warning"] == ("10% of values are outside 0–100: the sum is biased; widen "
                                 "the bounds")
    assert clamping_warning(report, 0.01) == report["warning"]
