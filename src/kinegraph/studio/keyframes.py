"""A dashcam video in Studio for a graph that reads keyframes (TAD, STSBench): the questions become the
samples the benchmark's card makes of an ad-hoc question about the video's keyframes.

The video (the private copy the run opened, `kinegraph.paths.copy_under`) is sampled at the card's
keyframe rate, the keyframes written into that run's private folder; ego poses a graph needs and a
question lacks are measured from every frame of the video. A question's `metadata` may carry the card's
extras (`task`, `keysegments`: frame-index lists or "derive"); what was made is recorded in each
sample's `metadata.inputs`, which the prediction keeps.
"""

from __future__ import annotations

from pathlib import Path

from kinegraph.benchmarks.card import Question, QuestionRefused
from kinegraph.errors import DataError
from kinegraph.graphs import GraphSpec
from kinegraph.graphs.keyframes import measured_poses, video_keyframes
from kinegraph.media_limits import decoding_within
from kinegraph.studio.inputs import STUDIO_LIMITS, StudioInputError
from kinegraph.suites import card_of
from kinegraph.types import Sample

#: the card's extras a Studio question may carry in its metadata
EXTRAS = ("task", "keysegments")


def keyframe_samples(spec: GraphSpec, samples: list[Sample], scratch: Path) -> list[Sample]:
    """`samples` about a video, as `spec`'s benchmark asks them of keyframes written under `scratch`
    (unchanged when the graph reads no keyframes or the clip is no video); a `StudioInputError` naming
    the field when refused."""
    card = card_of(spec.family)
    if card is None or card.keyframe_rate_hz is None or not samples or samples[0].media.kind != "video":
        return samples
    video, rate_hz = samples[0].media, card.keyframe_rate_hz
    try:
        with decoding_within(STUDIO_LIMITS):  # each decoded keyframe checked, as serve checks it
            keyframes = video_keyframes(video, rate_hz, scratch, STUDIO_LIMITS.max_frames)
    except DataError as exc:
        raise StudioInputError(f"media.video_path: {exc.message}") from None
    made = {"frames": f"keyframes at {rate_hz:g} Hz from the video"}
    poses = None
    if "ego_poses" in spec.needs_fields and any("ego_poses" not in s.context for s in samples):
        try:
            poses = measured_poses(video, keyframes, samples[0].group)
        except (DataError, OSError, ValueError) as exc:
            raise StudioInputError(f"media.video_path: cannot measure the ego poses: {exc}") from None
    out = []
    for i, sample in enumerate(samples):
        context, inputs = dict(sample.context), dict(made)
        if poses is not None and "ego_poses" not in context:
            context["ego_poses"], inputs["ego_poses"] = poses, "measured"
        extras = {"question_id": sample.question_id}
        extras |= {key: sample.metadata[key] for key in EXTRAS if key in sample.metadata}
        question = Question(sample.id, sample.question, sample.options, keyframes, context, extras)
        try:
            shaped, shaped_made = card.ask(question)
        except QuestionRefused as exc:
            raise StudioInputError(f"samples.{i}: {exc}") from None
        metadata = {**sample.metadata, **shaped.metadata, "inputs": {**inputs, **shaped_made}}
        out.append(
            shaped.model_copy(update={"group": sample.group, "answer": sample.answer, "metadata": metadata})
        )
    return out
