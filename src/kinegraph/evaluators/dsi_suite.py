"""DSI-Bench as a suite: a run's answers as upstream's per-variant result CSVs, scored by `evaluators.dsi`.

`final_answer` is the extracted letter, or "E" when the answer never parsed or the call failed (upstream
writes "E" after its retries). Only the rows whose four variants are all in the run are scored (a
`--limit` cuts the variant-major sample list). The paired unit is the row: its four variants together.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kinegraph.atomic import write_atomic
from kinegraph.benchmarks.dsi.card import CARD
from kinegraph.benchmarks.dsi.loader import CATEGORIES, VARIANTS, category_name, load
from kinegraph.errors import UsageError
from kinegraph.evaluators.dsi import FAILED_ANSWER, final_answer, is_correct, score, score_files
from kinegraph.subsets import metadata_key
from kinegraph.suites import Flag, GroupStats, LazyGenerate, Suite, Warn, mean_columns
from kinegraph.types import Prediction, Sample

MIN_CORRECT = 3  # the README's group-wise setting


def answer_letter(prediction: Prediction | None) -> str:
    """The `final_answer` upstream would have written for this prediction."""
    if prediction is None or prediction.answer is None:
        return final_answer(prediction.raw if prediction is not None else None)
    return str(prediction.answer)


def _gt(sample: Sample) -> Any:
    return math.nan if sample.answer is None else sample.answer  # pandas reads an empty GT cell as NaN


def complete_rows(samples: Sequence[Sample]) -> dict[int, dict[str, Sample]]:
    """row -> variant -> sample, for the rows that have every variant present in the run."""
    by_row: dict[int, dict[str, Sample]] = {}
    for s in samples:
        by_row.setdefault(int(s.metadata["row"]), {})[str(s.metadata["variant"])] = s
    variants = {str(s.metadata["variant"]) for s in samples}
    return {r: v for r, v in sorted(by_row.items()) if set(v) == variants}


def frames(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> tuple[dict, dict]:
    """(metas, results): per-variant metadata and result DataFrames, row-aligned, as upstream reads them."""
    by_id = {p.sample_id: p for p in predictions}
    rows = complete_rows(samples)
    variants = [v for v in VARIANTS if rows and v in next(iter(rows.values()))]
    metas, results = {}, {}
    for v in variants:
        chosen = [rows[r][v] for r in rows]
        metas[v] = pd.DataFrame(
            {"GT": [_gt(s) for s in chosen], "cate": [s.metadata["cate"] for s in chosen]}
        )
        results[v] = pd.DataFrame(
            {
                "result_text": [(by_id[s.id].raw if s.id in by_id else None) for s in chosen],
                "final_answer": [answer_letter(by_id.get(s.id)) for s in chosen],
            }
        )
    return metas, results


def score_predictions(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, Any]:
    metas, results = frames(samples, predictions)
    if not metas:
        return {"sample_wise": None, "group_wise": None, "single_variant": {}, "n_rows": 0}
    return {**score(metas, results, MIN_CORRECT), "n_rows": len(next(iter(metas.values())))}


def metadata_rows(samples: Sequence[Sample]) -> pd.DataFrame:
    """The metadata CSV rows of `samples` (one variant), upstream's columns plus `row`, the data row."""
    return pd.DataFrame(
        {
            "cate": [s.metadata["cate"] for s in samples],
            "relative_path": [s.metadata["relative_path"] for s in samples],
            "video_type": [s.metadata.get("video_type") for s in samples],
            "question": [s.question for s in samples],
            "options": [s.context.get("options_text", "") for s in samples],
            "GT": [_gt(s) for s in samples],
            "row": [s.metadata["row"] for s in samples],
        }
    )


def export_official(
    samples: Sequence[Sample], predictions: Sequence[Prediction], out_dir: Path
) -> list[Path]:
    """`<variant>/kinegraph.csv` (columns result_text, final_answer), upstream's outputs layout, and
    `metadatas/<variant>.csv`, the metadata rows they answer.

    Upstream's `evaluate.py` reads every row of each variant's metadata CSV and needs a result row for
    each, so a run of part of the data (`--limit`, `--subset`) is readable there only against the rows it
    ran: point upstream's META_BASE_PATH (and kinegraph's `evaluate dsi --data`) at this folder.
    """
    rows = complete_rows(samples)
    _, results = frames(samples, predictions)
    paths = []
    for variant, frame in results.items():
        path = out_dir / variant / "kinegraph.csv"
        write_atomic(path, frame.to_csv(index=False))
        meta = out_dir / "metadatas" / f"{variant}.csv"
        write_atomic(meta, metadata_rows([rows[r][variant] for r in rows]).to_csv(index=False))
        paths += [path, meta]
    return paths


def _overall(table: dict[str, Any] | None) -> float | None:
    return None if table is None else table["overall"]


def headline(metrics: dict[str, Any]) -> dict[str, float | None]:
    out = {"sample_wise": _overall(metrics["sample_wise"]), "group_wise": _overall(metrics["group_wise"])}
    out.update({v: _overall(t) for v, t in metrics["single_variant"].items()})
    return out


def breakdown(metrics: dict[str, Any]) -> dict[str, float | None]:
    per = (metrics["sample_wise"] or {}).get("per_category", {})
    return {c: per.get(c) for c in CATEGORIES if c in per}


def group_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> GroupStats:
    """Per row: [variants right, variants]; finalize = sample-wise accuracy (the headline)."""
    by_id = {p.sample_id: p for p in predictions}
    rows = complete_rows(samples)
    groups = [str(r) for r in rows]
    matrix = np.zeros((len(rows), 2))
    for i, variants in enumerate(rows.values()):
        right = sum(is_correct(_gt(s), answer_letter(by_id.get(s.id))) for s in variants.values())
        matrix[i] = [right, len(variants)]

    def finalize(sums: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return sums[:, 0] / sums[:, 1]

    return GroupStats(groups, matrix, finalize)


def item_stats(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, GroupStats]:
    """Per row: [variants right, variants] per category; each item = that category's sample-wise accuracy.

    A variant counts under its own `cate`, as upstream pools the four variants' metadata.
    """
    by_id = {p.sample_id: p for p in predictions}
    rows = complete_rows(samples)
    index = {c: k for k, c in enumerate(CATEGORIES)}
    matrix = np.zeros((len(rows), 2 * len(CATEGORIES)))
    for i, variants in enumerate(rows.values()):
        for s in variants.values():
            k = index.get(category_name(s.metadata["cate"]))
            if k is None:
                continue  # upstream prints it as "Category N"; the breakdown shows the known six only
            matrix[i, 2 * k] += is_correct(_gt(s), answer_letter(by_id.get(s.id)))
            matrix[i, 2 * k + 1] += 1
    return mean_columns([str(r) for r in rows], matrix, CATEGORIES, keep_empty=False)


def evaluate_files(
    predictions: Path, warn: Warn, *, data: Path, model: str | None = None, min_correct: int = 3
) -> str:
    """Score DSI-Bench: sample-wise, group-wise (>= n of 4) and single-variant accuracy per category."""
    if not 1 <= min_correct <= 4:
        raise UsageError(f"--min-correct must be between 1 and 4, got {min_correct}")
    return json.dumps(score_files(predictions, data, model, min_correct), indent=2) + "\n"


EVALUATE_FLAGS = (
    Flag(
        "predictions",
        Path,
        "Folder with <variant>/<model>.csv (upstream outputs) or <variant>.csv.",
        positional=True,
    ),
    Flag("data", Path, "DSI-Bench folder holding metadatas/<variant>.csv."),
    Flag("model", str | None, "Model name of <variant>/<model>.csv.", None),
    Flag("min_correct", int, "Group-wise: a row counts when >= this many of 4 are right.", 3),
)


SUITE = Suite(
    name="dsi",
    card=CARD,
    load=load,
    score=score_predictions,
    export=export_official,
    headline=headline,
    group_stats=group_stats,
    official=True,
    primary="sample_wise",
    breakdown=breakdown,
    item_stats=item_stats,
    notes={
        "paired unit": "row (its four variants)",
        "failed call": f"answered {FAILED_ANSWER!r}, as upstream after its retries (scores 0)",
        "official export": "official/metadatas/ holds the rows the run scored: score against it",
    },
    generate=LazyGenerate("kinegraph.benchmarks.dsi.world:generate"),
    evaluate_files=evaluate_files,
    evaluate_flags=EVALUATE_FLAGS,
    strata="category",
    subset_keys={
        "category": metadata_key("category"),
        "variant": metadata_key("variant"),
        "video_type": metadata_key("video_type"),
    },
)
