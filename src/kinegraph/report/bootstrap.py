"""Paired bootstrap over groups (clips / videos): a 95% interval for the difference of two runs' metric.

Both runs are resampled with the same group draws. Because suites express their headline metric and every
per-question / per-task item as a function of additive per-group statistics, each resample is one weighted
sum, not a re-scoring; the items of a comparison share one set of draws.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from kinegraph.suites import GroupStats

NAN = float("nan")


class Delta(NamedTuple):
    """`b - a` on the shared groups, with a percentile 95% interval and the number of shared groups."""

    delta: float
    low: float
    high: float
    n_groups: int

    @property
    def significant(self) -> bool:
        return bool(self.low > 0 or self.high < 0)


def _rows(stats: GroupStats, groups: list[str]) -> np.ndarray:
    """`stats.matrix` rows in `groups` order; a group the stats lack is a row of zeros (adds nothing)."""
    index = {g: i for i, g in enumerate(stats.groups)}
    out = np.zeros((len(groups), stats.matrix.shape[1]))
    pairs = [(j, index[g]) for j, g in enumerate(groups) if g in index]
    if pairs:
        at, src = zip(*pairs, strict=True)
        out[list(at)] = stats.matrix[list(src)]
    return out


def bootstrap_weights(n_groups: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n_groups) draw counts: resample r takes group g `weights[r, g]` times."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_groups, np.full(n_groups, 1 / n_groups), size=n_boot).astype(float)


def _delta(
    a: GroupStats, b: GroupStats, ma: np.ndarray, mb: np.ndarray, weights: np.ndarray, n: int
) -> Delta:
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample without the item: NaN, dropped below
        point = float(b.finalize(mb.sum(0)[None])[0] - a.finalize(ma.sum(0)[None])[0])
        deltas = b.finalize(weights @ mb) - a.finalize(weights @ ma)
    deltas = deltas[~np.isnan(deltas)]
    if deltas.size == 0:
        return Delta(point, NAN, NAN, n)
    low, high = np.percentile(deltas, [2.5, 97.5])
    return Delta(point, float(low), float(high), n)


def paired_bootstrap(a: GroupStats, b: GroupStats, n_boot: int = 2000, seed: int = 0) -> Delta:
    """Delta of b's metric minus a's, resampling the groups both runs share."""
    shared = sorted(set(a.groups) & set(b.groups))
    if not shared:
        return Delta(NAN, NAN, NAN, 0)
    weights = bootstrap_weights(len(shared), n_boot, seed)
    return _delta(a, b, _rows(a, shared), _rows(b, shared), weights, len(shared))


def paired_bootstrap_items(
    a: Mapping[str, GroupStats], b: Mapping[str, GroupStats], n_boot: int = 2000, seed: int = 0
) -> dict[str, Delta]:
    """Per item (a's order, then b's extras): b minus a, resampling the groups both runs share.

    The shared groups are those either run has for any item; one set of draws serves every item. An
    item's `n_groups` counts the shared groups that hold it; an item missing from a run has a NaN delta.
    """
    in_a = set().union(*(s.groups for s in a.values()))
    in_b = set().union(*(s.groups for s in b.values()))
    shared = sorted(in_a & in_b)
    weights = bootstrap_weights(len(shared), n_boot, seed) if shared else None
    out = {}
    for name in dict.fromkeys([*a, *b]):
        if weights is None or name not in a or name not in b:
            out[name] = Delta(NAN, NAN, NAN, 0)
            continue
        ma, mb = _rows(a[name], shared), _rows(b[name], shared)
        n = int(np.count_nonzero(ma.any(axis=1) | mb.any(axis=1)))
        out[name] = _delta(a[name], b[name], ma, mb, weights, n) if n else Delta(NAN, NAN, NAN, 0)
    return out
