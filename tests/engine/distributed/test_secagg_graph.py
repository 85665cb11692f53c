"""Masking graphs: the complete graph (Bonawitz et al.) and the randomly relabelled Harary
graph (Bell et al. 2020) — structure, graph sizing, exact sums with dropouts, and messages
that stay uniform on the sparse graph."""

import math

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.stats import chisquare

from dpstudio.engine.distributed import secagg
from dpstudio.engine.distributed.sparse_graph import _threshold_for
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import SimulationSource


def all_edges(session):
    return session.endpoints(np.arange(session.n_edges))


@pytest.mark.parametrize("n,graph,degree", [(7, "complete", None), (8, "complete", None),
                                            (2, "complete", None), (101, "harary", 10),
                                            (60, "harary", 2)])
def test_graph_structure(n, graph, degree):
    s = secagg.setup_session(n, 16, 1, SimulationSource(n), graph=graph, degree=degree)
    k = n - 1 if graph == "complete" else degree
    assert s.graph == graph and s.degree == k and s.n_edges == n * k // 2
    a, b = all_edges(s)
    assert np.all(a != b)
    pairs = np.sort(np.stack([a, b]), axis=0)
    assert np.unique(pairs[0] * n + pairs[1]).size == s.n_edges  # no edge twice
    np.testing.assert_array_equal(np.bincount(np.concatenate([a, b]), minlength=n),
                                  np.full(n, k))  # k-regular
    for e in range(0, s.n_edges, max(1, s.n_edges // 50)):
        assert s.pair_index(int(a[e]), int(b[e])) == e == s.pair_index(int(b[e]), int(a[e]))
    nb = s.neighbours(0)
    assert nb.size == k and 0 not in nb
    assert all(0 in s.neighbours(int(j)) for j in nb)
    assert s.pair_seeds.shape == (s.n_edges, 32)
    if graph == "harary":
        others = np.setdiff1d(np.arange(1, n), nb)
        with pytest.raises(ParameterError, match="neighbours"):
            s.pair_index(0, int(others[0]))


def test_the_harary_graph_is_randomly_relabelled():
    s1 = secagg.setup_session(1000, 16, 1, SimulationSource(1))
    s2 = secagg.setup_session(1000, 16, 1, SimulationSource(2))
    assert s1.graph == s2.graph == "harary"
    assert not np.array_equal(s1.order, s2.order)
    np.testing.assert_array_equal(np.sort(s1.order), np.arange(1000))
    assert not np.array_equal(s1.neighbours(0), s2.neighbours(0))


def test_auto_choice_and_memory_is_linear_in_n():
    assert secagg.setup_session(secagg.SPARSE_ABOVE, 16, 1, SimulationSource(0)).graph == \
        "complete"
    n = 5000
    s = secagg.setup_session(n, 16, 1, SimulationSource(0))
    k, t = secagg.sparse_graph_parameters(n, secagg.DEFAULT_CORRUPT_FRACTION, 0.0)
    assert (s.graph, s.degree, s.threshold) == ("harary", k, t)
    # No O(n²) or O(n·k) state: seeds of the edges are derived when needed.
    for value in vars(s).values():
        if isinstance(value, np.ndarray):
            assert value.size <= 32 * n
    # Seeds computed one at a time or all at once agree (CTR run vs ECB lookup).
    some = np.array([5, 17, 18, 19, 4000, 3])
    np.testing.assert_array_equal(s.edge_seeds(some), s.pair_seeds[some])


@pytest.mark.parametrize("prf", secagg.PRFS)
def test_sparse_exact_sum_with_dropouts(prf):
    n, bits = 600, 48
    s = secagg.setup_session(n, bits, 1, SimulationSource(5), prf, dropout_fraction=0.1)
    assert s.graph == "harary" and s.degree < 100
    x = np.random.default_rng(6).integers(0, 10**9, size=n)
    y = s.mask(x)
    dropped = np.random.default_rng(7).choice(n, 60, replace=False)
    survivors = np.setdiff1d(np.arange(n), dropped)
    total = s.unmask_sum(survivors, y[survivors])
    assert int(total[0]) == int(x[survivors].sum()) % (1 << bits)
    raw = np.sum(y[survivors], axis=0, dtype=np.uint64) & np.uint64((1 << bits) - 1)
    assert int(raw[0]) != int(total[0])  # the recovery step is needed
    everyone = s.unmask_sum(np.arange(n), y)
    assert int(everyone[0]) == int(x.sum()) % (1 << bits)


def test_sparse_vectors_and_the_complete_graph_agree_on_the_sum():
    n, dim, bits = 700, 3, 62
    x = np.random.default_rng(8).integers(-(10**6), 10**6, size=(n, dim))
    dropped = np.arange(0, n, 50)
    survivors = np.setdiff1d(np.arange(n), dropped)
    expected = x[survivors].sum(axis=0).astype(np.int64).view(np.uint64) & np.uint64(
        (1 << bits) - 1)
    for graph in ("harary", "complete"):
        s = secagg.setup_session(n, bits, dim, SimulationSource(9), graph=graph,
                                 dropout_fraction=0.05)
        y = s.mask(x)
        np.testing.assert_array_equal(s.unmask_sum(survivors, y[survivors]), expected)


def test_a_neighbourhood_short_of_the_threshold_is_refused():
    n = 50
    s = secagg.setup_session(n, 16, 1, SimulationSource(10), graph="harary", degree=4)
    assert s.threshold == 3  # a majority of the 4 neighbours
    x = np.arange(n)
    y = s.mask(x)
    # One dropped neighbour leaves everyone 3 survivors of 4 (or 4): recoverable.
    one = int(s.order[1])
    survivors = np.setdiff1d(np.arange(n), [one])
    assert int(s.unmask_sum(survivors, y[survivors])[0]) == int(x[survivors].sum())
    # Two adjacent places on the circle leave the client before them with 2 of 4.
    two = s.order[[1, 2]]
    survivors = np.setdiff1d(np.arange(n), two)
    counts = s.surviving_neighbours(np.isin(np.arange(n), survivors))
    assert counts[s.order[0]] == 2
    with pytest.raises(QueryError, match="surviving neighbours"):
        s.unmask_sum(survivors, y[survivors])


def test_sparse_messages_alone_in_pairs_and_in_part_sums_are_uniform():
    # 40 000 coordinates, each masked by its own PRF words: independent looks at the
    # messages modulo 2^8. After unmasking the server knows every survivor's self-mask
    # seed, so the sparse graph's own masks must hide everything but the total.
    n, dim, bits, q = 40, 40_000, 8, 256
    s = secagg.setup_session(n, bits, dim, SimulationSource(11), graph="harary", degree=4)
    x = np.tile((np.arange(n) * 37 % 256).reshape(n, 1), (1, dim))
    y = s.mask(x).astype(np.int64)
    nb = s.neighbours(0)
    far = int(np.setdiff1d(np.arange(1, n), nb)[0])

    def uniform(v):
        return chisquare(np.bincount(v % q, minlength=q)).pvalue > 1e-4

    assert uniform(y[0]) and uniform(y[0] - y[int(nb[0])]) and uniform(y[0] - y[far])
    assert uniform(y[0] + y[int(nb[0])])
    rev = s.reveal(np.arange(n))
    assert rev.edges.size == 0 and rev.self_clients.size == n
    selfs = np.stack([secagg.expand_seed(seed.tobytes(), dim, s.prf, secagg._SELF_LABEL)
                      for seed in rev.self_seeds])
    z = (y.astype(np.uint64) - selfs).astype(np.int64) % q  # x_i + edge masks only
    assert uniform(z[0]) and uniform(z[0] + z[int(nb[0])])
    half = s.order[: n // 2]  # half the circle: a connected part, not the whole graph
    assert uniform(z[half].sum(axis=0))
    assert uniform(z[np.r_[0, nb]].sum(axis=0))  # a client and all its neighbours
    np.testing.assert_array_equal(z.sum(axis=0) % q, x.sum(axis=0) % q)  # only the total
    total = s.unmask_sum(np.arange(n), y.astype(np.uint64))
    assert np.all(total == x.sum(axis=0) % q)


def test_graph_sizing_meets_its_events():
    n, gamma, delta = 2000, 0.1, 0.1
    k, t = secagg.sparse_graph_parameters(n, gamma, delta)
    assert k % 2 == 0 and 1 <= t <= k < n - 1
    corrupt, dropped = int(gamma * n), int(delta * n)
    h = k // 2
    j = np.arange(h)
    cut = math.log(n) + np.sum(np.log((corrupt + dropped - j) / (n - j)))
    assert cut <= -40 * math.log(2)  # event (i)'s union bound
    # Minimality: k − 2 fails (i), or no threshold meets (ii) and (iii).
    j = np.arange(h - 1)
    cut_smaller = math.log(n) + np.sum(np.log((corrupt + dropped - j) / (n - j)))
    assert (cut_smaller > -40 * math.log(2)
            or _threshold_for(n, corrupt, dropped, k - 2, 40, 40) is None)
    # The events on random draws: survivors that are honest stay connected, nobody has t
    # corrupt neighbours, everybody keeps t surviving neighbours.
    rng = np.random.default_rng(12)
    for seed in range(5):
        s = secagg.setup_session(n, 16, 1, SimulationSource(seed), corrupt_fraction=gamma,
                                 dropout_fraction=delta)
        assert (s.degree, s.threshold) == (k, t)
        perm = rng.permutation(n)
        bad, gone = perm[:corrupt], perm[corrupt:corrupt + dropped]
        a, b = all_edges(s)
        keep = np.ones(n, dtype=bool)
        keep[bad] = keep[gone] = False
        inner = keep[a] & keep[b]
        graph = coo_matrix((np.ones(int(inner.sum())), (a[inner], b[inner])), shape=(n, n))
        _, labels = connected_components(graph, directed=False)
        assert np.unique(labels[keep]).size == 1
        is_bad = np.isin(np.arange(n), bad)
        assert int(s.surviving_neighbours(is_bad).max()) < t
        assert int(s.surviving_neighbours(~np.isin(np.arange(n), gone)).min()) >= t


def test_degrees_stay_logarithmic():
    degrees = [secagg.sparse_graph_parameters(n, 0.1, 0.0)[0]
               for n in (2000, 20_000, 100_000, 1_000_000)]
    assert degrees == sorted(degrees) and 30 <= degrees[0] and degrees[-1] <= 40
    assert secagg.sparse_graph_parameters(100_000, 0.1, 0.1)[0] <= 3 * math.ceil(
        math.log2(100_000)) + 30
    # Assumptions the sparse graph cannot meet below n − 1 neighbours: complete graph.
    assert secagg.sparse_graph_parameters(600, 0.45, 0.45)[0] < 599  # costly, but sparse
    assert secagg.sparse_graph_parameters(600, 0.49, 0.49) is None
    s = secagg.setup_session(600, 16, 1, SimulationSource(0), corrupt_fraction=0.49,
                             dropout_fraction=0.49)
    assert s.graph == "complete"
    with pytest.raises(ParameterError):
        secagg.sparse_graph_parameters(1000, 0.6, 0.5)


def test_graph_checks():
    src = SimulationSource(0)
    with pytest.raises(ParameterError, match="even"):
        secagg.setup_session(100, 16, 1, src, graph="harary", degree=5)
    with pytest.raises(ParameterError, match="even"):
        secagg.setup_session(100, 16, 1, src, graph="harary", degree=100)
    with pytest.raises(ParameterError, match="threshold"):
        secagg.setup_session(100, 16, 1, src, graph="harary", degree=6, threshold=7)
    with pytest.raises(ParameterError, match="graph"):
        secagg.setup_session(100, 16, 1, src, graph="ring")
    with pytest.raises(ParameterError, match="limited"):
        secagg.setup_session(100_000, 16, 1, src, graph="complete")


def test_twenty_thousand_clients_sum_exactly_with_dropouts():
    n, bits = 20_000, 40
    s = secagg.setup_session(n, bits, 1, SimulationSource(16), dropout_fraction=0.05)
    assert s.graph == "harary" and s.n_edges == n * s.degree // 2
    x = np.random.default_rng(17).integers(0, 2**20, size=n)
    y = s.mask(x)
    survivors = np.sort(np.random.default_rng(18).permutation(n)[1000:])
    total = s.unmask_sum(survivors, y[survivors])
    assert int(total[0]) == int(x[survivors].sum()) % (1 << bits)
