"""Row-group partitions and the Parquet reads without pandas (issue 16).

A big Parquet file is summed in tasks of whole row groups: the exact integers added over
those tasks equal the whole column's, bit for bit, and a release still hashes each file
once, whole, from the bytes it parses. A number column read straight from the pages into
numpy is the in-process reader's column, value for value; a count of one, computed from
its nulls and NaNs alone, is the label reader's count.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpstudio.data.folders import files_fingerprint, hash_bytes, open_files
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.queries import partial as partial_module
from dpstudio.engine.queries.partial import count_partial, partial_sums
from dpstudio.engine.rng import SimulationSource
from dpstudio.execution import partitions
from dpstudio.execution.partitions import (
    file_partial,
    pieces,
    read_column,
    sum_files,
)

ROWS = 4000


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """Two Parquet files of 10 and 3 row groups (400 rows each), one small file."""
    root = tmp_path_factory.mktemp("groups")
    rng = np.random.default_rng(16)
    for name, n in (("a", ROWS), ("b", 1200), ("c", 300)):
        age = rng.integers(-5, 120, n).astype(float)  # whole numbers: on every grid here
        age[rng.random(n) < 0.03] = np.nan
        age[::301] = np.inf
        sex = rng.choice(np.array(["f", "m", " x ", ""], dtype=object), n)
        sex[rng.random(n) < 0.05] = None
        table = pa.table({"age": age, "sex": pa.array(sex, type=pa.string()),
                          "visits": pa.array(rng.integers(0, 9, n).astype(np.int32),
                                             mask=rng.random(n) < 0.1)})
        pq.write_table(table, root / f"{name}.parquet", row_group_size=400)
    return open_files(root)


@pytest.fixture()
def small_pieces(monkeypatch):
    monkeypatch.setattr(partitions, "PIECE_ROWS", 1000)


ANALYSES = [
    (QuerySpec("count", "laplace", 1.0, column="age"), "category"),
    (QuerySpec("count", "laplace", 1.0, column="sex"), "category"),
    (QuerySpec("count", "laplace", 1.0, column="visits"), "category"),
    (QuerySpec("sum", "laplace", 1.0, bounds=(0, 100), column="age"), "numeric"),
    (QuerySpec("mean", "laplace", 1.0, bounds=(0, 100), column="visits"), "numeric"),
    (QuerySpec("variance", "gaussian", 4.0, delta=1e-6, bounds=(0, 100), column="age"),
     "numeric"),
    (QuerySpec("histogram", "laplace", 1.0, bounds=(0, 100), bins=20, column="age"),
     "numeric"),
    (QuerySpec("histogram", "laplace", 1.0, categories=("f", "m", "x"), column="sex"),
     "category"),
    (QuerySpec("median", "exponential", 1.0, bounds=(0, 100), column="age"), "numeric"),
]


def test_big_files_are_split_into_ranges_of_whole_row_groups(big, small_pieces):
    tasks = pieces(big, "age", "numeric")
    by_file = {}
    for path, groups in tasks:
        by_file.setdefault(path.name, []).append(groups)
    # 10 groups of 400 rows: ranges of ≥ 1000 rows (3 groups), the last 400 rows joined.
    assert by_file["a.parquet"] == [(0, 3), (3, 6), (6, 10)]
    assert by_file["b.parquet"] == [None]  # 1200 rows in 3 groups: one range, so whole
    assert by_file["c.parquet"] == [None]  # small: whole
    # A release reads every file whole (it hashes the bytes it parses); so do yes/no columns.
    assert pieces(big, "age", "numeric", fingerprint=True) == [(f, None) for f in big.files]
    assert pieces(big, "sex", "yes_no") == [(f, None) for f in big.files]
    # A label column stored as text is never read as numbers in pieces.
    assert all(g is None for _, g in pieces(big, "sex", "numeric"))


@pytest.mark.parametrize("spec, reader", ANALYSES,
                         ids=[f"{s.query}-{s.column}" for s, _ in ANALYSES])
def test_row_group_pieces_add_up_to_the_whole_columns_integers(big, small_pieces, spec,
                                                               reader):
    values = np.concatenate([read_column(f, "parquet", spec.column, reader)
                             for f in big.files])
    whole = partial_sums(values, spec, SimulationSource(0))
    split, entries = sum_files(big, spec.column, reader, spec, seed=3)
    assert split == whole and entries == []
    assert len(pieces(big, spec.column, reader)) > len(big.files)


def test_on_a_cluster_the_pieces_give_the_same_integers(big, small_pieces):
    pytest.importorskip("distributed")
    from dpstudio.execution.engines import dask_cluster

    spec = QuerySpec("variance", "gaussian", 4.0, delta=1e-6, bounds=(0, 100), column="age")
    values = np.concatenate([read_column(f, "parquet", "age", "numeric") for f in big.files])
    with dask_cluster(processes=False, n_workers=2, threads_per_worker=1) as cluster:
        total, _ = sum_files(big, "age", "numeric", spec, client=cluster.client, seed=5)
    assert total == partial_sums(values, spec, SimulationSource(1))


def test_a_release_hashes_each_file_once_whole_from_the_bytes_it_parses(big, small_pieces,
                                                                        monkeypatch):
    seen = []
    real = partitions.file_partial

    def spy(*args):
        seen.append((args[0], args[-1]))
        return real(*args)

    monkeypatch.setattr(partitions, "file_partial", spy)
    spec = QuerySpec("sum", "laplace", 1.0, bounds=(0, 100), column="age")
    total, entries = sum_files(big, "age", "numeric", spec, fingerprint=True)
    assert seen == [(str(f), None) for f in big.files]  # one task per file, whole
    assert files_fingerprint(entries) == files_fingerprint(
        [hash_bytes(f, f.read_bytes(), big.files[0].parent) for f in big.files])
    split, _ = sum_files(big, "age", "numeric", spec)  # the query's pieces: same integers
    assert split == total
    with pytest.raises(Exception, match="hashes each file whole"):
        file_partial(str(big.files[0]), "parquet", "age", "numeric", spec, True, None, True,
                     None, (0, 3))


def test_numbers_read_without_pandas_are_the_readers_values(tmp_path):
    rng = np.random.default_rng(4)
    n = 3000
    x = rng.normal(0, 1e6, n)
    x[::7] = np.nan
    x[::11] = -np.inf
    table = pa.table({
        " spaced ": x,
        "f32": rng.normal(0, 10, n).astype(np.float32),
        "i64": pa.array(rng.integers(-2**60, 2**60, n), mask=rng.random(n) < 0.2),
        "u8": rng.integers(0, 255, n).astype(np.uint8),
        "flag": pa.array(rng.random(n) < 0.5, mask=rng.random(n) < 0.1),
    })
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=700)
    raw = path.read_bytes()
    for column in ("spaced", "f32", "i64", "u8"):
        expected = read_column(path, "parquet", column, "numeric")
        handle = partitions._open_parquet(path)
        name = partitions._stored_name(handle.schema_arrow, column)
        got = partitions._numbers(handle, name, list(range(handle.metadata.num_row_groups)))
        handle.close()
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, expected)  # NaN where NaN, value for value
    # A count (labels) from nulls and NaNs alone equals the label reader's count, for a
    # float (±inf is a label), an integer and a boolean column; from a path or the bytes.
    spec = QuerySpec("count", "laplace", 1.0)
    for column in ("spaced", "i64", "flag"):
        labels = read_column(path, "parquet", column, "category")
        want = partial_sums(labels, spec, SimulationSource(0))
        for source in (path, raw):
            assert partitions._parquet_partial(source, column, "category", spec,
                                               SimulationSource(0), None) == want


def test_a_count_from_its_two_numbers_is_the_columns_count(monkeypatch):
    v = np.array([1.0, np.nan, 3.0, np.inf, 2.0] * 50)
    specs = [QuerySpec("count", "laplace", 1.0), QuerySpec("count", "gaussian", 0.3, delta=1e-5),
             QuerySpec("count", "laplace", 1e-4), QuerySpec("count", "laplace", 50.0)]
    for spec in specs:
        fast = count_partial(v.size, 150, spec, SimulationSource(2))  # NaN, inf: missing
        assert fast == partial_sums(v, spec, SimulationSource(2))
        # Without the shortcut for a value on the grid: record by record, the same integers.
        with monkeypatch.context() as m:
            m.setattr(partial_module, "_constant_steps", lambda *a: None)
            assert partial_sums(v, spec, SimulationSource(2)) == fast
    with pytest.raises(Exception, match="more present values than rows"):
        count_partial(3, 4, specs[0], SimulationSource(0))


@pytest.mark.parametrize("slice_rows", [999, 1 << 18])
def test_the_partitions_rounding_draws_the_same_bits_as_the_engines(monkeypatch, slice_rows):
    """Off the grid, with a seeded source: the partitioned rounded sum is the in-process
    one, integer for integer (the same words drawn in the same order, the same compare)."""
    from dpstudio.engine.queries import sums
    from dpstudio.engine.queries.sums import _rounded_sums

    monkeypatch.setattr(sums, "_SNAP_SLICE", slice_rows)
    monkeypatch.setattr(partial_module, "_PARTITION_SLICE", slice_rows // 3)
    rng = np.random.default_rng(9)
    x = rng.normal(30, 40, 5000)  # many records outside [lo, hi]: clamped first
    x[::5] = np.round(x[::5])  # some on the grid: they draw no bits
    for lo, hi, grid in ((0.0, 100.0, 2.0**-6), (-10.0, 10.0, 2.0**-3), (0.0, 50.0, 4.0)):
        for seed in range(3):
            want = _rounded_sums(x, lo, hi, grid, SimulationSource(seed), 1)[0][0]
            got = partial_module._rounded_sum(x, lo, hi, grid, SimulationSource(seed))
            assert got == int(want)
            # …and the source is left where the engine leaves it (same words consumed).
            a, b = SimulationSource(seed), SimulationSource(seed)
            _rounded_sums(x, lo, hi, grid, a, 1)
            partial_module._rounded_sum(x, lo, hi, grid, b)
            assert a.uint64(2).tolist() == b.uint64(2).tolist()
    # Through a whole query: the partition's sums are the in-process plan's.
    spec = QuerySpec("variance", "laplace", 1.0, bounds=(0, 100)).validated()
    from dpstudio.engine.queries.sums import _family, _plan, _sum_noise

    plan = _plan(x, spec)
    src = SimulationSource(4)
    steps = []
    for part in plan.sums:
        grid, _ = _sum_noise(part.lo, part.hi, len(plan.sums), _family(spec), spec)
        steps.append((part.name, int(_rounded_sums(part.values, part.lo, part.hi, grid, src,
                                                   1)[0][0])))
    assert partial_sums(x, spec, SimulationSource(4)).sums == tuple(steps)


@pytest.mark.parametrize("bounds, bins", [((0, 100), 7), ((-3.3, 17.1), 20), ((0, 2.0**-99), 3),
                                          ((-2.0**100, 2.0**100), 5), ((0, 1), 1000)])
def test_binned_counts_are_the_searchs_on_and_around_every_edge(bounds, bins):
    spec = QuerySpec("histogram", "laplace", 1.0, bounds=bounds, bins=bins)
    edges = np.linspace(*map(float, bounds), bins + 1)
    rng = np.random.default_rng(bins)
    x = np.concatenate([edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf),
                        rng.uniform(bounds[0], bounds[1], 5000), [np.nan, np.inf, -np.inf],
                        rng.normal(0, 3 * max(map(abs, bounds)), 500)])
    got = partial_sums(x, spec, SimulationSource(0))
    present = x[np.isfinite(x)]
    cells = np.clip(np.searchsorted(edges, present, side="right") - 1, 0, bins - 1)
    assert got.cells == tuple(int(c) for c in np.bincount(cells, minlength=bins))
    assert (got.rows, got.missing, got.non_finite) == (present.size, 3, 2)
    assert got.clamped == int(np.count_nonzero((present < bounds[0]) | (present > bounds[1])))


def test_the_manifest_counts_the_tasks_that_ran(big, small_pieces):
    from dpstudio.analysis import AnalysisSpec
    from dpstudio.execution.run import sum_on_files

    spec = QuerySpec("sum", "laplace", 1.0, bounds=(0, 100), column="age")
    ran = len(pieces(big, "age", "numeric"))
    assert ran > len(big.files)  # the 10- and 3-group files are split
    sums = sum_on_files(AnalysisSpec("central", spec), big, engine="pandas")
    assert sums.execution["partitions"] == ran
    # A release reads each file whole, in one task that hashes it.
    sums = sum_on_files(AnalysisSpec("central", spec), big, engine="pandas",
                        fingerprint=True)
    assert sums.execution["partitions"] == len(big.files)
