"""What a graph takes and returns in LangGraph Studio (`langgraph dev`): plain JSON, one schema per family.

Studio sends JSON, so each benchmark family has a TypedDict input schema: the questions of one clip as
JSON objects in the loaders' record format (`Sample` fields, with the context schema of the family's
benchmark card), and the clip as a video or frame files relative to the media root
(`$KINEGRAPH_MEDIA_ROOT`). References are confined and media checked by the same code `serve` and MCP
use (`kinegraph.paths`, `kinegraph.media_limits`, serve's default limits: `STUDIO_LIMITS`).
`read_samples` validates an input with pydantic and turns it into the project's `Sample`s; a bad input
is refused in one line naming the field. Given a private directory, it opens every referenced file by
descriptor and copies it there, so the graph decodes the files that were checked, never a path under
the media root someone can swap.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any, NotRequired, Required

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic builds schemas only from this one on 3.11

from kinegraph import paths
from kinegraph.media_limits import InputRefused, MediaLimits, check_image, check_video
from kinegraph.suites import card_of
from kinegraph.types import Media, Sample

MEDIA_ROOT_ENV = "KINEGRAPH_MEDIA_ROOT"
#: Studio's limits: serve's defaults (the media root is passed per input).
STUDIO_LIMITS = MediaLimits(data_root=None)

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)


@with_config(_STRICT)
class StudioMedia(TypedDict, total=False):
    """The clip every question of the input is about: one video, or frame files, under the media root."""

    video_path: str
    frame_paths: list[str]
    frame_indices: list[int]
    timestamps_s: list[float]
    fps: float


#: Context fields that name files, resolved under the media root like the clip itself.
FILE_FIELDS = ("arrays_path", "source_dir")


class StudioOutput(TypedDict):
    """One prediction per question, as JSON (`kinegraph.types.Prediction` fields)."""

    predictions: list[dict[str, Any]]


@cache
def input_schema(family: str | None) -> type:
    """The Studio input TypedDict of a family: `samples` (one clip's questions) and the clip's `media`."""
    card = card_of(family)
    context = card.context if card is not None and card.context is not dict else dict[str, Any]
    name = "".join(part.title() for part in (family or "any").split("_"))
    sample = with_config(_STRICT)(
        TypedDict(
            f"{name}StudioSample",
            {
                "id": NotRequired[str],
                "question": Required[str],
                "question_id": NotRequired[str],
                "options": NotRequired[list[str]],
                "answer": NotRequired[str | float | list[str]],
                "context": NotRequired[context],
                "metadata": NotRequired[dict[str, Any]],
            },
        )
    )
    schema = TypedDict(  # noqa: UP013 - the sample type is made per family here
        f"{name}StudioInput", {"samples": Required[list[sample]], "media": NotRequired[StudioMedia]}
    )
    schema.__doc__ = f"One {family or 'benchmark'} clip's questions and the clip (paths under the media root)"
    return with_config(_STRICT)(schema)


@cache
def _adapter(family: str | None) -> TypeAdapter[Any]:
    return TypeAdapter(input_schema(family))


class StudioInputError(ValueError):
    """An input Studio sent that the graph cannot take; the message names the field."""


def read_samples(
    family: str | None, value: Any, media_root: Path | None = None, private: Path | None = None
) -> list[Sample]:
    """The `Sample`s of one Studio input (see `input_schema`), file references resolved under the media
    root (`media_root`, else `$KINEGRAPH_MEDIA_ROOT`) and, given `private`, opened by descriptor and copied
    under it (a folder: its files, each opened from the folder's descriptor); a `StudioInputError` in one
    line when it is bad."""
    try:
        checked = _adapter(family).validate_python(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "input"
        raise StudioInputError(f"{where}: {first['msg']}") from None
    if not checked["samples"]:
        raise StudioInputError("samples: give at least one question")
    root = media_root if media_root is not None else _env_root()
    media = _media(checked.get("media") or {}, root, private)
    samples = []
    for i, row in enumerate(checked["samples"]):
        context = dict(row.get("context") or {})
        for field in FILE_FIELDS:
            if field in context:
                where = f"samples.{i}.context.{field}"
                context[field] = str(
                    resolve_under(root, context[field], where, regular=False, private=private)
                )
        samples.append(
            Sample(
                id=row.get("id", str(i)),
                benchmark=family or "any",
                group=media.key if media.kind != "none" else "studio",
                question_id=row.get("question_id"),
                question=row["question"],
                options=row.get("options"),
                answer=row.get("answer"),
                media=media,
                context=context,
                metadata=row.get("metadata") or {},
            )
        )
    return samples


def _env_root() -> Path | None:
    value = os.environ.get(MEDIA_ROOT_ENV)
    return Path(value) if value else None


def _media(media: StudioMedia, root: Path | None, private: Path | None) -> Media:
    """The clip as the project's `Media`: exactly one of a video or frame files, under the media root."""
    if "video_path" in media and "frame_paths" in media:
        raise StudioInputError("media: give video_path or frame_paths, not both")
    extra = {key: media[key] for key in ("frame_indices", "timestamps_s", "fps") if key in media}  # type: ignore[literal-required]
    limits = STUDIO_LIMITS
    try:
        if "video_path" in media:
            video = resolve_under(root, media["video_path"], "media.video_path", private=private)
            check_video(video, limits, "media.video_path")
            return Media(kind="video", video_path=str(video), **extra)
        if media.get("frame_paths"):
            if len(media["frame_paths"]) > limits.max_frames:
                raise StudioInputError(
                    f"media.frame_paths: {len(media['frame_paths'])} frames exceed the limit of "
                    f"{limits.max_frames} per input"
                )
            paths = []
            for i, reference in enumerate(media["frame_paths"]):
                path = resolve_under(root, reference, f"media.frame_paths.{i}", private=private)
                check_image(path, limits.max_image_pixels, f"media.frame_paths.{i}")
                paths.append(str(path))
            return Media(kind="frames", frame_paths=paths, **extra)
    except InputRefused as exc:
        raise StudioInputError(exc.message) from None
    return Media()


def resolve_under(
    root: Path | None, reference: str, where: str, *, regular: bool = True, private: Path | None = None
) -> Path:
    """`reference` (relative to `root`) inside `root` (a regular file, or a folder too unless `regular`),
    confined as serve confines references (given `private`: the file opened by descriptor and copied under
    it, a folder's files each copied so); a `StudioInputError` naming the field otherwise."""
    if root is None:
        raise StudioInputError(
            f"{where}: file references need ${MEDIA_ROOT_ENV}, the folder media comes from"
        )
    name = f"${MEDIA_ROOT_ENV}"
    try:
        if private is not None:
            return paths.copy_under(root, reference, where, private, root_name=name, folders=not regular)
        return paths.resolve_under(root, reference, where, root_name=name, regular=regular)
    except InputRefused as exc:
        message = f"{exc.message}: {reference!r}" if exc.status == 404 else exc.message
        raise StudioInputError(message) from None
