"""Worst-case pairs of the local randomizers (SUE, OUE, OLH, Hadamard, CMS, SFP) and the
(ε, δ) region's pair, each against an independent computation: a closed form, the full
enumeration of the randomizer's outputs from the engine object's own probabilities, or
an empirical audit of its reports on the worst neighbouring pair; with power checks that
a wrong ε is told apart."""

import itertools
import math

import numpy as np
import pytest

from dpstudio.engine.local.frequency import (
    HadamardResponse,
    OptimalLocalHashing,
    UnaryEncoding,
)
from dpstudio.engine.local.sketch import CountMeanSketch, code_keys
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.tradeoff import (
    LossPair,
    alpha_grid,
    compose_pair,
    compose_tradeoff,
    count_mean_sketch_pair,
    discrete_tradeoff,
    epsilon_delta_pair,
    epsilon_delta_tradeoff,
    hadamard_pair,
    krr_tradeoff,
    local_hashing_pair,
    pair_tradeoff,
    product_pair,
    unary_encoding_pair,
)

A = alpha_grid(401)
TOL = 1e-12


def curve_of(pair):
    return pair_tradeoff(pair, A).beta


def test_sue_is_two_randomized_response_bits_at_half_epsilon():
    for eps in (0.1, 1.0, 3.0):
        sue = curve_of(unary_encoding_pair(eps, optimized=False))
        two_bits = compose_tradeoff("rr", {"epsilon": eps / 2}, 2, A).beta
        np.testing.assert_allclose(sue, two_bits, atol=TOL)
        # Power: the curve at a wrong ε is told apart.
        wrong = compose_tradeoff("rr", {"epsilon": 1.05 * eps / 2}, 2, A).beta
        assert np.max(np.abs(sue - wrong)) > 1e-4


def test_oue_closed_form():
    # Knots (0, 1), (a, 1 − e^ε a), (a + ½, a), (1, 0) with a = 1/(2(e^ε + 1)).
    for eps in (0.5, 2.0):
        a = 1 / (2 * (math.exp(eps) + 1))
        closed = np.interp(A, [0, a, a + 0.5, 1], [1, 1 - math.exp(eps) * a, a, 0])
        np.testing.assert_allclose(curve_of(unary_encoding_pair(eps, True)), closed, atol=TOL)
        assert np.max(np.abs(curve_of(unary_encoding_pair(1.1 * eps, True)) - closed)) > 1e-3


@pytest.mark.parametrize("optimized", [False, True])
def test_unary_encoding_enumerated_from_the_engine_object(optimized):
    # All 2^k reports of the engine's UnaryEncoding (its own p, q), for x = 0 and x′ = 2.
    eps, k = 1.3, 4
    ue = UnaryEncoding(eps, k, optimized)
    bits = np.array(list(itertools.product([0, 1], repeat=k)))

    def law(x):
        one = np.where(np.arange(k) == x, ue.p, ue.q)
        return np.prod(np.where(bits == 1, one, 1 - one), axis=1)

    enumerated = discrete_tradeoff(law(0), law(2), A).beta
    np.testing.assert_allclose(curve_of(unary_encoding_pair(eps, optimized)), enumerated,
                               atol=TOL)


def test_olh_enumerated_over_bucket_pairs():
    # Outputs (h(x), h(x′), y): (h(x), h(x′)) is uniform over distinct residues mod
    # P = 2³¹ − 1, mapped to buckets of sizes s_i, and y is g-ary RR of h(x) (of h(x′) on D′).
    eps, g = 1.2, 3
    olh = OptimalLocalHashing(eps, 10, g)
    big = (1 << 31) - 1
    edges = [min(-((-y << 31) // g), big) for y in range(g + 1)]
    s = np.diff(edges).astype(float)
    pi = (np.outer(s, s) - np.diag(s)) / (big * (big - 1.0))
    assert np.trace(pi) == pytest.approx(olh.collision, rel=1e-12)
    keep, other = olh._keep.value, (1 - olh._keep.value) / (g - 1)
    rr = np.where(np.eye(g, dtype=bool), keep, other)  # rr[bucket, y]
    p = (pi[:, :, None] * rr[:, None, :]).ravel()  # P(i, j, y) = π(i, j) RR(y | i)
    q = (pi[:, :, None] * rr[None, :, :]).ravel()  # Q(i, j, y) = π(i, j) RR(y | j)
    enumerated = discrete_tradeoff(p, q, A).beta
    ours = curve_of(local_hashing_pair(eps, g, olh.collision))
    np.testing.assert_allclose(ours, enumerated, atol=1e-11)
    # Power: ignoring the collisions (K-RR on g values) is a different, lower curve.
    assert np.max(krr_tradeoff(eps, g, A).beta - ours) <= 1e-15
    assert np.max(np.abs(krr_tradeoff(eps, g, A).beta - ours)) > 1e-3


def test_olh_empirical_audit_of_report_classes():
    # Reports of x = 0 and x′ = 1 (seeded): the share of reports in the class "y is the
    # bucket of x′ only" (loss +ε) matches the pair's masses within 5 standard errors.
    eps, n = 1.0, 200_000
    olh = OptimalLocalHashing(eps, 2, 4)
    pair = local_hashing_pair(eps, olh.g, olh.collision)
    for x, expected in ((0, pair.p[2]), (1, pair.q[2])):
        rep = olh.randomize(np.full(n, x), SimulationSource(11 + x))
        hx, hx2 = olh.hash(rep.a, rep.b, 0), olh.hash(rep.a, rep.b, 1)
        y = rep.y.astype(np.int64)
        share = np.mean((y == hx2) & (hx != hx2))
        se = math.sqrt(expected * (1 - expected) / n)
        assert abs(share - expected) < 5 * se
        # Power: the K-RR mass without collisions, 1/(e^ε+g−1), is rejected.
        krr_mass = 1 / (math.exp(eps) + olh.g - 1) if x == 0 else math.exp(eps) / (
            math.exp(eps) + olh.g - 1)
        assert abs(share - krr_mass) > 5 * se


def test_hadamard_enumerated_over_columns():
    eps, k = 0.8, 5
    hr = HadamardResponse(eps, k)
    cols = np.arange(hr.K)

    def law(x):
        inside = (np.bitwise_count((x + 1) & cols) & 1) == 0
        return np.where(inside, hr.p, 1 - hr.p) * 2 / hr.K

    ours = curve_of(hadamard_pair(eps))
    for x, x2 in ((0, 1), (0, 4), (2, 3)):
        np.testing.assert_allclose(ours, discrete_tradeoff(law(x), law(x2), A).beta, atol=TOL)
    assert np.max(np.abs(curve_of(hadamard_pair(0.9 * eps)) - ours)) > 1e-3


def test_hadamard_empirical_audit():
    eps, n = 1.0, 100_000
    hr = HadamardResponse(eps, 3)
    pair = hadamard_pair(eps)
    y = hr.randomize(np.zeros(n, dtype=np.int64), SimulationSource(5))
    in_x = (np.bitwise_count(1 & y) & 1) == 0
    in_x2 = (np.bitwise_count(2 & y) & 1) == 0
    share = np.mean(in_x & ~in_x2)  # class −ε, mass p[0] under P
    se = math.sqrt(pair.p[0] * (1 - pair.p[0]) / n)
    assert abs(share - pair.p[0]) < 5 * se
    assert abs(share - hadamard_pair(1.2 * eps).p[0]) > 5 * se


def test_cms_worst_pair_and_collisions():
    eps = 1.5
    ours = curve_of(count_mean_sketch_pair(eps))
    np.testing.assert_allclose(ours, curve_of(unary_encoding_pair(eps, False)), atol=TOL)
    # A family and two codes: the pair is (1 − c)·SUE + c·identical, c the share of hashes
    # mapping them together; its curve lies above the worst case, equal when c = 0.
    cms = CountMeanSketch(eps, 50, hashes=8, buckets=4)
    table = cms.bucket_table(code_keys(np.arange(50)))
    for d, d2 in ((0, 1), (3, 7), (10, 40)):
        c = float(np.mean(table[:, d] == table[:, d2]))
        sue = unary_encoding_pair(eps, False)
        mixed = LossPair((1 - c) * sue.p + c * np.array([0, 1, 0]),
                         (1 - c) * sue.q + c * np.array([0, 1, 0]), sue.loss)
        assert np.all(curve_of(mixed) >= ours - TOL)
        if c == 0:
            np.testing.assert_allclose(curve_of(mixed), ours, atol=TOL)


def test_sfp_is_the_product_of_its_two_sketches():
    eps, share = 2.0, 0.3
    pair = product_pair([count_mean_sketch_pair(eps * share),
                         count_mean_sketch_pair(eps * (1 - share))])
    # Independent: the 4 × 4 bits enumerated (each sketch's two differing entries).
    def bits(e, own):
        w = math.exp(-e / 2)
        p1, q1 = 1 / (1 + w), w / (1 + w)
        a, b = (p1, q1) if own else (q1, p1)
        return np.array([(1 - a) * (1 - b), (1 - a) * b, a * (1 - b), a * b])

    p = np.outer(bits(eps * share, True), bits(eps * (1 - share), True)).ravel()
    q = np.outer(bits(eps * share, False), bits(eps * (1 - share), False)).ravel()
    np.testing.assert_allclose(curve_of(pair), discrete_tradeoff(p, q, A).beta, atol=TOL)
    assert pair.epsilon == pytest.approx(eps)


def test_region_pair_is_the_epsilon_delta_boundary():
    for eps, delta in ((1.0, 0.0), (0.5, 1e-3), (2.0, 0.1), (0.0, 0.2)):
        np.testing.assert_allclose(curve_of(epsilon_delta_pair(eps, delta)),
                                   epsilon_delta_tradeoff(eps, delta, A).beta, atol=TOL)


def test_composed_region_against_the_pld_and_randomized_response():
    from dpstudio.engine.accounting.pld import PLD
    from dpstudio.engine.tradeoff import knots_epsilon

    # δ = 0: the region's pair is binary randomized response, composed exactly.
    np.testing.assert_allclose(curve_of(compose_pair(epsilon_delta_pair(0.7, 0.0), 6)),
                               compose_tradeoff("rr", {"epsilon": 0.7}, 6, A).beta, atol=TOL)
    # δ > 0: the optimal composition; the PLD accountant (pessimistic) is above it, close.
    composed = pair_tradeoff(compose_pair(epsilon_delta_pair(0.5, 1e-6), 20), A)
    ours = knots_epsilon(composed, 1e-4)
    pld = PLD.from_epsilon_delta(0.5, 1e-6).self_compose(20).epsilon(1e-4)
    assert ours <= pld * (1 + 1e-8) and ours == pytest.approx(pld, rel=1e-2)
    assert ours < 0.95 * 20 * 0.5  # better than basic composition


def test_compose_pair_matches_the_lattice_composition():
    for k in (1, 2, 7):
        ue = compose_pair(unary_encoding_pair(1.0, True), k)
        krr_pair = LossPair(*_krr(1.0, 5))
        np.testing.assert_allclose(curve_of(compose_pair(krr_pair, k)),
                                   compose_tradeoff("krr", {"epsilon": 1.0, "k": 5}, k, A).beta,
                                   atol=1e-11)
        assert ue.epsilon == pytest.approx(k)


def _krr(eps, k):
    # Classes in increasing loss: output x (P = e^ε/Z), the k − 2 others, output x′.
    z = math.exp(eps) + k - 1
    return ([math.exp(eps) / z, (k - 2) / z, 1 / z], [1 / z, (k - 2) / z, math.exp(eps) / z],
            [-eps, 0.0, eps])


@pytest.mark.parametrize("pair", [
    unary_encoding_pair(0.3, False), unary_encoding_pair(4.0, True),
    local_hashing_pair(2.0, 8, 0.125), hadamard_pair(1.0),
    compose_pair(epsilon_delta_pair(1.0, 1e-3), 5),
    product_pair([hadamard_pair(0.5), unary_encoding_pair(0.7, False)]),
])
def test_trade_off_function_properties(pair):
    ka, kb = pair.knots()
    assert ka[0] == 0 and ka[-1] == 1 and kb[-1] == 0 and kb[0] <= 1
    assert np.all(np.diff(kb) <= 1e-15)  # non-increasing
    slopes = np.diff(kb) / np.diff(ka)
    assert np.all(np.diff(slopes) >= -1e-9)  # convex
    assert np.all(kb <= 1 - ka + 1e-12)  # below the diagonal
    # Symmetric: the curve equals its inverse (neighbours may come in either order).
    inv = np.interp(A, kb[::-1], ka[::-1])
    np.testing.assert_allclose(np.interp(A, ka, kb), inv, atol=1e-9)


def test_bad_pairs_say_one_thing():
    from dpstudio.engine.errors import ParameterError

    with pytest.raises(ParameterError, match="increase"):
        LossPair([0.5, 0.5], [0.5, 0.5], [1.0, 0.0])
    with pytest.raises(ParameterError, match="probability"):
        LossPair([0.5, 0.6], [0.5, 0.5], [0.0, 1.0])
    with pytest.raises(ParameterError, match="g"):
        local_hashing_pair(1.0, 1, 0.0)
    with pytest.raises(ParameterError, match="collision"):
        local_hashing_pair(1.0, 4, 1.0)
