"""TAD as a suite: a run's predictions as upstream `<task>.jsonl` records, scored by `evaluators.tad`.

`pred` is what upstream's inference scripts write: the parsed letter ("N/A" when unparsable), the
stripped exact-answer text, or the keysegment list; a failed model call writes "ERROR" as upstream does
on an exception (scores 0). The headline's first column, `task_average`, is the unweighted mean of the
tasks the data has: on the full benchmark it equals the paper's 7-task Avg (`average`, null unless all
7 tasks are scored); on an ego-only set it is the 6-task ego average. Paired statistics are per scene.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.atomic import write_atomic
from kinegraph.benchmarks.tad.card import CARD
from kinegraph.benchmarks.tad.loader import TASKS, load, load_ground_truth
from kinegraph.errors import DataError, UsageError
from kinegraph.evaluators.tad import METRICS, MODES, read_prediction_dir, score
from kinegraph.subsets import metadata_key
from kinegraph.suites import Flag, GroupStats, LazyGenerate, Suite, Warn, mean_columns
from kinegraph.types import Prediction, Sample

FAILED_PRED = "ERROR"  # upstream's `pred` when inference raised


def _int_or_str(value: str) -> int | str:
    return int(value) if value.lstrip("-").isdigit() else value


def pred_value(sample: Sample, prediction: Prediction) -> Any:
    """Upstream's `pred` for one question (keysegment lists back to ints, as the data stores them)."""
    if prediction.answer is None:
        return FAILED_PRED
    if sample.metadata.get("answer_kind") == "localization":
        values = prediction.answer if isinstance(prediction.answer, list) else [prediction.answer]
        return [_int_or_str(str(v)) for v in values]
    return str(prediction.answer)


def _prompt(prediction: Prediction) -> str:
    prompts = [step["prompt"] for step in prediction.trace if "prompt" in step]
    return prompts[-1] if prompts else ""


def prediction_records(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, list[dict]]:
    """Task -> upstream prediction records `{"idx", "prompt", "raw_response", "pred"}`."""
    by_id = {p.sample_id: p for p in predictions}
    out: dict[str, list[dict]] = {}
    for s in samples:
        p = by_id.get(s.id)
        if p is None:
            continue  # a missing prediction scores 0 (the denominator is the ground truth)
        record = {
            "idx": s.metadata["idx"],
            "prompt": _prompt(p),
            "raw_response": p.raw,
            "pred": pred_value(s, p),
        }
        out.setdefault(str(s.metadata["task"]), []).append(record)
    return out


def ground_truth(samples: Sequence[Sample]) -> dict[str, list[dict]]:
    """Task -> ground-truth rows as the scorer reads them (`idx`, stored `answer`, `question`)."""
    out: dict[str, list[dict]] = {}
    for s in samples:
        row = {"idx": s.metadata["idx"], "answer": s.metadata["answer_value"], "question": s.question}
        out.setdefault(str(s.metadata["task"]), []).append(row)
    return out


def task_average(scores: dict[str, Any]) -> float | None:
    values = [scores[t] for t in TASKS if scores.get(t) is not None]
    return float(np.mean(values)) if values else None


def score_predictions(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, Any]:
    """The official metric dict (`all`, `ego`, `non-ego`) plus `task_average` per mode."""
    metrics = score(prediction_records(samples, predictions), ground_truth(samples))
    metrics["task_average"] = {mode: task_average(scores) for mode, scores in metrics.items()}
    return metrics


def export_official(
    samples: Sequence[Sample], predictions: Sequence[Prediction], out_dir: Path
) -> list[Path]:
    """`<task>.jsonl` files in upstream's prediction layout (`evaluation.py` reads the folder)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for task, records in prediction_records(samples, predictions).items():
        path = out_dir / f"{task}.jsonl"
        write_atomic(path, "".join(json.dumps(r) + "\n" for r in records))
        paths.append(path)
    return paths


def headline(metrics: dict[str, Any]) -> dict[str, float | None]:
    return {
        "task_average": metrics["task_average"]["all"],
        "average": metrics["all"].get("average"),
        "ego_average": metrics["ego"].get("average"),
        "non_ego_average": metrics["non-ego"].get("average"),
    }


def question_score(sample: Sample, prediction: Prediction) -> float:
    """One question's contribution, by the task's official metric (exact match, accuracy or set IoU)."""
    task = str(sample.metadata["task"])
    idx = sample.metadata["idx"]
    return METRICS[task](
        [{"idx": idx, "pred": pred_value(sample, prediction)}], {idx: sample.metadata["answer_value"]}
    )


def group_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> GroupStats:
    """Per-scene [score sum, questions] for each of the 7 tasks; finalize = mean over the tasks present."""
    by_id = {p.sample_id: p for p in predictions}
    rows: dict[str, np.ndarray] = {}
    for s in samples:
        row = rows.setdefault(s.group, np.zeros(2 * len(TASKS)))
        k = TASKS.index(str(s.metadata["task"]))
        row[2 * k + 1] += 1  # the denominator counts every question, answered or not (upstream)
        p = by_id.get(s.id)
        if p is not None:
            row[2 * k] += question_score(s, p)
    groups = sorted(rows)

    def finalize(sums: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample without any question: NaN
            means = np.where(sums[:, 1::2] > 0, sums[:, 0::2] / np.maximum(sums[:, 1::2], 1), np.nan)
            return np.nanmean(means, axis=1)

    matrix = np.array([rows[g] for g in groups]) if groups else np.zeros((0, 2 * len(TASKS)))
    return GroupStats(groups, matrix, finalize)


def item_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, GroupStats]:
    """Per-scene statistics of each task's `all`-mode score; tasks without a prediction stay unscored."""
    answered = {p.sample_id for p in predictions}
    scored = {str(s.metadata["task"]) for s in samples if s.id in answered}
    stats = group_stats(samples, predictions)
    items = mean_columns(stats.groups, stats.matrix, TASKS)
    return {t: stats for t, stats in items.items() if t in scored}


def evaluate_files(predictions: Path, warn: Warn, *, data: Path, eval_mode: str | None = None) -> str:
    """Score TAD predictions as upstream evaluation.py, plus the 7-task average and the ego split."""
    modes = MODES if eval_mode is None else (eval_mode,)
    if eval_mode is not None and eval_mode not in MODES:
        raise UsageError(f"--eval-mode must be one of {list(MODES)}, got {eval_mode!r}")
    gt = load_ground_truth(data)
    if any(predictions.glob("*.jsonl")) or not predictions.is_dir():
        metrics = score(read_prediction_dir(predictions), gt, modes)
    else:
        models = sorted(d for d in predictions.iterdir() if d.is_dir() and any(d.glob("*.jsonl")))
        if not models:
            raise DataError("no <task>.jsonl files and no model folders holding them", path=predictions)
        metrics = {m.name: score(read_prediction_dir(m), gt, modes) for m in models}
    return json.dumps(metrics, indent=2) + "\n"


EVALUATE_FLAGS = (
    Flag(
        "predictions",
        Path,
        "Folder of <task>.jsonl files, or of one such folder per model.",
        positional=True,
    ),
    Flag("data", Path, "TAD folder with the task configs (HF layout)."),
    Flag("eval_mode", str | None, "Only one upstream mode: all, ego or non-ego (default: all three).", None),
)


SUITE = Suite(
    name="tad",
    card=CARD,
    load=load,
    score=score_predictions,
    export=export_official,
    headline=headline,
    group_stats=group_stats,
    official=True,
    primary="task_average",
    breakdown=lambda m: {t: m["all"].get(t) for t in TASKS if t in m["all"]},
    item_stats=item_stats,
    notes={
        "paired unit": "scene",
        "failed call": f"written as pred {FAILED_PRED!r}, as upstream on an exception (scores 0)",
    },
    generate=LazyGenerate("kinegraph.benchmarks.tad.world:generate"),
    evaluate_files=evaluate_files,
    evaluate_flags=EVALUATE_FLAGS,
    strata="task",
    subset_keys={
        "task": lambda s: s.question_id,
        "level": metadata_key("level"),
        "ego": lambda s: "ego" if s.metadata.get("ego") else "non-ego",
        "scene": lambda s: s.group,
    },
)
