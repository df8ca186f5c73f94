"""QuantiPhy's counterfactual-prior family (paper Sec 5.2) written from any QuantiPhy table.

"For each of the 161 instances, we construct a family of counterfactual prompts by multiplying the
original physical prior by a scalar factor alpha in {0.001, 0.01, 0.1, 0.2, 5, 50, 100, 200, 500, 700},
while keeping the video and question unchanged"; the truth becomes y_cf = alpha * y. Every question gets
one row per alpha in the starter kit's columns (`counterfactual_factor, alt_prior, alt_posterior`), so
`quantiphy.counterfactual` reads it and the scorer scores each answer on its `alt_posterior`.

Ids stay integers, because the official scorer joins on them: id = source id * 100 + the alpha's
position in the family (2161 at alpha 0.001 is 216100, at 700 it is 216109); `source_id` keeps the
original id and `counterfactual_factor` the alpha itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from kinegraph.benchmarks.quantiphy.loader import load
from kinegraph.errors import DataError
from kinegraph.types import Sample

ALPHAS: tuple[float, ...] = (0.001, 0.01, 0.1, 0.2, 5, 50, 100, 200, 500, 700)
OUT_NAME = "quantiphy_counterfactual.csv"
VIDEO_DIR = "validation_videos"
_VALUE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _fmt(x: float) -> str:
    """12 significant digits: 9.8 * 100 is written 980, not 980.0000000000001."""
    return f"{x:.12g}"


def scale_prior(text: str, alpha: float) -> str:
    """The prior with its value (the first number after the last `=` or `~`) multiplied by alpha.

    "speed of the bird =6m/s" at 100 is "speed of the bird =600m/s", as in the starter kit.
    """
    sep = max(text.rfind("="), text.rfind("~"))
    match = _VALUE.search(text, sep + 1) if sep >= 0 else None
    if match is None:
        raise ValueError(f"no value after '=' or '~' in {text!r}")
    return text[: match.start()] + _fmt(float(match.group()) * alpha) + text[match.end() :]


def _source_id(sample: Sample) -> int:
    try:
        return int(str(sample.question_id))
    except ValueError:
        raise DataError(f"question id {sample.question_id!r} is not an integer", field="id") from None


def counterfactual_rows(samples: Sequence[Sample], alphas: Sequence[float] = ALPHAS) -> list[dict[str, Any]]:
    """One row per question per alpha in the validation CSV's column order, plus the counterfactual ones."""
    if len(alphas) > 100:
        raise ValueError(f"at most 100 factors fit the id scheme, got {len(alphas)}")
    cot = [c for c in ("cot_q1", "cot_q2", "cot_q3") if any(c in s.context for s in samples)]
    rows = []
    for sample in samples:
        source_id = _source_id(sample)
        prior = sample.context.get("ground_truth_prior")
        if sample.answer is None:
            raise DataError(
                f"no ground truth for question {source_id}: the counterfactual truth is alpha * y",
                field="ground_truth_posterior",
            )
        for k, alpha in enumerate(alphas):
            try:
                alt_prior = scale_prior(str(prior or ""), alpha)
            except ValueError as exc:
                raise DataError(f"{exc} (question {source_id})", field="ground_truth_prior") from None
            rows.append(
                {
                    "": source_id * 100 + k,
                    "video_id": sample.group,
                    "video_source": sample.context.get("video_source"),
                    "video_type": sample.metadata.get("video_type"),
                    "fps": sample.context.get("fps"),
                    "inference_type": sample.metadata.get("inference_type"),
                    "question": sample.question,
                    "ground_truth_prior": prior,
                    "depth_info": sample.context.get("depth_info"),
                    "ground_truth_posterior": sample.answer,
                    "counterfactual_factor": alpha,
                    "alt_prior": alt_prior,
                    "alt_posterior": float(_fmt(alpha * float(sample.answer))),
                    "source_id": source_id,
                    **{c: sample.context.get(c) for c in cot},
                }
            )
    return rows


def write_counterfactual_set(
    source: str | Path, out_dir: str | Path, alphas: Sequence[float] = ALPHAS
) -> Path:
    """Write `<out_dir>/quantiphy_counterfactual.csv` from a QuantiPhy table; returns its path.

    The videos stay where they are: `<out_dir>/validation_videos` links to the source's video folder,
    so the loader finds them next to the new table.
    """
    try:
        samples = load(source)
        rows = counterfactual_rows(samples, alphas)
    except DataError as exc:
        raise DataError(exc.message, path=exc.path or source, field=exc.field) from None
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / OUT_NAME
    pd.DataFrame(rows).to_csv(path, index=False)
    video_dirs = {Path(s.media.video_path).parent for s in samples if s.media.video_path}
    link = out_dir / VIDEO_DIR
    if len(video_dirs) == 1 and (videos := video_dirs.pop()).is_dir() and not link.exists():
        if videos.resolve() != link.resolve():
            link.symlink_to(videos.resolve(), target_is_directory=True)
    return path
