"""Contrasts between any two runs of a comparison (not only against the first), Holm-corrected."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import NamedTuple

from kinegraph.report.bootstrap import Delta, paired_bootstrap
from kinegraph.report.holm import holm
from kinegraph.suites import GroupStats


class Pair(NamedTuple):
    """Run `b` minus run `a` (indices into the comparison's runs) on the primary metric."""

    a: int
    b: int
    delta: Delta
    p_holm: float


def all_pairs(stats: Sequence[GroupStats], n_boot: int = 2000, seed: int = 0) -> list[Pair]:
    """Every pair i < j of runs: paired bootstrap of j minus i, with Holm over the pairs' p-values."""
    indices = list(itertools.combinations(range(len(stats)), 2))
    deltas = [paired_bootstrap(stats[i], stats[j], n_boot=n_boot, seed=seed) for i, j in indices]
    adjusted = holm([d.p for d in deltas])
    return [Pair(i, j, d, p) for (i, j), d, p in zip(indices, deltas, adjusted, strict=True)]
