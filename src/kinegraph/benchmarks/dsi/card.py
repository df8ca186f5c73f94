"""DSI-Bench's card: paper, licence, upstream, Hub layout, context schema, ad-hoc questions."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic builds schemas only from this one on 3.11

from kinegraph.benchmarks.card import Card, HubLayout, Question, QuestionRefused, lettered
from kinegraph.benchmarks.dsi.loader import VIDEO_SAMPLING_FPS

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)


@with_config(_STRICT)
class DSIContext(TypedDict, total=False):
    """DSI-Bench: the options as the official prompt prints them, and the video sampling rate."""

    options_text: str
    sampling_fps: float


def shape(question: Question, fields: dict[str, Any], made: dict[str, str]) -> None:
    """DSI's layout: a video sampled at 5 fps, `A: text` options and their joined text."""
    if question.media.kind != "video":
        raise QuestionRefused("video: DSI graphs sample a video (send video_path or an uploaded video)")
    options = lettered(question.options or [], ": ")
    fields["options"] = options or None
    fields["context"].update(options_text="; ".join(options), sampling_fps=VIDEO_SAMPLING_FPS)


CARD = Card(
    name="dsi",
    title="DSI-Bench",
    paper='Zhang et al., "DSI-Bench: A Benchmark for Dynamic Spatial Intelligence", arXiv 2510.18873',
    licence="CC BY 4.0",
    upstream="github.com/SpatialVision/dsibench@af90adc",
    hub=HubLayout(
        "Viglong/DSI-Bench",
        ("metadatas/*", "videos/*"),
        tuple((f"metadatas/{v}.csv",) for v in ("std", "hflip", "reverse", "reverse_hflip")) + (("videos",),),
        video_globs=("videos/std/**/*.mp4",),
    ),
    context=DSIContext,
    shape=shape,
    data_hint="--data DSI_DIR",
)
