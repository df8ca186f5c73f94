"""QuantiPhy answer parser and MRA scorer, as upstream `run_API_results.py::parse_number` and `evaluator.py`.

Stages: `parse_number` (free text -> |value| or NaN), `mra` (per question, 10 thresholds, strict `<`,
NaN prediction = 0), `aggregate` (S2/D2/S3/D3 means, their macro average, background and object
breakdowns) into the official `all_model_results.csv` row. Aggregation runs through pandas in the
same order as upstream so every float is bit-identical.

Counterfactual rows (upstream's runner column `prior_used` = `alt_prior`, zero-shot v2) are scored on
`alt_posterior` = alpha * y, as the paper describes (Sec 5.2). Upstream's `evaluator.py` has no
counterfactual scorer: it would score them on `ground_truth_posterior`. Files without such rows are
scored exactly as upstream.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kinegraph.benchmarks.quantiphy.loader import COUNTERFACTUAL_PRIOR, category_of, integer_ids
from kinegraph.errors import DataError

MRA_THRESHOLDS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
# Non-official: the VSI-Bench threshold set that the paper's appendix A.2 states.
VSI_THRESHOLDS: tuple[float, ...] = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
CATEGORIES: tuple[str, ...] = ("S2", "D2", "S3", "D3")
REQUIRED_PREDICTION_COLUMNS: tuple[str, ...] = (
    "video_id",
    "question",
    "video_type",
    "inference_type",
    "parsed_value",
)

_NUM = re.compile(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?")
_EXACT_NUMBER_WITH_UNIT = re.compile(
    r"^[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?\s*(?:"
    r"meters?|meter|m|kilometers?|kilometer|km|centimeters?|centimeter|cm|millimeters?|millimeter|mm|"
    r"inches?|inch|in|feet|foot|ft|yards?|yard|yd|"
    r"seconds?|second|s|minutes?|minute|min|hours?|hour|h|"
    r"m/s|m/s²|m/s^2|m/s2|km/h|kph|mph|ft/s|cm/s|mm/s|"
    r"m/s/s|m/s²|m/s^2|m/s2|ft/s²|ft/s^2|ft/s2|cm/s²|cm/s^2|cm/s2|mm/s²|mm/s^2|mm/s2|g"
    r")?\s*$",
    re.IGNORECASE,
)
_DELIMITERS = ("Final Answer:", "Answer:", "=>", "=", ":", "is:", "The answer is:", "Example:")
# Removed by plain str.replace in this order, so "m" also disappears from inside words: an upstream
# quirk kept for parity (letters vanish, digits and "e" exponents survive).
_UNITS_TO_REMOVE = (
    "kilometers",
    "kilometer",
    "km",
    "meters",
    "meter",
    "m",
    "centimeters",
    "centimeter",
    "cm",
    "millimeters",
    "millimeter",
    "mm",
    "inches",
    "inch",
    "in",
    "feet",
    "foot",
    "ft",
    "yards",
    "yard",
    "yd",
    "hours",
    "hour",
    "h",
    "minutes",
    "minute",
    "min",
    "seconds",
    "second",
    "s",
    "km/h",
    "kph",
    "mph",
    "ft/s",
    "m/s",
    "cm/s",
    "mm/s",
    "m/s/s",
    "m/s²",
    "m/s^2",
    "m/s2",
    "ft/s²",
    "ft/s^2",
    "ft/s2",
    "cm/s²",
    "cm/s^2",
    "cm/s2",
    "mm/s²",
    "mm/s^2",
    "mm/s2",
    "g",
    "m^2",
    "m²",
)


def _after_last_delimiter(text: str) -> str:
    """Step 2: keep the text after the delimiter whose last (case-insensitive) occurrence is latest.

    Upstream then splits with the case-sensitive `rsplit`; since every word delimiter ends in ':' and ':'
    is itself a delimiter, the latest match is always ':', '=' or '=>' and the case never matters.
    """
    best_pos, best = -1, None
    for delimiter in _DELIMITERS:
        positions = [m.start() for m in re.finditer(re.escape(delimiter), text, re.IGNORECASE)]
        if positions and max(positions) > best_pos:
            best_pos, best = max(positions), delimiter
    if best is not None:
        parts = text.rsplit(best, 1)
        if len(parts) > 1:
            return parts[-1].strip()
    return text


def parse_number(text: object) -> float:
    """The official 5-step parser: exact `value unit`, delimiter, unit removal, last number; else NaN."""
    if text is None or (isinstance(text, float) and math.isnan(text)) or not text:
        return float("nan")
    original = str(text).strip()
    if _EXACT_NUMBER_WITH_UNIT.match(original):
        match = _NUM.search(original)
        if match:
            return abs(float(match.group(0)))
    cleaned = _after_last_delimiter(original).lower()
    for unit in _UNITS_TO_REMOVE:
        cleaned = cleaned.replace(unit, "")
    numbers = _NUM.findall(cleaned) or _NUM.findall(original)
    return abs(float(numbers[-1])) if numbers else float("nan")


def mra(pred: float, gt: float, thresholds: Sequence[float] = MRA_THRESHOLDS) -> float:
    """Mean relative accuracy of one answer; NaN when the ground truth is missing or zero."""
    if pd.isna(gt) or gt == 0:
        return float("nan")
    rel = abs(pred - gt) / gt
    return sum(rel < (1 - theta) for theta in thresholds) / len(thresholds)


def read_ground_truth(path: str | Path, column: str = "ground_truth_posterior") -> dict[Any, float]:
    """First column (the integer question id) -> `column` (upstream reads ground_truth_posterior).

    Upstream requires numbers; a blank, `nan` or `inf` truth (which upstream would score as a silent NaN
    or 0), a non-integer id (`1.7` would be truncated to 1) and a repeated id are refused here. Another
    column (`alt_posterior`) may be blank on rows that have no counterfactual.
    """
    path = Path(path)
    gt = _read_csv(path)
    if column not in gt.columns:
        raise DataError(f"column missing; have {list(gt.columns)}", path=path, field=column)
    numeric = pd.to_numeric(gt[column], errors="coerce")
    finite = np.isfinite(numeric.to_numpy(dtype=float))
    bad = ~finite if column == "ground_truth_posterior" else ~finite & gt[column].notna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"not a finite number: {gt[column].iloc[row]!r} (data row {row + 1})", path=path, field=column
        )
    ids = integer_ids(list(gt[gt.columns[0]]), path, str(gt.columns[0]))
    return dict(zip(ids, numeric, strict=True))


def _check_prediction_ids(df: pd.DataFrame, gt: Mapping[Any, float], path: Path) -> None:
    """Prediction ids are integers, each once, each in the ground truth (else upstream's MRA silently
    drops the row as NaN, or counts a repeated row twice)."""
    column = str(df.columns[0])
    ids = integer_ids(list(df[df.columns[0]]), path, column)
    for row_no, qid in enumerate(ids, start=1):
        if qid not in gt:
            raise DataError(
                f"question id {qid} is not in the ground truth (data row {row_no})", path=path, field=column
            )


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        df = pd.read_csv(path)
    except FileNotFoundError as exc:
        raise DataError("file not found", path=path) from exc
    except pd.errors.EmptyDataError as exc:
        raise DataError("empty file", path=path) from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"not a readable CSV ({exc})", path=path) from exc
    return df


def _check_predictions(df: pd.DataFrame, path: Path) -> None:
    for column in REQUIRED_PREDICTION_COLUMNS:
        if column not in df.columns:
            raise DataError(f"column missing; have {list(df.columns)}", path=path, field=column)
    if df.empty:
        raise DataError("no prediction rows", path=path)
    for i, (vt, it) in enumerate(zip(df["video_type"], df["inference_type"], strict=True), start=1):
        if pd.isna(vt):
            continue  # upstream leaves such a row without a category
        if not isinstance(vt, str) or len(vt) < 2:
            raise DataError(
                f"expected a code like 'S2MC', got {vt!r} (data row {i})", path=path, field="video_type"
            )
        if not isinstance(it, str) or not it:
            raise DataError(
                f"expected a code like 'SS', got {it!r} (data row {i})", path=path, field="inference_type"
            )


def counterfactual_rows(df: pd.DataFrame) -> pd.Series:
    """Which rows were asked with the counterfactual prior (upstream's `prior_used` = `alt_prior`)."""
    if "prior_used" not in df.columns:
        return pd.Series(False, index=df.index)
    return df["prior_used"] == COUNTERFACTUAL_PRIOR


def _score_counterfactual_on_alt_posterior(
    df: pd.DataFrame, ids: pd.Series | None, alt_gt: Mapping[Any, float] | None
) -> None:
    """Counterfactual rows take alpha * y: from the ground-truth file's `alt_posterior`, else their own."""
    rows = counterfactual_rows(df)
    if not rows.any():
        return
    if alt_gt is not None and ids is not None:
        alt = ids.map(alt_gt)
    elif "alt_posterior" in df.columns:
        alt = df["alt_posterior"]
    else:
        raise DataError(
            "column missing: rows with prior_used = alt_prior are scored on alt_posterior",
            field="alt_posterior",
        )
    df.loc[rows, "ground_truth_posterior"] = pd.to_numeric(alt[rows], errors="coerce")


def score_frame(
    df: pd.DataFrame,
    gt: Mapping[Any, float] | None,
    thresholds: Sequence[float] = MRA_THRESHOLDS,
    alt_gt: Mapping[Any, float] | None = None,
) -> tuple[pd.DataFrame, float]:
    """Per-question stage: returns the sorted frame with `category, bg, obj, mra` and the invalid %.

    `alt_gt` (id -> alt_posterior) scores the counterfactual rows; without it they use their own column.
    """
    df = df.copy()
    if "video_source" in df.columns:
        # Never fires on the shipped files, which spell it 'segmentaion'; kept for parity.
        seg = df["video_source"] == "segmentation"
        df.loc[seg, "video_type"] = df.loc[seg, "video_type"].map(
            lambda x: x[:-1] + "X" if pd.notna(x) and len(x) > 0 else x
        )
    df = df.sort_values(by=["video_id", "question"])
    ids = None
    if gt is not None:
        ids = pd.to_numeric(df[df.columns[0]], errors="coerce").astype("Int64")
        df[df.columns[0]] = ids
        df["ground_truth_posterior"] = ids.map(gt)
    elif "ground_truth_posterior" not in df.columns:
        raise DataError(
            "no ground truth: pass a ground-truth file or include the column", field="ground_truth_posterior"
        )
    _score_counterfactual_on_alt_posterior(df, ids, alt_gt)
    parsed = pd.to_numeric(df["parsed_value"], errors="coerce")
    n_invalid = (
        df["parsed_value"].isna().sum()
        + (df["parsed_value"].notna() & parsed.isna()).sum()
        + (parsed == 0).sum()
    )
    invalid_pct = (n_invalid / len(df) * 100) if len(df) > 0 else 0
    vt = df["video_type"]
    df["category"] = [
        category_of(i, v) if pd.notna(v) else None for i, v in zip(df["inference_type"], vt, strict=True)
    ]
    df["parsed_value"] = parsed.abs()
    df["ground_truth_posterior"] = pd.to_numeric(df["ground_truth_posterior"], errors="coerce")
    df["bg"] = [v[-1] if pd.notna(v) and len(v) > 0 else None for v in vt]
    df["obj"] = [
        ("single" if v[2] == "S" else "multiple" if v[2] == "M" else None)
        if pd.notna(v) and len(v) > 2
        else None
        for v in vt
    ]
    df["mra"] = [
        mra(p, g, thresholds) for p, g in zip(df["parsed_value"], df["ground_truth_posterior"], strict=True)
    ]
    return df, invalid_pct


def _macro(frame: pd.DataFrame) -> float | None:
    """Unweighted mean of the four category means; None unless all four are present."""
    means = {}
    for category in CATEGORIES:
        rows = frame[frame["category"] == category]
        if len(rows) > 0:
            means[category] = rows["mra"].mean()
    if len(means) < 4:
        return None
    return (means["S2"] + means["D2"] + means["S3"] + means["D3"]) / 4


def aggregate(df: pd.DataFrame, invalid_pct: float, model: str) -> dict[str, Any]:
    """Corpus stage: one row of the official results CSV."""
    row: dict[str, Any] = {"model": model, "invalid_percentage": invalid_pct}
    means = {c: df[df["category"] == c]["mra"].mean() for c in df["category"].unique() if pd.notna(c)}
    for category in CATEGORIES:
        row[f"mra_{category}"] = means.get(category)
    row["mra_average"] = (
        (means["S2"] + means["D2"] + means["S3"] + means["D3"]) / 4
        if all(c in means for c in CATEGORIES)
        else None
    )
    for column, prefix in (("bg", "mra_bg_"), ("obj", "mra_obj_")):
        for value in sorted(df[column].dropna().unique()):
            row[f"{prefix}{value}"] = _macro(df[df[column] == value])
    return row


def model_name(path: str | Path) -> str:
    """Upstream names a model after its file, minus `merged_` and `.csv`."""
    return Path(path).name.replace("merged_", "").replace(".csv", "")


def score_file(
    pred_path: str | Path,
    gt_path: str | Path | None = None,
    thresholds: Sequence[float] = MRA_THRESHOLDS,
) -> dict[str, Any]:
    """Score one prediction CSV against the ground-truth CSV: the official results row.

    Counterfactual rows are scored on the ground-truth file's `alt_posterior` (refused without one).
    """
    pred_path = Path(pred_path)
    gt = read_ground_truth(gt_path) if gt_path is not None else None
    df = _read_csv(pred_path)
    _check_predictions(df, pred_path)
    if gt is not None:
        _check_prediction_ids(df, gt, pred_path)
    alt_gt = None
    if gt_path is not None and counterfactual_rows(df).any():
        alt_gt = read_ground_truth(gt_path, "alt_posterior")
    try:
        scored, invalid_pct = score_frame(df, gt, thresholds, alt_gt)
    except DataError as exc:
        exc.path = exc.path or str(pred_path)
        raise DataError(exc.message, path=exc.path, field=exc.field) from exc
    return aggregate(scored, invalid_pct, model_name(pred_path))


def results_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """The official `all_model_results.csv` text for one or more result rows."""
    buffer = io.StringIO()
    pd.DataFrame(list(rows)).to_csv(buffer, index=False)
    return buffer.getvalue()
