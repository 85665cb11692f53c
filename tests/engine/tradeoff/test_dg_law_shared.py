"""The discrete Gaussian of the trade-off curves is the sampler's own law.

:func:`~dpstudio.engine.tradeoff.integer_noise.discrete_gaussian_law` takes its pmf from
:func:`~dpstudio.engine.sampling.discrete_gaussian_pmf` (one normalizer for what is drawn
and what is plotted). Checked on a grid of σ against the sampler's pmf and variance, and
against the normalizer computed independently (a direct sum for small σ, Poisson
summation's 1/(σ√2π) for large σ).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstudio.engine.sampling import discrete_gaussian_pmf, discrete_gaussian_variance
from dpstudio.engine.tradeoff.integer_noise import discrete_gaussian_law

SIGMAS = (0.3, 1.0, 2.5, 40.0, 1000.0)


@pytest.mark.parametrize("sigma", SIGMAS)
def test_law_is_the_samplers_pmf_on_and_beyond_its_support(sigma):
    law = discrete_gaussian_law(sigma)
    x = np.arange(law.probs.size) + law.offset
    ref = discrete_gaussian_pmf(x, sigma)
    big = ref > 1e-300
    np.testing.assert_allclose(law.probs[big], ref[big], rtol=1e-12, atol=0.0)
    assert np.all(law.probs[~big] < 1e-290)
    # Beyond the stored support the log-pmf carries on the same law (a ratio, not a 0).
    edge = law.offset + law.probs.size
    t = np.arange(edge, edge + 5)
    np.testing.assert_allclose(law.logpmf(t), np.log(discrete_gaussian_pmf(t, sigma)),
                               rtol=1e-12)
    np.testing.assert_allclose(law.pmf_on(edge - 3, edge + 3),
                               discrete_gaussian_pmf(np.arange(edge - 3, edge + 4), sigma),
                               rtol=1e-12, atol=0.0)
    assert law.variance == pytest.approx(discrete_gaussian_variance(sigma), rel=1e-12)


@pytest.mark.parametrize("sigma", SIGMAS)
def test_the_mass_at_zero_is_the_independent_normalizer(sigma):
    law = discrete_gaussian_law(sigma)
    p0 = law.probs[-law.offset]
    if sigma >= 10.0:  # Poisson summation: S = σ√(2π)(1 + 2e^{−2π²σ²} + …)
        expected = 1.0 / (sigma * math.sqrt(2.0 * math.pi))
    else:
        k = np.arange(1, 60 * max(int(sigma), 1) + 60)
        expected = 1.0 / math.fsum([1.0, *(2.0 * np.exp(-(k * k) / (2.0 * sigma * sigma)))])
    assert p0 == pytest.approx(expected, rel=1e-12)
    assert law.logpmf(np.array([0]))[0] == pytest.approx(math.log(expected), rel=1e-12,
                                                         abs=1e-14)
