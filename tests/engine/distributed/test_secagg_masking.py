"""Pairwise-masked secure aggregation: exact sums with and without dropouts, and messages
that look uniform alone and in pairs."""

import numpy as np
import pytest
from scipy.stats import chisquare

from dpstudio.engine.distributed import secagg
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import SimulationSource


@pytest.mark.parametrize("prf", secagg.PRFS)
@pytest.mark.parametrize("n,dim,bits", [(2, 1, 16), (7, 3, 32), (40, 1, 62), (5, 4, 64)])
def test_exact_sum_without_dropouts(prf, n, dim, bits):
    src = SimulationSource(n)
    session = secagg.setup_session(n, bits, dim, src, prf)
    x = np.random.default_rng(n).integers(-1000, 10**6, size=(n, dim))
    y = session.mask(x)
    everyone = np.arange(n)
    total = session.unmask_sum(everyone, y)
    expected = x.sum(axis=0).astype(np.int64).view(np.uint64) & np.uint64(session.modulus - 1)
    np.testing.assert_array_equal(total, expected)


@pytest.mark.parametrize("prf", secagg.PRFS)
@pytest.mark.parametrize("dropped", [[0], [3, 9], [1, 2, 5, 11, 19]])
def test_exact_sum_with_dropouts(prf, dropped):
    n, dim, bits = 20, 2, 40
    session = secagg.setup_session(n, bits, dim, SimulationSource(1), prf)
    x = np.random.default_rng(2).integers(0, 10**9, size=(n, dim))
    y = session.mask(x)
    survivors = np.setdiff1d(np.arange(n), dropped)
    total = session.unmask_sum(survivors, y[survivors])
    np.testing.assert_array_equal(total, x[survivors].sum(axis=0) % (1 << bits))
    # Summing the survivors' messages without the recovery step gives garbage.
    raw = np.sum(y[survivors], axis=0, dtype=np.uint64) & np.uint64((1 << bits) - 1)
    assert not np.array_equal(raw, x[survivors].sum(axis=0) % (1 << bits))


def test_too_many_dropouts_is_refused():
    session = secagg.setup_session(10, 16, 1, SimulationSource(3))
    y = session.mask(np.arange(10))
    with pytest.raises(QueryError, match="survived"):
        session.unmask_sum(np.arange(5), y[:5])  # 5 < threshold 6


def test_messages_alone_and_in_pairs_are_uniform():
    # 40 000 coordinates: each is masked by its own PRF words, so they are 40 000
    # independent looks at one client's message modulo 2^8.
    n, dim, bits = 5, 40_000, 8
    session = secagg.setup_session(n, bits, dim, SimulationSource(4))
    x = np.tile(np.array([[7], [7], [200], [0], [13]]), (1, dim))
    y = session.mask(x).astype(np.int64)
    q = 1 << bits
    assert chisquare(np.bincount(y[0], minlength=q)).pvalue > 1e-4
    assert chisquare(np.bincount((y[0] - y[1]) % q, minlength=q)).pvalue > 1e-4
    assert chisquare(np.bincount((y[2] + y[3]) % q, minlength=q)).pvalue > 1e-4
    # Power: the sum of all messages is not uniform: after unmasking it is Σx = 227.
    total = session.unmask_sum(np.arange(n), y.astype(np.uint64))
    assert np.all(total == 227)
    raw = np.bincount((x[0] + x[1]) % q, minlength=q)  # unmasked values: far from uniform
    assert chisquare(raw).pvalue < 1e-100


def test_prf_uses_the_full_seed_and_the_prfs_differ():
    seed = bytes(range(32))
    flipped = seed[:31] + bytes([seed[31] ^ 1])  # last bit of a 256-bit seed
    streams = {}
    for prf in secagg.PRFS:
        a = secagg.expand_seed(seed, 8, prf)
        assert np.array_equal(a, secagg.expand_seed(seed, 8, prf))
        assert not np.array_equal(a, secagg.expand_seed(flipped, 8, prf))
        assert not np.array_equal(a, secagg.expand_seed(seed, 8, prf, secagg._SELF_LABEL))
        streams[prf] = a
    assert secagg.DEFAULT_PRF == "chacha20"
    assert np.array_equal(secagg.expand_seed(seed, 8), streams["chacha20"])
    assert len({a.tobytes() for a in streams.values()}) == len(secagg.PRFS)
    with pytest.raises(ParameterError):
        secagg.expand_seed(seed[:16], 8)
    with pytest.raises(ParameterError):
        secagg.expand_seed(seed, 8, "md5")


def test_setup_checks():
    src = SimulationSource(0)
    for args in [(1, 16, 1), (5, 0, 1), (5, 65, 1), (5, 16, 0)]:
        with pytest.raises(ParameterError):
            secagg.setup_session(*args, src)
    session = secagg.setup_session(6, 16, 2, src)
    with pytest.raises(ParameterError, match="shape"):
        session.mask(np.zeros((5, 2)))
    assert session.pair_seeds.shape == (15, 32)
    idx = {session.pair_index(i, j) for i in range(6) for j in range(i + 1, 6)}
    assert idx == set(range(15))
