"""A 2x2 design (e.g. frames x tools): both main effects and the interaction, with paired bootstrap CIs.

Cells come in the order (neither, A only, B only, both). All four runs are resampled with the same group
draws, so each effect's interval accounts for the runs sharing their clips / videos.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kinegraph.report.bootstrap import NAN, Delta, _Aligner, _sums, bootstrap_p, bootstrap_weights
from kinegraph.suites import GroupStats

EFFECTS = ("main effect A", "main effect B", "interaction A x B")


def effects_of(v00: np.ndarray, v10: np.ndarray, v01: np.ndarray, v11: np.ndarray) -> list[np.ndarray]:
    """Main effect of A (mean over B of A's change), of B likewise, and the interaction (how much A's
    change differs when B is on)."""
    return [(v10 + v11 - v00 - v01) / 2, (v01 + v11 - v00 - v10) / 2, (v11 - v01) - (v10 - v00)]


def factorial_2x2(cells: Sequence[GroupStats], n_boot: int = 2000, seed: int = 0) -> dict[str, Delta]:
    """The three effects of a 2x2 design on the metric the cells' stats finalize to, over shared groups."""
    if len(cells) != 4:
        raise ValueError(f"a 2x2 design has 4 runs (neither, A, B, both), got {len(cells)}")
    shared = sorted(set.intersection(*(set(c.groups) for c in cells)))
    if not shared:
        return dict.fromkeys(EFFECTS, Delta(NAN, NAN, NAN, 0))
    weights, align = bootstrap_weights(len(shared), n_boot, seed), _Aligner(shared)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = [c.finalize(_sums(weights, align(c))) for c in cells]
    out = {}
    for name, effect in zip(EFFECTS, effects_of(*values), strict=True):
        resampled = effect[1:][~np.isnan(effect[1:])]
        if resampled.size == 0:
            out[name] = Delta(float(effect[0]), NAN, NAN, len(shared))
            continue
        low, high = np.percentile(resampled, [2.5, 97.5])
        out[name] = Delta(float(effect[0]), float(low), float(high), len(shared), bootstrap_p(resampled))
    return out
