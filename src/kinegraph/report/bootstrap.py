"""Paired bootstrap over groups (clips / videos): a 95% interval for the difference of two runs' metric.

Both runs are resampled with the same group draws. Because suites express their headline metric and every
per-question / per-task item as a function of additive per-group statistics, each resample is one weighted
sum, not a re-scoring; the items of a comparison share one set of draws.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from kinegraph.suites import GroupStats

NAN = float("nan")


class _Interval(NamedTuple):
    delta: float
    low: float
    high: float
    n_groups: int


class Delta(_Interval):
    """`b - a` on the shared groups, with a percentile 95% interval and the number of shared groups.

    `p` is the two-sided bootstrap p-value of "no difference" (see `bootstrap_p`; NaN where undefined),
    kept beside the tuple so a Delta still unpacks and compares as (delta, low, high, n_groups).
    """

    p: float

    def __new__(cls, delta: float, low: float, high: float, n_groups: int, p: float = NAN) -> Delta:
        self = super().__new__(cls, delta, low, high, n_groups)
        self.p = p
        return self

    @property
    def significant(self) -> bool:
        return bool(self.low > 0 or self.high < 0)


class _Aligner:
    """Puts GroupStats rows in the order of a fixed group list (a group the stats lack is a row of zeros,
    adding nothing); items sharing a group list map it once."""

    def __init__(self, groups: list[str]) -> None:
        self.position = {g: j for j, g in enumerate(groups)}
        self.n = len(groups)
        self._maps: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, stats: GroupStats) -> np.ndarray:
        key = id(stats.groups)
        if key not in self._maps:
            at = np.array([self.position.get(g, -1) for g in stats.groups], dtype=int)
            self._maps[key] = (at[at >= 0], np.flatnonzero(at >= 0))
        at, src = self._maps[key]
        out = np.zeros((self.n, stats.matrix.shape[1]))
        out[at] = stats.matrix[src]
        return out


@functools.lru_cache(maxsize=8)
def bootstrap_weights(n_groups: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n_groups) draw counts: resample r takes group g `weights[r, g]` times (read-only).

    Drawing is the costly step (~0.1 s for 1000 groups x 2000 resamples); the headline, every item and
    every run of a comparison reuse one cached draw when they resample the same number of groups.
    """
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n_groups, np.full(n_groups, 1 / n_groups), size=n_boot).astype(float)
    weights.flags.writeable = False
    return weights


def _delta(a: GroupStats, b: GroupStats, sums_a: np.ndarray, sums_b: np.ndarray, n: int) -> Delta:
    """From the full-sample sums (row 0) and the resampled sums (rows 1..) of both runs."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample without the item: NaN, dropped below
        values = b.finalize(sums_b) - a.finalize(sums_a)
    point, deltas = float(values[0]), values[1:]
    deltas = deltas[~np.isnan(deltas)]
    if deltas.size == 0:
        return Delta(point, NAN, NAN, n)
    low, high = np.percentile(deltas, [2.5, 97.5])
    return Delta(point, float(low), float(high), n, bootstrap_p(deltas))


def bootstrap_p(deltas: np.ndarray) -> float:
    """Two-sided p of "no difference" from resampled deltas: twice the smaller tail share at 0.

    Each tail counts one extra draw ((k + 1) / (B + 1)), so p is never 0 from finitely many resamples; p
    falls below 0.05 about when the 95% percentile interval excludes 0.
    """
    n = deltas.size
    below = (np.count_nonzero(deltas <= 0) + 1) / (n + 1)
    above = (np.count_nonzero(deltas >= 0) + 1) / (n + 1)
    return float(min(1.0, 2 * min(below, above)))


def _sums(weights: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Row 0: the sum over all groups; rows 1..: one weighted sum per resample."""
    return np.vstack([matrix.sum(0)[None], weights @ matrix])


def paired_bootstrap(a: GroupStats, b: GroupStats, n_boot: int = 2000, seed: int = 0) -> Delta:
    """Delta of b's metric minus a's, resampling the groups both runs share."""
    shared = sorted(set(a.groups) & set(b.groups))
    if not shared:
        return Delta(NAN, NAN, NAN, 0)
    weights, align = bootstrap_weights(len(shared), n_boot, seed), _Aligner(shared)
    return _delta(a, b, _sums(weights, align(a)), _sums(weights, align(b)), len(shared))


def paired_bootstrap_items(
    a: Mapping[str, GroupStats], b: Mapping[str, GroupStats], n_boot: int = 2000, seed: int = 0
) -> dict[str, Delta]:
    """Per item (a's order, then b's extras): b minus a, resampling the groups both runs share.

    The shared groups are those either run has for any item; one set of draws serves every item, and
    each run's items are summed in one matrix product. An item's `n_groups` counts the shared groups
    that hold it; an item missing from a run has a NaN delta.
    """
    names = list(dict.fromkeys([*a, *b]))
    shared = sorted(
        set().union(*(s.groups for s in a.values())) & set().union(*(s.groups for s in b.values()))
    )
    both = [name for name in names if name in a and name in b]
    out = dict.fromkeys(names, Delta(NAN, NAN, NAN, 0))
    if not shared or not both:
        return out
    weights = bootstrap_weights(len(shared), n_boot, seed)
    align = _Aligner(shared)
    sums_a, bounds_a, held_a = _stacked(align, [a[name] for name in both], weights)
    sums_b, bounds_b, held_b = _stacked(align, [b[name] for name in both], weights)
    for k, name in enumerate(both):
        n = int(np.count_nonzero(held_a[k] | held_b[k]))
        if n:
            ca, cb = sums_a[:, bounds_a[k] : bounds_a[k + 1]], sums_b[:, bounds_b[k] : bounds_b[k + 1]]
            out[name] = _delta(a[name], b[name], ca, cb, n)
    return out


def _stacked(
    align: _Aligner, items: list[GroupStats], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """One run's items side by side: (sums as `_sums`, column bounds per item, groups holding each item)."""
    matrices = [align(stats) for stats in items]
    bounds = np.cumsum([0] + [m.shape[1] for m in matrices])
    return _sums(weights, np.hstack(matrices)), bounds, [m.any(axis=1) for m in matrices]
