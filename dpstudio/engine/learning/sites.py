"""Sites of a federation: which site holds each record.

Two ways to get them:

- :func:`sites_from_column`: one site per distinct value of a column the analyst chooses
  (a hospital, a region…): the federation the data already has.
- :func:`split_sites`: a random split into S sites with a chosen label imbalance, for
  studying federations that do not exist yet. For each label class, the share of that
  class given to each site is drawn from Dirichlet(α, …, α) (Hsu, Qi & Brown 2019): small
  α puts most of a class on a few sites (strong label skew), large α approaches an even
  split; ``alpha=None`` splits uniformly at random regardless of the label.

The split is a planning device, not a privacy mechanism: it reads no noise and its
seeded numpy generator is fine. Site sizes are treated as public throughout the
federated module (as the dataset size n is by DP-SGD).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstudio.engine.checks import count, positive
from dpstudio.engine.errors import ParameterError, QueryError

__all__ = ["Sites", "label_skew", "site_label_shares", "sites_from_column", "split_sites"]

_MAX_TRIES = 200  # Dirichlet redraws before a split that leaves a site too small is refused


@dataclass(frozen=True)
class Sites:
    """The site of each record.

    Attributes
    ----------
    codes : numpy.ndarray of int64, shape (n,)
        The site of each record, in 0 … S−1.
    names : tuple of str
        The name of each site (the column's value, or ``"site 1"`` …).
    """

    codes: np.ndarray
    names: tuple

    @property
    def count(self) -> int:
        """S, the number of sites."""
        return len(self.names)

    @property
    def sizes(self) -> np.ndarray:
        """The number of records of each site (int64, shape (S,))."""
        return np.bincount(self.codes, minlength=self.count).astype(np.int64)

    def indices(self) -> list[np.ndarray]:
        """The row indices of each site, in site order.

        Returns
        -------
        list of numpy.ndarray of int64
            S arrays, increasing indices, together a partition of 0 … n−1.
        """
        order = np.argsort(self.codes, kind="stable")
        bounds = np.cumsum(self.sizes)[:-1]
        return np.split(order, bounds)


def sites_from_column(values) -> Sites:
    """One site per distinct value of a column (one site per hospital, region…).

    Parameters
    ----------
    values : array_like, 1-d
        The site column (numbers or strings); no missing values.

    Returns
    -------
    Sites
        Sites in sorted order of their values.

    Raises
    ------
    QueryError
        If the column is empty, not one column, or has missing values.
    """
    v = np.asarray(values)
    if v.ndim != 1:
        raise QueryError("the site column must be one column")
    if v.size == 0:
        raise QueryError("the site column is empty")
    if v.dtype.kind == "f" and np.isnan(v).any():
        raise QueryError("the site column has missing values: every record needs a site")
    if v.dtype.kind == "O":
        missing = np.fromiter((x is None or (isinstance(x, float) and math.isnan(x))
                               for x in v), dtype=bool, count=v.size)
        if missing.any():
            raise QueryError("the site column has missing values: every record needs a site")
        v = v.astype(str)
    names, codes = np.unique(v, return_inverse=True)
    return Sites(codes.astype(np.int64).ravel(), tuple(str(x) for x in names))


def split_sites(labels, sites: int, alpha: float | None = None, *, seed: int = 0,
                min_size: int = 1) -> Sites:
    """A random split into S sites, label-skewed by Dirichlet(α) per class.

    For each class c, its records (in a seeded random order) are cut into S consecutive
    parts with proportions p_c ~ Dirichlet(α·1_S), so the share of class c at site s has
    mean 1/S and variance (1/S)(1 − 1/S)/(Sα + 1). With ``alpha=None`` the records are
    dealt uniformly at random (sizes differ by at most one), whatever the label.

    Parameters
    ----------
    labels : array_like, 1-d
        The label of each record (any values; a regression label should be binned first).
    sites : int
        S ≥ 1.
    alpha : float, optional
        The Dirichlet concentration α > 0; None for a uniform split.
    seed : int, optional
        The split's seed (public).
    min_size : int, optional
        Every site gets at least this many records; splits that miss it are redrawn
        (up to 200 times, then refused).

    Returns
    -------
    Sites
        Named ``"site 1"`` … ``"site S"``.

    Raises
    ------
    ParameterError
        For S < 1, α ≤ 0, more sites than records allow, or a skew too strong for every
        site to get ``min_size`` records.
    """
    s = count("the number of sites", sites)
    y = np.asarray(labels)
    if y.ndim != 1 or y.size == 0:
        raise QueryError("the labels must be one non-empty column")
    n = y.size
    m = count("the smallest site size", min_size)
    if s * m > n:
        raise ParameterError(f"{n:,} records cannot fill {s} sites of at least {m} records")
    gen = np.random.default_rng(seed)
    names = tuple(f"site {i + 1}" for i in range(s))
    if alpha is None:
        codes = np.empty(n, dtype=np.int64)
        codes[gen.permutation(n)] = np.arange(n) % s
        return Sites(codes, names)
    a = positive("the Dirichlet concentration α", alpha)
    _, classes = np.unique(y, return_inverse=True)
    classes = classes.ravel()
    members = [np.flatnonzero(classes == c) for c in range(int(classes.max()) + 1)]
    for _ in range(_MAX_TRIES):
        codes = np.empty(n, dtype=np.int64)
        for idx in members:
            idx = gen.permutation(idx)
            p = gen.dirichlet(np.full(s, a))
            cuts = np.rint(np.cumsum(p)[:-1] * idx.size).astype(np.int64)
            parts = np.split(idx, cuts)
            for site, part in enumerate(parts):
                codes[part] = site
        if np.bincount(codes, minlength=s).min() >= m:
            return Sites(codes, names)
    raise ParameterError(f"at α = {a:g} the split keeps leaving a site with fewer than {m} "
                         "records: raise α or use fewer sites")


def site_label_shares(labels, sites: Sites) -> np.ndarray:
    """The share of each class held by each site.

    Parameters
    ----------
    labels : array_like, 1-d
        The label of each record.
    sites : Sites
        The split.

    Returns
    -------
    numpy.ndarray, shape (S, K)
        Column c is the fraction of class c's records at each site (columns sum to 1);
        classes in sorted order.
    """
    _, classes = np.unique(np.asarray(labels), return_inverse=True)
    classes = classes.ravel()
    k = int(classes.max()) + 1
    table = np.zeros((sites.count, k))
    np.add.at(table, (sites.codes, classes), 1.0)
    return table / table.sum(axis=0, keepdims=True)


def label_skew(labels, sites: Sites) -> float:
    """Mean total-variation distance between each site's label mix and the overall one.

    0 when every site has the overall label proportions; near 1 − 1/K when each site holds
    a single class of K balanced ones. Weighted by site size.

    Parameters
    ----------
    labels : array_like, 1-d
        The label of each record.
    sites : Sites
        The split.

    Returns
    -------
    float
        In [0, 1].
    """
    _, classes = np.unique(np.asarray(labels), return_inverse=True)
    classes = classes.ravel()
    k = int(classes.max()) + 1
    table = np.zeros((sites.count, k))
    np.add.at(table, (sites.codes, classes), 1.0)
    sizes = table.sum(axis=1)
    overall = table.sum(axis=0) / table.sum()
    mix = table / np.maximum(sizes, 1.0)[:, None]
    tv = 0.5 * np.abs(mix - overall).sum(axis=1)
    return float(np.sum(tv * sizes) / sizes.sum())
