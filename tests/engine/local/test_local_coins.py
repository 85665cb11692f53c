"""Exact coins of the local randomizers: certified thresholds and correct frequencies."""

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from dpstudio.engine.local import _coins
from dpstudio.engine.local._coins import (
    ExactCoin,
    rr_flip_coin,
    rr_keep_coin,
    uniform_below32,
)
from dpstudio.engine.rng import SimulationSource


def _floor64(p_decimal: Decimal) -> int:
    return int(p_decimal * (1 << 64))


@pytest.mark.parametrize("eps,others", [(1.0, 1), (0.1, 99), (5.0, 3), (2.0**-20, 1)])
def test_thresholds_are_the_true_floors(eps, others):
    with localcontext() as ctx:
        ctx.prec = 80
        e = Decimal(Fraction(eps).numerator) / Decimal(Fraction(eps).denominator)
        keep = e.exp() / (e.exp() + others)
        flip = 1 / (e.exp() + 1)
        assert rr_keep_coin(eps, others).t64 == _floor64(keep)
        assert rr_flip_coin(eps).t64 == _floor64(flip)


def _z(heads, trials, p):
    return (heads - trials * p) / math.sqrt(trials * p * (1 - p))


@pytest.mark.parametrize("coin", [rr_flip_coin(1.0), rr_keep_coin(0.3, 9),
                                  ExactCoin.rational(Fraction(3, 4))],
                         ids=["flip", "keep", "rational"])
def test_coin_frequencies(coin):
    src = SimulationSource(4)
    bits = coin.bits(2_000_000, src)
    assert abs(_z(int(bits.sum()), bits.size, coin.value)) < 5
    # Adjacent lanes are independent: pairs (b_i, b_{i+1}) have the product law.
    pairs = bits[:-1:2] * 2 + bits[1::2]
    p = coin.value
    expected = np.array([(1 - p) ** 2, (1 - p) * p, p * (1 - p), p * p]) * pairs.size
    assert chisquare(np.bincount(pairs, minlength=4), expected).pvalue > 1e-4
    flips = coin.flip(1_000_000, src)
    assert abs(_z(int(flips.sum()), flips.size, coin.value)) < 5


def test_lane_sampler_decides_late_digits_exactly(monkeypatch):
    # With no full passes every digit goes through the per-word phase.
    monkeypatch.setattr(_coins, "_FULL_DIGITS", 0)
    coin = rr_flip_coin(0.7)
    bits = coin.bits(500_000, SimulationSource(5))
    assert abs(_z(int(bits.sum()), bits.size, coin.value)) < 5


class _Scripted:
    """A source replaying given words (then zeros): forces the exact tie paths."""

    is_secure = False
    label = "scripted"

    def __init__(self, words64):
        self.words = list(words64)

    def uint64(self, size):
        out = [self.words.pop(0) if self.words else 0 for _ in range(int(size))]
        return np.array(out, dtype=np.uint64)

    def uint32(self, size):
        return self.uint64((int(size) + 1) // 2).view(np.uint32)[: int(size)]


def test_ties_are_decided_exactly():
    coin = rr_keep_coin(1.0, 4)
    p = Fraction(1) / (1 + 4 * Fraction(Decimal(-1).exp()))  # ~ to 1e-28: plenty here
    t32 = int(coin.t32)
    for nxt in (0, 2**64 - 1, int(coin.t64 & (2**32 - 1)) << 32):
        # A 32-bit word equal to the threshold, then 64 more bits of U.
        src = _Scripted([nxt])
        heads = coin.from_words32(np.array([t32], dtype=np.uint32), src)
        u = Fraction((t32 << 64) | nxt, 1 << 96)
        assert bool(heads[0]) == (u < p)


def test_all_64_digits_equal_falls_back_to_exact():
    # Every lane's first 64 digits equal p's: decided by the exact comparison.
    coin = rr_flip_coin(1.0)
    digits = [(coin.t64 >> (63 - i)) & 1 for i in range(64)]
    words = [0xFFFFFFFFFFFFFFFF if d else 0 for d in digits]
    src = _Scripted(words + [0] * 64)  # then U's later bits are 0: U < p iff p's are not
    out = coin.lanes(1, src)
    expected = coin.bounds(60)[0] > Fraction(coin.t64, 1 << 64)  # p above its floor
    assert int(out[0]) == (0xFFFFFFFFFFFFFFFF if expected else 0)


@pytest.mark.parametrize("r", [2, 3, 99, 1000, 65536, 70001, 2**32 - 5])
def test_uniform_below_is_uniform(r):
    src = SimulationSource(6)
    words = src.uint32(400_000)
    u = uniform_below32(r, words, src).astype(np.int64)
    assert u.min() >= 0 and u.max() < r
    bins = min(r, 64)
    cells = (u * bins) // r
    expected = np.diff(np.ceil(np.arange(bins + 1) * r / bins)) / r * u.size
    assert chisquare(np.bincount(cells, minlength=bins), expected).pvalue > 1e-4


def test_high_bit_ties_are_decided_exactly():
    coin = rr_keep_coin(0.5, 9)
    p = coin.bounds(60)[0]
    t16 = coin.t64 >> 48
    for low, nxt in ((0x1234, 0), (0xFFFF, 2**64 - 1), (0, int(coin.t64 & (2**48 - 1)) << 16)):
        word = np.array([(t16 << 16) | low], dtype=np.uint32)
        heads = coin.from_high_bits(word, 16, _Scripted([nxt]))
        u = Fraction((t16 << 64) | nxt, 1 << 80)  # the low 16 bits are not the coin's
        assert bool(heads[0]) == (u < p)


@pytest.mark.parametrize("k", [5, 70_000])
def test_krr_output_law(k):
    from dpstudio.engine.local import KaryRR

    krr = KaryRR(1.3, k)
    x = np.full(1_000_000, 3)
    out = krr.randomize(x, SimulationSource(9))
    kept = int(np.sum(out == 3))
    assert abs(_z(kept, out.size, krr.p)) < 5
    others = out[out != 3]
    if k == 5:
        counts = np.bincount(others, minlength=k)
        assert counts[3] == 0
        assert chisquare(np.delete(counts, 3)).pvalue > 1e-4
    else:
        cells = np.where(others > 3, others - 1, others) * 64 // (k - 1)
        assert chisquare(np.bincount(cells, minlength=64)).pvalue > 1e-4
