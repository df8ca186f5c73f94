"""AutoDriDM as a suite: a run's raw outputs scored by kinegraph's own (non-official) AutoDriDM scorer.

No official scorer or prediction format exists; `official/` holds a JSONL of `{sample_id, raw}` that
`kinegraph evaluate autodridm` reads. Exact-set scoring (partial credit "none"); a failed call has no
text and scores 0. The paired unit is the image (all its questions together).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.atomic import write_atomic
from kinegraph.benchmarks.autodridm.card import CARD
from kinegraph.benchmarks.autodridm.loader import TASKS, load
from kinegraph.errors import DataError, UsageError
from kinegraph.evaluators.autodridm import (
    LEVELS,
    PARTIAL_CREDIT_MODES,
    read_predictions,
    score,
    score_question,
)
from kinegraph.evaluators.autodridm_tags import tag_distribution
from kinegraph.subsets import metadata_key
from kinegraph.suites import Flag, GroupStats, LazyGenerate, Suite, Warn, mean_columns
from kinegraph.types import Prediction, Sample


def raw_by_id(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, str | None]:
    known = {s.id for s in samples}
    return {p.sample_id: p.raw for p in predictions if p.sample_id in known}


def score_predictions(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, Any]:
    """The scores; with an analyzer model in the run, also its (non-official) `error_tags` distribution."""
    metrics = score(samples, raw_by_id(samples, predictions))
    known = {s.id for s in samples}
    tags = tag_distribution([p for p in predictions if p.sample_id in known])
    if tags is not None:
        metrics["error_tags"] = tags
    return metrics


def export_official(
    samples: Sequence[Sample], predictions: Sequence[Prediction], out_dir: Path
) -> list[Path]:
    """`autodridm_predictions.jsonl` (`{sample_id, raw}` per line) for `kinegraph evaluate autodridm`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "autodridm_predictions.jsonl"
    records = raw_by_id(samples, predictions)
    write_atomic(path, "".join(json.dumps({"sample_id": k, "raw": v}) + "\n" for k, v in records.items()))
    return [path]


def headline(metrics: dict[str, Any]) -> dict[str, float | None]:
    table = metrics["all"]
    out: dict[str, float | None] = {"average": table["average"]}
    out.update({level: table["levels"].get(level) for level in LEVELS})
    out["high_risk_average"] = metrics["high_risk"]["average"]
    return out


def group_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> GroupStats:
    """Per image: [credit sum, questions] per task; finalize = mean of the six task means (the Avg Score)."""
    raws = raw_by_id(samples, predictions)
    rows: dict[str, np.ndarray] = {}
    for s in samples:
        if s.id not in raws:
            continue
        row = rows.setdefault(s.group, np.zeros(2 * len(TASKS)))
        k = TASKS.index(str(s.metadata["task"]))
        row[2 * k] += score_question(s, raws[s.id]).credit
        row[2 * k + 1] += 1
    groups = sorted(rows)

    def finalize(sums: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (sums[:, 0::2] / sums[:, 1::2]).mean(axis=1)  # NaN unless all six tasks are present

    matrix = np.array([rows[g] for g in groups]) if groups else np.zeros((0, 2 * len(TASKS)))
    return GroupStats(groups, matrix, finalize)


def item_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, GroupStats]:
    """Per-image statistics of each task score of the `all` table (tasks without questions left out)."""
    stats = group_stats(samples, predictions)
    return mean_columns(stats.groups, stats.matrix, TASKS, keep_empty=False)


def evaluate_files(predictions: Path, warn: Warn, *, data: Path, partial_credit: str = "none") -> str:
    """Score AutoDriDM with kinegraph's own (non-official) scorer: tasks, levels, high risk, correlation."""
    if partial_credit not in PARTIAL_CREDIT_MODES:
        raise UsageError(
            f"--partial-credit must be one of {list(PARTIAL_CREDIT_MODES)}, got {partial_credit!r}"
        )
    try:
        metrics = score(load(data), read_predictions(predictions), partial_credit)
    except DataError as exc:
        if exc.path is not None:
            raise
        raise DataError(exc.message, path=predictions, field=exc.field) from None
    return json.dumps(metrics, indent=2) + "\n"


EVALUATE_FLAGS = (
    Flag("predictions", Path, "JSONL of {sample_id, raw} (kinegraph predictions.jsonl).", positional=True),
    Flag("data", Path, "AutoDriDM folder with the six task JSON files."),
    Flag("partial_credit", str, "Multi-select proper subsets: none (default), half or fraction.", "none"),
)


SUITE = Suite(
    name="autodridm",
    card=CARD,
    load=load,
    score=score_predictions,
    export=export_official,
    headline=headline,
    group_stats=group_stats,
    primary="average",
    breakdown=lambda m: dict(m["all"]["tasks"]),
    item_stats=item_stats,
    notes={
        "paired unit": "image",
        "scorer": "defined here: upstream publishes no scorer and no prediction format",
    },
    generate=LazyGenerate("kinegraph.benchmarks.autodridm.world:generate"),
    evaluate_files=evaluate_files,
    evaluate_flags=EVALUATE_FLAGS,
    strata="task",
    subset_keys={
        "task": lambda s: s.question_id,
        "level": metadata_key("level"),
        "source": metadata_key("source_dataset"),
    },
)
