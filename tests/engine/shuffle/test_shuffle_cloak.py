"""The invisibility cloak: exact sums without noise, uniform shares, parameters that meet
their budget, and an error that matches what the report states."""

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import SecureSource, SimulationSource
from dpstudio.engine.shuffle import cloak
from dpstudio.engine.shuffle.summation import CloakProtocol, plan_shuffle_sum, run_shuffle_sum


def test_encode_shuffle_analyze_returns_the_exact_sum():
    src = SimulationSource(1)
    n, p = 500, 256
    params = cloak.cloak_parameters(n, p, 1e-6)
    z = np.asarray(np.random.default_rng(2).integers(0, p + 1, n))
    messages = cloak.cloak_encode(z, params, src)
    assert messages.shape == (n, params.messages) and messages.dtype == np.uint64
    assert int(messages.max()) < params.modulus
    shuffled = cloak.cloak_shuffle(messages, src)
    assert sorted(shuffled.tolist()) == sorted(messages.ravel().tolist())
    assert cloak.cloak_analyze(shuffled, params) == int(z.sum())
    # Negative inputs (noise) are residues too; the analyzer reads them back.
    z2 = z - 300
    assert cloak.cloak_analyze(cloak.cloak_encode(z2, params, src), params) == int(z2.sum())


def test_without_pre_randomizer_the_release_is_the_sum_of_the_rounded_inputs():
    p = 1 << 6
    values = np.random.default_rng(3).integers(0, p + 1, 300).astype(float)  # on the grid
    proto = CloakProtocol(1.0, 1e-6, noise="none", precision_bits=6)
    out = proto.run(values, (0.0, float(p)), SimulationSource(4))
    assert out.value == values.sum()
    assert math.isinf(out.epsilon) and out.delta < 1e-6
    assert "sum-preserving" in out.accounting


def test_a_single_users_shares_are_uniform_mod_q():
    src = SimulationSource(5)
    params = cloak.cloak_parameters(1000, 64, 1e-7)
    reps = 20_000
    shares = cloak.cloak_encode(np.full(reps, 17), params, src)  # one user, many runs
    bins = 40
    cells = np.floor(shares.astype(np.float64) / params.modulus * bins).astype(int)
    for j in (0, params.messages // 2, params.messages - 1):  # incl. the constrained one
        observed = np.bincount(cells[:, j], minlength=bins)
        assert chisquare(observed).pvalue > 1e-4, j
    # Pairs of one user's shares are jointly uniform too.
    joint = cells[:, 0] * bins + cells[:, -1]
    assert chisquare(np.bincount(joint // 4, minlength=bins * bins // 4)).pvalue > 1e-4
    # Power: the sum of the user's shares is not uniform at all (it is 17 mod q).
    total = np.array([cloak.residue_sum(row, params.modulus) for row in shares[:200]])
    assert np.all(total == 17)


def test_parameters_meet_their_budget_and_grow_slowly():
    tv = 1e-8
    by_n = [cloak.cloak_parameters(n, 1024, tv, 10_000) for n in (100, 10_000, 1_000_000)]
    for prm in by_n:
        assert prm.tv <= tv
        assert prm.modulus % 2 == 1 and prm.modulus < 2**63
        assert prm.bits_per_message == math.ceil(math.log2(prm.modulus))
        assert prm.overflow_margin > 10_000
    assert [p.messages for p in by_n] == sorted(p.messages for p in by_n)
    assert by_n[-1].messages < 1.5 * by_n[0].messages  # logarithmic in n
    # The swap distance decreases with m at a fixed modulus.
    q = by_n[1].modulus
    d = [cloak.swap_distance(m, q) for m in (60, 80, 100, 120)]
    assert all(a > b for a, b in zip(d, d[1:], strict=False))


def test_report_at_n_1e4_eps_1_delta_1e6():
    r = plan_shuffle_sum(10_000, (0.0, 1.0), "cloak", 1.0, 1e-6)
    assert 100 <= r.messages_per_user <= 140
    assert r.bits_per_message <= 63
    assert r.epsilon == 1.0 and r.delta <= 1e-6
    assert r.details["encoding_tv"] * (1 + math.e) <= 0.1e-6
    assert r.details["overflow_probability"] < 2**-40
    blanket = plan_shuffle_sum(10_000, (0.0, 1.0), "blanket", 1.0, 1e-6)
    assert r.stderr < blanket.stderr / 3  # many messages buy much less error


@pytest.mark.parametrize("noise", ["skellam", "gaussian"])
def test_error_matches_the_stated_standard_error(noise):
    n, bits, reps = 200, 5, 300
    p = 1 << bits
    values = np.random.default_rng(6).integers(0, p + 1, n).astype(float)  # on the grid
    src = SimulationSource(7)
    errors = np.empty(reps)
    for r in range(reps):
        out = run_shuffle_sum(values, (0.0, float(p)), "cloak", 1.0, 1e-6, src, noise=noise,
                              precision_bits=bits)
        errors[r] = out.value - values.sum()
    # On the grid rounding is exact: the error is the noise alone.
    var_noise = n * out.details["noise_variance_per_user"]  # grid step = 1 value unit here
    se_var = var_noise * math.sqrt(2.0 / reps)
    assert abs(errors.mean()) < 5 * math.sqrt(var_noise / reps)
    assert abs(errors.var() - var_noise) < 5 * se_var
    assert out.stderr**2 >= var_noise  # the stated SE also covers rounding at its worst
    inside = np.mean(np.abs(errors) <= out.error_bound)
    assert inside >= out.confidence - 5 * math.sqrt(0.05 * 0.95 / reps)


def test_plan_matches_run_and_mean_scales():
    values = np.linspace(0, 10, 500)
    run = run_shuffle_sum(values, (0, 10), "cloak", 1.0, 1e-6, SimulationSource(8),
                          query="mean", precision_bits=6)
    plan = plan_shuffle_sum(500, (0, 10), "cloak", 1.0, 1e-6, query="mean", precision_bits=6)
    assert run.stderr == pytest.approx(plan.stderr)
    assert run.messages_per_user == plan.messages_per_user
    assert abs(run.value - 5.0) < run.error_bound
    assert run.simulated and not plan.simulated and plan.value is None


def test_secure_source_is_accepted_and_reported():
    out = run_shuffle_sum(np.ones(50), (0, 1), "cloak", 1.0, 1e-6, SecureSource(),
                          precision_bits=4)
    assert not out.simulated and "CSPRNG" in out.source


@pytest.mark.parametrize("kwargs,err", [
    ({"noise": "laplace"}, ParameterError), ({"precision_bits": 40}, ParameterError),
    ({"nonsense": 1}, ParameterError), ({"confidence": 1.5}, ParameterError),
])
def test_bad_parameters(kwargs, err):
    with pytest.raises(err):
        run_shuffle_sum(np.ones(10), (0, 1), "cloak", 1.0, 1e-6, SimulationSource(0), **kwargs)


def test_bad_inputs():
    src = SimulationSource(0)
    with pytest.raises(QueryError):
        run_shuffle_sum(np.ones(10), (1, 0), "cloak", 1.0, 1e-6, src)
    with pytest.raises(QueryError):
        run_shuffle_sum([np.nan], (0, 1), "cloak", 1.0, 1e-6, src)
    with pytest.raises(QueryError):
        run_shuffle_sum(np.ones(1), (0, 1), "cloak", 1.0, 1e-6, src)
    with pytest.raises(QueryError):
        run_shuffle_sum(np.ones(10), (0, 1), "laplace", 1.0, 1e-6, src)
    with pytest.raises(QueryError):
        run_shuffle_sum(np.ones(10), (0, 1), "cloak", 1.0, 1e-6, src, query="median")
    with pytest.raises(ParameterError):
        run_shuffle_sum(np.ones(10), (0, 1), "cloak", 1.0, 0.0, src)
