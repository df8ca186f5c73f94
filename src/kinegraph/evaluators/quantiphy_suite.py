"""QuantiPhy as a suite: a run's numbers as an official prediction CSV, scored by `evaluators.quantiphy`.

Ground truth comes from the samples and ids from their question ids; a counterfactual answer carries
its own (alpha * y, see `scored_truth`). Paired statistics are per video: the MRA sum and count per
category, so a resample's macro MRA is exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.atomic import write_atomic
from kinegraph.benchmarks.quantiphy.card import CARD
from kinegraph.benchmarks.quantiphy.loader import COUNTERFACTUAL_PRIOR, load, predictions_frame
from kinegraph.errors import UsageError
from kinegraph.evaluators.quantiphy import (
    CATEGORIES,
    MRA_THRESHOLDS,
    VSI_THRESHOLDS,
    aggregate,
    mra,
    results_csv,
    score_file,
    score_frame,
)
from kinegraph.subsets import metadata_key
from kinegraph.suites import Flag, GroupStats, LazyGenerate, Suite, Warn, mean_columns
from kinegraph.types import Prediction, Sample


def scored_truth(sample: Sample, prediction: Prediction) -> Any:
    """What an answer is scored on: the sample's truth, or alt_posterior for a counterfactual answer."""
    if prediction.metadata.get("prior_used") == COUNTERFACTUAL_PRIOR:
        return prediction.ground_truth
    return sample.answer


def score_predictions(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, Any]:
    """The official results row for a run (ground truth from the samples, ids from the question ids)."""
    frame = predictions_frame(samples, predictions)
    gt = {int(s.question_id): s.answer for s in samples if s.answer is not None and s.question_id is not None}
    scored, invalid = score_frame(frame, gt)
    return aggregate(scored, invalid, "run")


def export_official(
    samples: Sequence[Sample], predictions: Sequence[Prediction], out_dir: Path
) -> list[Path]:
    """Write the predictions as a `model_outputs/*.csv` file the upstream `evaluator.py` reads."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "quantiphy_predictions.csv"
    write_atomic(path, predictions_frame(samples, predictions).to_csv(index=False))
    return [path]


def average_of_present(metrics: dict[str, Any]) -> float | None:
    """The unweighted mean of the category MRAs a run has (None without any): Table 2's MRA on the
    paper's 2D-only analysis subset, where upstream's `mra_average` (all four categories) is null.
    kinegraph's own: the paper prints the number but not how it averaged it."""
    present = [v for c in CATEGORIES if (v := metrics.get(f"mra_{c}")) is not None and not math.isnan(v)]
    return sum(present) / len(present) if present else None


def headline(metrics: dict[str, Any]) -> dict[str, float | None]:
    """MRA average first, then the four categories, their mean over those present and the invalid rate
    (as a fraction)."""
    out: dict[str, float | None] = {"mra_average": metrics.get("mra_average")}
    for category in CATEGORIES:
        out[f"mra_{category}"] = metrics.get(f"mra_{category}")
    out["mra_average_present"] = average_of_present(metrics)
    out["invalid"] = metrics["invalid_percentage"] / 100
    return out


def group_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> GroupStats:
    """Per-video statistics of the 4-category macro MRA: rows = [sum MRA, count] per category."""
    by_id = {p.sample_id: p for p in predictions}
    rows: dict[str, np.ndarray] = {}
    for s in samples:
        p = by_id.get(s.id)
        if p is None or (truth := scored_truth(s, p)) is None:
            continue
        pred = float(p.answer) if isinstance(p.answer, int | float) else float("nan")
        value = mra(abs(pred), float(truth))
        if math.isnan(value):
            continue
        row = rows.setdefault(s.group, np.zeros(2 * len(CATEGORIES)))
        k = CATEGORIES.index(s.metadata["category"])
        row[2 * k] += value
        row[2 * k + 1] += 1
    groups = sorted(rows)

    def finalize(sums: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums[:, 0::2] / sums[:, 1::2]
        return means.mean(axis=1)  # NaN unless all four categories are present, like mra_average

    matrix = np.array([rows[g] for g in groups]) if groups else np.zeros((0, 2 * len(CATEGORIES)))
    return GroupStats(groups, matrix, finalize)


def item_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, GroupStats]:
    """Per-video statistics of each category's mean MRA (`mra_S2` ...), the four breakdown entries."""
    stats = group_stats(samples, predictions)
    return mean_columns(stats.groups, stats.matrix, CATEGORIES)


def evaluate_files(
    predictions: list[Path], warn: Warn, *, ground_truth: Path | None = None, thresholds: str = "official"
) -> str:
    """Score QuantiPhy prediction CSVs; prints the official all_model_results.csv."""
    table = {"official": MRA_THRESHOLDS, "vsi": VSI_THRESHOLDS}
    if thresholds not in table:
        raise UsageError(f"--thresholds must be one of {sorted(table)}, got {thresholds!r}")
    return results_csv([score_file(p, ground_truth, table[thresholds]) for p in predictions])


EVALUATE_FLAGS = (
    Flag("predictions", list[Path], "One or more prediction CSVs (one row each).", positional=True),
    Flag("ground_truth", Path | None, "Ground-truth CSV.", None, spellings=("--ground-truth", "--gt")),
    Flag(
        "thresholds",
        str,
        "'official' (0.1..0.9, 0.95) or non-official 'vsi' (0.5..0.95, paper App. A.2).",
        "official",
    ),
)


SUITE = Suite(
    name="quantiphy",
    card=CARD,
    load=load,
    score=score_predictions,
    export=export_official,
    headline=headline,
    group_stats=group_stats,
    official=True,
    primary="mra_average",
    breakdown=lambda m: {c: m.get(f"mra_{c}") for c in CATEGORIES},
    item_stats=item_stats,
    notes={
        "paired unit": "video",
        "mra_average_present": (
            "non-official: the mean of the category MRAs present (Table 2's MRA on the 2D-only subset, "
            "where the official mra_average, which needs all four, is empty)"
        ),
        "no number": "a blank or zero answer counts as invalid and scores 0 MRA, as upstream",
        "counterfactual": (
            "answers asked with alt_prior (quantiphy.counterfactual; upstream's prior_used column) are "
            "scored on alt_posterior = alpha * y, the paper's protocol (Sec 5.2); upstream's evaluator.py "
            "has no counterfactual scorer and would score them on ground_truth_posterior"
        ),
    },
    generate=LazyGenerate("kinegraph.benchmarks.quantiphy.world:generate"),
    evaluate_files=evaluate_files,
    evaluate_flags=EVALUATE_FLAGS,
    strata="category",
    subset_keys={
        "category": metadata_key("category"),
        "dimension": lambda s: f"{s.metadata['dim']}D" if s.metadata.get("dim") else None,
        "prior": metadata_key("prior_kind"),
        "source": metadata_key("video_source"),
        "video": lambda s: s.group,
    },
)
