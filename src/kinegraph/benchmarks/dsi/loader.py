"""DSI-Bench: Dynamic Spatial Intelligence (loader and official prompt).

Paper: Zhang et al., "DSI-Bench: A Benchmark for Dynamic Spatial Intelligence", arXiv 2510.18873.
Code: github.com/SpatialVision/dsibench@af90adc (CC BY 4.0); data HF `Viglong/DSI-Bench`:
`metadatas/{std,hflip,reverse,reverse_hflip}.csv` (row-aligned, 1,769 rows each, each with its own GT)
and `videos/{variant}/<relative_path>`. Six categories (`cate` 0-5); 4-option single choice.

Sample ids are `dsi/<variant>/<row>`; the group is the row, so the four variants of one question pair up
for the group-wise metric.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from kinegraph.errors import DataError
from kinegraph.types import Media, Sample

BENCHMARK = "dsi"
VARIANTS: tuple[str, ...] = ("std", "hflip", "reverse", "reverse_hflip")
CATEGORIES: tuple[str, ...] = (
    "Obj:static cam",
    "Obj:moving cam",
    "Cam:static scene",
    "Cam:dynamic scene",
    "Obj-Cam distance",
    "Obj-Cam orientation",
)
REQUIRED_COLUMNS: tuple[str, ...] = ("relative_path", "question", "options", "GT", "cate")
VIDEO_SAMPLING_FPS = 5.0  # the official inference passes the video at 5 fps

# The RAWQA system text of the official `qwen_inference_code.py`, byte for byte (trailing spaces included).
RAWQA_PROMPT = (
    "You are a vision-language expert.\n"
    "You are given a clip of video and your task is to answer a question about the video.\n"
    "You only need to provide *ONE* correct answer selecting from the options listed below. \n"
    "For example, if you think the correct answer is 'A' from 'A. Above B. Under C. Front D. Behind', \n"
    "your response should **only** be '<answer>A</answer>'.\n"
    "Please answer the question in this format strictly:\n"
    "<answer>[A, B, C, or D]</answer>\n"
)

_OPTION_SPLIT = re.compile(r";\s*(?=[A-Z]\s*[:.])")


def build_prompt(question: str, options: str) -> str:
    """The official user text: RAWQA instructions, then `\\nQuestion:\\n{question} {options}`."""
    return RAWQA_PROMPT + f"\nQuestion:\n{question} {options}"


def category_name(cate: Any) -> str:
    """Name of a `cate` id; upstream prints "Category N" for ids past the six known ones."""
    try:
        index = int(cate)
    except (TypeError, ValueError):
        return f"Category {cate}"
    return CATEGORIES[index] if 0 <= index < len(CATEGORIES) else f"Category {index}"


def split_options(options: str) -> list[str]:
    """`"A: x; B: y"` -> `["A: x", "B: y"]` (the string itself stays what the prompt shows)."""
    return [part.strip() for part in _OPTION_SPLIT.split(options) if part.strip()]


def read_csv(path: Path) -> pd.DataFrame:
    """A CSV read with pandas as upstream does; unreadable, empty or non-UTF-8 files are a DataError."""
    if not path.is_file():
        raise DataError("CSV not found", path=path)
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError as exc:
        raise DataError("empty file", path=path) from exc
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"not a readable CSV ({exc})", path=path) from exc


def _check_rows(frame: pd.DataFrame, path: Path) -> None:
    """Every row: a question, a video, options, a GT letter among them; no row repeated (a repeat would
    shift every later row, and with it the ground truth, to another sample id)."""
    for row_no, values in enumerate(frame.to_dict("records"), start=1):
        for field in ("relative_path", "question", "options"):
            if _text(values[field]) in (None, ""):
                raise DataError(f"empty (data row {row_no})", path=path, field=field)
        letters = [part[0] for part in split_options(str(values["options"]))]
        gt = _text(values["GT"])
        if gt not in letters:
            raise DataError(
                f"{values['GT']!r} is not one of the option letters {letters} (data row {row_no})",
                path=path,
                field="GT",
            )
    repeated = frame.duplicated(keep="first")
    if repeated.any():
        row_no = int(repeated.to_numpy().nonzero()[0][0]) + 1
        raise DataError(f"row repeats an earlier row (data row {row_no})", path=path)


def read_metadata(root: str | Path, variant: str) -> pd.DataFrame:
    """`metadatas/<variant>.csv`, read with pandas as upstream does; columns and rows checked."""
    path = Path(root) / "metadatas" / f"{variant}.csv"
    if not path.is_file():
        raise DataError("metadata CSV not found", path=path)
    frame = read_csv(path)
    for column in REQUIRED_COLUMNS:
        if column not in frame.columns:
            raise DataError("column missing", path=path, field=column)
    if frame.empty:
        raise DataError("no rows", path=path)
    _check_rows(frame, path)
    return frame


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value).strip()


def _cate_id(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def build_sample(root: Path, variant: str, row_index: int, row: pd.Series) -> Sample:
    """One metadata row of one variant as a Sample (`read_metadata` has checked its fields)."""
    options = _text(row["options"]) or ""
    relative = str(row["relative_path"])
    return Sample(
        id=f"{BENCHMARK}/{variant}/{row_index}",
        benchmark=BENCHMARK,
        group=str(row_index),
        question_id=category_name(row["cate"]),
        question=str(row["question"]),
        options=split_options(options) or None,
        answer=_text(row["GT"]),
        media=Media(kind="video", video_path=str(root / "videos" / variant / relative)),
        context={"options_text": options, "sampling_fps": VIDEO_SAMPLING_FPS},
        metadata={
            "variant": variant,
            "row": row_index,
            "cate": _cate_id(row["cate"]),
            "category": category_name(row["cate"]),
            "relative_path": relative,
            "video_type": _text(row.get("video_type")),
        },
    )


def load(path: str | Path, variants: tuple[str, ...] = VARIANTS) -> list[Sample]:
    """Every row of every variant CSV under `path` (the HF dataset folder); row counts must agree."""
    root = Path(path)
    frames = {v: read_metadata(root, v) for v in variants}
    lengths = {v: len(f) for v, f in frames.items()}
    if len(set(lengths.values())) > 1:  # upstream raises on this too
        raise DataError(f"variant CSVs differ in length: {lengths}", path=root / "metadatas")
    return [
        build_sample(root, variant, i, row)
        for variant, frame in frames.items()
        for i, (_, row) in enumerate(frame.iterrows())
    ]
