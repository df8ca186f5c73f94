"""STSBench as a suite: a run's raw outputs scored by `evaluators.stsbench` (first character, 4 groups).

Upstream's scorer stops on an empty output; in a run a failed model call has no output, so runs score
it as wrong (the scorer's non-official `empty_as_wrong`, counted in `n_empty`). The headline's first
column, `group_average`, is the mean over the scenario groups the data has; with all four groups it is
upstream's `Average`. STSnu.json names no scene, so the paired statistics resample scenarios (records).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.atomic import write_atomic
from kinegraph.benchmarks.stsbench.card import CARD
from kinegraph.benchmarks.stsbench.loader import GROUPS, load
from kinegraph.evaluators.stsbench import score, score_file
from kinegraph.subsets import metadata_key
from kinegraph.suites import Flag, GroupStats, LazyGenerate, Suite, Warn, mean_columns
from kinegraph.types import Prediction, Sample


def _record(sample: Sample) -> dict[str, Any]:
    """The STSnu.json fields the scorer reads: the scenario and which actor blocks the record has."""
    group = str(sample.metadata["scenario_group"])
    blocks = {"ego": ("ego",), "ego_agent": ("ego", "other_agent"), "agent": ("agent",)}
    present = blocks.get(group, ("agent", "other_agent"))
    return {"scenario": sample.metadata["scenario"], **{b: {} for b in present}}


def scored_text(prediction: Prediction) -> str:
    """What upstream's scorer reads: the raw output ("" if none), or the answer a graph extracted from
    it where the raw text does not start with the letter (Scene-CoT's `official_prediction`)."""
    return str(prediction.metadata.get("official_prediction", prediction.raw or ""))


def answer_records(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> list[dict[str, Any]]:
    """Upstream prediction records `{prediction, gt_letter, gt_text, man_id}` (`scored_text`)."""
    by_id = {p.sample_id: p for p in predictions}
    return [
        {
            "prediction": scored_text(by_id[s.id]),
            "gt_letter": s.answer,
            "gt_text": s.metadata.get("answer_text"),
            "man_id": s.metadata["man_id"],
        }
        for s in samples
        if s.id in by_id
    ]


def score_predictions(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, Any]:
    """Upstream's group scores over the answered scenarios, plus `group_average` and `n_empty`."""
    answers = answer_records(samples, predictions)
    answered = {a["man_id"] for a in answers}
    kept = sorted(
        (s for s in samples if s.metadata["man_id"] in answered), key=lambda s: s.metadata["man_id"]
    )
    ids = [s.metadata["man_id"] for s in kept]
    metrics = score(answers, [_record(s) for s in kept], empty_as_wrong=True, ids=ids)
    present = [metrics[g] for g in GROUPS if metrics[g] is not None]
    metrics["group_average"] = float(np.mean(present)) if present else None
    metrics["n_empty"] = sum(1 for a in answers if not a["prediction"])
    return metrics


def export_official(
    samples: Sequence[Sample], predictions: Sequence[Prediction], out_dir: Path
) -> list[Path]:
    """The upstream prediction JSON (`eval/eval.py --predictions`), keyed by the loader's `man_id`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "stsbench_predictions.json"
    write_atomic(path, json.dumps(answer_records(samples, predictions), indent=1))
    return [path]


def headline(metrics: dict[str, Any]) -> dict[str, float | None]:
    return {
        "group_average": metrics["group_average"],
        "average": metrics["average"],
        **{g: metrics[g] for g in GROUPS},
    }


def breakdown(metrics: dict[str, Any]) -> dict[str, float | None]:
    return {f"{g}: {s}": v for g in GROUPS for s, v in sorted(metrics["per_scenario"][g].items())}


def is_right(sample: Sample, prediction: Prediction) -> bool:
    """Upstream's test: the first character of the raw output is the letter (empty = wrong in runs)."""
    raw = scored_text(prediction)
    return bool(raw) and raw[0].lower() == str(sample.answer)[0].lower()


def _scenario_type(sample: Sample) -> tuple[str, str]:
    return str(sample.metadata["scenario_group"]), str(sample.metadata["scenario"])


def _scenario_sums(
    samples: Sequence[Sample], predictions: Sequence[Prediction]
) -> tuple[list[tuple[str, str]], list[str], np.ndarray]:
    """(scenario types, records, matrix): per record [right, 1] in the column pair of its scenario type."""
    by_id = {p.sample_id: p for p in predictions}
    answered = [s for s in samples if s.id in by_id]
    columns = sorted({_scenario_type(s) for s in answered})
    index = {c: i for i, c in enumerate(columns)}
    rows: dict[str, np.ndarray] = {}
    for s in answered:
        row = rows.setdefault(s.group, np.zeros(2 * len(columns)))
        k = index[_scenario_type(s)]
        row[2 * k] += is_right(s, by_id[s.id])
        row[2 * k + 1] += 1
    groups = sorted(rows, key=lambda g: (len(g), g))
    matrix = np.array([rows[g] for g in groups]) if groups else np.zeros((0, 2 * len(columns)))
    return columns, groups, matrix


def group_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> GroupStats:
    """Per-scenario-record [right, 1] in the column of its (group, scenario type); finalize = macro means."""
    columns, groups, matrix = _scenario_sums(samples, predictions)
    group_of = np.array([GROUPS.index(g) for g, _ in columns], dtype=int)

    def finalize(sums: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a group without scenarios in a resample
            per_type = np.where(sums[:, 1::2] > 0, sums[:, 0::2] / np.maximum(sums[:, 1::2], 1), np.nan)
            per_group = np.stack(
                [
                    np.nanmean(per_type[:, group_of == g], axis=1)
                    if np.any(group_of == g)
                    else np.full(len(sums), np.nan)
                    for g in range(len(GROUPS))
                ],
                axis=1,
            )
            return np.nanmean(per_group, axis=1)

    return GroupStats(groups, matrix, finalize)


def item_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, GroupStats]:
    """Per-record stats of each scenario type's accuracy, keyed `"<group>: <scenario>"` like `breakdown`."""
    columns, groups, matrix = _scenario_sums(samples, predictions)
    return mean_columns(groups, matrix, [f"{g}: {s}" for g, s in columns])


def evaluate_files(
    predictions: Path, warn: Warn, *, data: Path, empty_as_wrong: bool = False, db: Path | None = None
) -> str:
    """Score STSBench predictions: first character vs letter, macro over scenario types, then groups."""
    return json.dumps(score_file(predictions, data, empty_as_wrong, db, warn), indent=2) + "\n"


EVALUATE_FLAGS = (
    Flag("predictions", Path, "Upstream prediction JSON (prediction, gt_letter, man_id).", positional=True),
    Flag("data", Path, "STSnu.json (scenario groups and types)."),
    Flag(
        "db", Path | None, "Upstream's nuScenes.db: the scenarios' man_ids (else joined in id order).", None
    ),
    Flag(
        "empty_as_wrong",
        bool,
        "Non-official: an empty prediction counts as wrong (upstream stops).",
        False,
    ),
)


SUITE = Suite(
    name="stsbench",
    card=CARD,
    load=load,
    score=score_predictions,
    export=export_official,
    headline=headline,
    group_stats=group_stats,
    official=True,
    primary="group_average",
    breakdown=breakdown,
    item_stats=item_stats,
    notes={
        "paired unit": "scenario record",
        "empty output": "a failed call counts as wrong (non-official `empty_as_wrong`; upstream stops)",
    },
    generate=LazyGenerate("kinegraph.benchmarks.stsbench.world:generate"),
    evaluate_files=evaluate_files,
    evaluate_flags=EVALUATE_FLAGS,
    strata="group",
    subset_keys={"group": metadata_key("scenario_group"), "scenario": metadata_key("scenario")},
)
