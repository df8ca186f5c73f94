"""AutoDriDM error tags (non-official): what an analyzer model said of each answer's reasoning.

The paper's analyzer labels a reasoning trace with integers 0-9 (0 = correct, 1-9 = error modes E1-E9,
Appendix B.1). `graphs.autodridm_analyzer` stores them in each prediction's metadata; here they are
counted into the run's tag distribution. The paper reports these only as figures, so this is a
measurement beside the score, never part of it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from kinegraph.types import Prediction

#: Prediction metadata keys: the tags, or why the analysis failed.
ERROR_TAGS = "error_tags"
ANALYZER_ERROR = "analyzer_error"
TAGS: tuple[str, ...] = ("correct", *(f"E{i}" for i in range(1, 10)))
NOTE = "non-official: error modes tagged by the run's analyzer model (the paper's Prompt 3), not a score"


def tag_distribution(predictions: Sequence[Prediction]) -> dict[str, Any] | None:
    """How many analyzed answers got each tag, and the share of the tagged ones; None when the run had no
    analyzer. Failed analyses are counted in `n_failed`, never dropped."""
    analyzed = [p for p in predictions if ERROR_TAGS in p.metadata or ANALYZER_ERROR in p.metadata]
    if not analyzed:
        return None
    tagged = [p.metadata[ERROR_TAGS] for p in analyzed if ERROR_TAGS in p.metadata]
    counts = Counter(tag for tags in tagged for tag in tags)
    return {
        "note": NOTE,
        "n_analyzed": len(analyzed),
        "n_tagged": len(tagged),
        "n_failed": len(analyzed) - len(tagged),
        "counts": {tag: counts[tag] for tag in TAGS},
        "share": {tag: counts[tag] / len(tagged) if tagged else None for tag in TAGS},
    }
