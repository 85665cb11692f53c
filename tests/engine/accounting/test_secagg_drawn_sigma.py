"""Secure aggregation's loss description reads the σ_c the shares were drawn from.

The result carries ``share_sigma_steps`` (set where it is built, for the one-shot run, the
plan and the partitioned run); the description's σ is that σ_c·√H, never a
recomputation. A σ_c tampered below what the stated (ε, δ) needs is described by the
stated (ε, δ) alone, never as a discrete Gaussian tighter than its claim; a result
without it falls back the same way. The JSON keys of the result are unchanged.
"""

import math
from dataclasses import replace

import numpy as np
import pytest

from dpstudio.engine.accounting.ledger import spent
from dpstudio.engine.distributed.noise import distributed_gaussian_epsilon
from dpstudio.engine.distributed.partial import (
    finish_secure,
    plan_secure_partial,
    secure_partial,
)
from dpstudio.engine.distributed.secure_sum import plan_secure_sum, run_secure_sum
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.sampling import discrete_gaussian_variance

EPS, DELTA = 1.0, 1e-6
# The JSON keys of a secure-aggregation result before this change: a contract.
JSON_KEYS = {
    "mechanism", "query", "value", "stderr", "error_bound", "confidence", "epsilon",
    "delta", "n", "n_clients", "dropouts", "max_dropouts", "messages_per_user",
    "bits_per_message", "precision", "noise", "noise_variance", "central_stderr",
    "overflow_probability", "simulated", "source", "clamped", "missing_count",
    "accounting", "notes", "corrupt_fraction", "corrupt_clients", "honest_clients",
    "honest_noise_variance"}


@pytest.fixture(scope="module")
def planned():
    # 120 clients, 10% colluding, up to 20 dropouts and 10 of them realized: H = 88 < n.
    return plan_secure_sum(120, (0.0, 1.0), "secagg_gaussian", EPS, DELTA, dropouts=10,
                           max_dropouts=20, corrupt_fraction=0.1)


def test_every_builder_carries_the_drawn_sigma_and_the_json_keys_are_unchanged(planned):
    r = planned
    assert r.honest_clients == 120 - 12 - 20
    sigma = r.share_sigma_steps
    # The field is the σ_c of the variance the result reports for the H honest shares
    # (independent of the description: the variance of N_Z(0, σ_c²) from its pmf).
    steps_var = r.honest_noise_variance * r.precision ** 2
    assert r.honest_clients * discrete_gaussian_variance(sigma) == pytest.approx(
        steps_var, rel=1e-9)
    # By the engine's own bound H shares of it meet (ε, δ), and 0.1% less would not.
    assert distributed_gaussian_epsilon(sigma, r.honest_clients, r.precision, DELTA) <= EPS
    assert distributed_gaussian_epsilon(0.999 * sigma, r.honest_clients, r.precision,
                                        DELTA) > EPS
    values = np.random.default_rng(0).uniform(size=120)
    run = run_secure_sum(values, (0.0, 1.0), "secagg_gaussian", EPS, DELTA,
                         SimulationSource(1), dropouts=10, max_dropouts=20,
                         corrupt_fraction=0.1)
    part_plan = plan_secure_partial(120, (0.0, 1.0), "secagg_gaussian", EPS, DELTA,
                                    dropouts=10, max_dropouts=20, corrupt_fraction=0.1)
    src = SimulationSource(2)
    part = finish_secure(secure_partial(values, part_plan, src, dropouts=10), part_plan, src)
    for out in (r, run, part):
        assert out.share_sigma_steps == sigma
        assert set(out.to_dict()) == JSON_KEYS
    skellam = plan_secure_sum(120, (0.0, 1.0), "skellam", EPS, DELTA)
    assert skellam.share_sigma_steps == 0.0  # no σ_c: its variance is another family's
    assert skellam.loss_description().mechanism == "approx"


def test_the_released_noise_has_the_carried_sigma():
    # Zeros encode to 0 grid steps exactly, so value·p is the sum of the 6 shares drawn.
    plan = plan_secure_partial(6, (0.0, 1.0), "secagg_gaussian", EPS, DELTA)
    src, reps, got = SimulationSource(5), 4000, []
    for _ in range(reps):
        out = finish_secure(secure_partial(np.zeros(6), plan, src), plan, src)
        got.append(out.value * out.precision)
    got = np.asarray(got)
    assert np.allclose(got, np.rint(got))
    expected = math.sqrt(6 * discrete_gaussian_variance(out.share_sigma_steps))
    # 4,000 draws: the s.d.'s relative s.e. is 1.1%; 5% tolerance (4.4 s.e.), while a
    # σ_c 10% off would be 10% off.
    assert abs(got.std() / expected - 1) < 0.05
    assert abs(got.std() / (0.9 * expected) - 1) > 0.05  # power


def test_the_description_reads_the_drawn_sigma_not_a_recomputation(planned):
    r, h = planned, planned.honest_clients
    desc = r.loss_description()
    assert desc.mechanism == "discrete_gaussian" and desc.sensitivity == r.precision
    assert desc.scale == pytest.approx(r.share_sigma_steps * math.sqrt(h), rel=1e-15)
    assert (desc.epsilon, desc.delta) == (r.epsilon, r.delta)
    # A result that drew 1.5× wider shares is described by them (a recomputation from
    # (ε, δ) would say σ_c), and a pld ledger composes it to less than the claim.
    wide = replace(r, share_sigma_steps=1.5 * r.share_sigma_steps).loss_description()
    assert wide.mechanism == "discrete_gaussian"
    assert wide.scale == pytest.approx(1.5 * desc.scale, rel=1e-12)
    assert spent([wide], "pld", delta=DELTA).epsilon < spent([desc], "pld",
                                                              delta=DELTA).epsilon


@pytest.mark.parametrize("factor", [0.5, 0.9, 1 - 1e-6])
def test_a_sigma_short_of_its_claim_is_never_described_tighter(planned, factor):
    r = planned
    short = replace(r, share_sigma_steps=factor * r.share_sigma_steps)
    desc = short.loss_description()
    # The stated (ε, δ) alone: a discrete Gaussian of the recomputed σ_c would describe
    # noise that was not drawn, and composes tighter than the claim.
    assert desc.mechanism == "approx"
    assert (desc.epsilon, desc.delta) == (r.epsilon, r.delta)
    assert spent([desc], "pld", delta=DELTA).epsilon >= r.epsilon
    assert spent([desc, desc], "pld", delta=2 * DELTA).epsilon >= spent(
        [r.loss_description()] * 2, "pld", delta=2 * DELTA).epsilon


@pytest.mark.parametrize("sigma", [0.0, -1.0, math.nan, math.inf, 0.3])
def test_a_missing_or_unusable_sigma_falls_back_to_the_stated_guarantee(planned, sigma):
    desc = replace(planned, share_sigma_steps=sigma).loss_description()
    assert desc.mechanism == "approx"
    assert (desc.epsilon, desc.delta) == (planned.epsilon, planned.delta)


def test_an_object_without_the_field_falls_back_to_the_stated_guarantee(planned):
    from types import SimpleNamespace

    from dpstudio.engine.accounting.protocol_loss import secure_sum_loss

    fields = {k: getattr(planned, k) for k in JSON_KEYS}
    desc = secure_sum_loss(SimpleNamespace(**fields))
    assert desc.mechanism == "approx"
    assert (desc.epsilon, desc.delta) == (planned.epsilon, planned.delta)
