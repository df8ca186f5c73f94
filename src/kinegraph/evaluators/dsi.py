"""DSI-Bench answer extraction and scorer, as upstream `qwen_inference_code.py` and `evaluate.py` (@af90adc).

Extraction: `<answer>X</answer>` (X in A-D, any case, spaces allowed) -> upper-case letter; after the
retries a still unparsable answer is "E" (always wrong). Scoring compares the FIRST character of the
stripped `final_answer` with the stripped GT, case-sensitively, through pandas as upstream, so an empty
CSV cell reads as NaN, becomes "nan" and scores wrong. Three views: sample-wise (all variants pooled),
group-wise (a row is right when at least n of its 4 variants are; its category from the std row), and
single-variant accuracy; each per category and overall (micro).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from kinegraph.benchmarks.dsi.loader import category_name, read_csv, read_metadata
from kinegraph.errors import DataError

SCORER_VARIANT_ORDER: tuple[str, ...] = ("std", "reverse", "hflip", "reverse_hflip")  # upstream VIDEO_AUGS
FAILED_ANSWER = "E"
MAX_RETRIES = 10
MAX_ATTEMPTS = 1 + MAX_RETRIES  # upstream: an initial run, then up to MAX_RETRIES retry rounds
_ANSWER = re.compile(r"<answer>\s*([A-D])\s*</answer>", re.IGNORECASE)


def extract_answer(text: str | None) -> str | None:
    """The letter in `<answer>X</answer>`, upper-cased; None when absent (upstream then retries)."""
    match = _ANSWER.search(text or "")
    return match.group(1).upper() if match else None


def final_answer(text: str | None) -> str:
    """What upstream writes to `final_answer`: the extracted letter, or "E" once retries are spent."""
    return extract_answer(text) or FAILED_ANSWER


def is_correct(gt: Any, answer: Any) -> bool:
    """`str(GT).strip() == str(final_answer).strip()[0]`, case-sensitive (NaN cells read as "nan")."""
    pred = str(answer).strip()
    return str(gt).strip() == (pred[0] if pred else "")


def _accuracy_table(frame: pd.DataFrame, overall: float) -> dict[str, Any]:
    by_cate = frame.groupby("cate")["correct"].mean()
    return {
        "per_category": {category_name(c): float(v) for c, v in by_cate.items()},
        "overall": float(overall),
        "n": int(len(frame)),
    }


def _correct_column(meta: pd.DataFrame, result: pd.DataFrame) -> list[int]:
    return [int(is_correct(g, a)) for g, a in zip(meta["GT"], result["final_answer"], strict=True)]


def check_aligned(metas: Mapping[str, pd.DataFrame], results: Mapping[str, pd.DataFrame]) -> None:
    """Upstream's checks: a result per variant, `final_answer` present, equal lengths everywhere."""
    for variant, meta in metas.items():
        if variant not in results:
            raise DataError(f"no predictions for variant {variant!r}")
        if "final_answer" not in results[variant].columns:
            raise DataError(f"variant {variant}: column missing", field="final_answer")
        if len(results[variant]) != len(meta):
            raise DataError(
                f"variant {variant}: {len(results[variant])} predictions for {len(meta)} questions"
            )
    if len({len(m) for m in metas.values()}) > 1:
        raise DataError(f"variants differ in length: { {v: len(m) for v, m in metas.items()} }")


def sample_wise(metas: Mapping[str, pd.DataFrame], results: Mapping[str, pd.DataFrame]) -> dict[str, Any]:
    """Method 1: every variant row an independent sample."""
    frame = pd.concat(
        [
            pd.DataFrame({"cate": metas[v]["cate"], "correct": _correct_column(metas[v], results[v])})
            for v in metas
        ],
        ignore_index=True,
    )
    return _accuracy_table(frame, frame["correct"].mean())


def group_wise(
    metas: Mapping[str, pd.DataFrame], results: Mapping[str, pd.DataFrame], min_correct: int = 3
) -> dict[str, Any]:
    """Method 2: a row is right when at least `min_correct` of its variants are (category from std)."""
    variants = [v for v in SCORER_VARIANT_ORDER if v in metas]
    columns = {v: _correct_column(metas[v], results[v]) for v in variants}
    n = len(metas[variants[0]])
    robust = [int(sum(columns[v][i] for v in variants) >= min_correct) for i in range(n)]
    frame = pd.DataFrame({"cate": metas[variants[0]]["cate"], "correct": robust})
    table = _accuracy_table(frame, sum(robust) / n)
    return {**table, "min_correct": min_correct}


def single_variant(meta: pd.DataFrame, result: pd.DataFrame) -> dict[str, Any]:
    """Method 3: accuracy on one variant."""
    frame = pd.DataFrame({"cate": meta["cate"], "correct": _correct_column(meta, result)})
    return _accuracy_table(frame, frame["correct"].mean())


def score(
    metas: Mapping[str, pd.DataFrame], results: Mapping[str, pd.DataFrame], min_correct: int = 3
) -> dict[str, Any]:
    """All three methods: `sample_wise`, `group_wise` (>= min_correct of 4), `single_variant` per variant."""
    check_aligned(metas, results)
    return {
        "sample_wise": sample_wise(metas, results),
        "group_wise": group_wise(metas, results, min_correct),
        "single_variant": {
            v: single_variant(metas[v], results[v]) for v in SCORER_VARIANT_ORDER if v in metas
        },
    }


def prediction_file(predictions: Path, variant: str, model: str | None) -> Path:
    """`<dir>/<variant>/<model>.csv` (upstream's outputs layout), or `<dir>/<variant>.csv`."""
    if model is not None:
        return predictions / variant / f"{model}.csv"
    flat = predictions / f"{variant}.csv"
    if flat.is_file():
        return flat
    found = sorted((predictions / variant).glob("*.csv"))
    if len(found) == 1:
        return found[0]
    raise DataError(
        f"expected one prediction CSV for {variant!r} (name the model)", path=predictions / variant
    )


def score_files(
    predictions: str | Path, data: str | Path, model: str | None = None, min_correct: int = 3
) -> dict[str, Any]:
    """`score` over the four official result CSVs and the metadata CSVs of the dataset folder."""
    predictions = Path(predictions)
    metas, results = {}, {}
    for variant in SCORER_VARIANT_ORDER:
        metas[variant] = read_metadata(data, variant)
        path = prediction_file(predictions, variant, model)
        if not path.is_file():
            raise DataError("prediction CSV not found", path=path)
        results[variant] = read_csv(path)
        if "final_answer" not in results[variant].columns:
            raise DataError("column missing", path=path, field="final_answer")
        if len(results[variant]) != len(metas[variant]):
            raise DataError(f"{len(results[variant])} rows for {len(metas[variant])} questions", path=path)
    return score(metas, results, min_correct)
