"""QuantiPhy loader: validation CSV / parquet, test parquet + submission template -> Samples.

Card: QuantiPhy (Puyin Li et al., CVPR 2026, arXiv 2512.19526). Code MIT, data CC-BY-4.0.
Official repo Paulineli/QuantiPhy @ 426b0d8a7184d58cfcc4d20d56533adc9e0de7a3 (validation CSV from
325f530e019bb895ec7ca153cb291b2677bfac53); data HF PaulineLi/QuantiPhy-validation (159 QA) and
PaulineLi/QuantiPhy (test, ground truth withheld). One numeric question per row, scored by MRA.

Quirks handled: the validation CSV's empty first header (the integer question id, which the official
scorer joins on), two trailing junk columns, multi-line quoted `depth_info`, `video_source` spelled
`segmentaion`, parquet columns `prior`/`answer` instead of `ground_truth_prior`/`ground_truth_posterior`,
and a video file shipped with a leading space in its name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from kinegraph.errors import DataError
from kinegraph.types import Media, Prediction, Sample

COLUMN_ALIASES = {"prior": "ground_truth_prior", "answer": "ground_truth_posterior"}
ID_COLUMNS = ("id", "question_id", "Unnamed: 0")
REQUIRED = ("video_id", "video_type", "inference_type", "question")
OPTIONAL_CONTEXT = (
    "fps",
    "video_source",
    "ground_truth_prior",
    "depth_info",
    "alt_prior",
    "alt_posterior",
    "counterfactual_factor",
    "cot_q1",
    "cot_q2",
    "cot_q3",
)
PRIOR_KINDS = {"S": "size", "V": "velocity", "A": "acceleration"}
#: The upstream runner's `prior_used` for a v2 (counterfactual) answer; such rows score on alt_posterior.
COUNTERFACTUAL_PRIOR = "alt_prior"
BACKGROUNDS = {"C": "complex", "S": "simple", "X": "segmented"}


def category_of(inference_type: str, video_type: str) -> str:
    """Official category: prior kind of the inference type + dimension of the video type (S2/D2/S3/D3)."""
    return inference_type[0] + video_type[1]


def codes(video_type: str, inference_type: str) -> dict[str, str]:
    """Decode `video_type` [prior][dim][objects][background] and `inference_type` [prior][target] codes."""
    if len(video_type) != 4 or len(inference_type) != 2:
        raise ValueError(
            f"expected video_type like 'S2MC' and inference_type like 'SD', "
            f"got {video_type!r}, {inference_type!r}"
        )
    return {
        "category": category_of(inference_type, video_type),
        "prior_kind": PRIOR_KINDS.get(video_type[0], video_type[0]),
        "dim": video_type[1],
        "objects": {"S": "single", "M": "multiple"}.get(video_type[2], video_type[2]),
        "background": BACKGROUNDS.get(video_type[3], video_type[3]),
        "target_kind": {"S": "static", "D": "dynamic"}.get(inference_type[1], inference_type[1]),
    }


def _read_table(path: Path) -> pd.DataFrame:
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except FileNotFoundError as exc:
        raise DataError("file not found", path=path) from exc
    except pd.errors.EmptyDataError as exc:
        raise DataError("empty file", path=path) from exc
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        raise DataError(f"unreadable table ({exc})", path=path) from exc


TABLE_NAMES = (
    "quantiphy_validation.csv",
    "validation_dataset.parquet",
    "validation_dataset.csv",
    "test_dataset.parquet",
    "quantiphy_counterfactual.csv",  # what `kinegraph data quantiphy-counterfactual --out DIR` writes
)


def _table_path(path: Path) -> Path:
    """A table file, or the one table a downloaded folder holds (the official names, in that order)."""
    if not path.is_dir():
        return path
    for name in TABLE_NAMES:
        if (path / name).is_file():
            return path / name
    raise DataError(f"no QuantiPhy table here (looked for {', '.join(TABLE_NAMES)})", path=path)


def _id_column(df: pd.DataFrame) -> str | None:
    return next((c for c in ID_COLUMNS if c in df.columns), None)


def _clean(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def resolve_video(videos_dir: Path | None, video_id: str) -> str | None:
    """`<videos_dir>/<video_id>.mp4`, or the variant with a leading space one upstream file has."""
    if videos_dir is None:
        return None
    path = videos_dir / f"{video_id}.mp4"
    spaced = videos_dir / f" {video_id}.mp4"
    return str(spaced if not path.exists() and spaced.exists() else path)


def load(
    path: str | Path,
    *,
    videos_dir: str | Path | None = None,
    submission_template: str | Path | None = None,
) -> list[Sample]:
    """Load a QuantiPhy table. Ids come from the first column, `id`/`question_id`, or the template's `id`.

    Without any id (the starter-kit GT layout) rows are numbered from 0, recorded as `id_source="row"`.
    """
    path = _table_path(Path(path))
    df = _read_table(path).rename(columns=COLUMN_ALIASES)
    df = df.loc[:, [c for c in df.columns if not (str(c).startswith("Unnamed:") and c != "Unnamed: 0")]]
    for column in REQUIRED:
        if column not in df.columns:
            raise DataError(f"column missing; have {list(df.columns)}", path=path, field=column)
    ids, id_source = _ids(df, path, submission_template)
    vdir = (
        Path(videos_dir)
        if videos_dir
        else (path.parent / "validation_videos" if (path.parent / "validation_videos").is_dir() else None)
    )
    rows = df.to_dict("records")
    answers = [_ground_truth(row, row_no, path) for row_no, row in enumerate(rows, start=1)]
    if any(a is None for a in answers) and any(a is not None for a in answers):
        row_no = answers.index(None) + 1
        raise DataError(
            f"blank while other rows have one (data row {row_no})", path=path, field="ground_truth_posterior"
        )
    samples = []
    for row_no, (qid, row, answer) in enumerate(zip(ids, rows, answers, strict=True), start=1):
        try:
            meta = codes(str(row["video_type"]), str(row["inference_type"]))
        except ValueError as exc:
            raise DataError(f"{exc} (data row {row_no})", path=path, field="video_type") from exc
        for field in ("question", "video_id"):
            if not isinstance(row[field], str) or not row[field].strip():
                raise DataError(f"empty (data row {row_no})", path=path, field=field)
        context = {k: _clean(row.get(k)) for k in OPTIONAL_CONTEXT if k in row}
        context["source_dir"] = str(path.parent)
        fps = _fps(context.get("fps"), row_no, path)
        video = resolve_video(vdir, str(row["video_id"]))
        samples.append(
            Sample(
                id=str(qid),
                benchmark="quantiphy",
                group=str(row["video_id"]),
                question_id=str(qid),
                question=str(row["question"]),
                answer=answer,
                media=Media(kind="video", video_path=video, fps=fps) if video else Media(),
                context=context,
                metadata={
                    **meta,
                    "video_type": row["video_type"],
                    "inference_type": row["inference_type"],
                    "video_source": context.get("video_source"),
                    "id_source": id_source,
                },
            )
        )
    return samples


def _ground_truth(row: dict[str, Any], row_no: int, path: Path) -> float | None:
    """The row's `ground_truth_posterior` as a finite float; None when blank (the test set has none)."""
    answer = _clean(row.get("ground_truth_posterior"))
    if answer is None:
        return None
    try:
        value = float(answer)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise DataError(
            f"not a finite number: {answer!r} (data row {row_no})", path=path, field="ground_truth_posterior"
        )
    return value


def _fps(value: Any, row_no: int, path: Path) -> float | None:
    """The video's frame rate, a positive number when given."""
    if value is None:
        return None
    try:
        fps = float(value)
    except (TypeError, ValueError):
        fps = math.nan
    if not math.isfinite(fps) or fps <= 0:
        raise DataError(f"not a positive number: {value!r} (data row {row_no})", path=path, field="fps")
    return fps


def integer_ids(values: Sequence[Any], path: str | Path, field: str) -> list[int]:
    """Question ids as ints: each an integer (`1.7` is refused, not truncated), none repeated."""
    ids: list[int] = []
    seen: set[int] = set()
    for row_no, value in enumerate(values, start=1):
        number = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
        if pd.isna(number) or not float(number).is_integer():
            raise DataError(
                f"question id {value!r} is not an integer (data row {row_no})", path=path, field=field
            )
        qid = int(number)
        if qid in seen:
            raise DataError(f"question id {qid} appears twice (data row {row_no})", path=path, field=field)
        seen.add(qid)
        ids.append(qid)
    return ids


def _ids(df: pd.DataFrame, path: Path, template: str | Path | None) -> tuple[list[Any], str]:
    column = _id_column(df)
    if column is not None:
        return integer_ids(list(df[column]), path, column), "column"
    if template is not None:
        template_df = _read_table(Path(template))
        if "id" not in template_df.columns:
            raise DataError("submission template has no 'id' column", path=template, field="id")
        if len(template_df) != len(df):
            raise DataError(f"template has {len(template_df)} rows, data has {len(df)}", path=template)
        ids = [_clean(i) for i in template_df["id"]]
        seen: set[Any] = set()
        for row_no, qid in enumerate(ids, start=1):
            if qid is None or qid in seen:
                what = "blank" if qid is None else f"{qid!r} appears twice"
                raise DataError(f"id {what} (data row {row_no})", path=template, field="id")
            seen.add(qid)
        return ids, "template"
    return list(range(len(df))), "row"


def predictions_frame(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> pd.DataFrame:
    """Predictions in the official `model_outputs/*.csv` layout (id first, then the row, `parsed_value`).

    A prediction without a number leaves `parsed_value` blank, which the official scorer counts as invalid.
    A counterfactual answer adds upstream's `prior_used` column, its factor and the `alt_posterior` it
    is scored on (the prediction's ground truth).
    """
    by_id = {p.sample_id: p for p in predictions}
    rows = []
    for s in samples:
        if s.id not in by_id:
            continue
        answer = by_id[s.id].answer
        rows.append(
            {
                "Unnamed: 0": s.question_id,
                "video_id": s.group,
                "video_source": s.context.get("video_source"),
                "video_type": s.metadata.get("video_type"),
                "fps": s.context.get("fps"),
                "inference_type": s.metadata.get("inference_type"),
                "question": s.question,
                "ground_truth_prior": s.context.get("ground_truth_prior"),
                "depth_info": s.context.get("depth_info"),
                "ground_truth_posterior": s.answer,
                "parsed_value": answer if isinstance(answer, int | float) else None,
            }
        )
        p = by_id[s.id]
        if p.metadata.get("prior_used") == COUNTERFACTUAL_PRIOR:
            rows[-1].update(
                prior_used=COUNTERFACTUAL_PRIOR,
                counterfactual_factor=p.metadata.get("counterfactual_factor"),
                alt_posterior=p.ground_truth,
            )
    return pd.DataFrame(rows)


def write_submission(
    template: str | Path,
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    out: str | Path,
    column: str = "answer",
) -> Path:
    """Fill the competition submission template (`id` first) with the predicted numbers."""
    template_df = _read_table(Path(template))
    if "id" not in template_df.columns:
        raise DataError("submission template has no 'id' column", path=template, field="id")
    answers = {p.sample_id: p.answer for p in predictions}
    value = {str(s.question_id): answers.get(s.id) for s in samples}
    answer_column = column if column in template_df.columns else template_df.columns[-1]
    template_df[answer_column] = [value.get(str(i)) for i in template_df["id"]]
    out = Path(out)
    template_df.to_csv(out, index=False)
    return out
