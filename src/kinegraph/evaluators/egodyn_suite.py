"""EgoDyn-Bench as a suite: a run's predictions as upstream records, scored by `evaluators.egodyn`.

A failed model call becomes an empty answer, which upstream counts as unparsed. Paired statistics are
per clip: pooled class recall over the parsed answers, as the leaderboard's balanced accuracy.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kinegraph.atomic import write_atomic
from kinegraph.benchmarks.egodyn.card import CARD
from kinegraph.benchmarks.egodyn.loader import load
from kinegraph.benchmarks.egodyn.questions import EgoDynQuestion, load_question_bank
from kinegraph.evaluators.egodyn import read_prediction_records, score, score_record, structural_warnings
from kinegraph.subsets import metadata_key
from kinegraph.suites import Flag, GroupStats, LazyGenerate, Suite, Warn, class_recall_stats
from kinegraph.types import Prediction, Sample, Status


def prediction_records(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> list[dict[str, Any]]:
    """Runner predictions as upstream prediction records; a failed call has an empty answer (unparsed).

    A clip whose frames cannot be read keeps its 14 records too: upstream (`evaluator_common.py`) skips
    only clips missing from the index; an unreadable video gives it no frames, it still asks and writes
    a record per question, and its API wrappers return "" on failure, so n_total counts them as here.
    """
    by_id = {s.id: s for s in samples}
    records = []
    for p in predictions:
        s = by_id.get(p.sample_id)
        if s is None or p.status == Status.skipped:
            continue
        answer = p.raw if p.raw is not None else (str(p.answer) if p.answer is not None else "")
        records.append(
            {
                "qa_id": s.metadata.get("qa_id") or s.id,
                "clip_id": s.group,
                "question_id": s.question_id,
                "category": s.metadata.get("category", "unknown"),
                "oracle_label": s.answer,
                "model_answer": answer,
            }
        )
    return records


def score_predictions(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, Any]:
    """The official metric dict for a run."""
    return score(prediction_records(samples, predictions))


def export_official(
    samples: Sequence[Sample], predictions: Sequence[Prediction], out_dir: Path
) -> list[Path]:
    """Write `predictions.jsonl` in the upstream format, so upstream `scripts/evaluate.py` can read it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "egodyn_predictions.jsonl"
    write_atomic(path, "".join(json.dumps(r) + "\n" for r in prediction_records(samples, predictions)))
    return [path]


def headline(metrics: dict[str, Any]) -> dict[str, float | None]:
    """The leaderboard's columns: pooled balanced accuracy first (the headline), then the rest."""
    return {
        "balanced_acc": metrics["global"]["balanced_acc"],
        "accuracy": metrics["global"]["accuracy"],
        "macro_f1": metrics["global"]["macro_f1"],
        "temporal_balanced_acc": metrics["temporal"]["balanced_acc"],
        "wpcr": metrics["consistency"]["wemcr"],
        "parsable": metrics["parsable_coverage"],
    }


def group_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> GroupStats:
    """Per-clip statistics of the pooled global balanced accuracy (parsed answers only, as upstream)."""
    bank = load_question_bank()
    triples = []
    for record in prediction_records(samples, predictions):
        scored = score_record(record, bank)
        if scored is not None:
            triples.append((scored.clip_id, scored.oracle, scored.pred))
    return class_recall_stats(triples)


def question_stats(
    records: Iterable[Mapping[str, Any]], bank: Mapping[str, EgoDynQuestion]
) -> dict[str, GroupStats]:
    """Per-clip statistics of each question's `per_question` balanced accuracy (upstream, unrounded).

    Parsed answers only, as upstream; upstream takes the recall over the question's choices, so an oracle
    label outside them adds no class (its records are left out here too).
    """
    triples: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for record in records:
        scored = score_record(record, bank)
        if scored is None:
            continue
        labels = bank[scored.question_id].choices
        kept = triples[scored.question_id]  # the question is in the breakdown even if nothing is kept
        if labels is None or scored.oracle in labels:
            kept.append((scored.clip_id, scored.oracle, scored.pred))
    return {qid: class_recall_stats(triples[qid]) for qid in sorted(triples)}


def item_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, GroupStats]:
    """`question_stats` of a run: keys and values of the `per_question` breakdown."""
    return question_stats(prediction_records(samples, predictions), load_question_bank())


def evaluate_files(
    predictions: Path, warn: Warn, *, questions: Path | None = None, penalize_unparsed: bool = False
) -> str:
    """Score an EgoDyn-Bench prediction JSONL; prints the upstream metric dict as JSON."""
    bank = load_question_bank(questions)
    records = read_prediction_records(predictions)
    for warning in structural_warnings(records, bank):
        warn(f"{predictions}: {warning}")
    return json.dumps(score(records, bank, penalize_unparsed=penalize_unparsed), indent=2) + "\n"


EVALUATE_FLAGS = (
    Flag(
        "predictions",
        Path,
        "Upstream prediction JSONL (clip_id, question_id, oracle_label, model_answer).",
        positional=True,
        extra={"dir_okay": False},
    ),
    Flag("questions", Path | None, "Upstream questions_template.yaml (default: built-in bank).", None),
    Flag(
        "penalize_unparsed",
        bool,
        "Non-official: count unparsed answers as wrong (the paper's wording).",
        False,
    ),
)


SUITE = Suite(
    name="egodyn",
    card=CARD,
    load=load,
    score=score_predictions,
    export=export_official,
    headline=headline,
    group_stats=group_stats,
    official=True,
    primary="balanced_acc",
    breakdown=lambda m: {q: v["balanced_acc"] for q, v in m["per_question"].items()},
    confusions=lambda m: {q: v["confusion_matrix"] for q, v in m["per_question"].items()},
    item_stats=item_stats,
    notes={
        "paired unit": "clip",
        "unparsed answers": "left out of every metric, as upstream (they lower parsable coverage)",
    },
    generate=LazyGenerate("kinegraph.benchmarks.egodyn.world:generate"),
    evaluate_files=evaluate_files,
    evaluate_flags=EVALUATE_FLAGS,
    strata="category",
    subset_keys={
        "category": metadata_key("category"),
        "source": metadata_key("source"),
        "question": lambda s: s.question_id,
        "clip": lambda s: s.group,
    },
)
