"""Paired bootstrap over groups (clips / videos): a 95% interval for the difference of two runs' metric.

Both runs are resampled with the same group draws. Because suites express their headline metric as a
function of additive per-group statistics, each resample is one weighted sum, not a re-scoring.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kinegraph.suites import GroupStats


class Delta(NamedTuple):
    """`b - a` on the shared groups, with a percentile 95% interval and the number of shared groups."""

    delta: float
    low: float
    high: float
    n_groups: int

    @property
    def significant(self) -> bool:
        return bool(self.low > 0 or self.high < 0)


def _restrict(stats: GroupStats, groups: list[str]) -> np.ndarray:
    index = {g: i for i, g in enumerate(stats.groups)}
    return stats.matrix[[index[g] for g in groups]]


def paired_bootstrap(a: GroupStats, b: GroupStats, n_boot: int = 2000, seed: int = 0) -> Delta:
    """Delta of b's metric minus a's, resampling the groups both runs share."""
    shared = sorted(set(a.groups) & set(b.groups))
    if not shared:
        nan = float("nan")
        return Delta(nan, nan, nan, 0)
    ma, mb = _restrict(a, shared), _restrict(b, shared)
    point = float(b.finalize(mb.sum(0)[None])[0] - a.finalize(ma.sum(0)[None])[0])
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(shared), np.full(len(shared), 1 / len(shared)), size=n_boot).astype(float)
    deltas = b.finalize(weights @ mb) - a.finalize(weights @ ma)
    deltas = deltas[~np.isnan(deltas)]
    if deltas.size == 0:
        nan = float("nan")
        return Delta(point, nan, nan, len(shared))
    low, high = np.percentile(deltas, [2.5, 97.5])
    return Delta(point, float(low), float(high), len(shared))
