"""Nodes shared by every family: decode frames once, encode them once, fan out, ask the model, record.

Nodes are verbs; factories (`decode_frames(k)`) return the node so a builder states its options once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Send

from kinegraph.agents.deferred_images import FramesUnavailable, has_deferred, with_images
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.errors import DataError
from kinegraph.graphs.state import GraphContext, GroupState, QuestionState
from kinegraph.graphs.video import takes_whole_video, whole_video
from kinegraph.media import load_frames_sampled
from kinegraph.types import DEFAULT_ROLE, Prediction, Sample, Status, Usage

Node = Callable[..., Awaitable[dict[str, Any]]]


def decode_frames(
    num_frames: int | None, fps: float | None = None, on_demand: bool = False, max_side: int | None = None
) -> Node:
    """Decode the group's clip once: `fps` frames a second, else `num_frames` evenly spaced, else all.

    `on_demand` (for graphs whose nodes use the frames only as images sent to the model): a video sampled
    by count is only planned from its header and its images are made, with `max_side`, when the first
    request that needs them is sent; a question answered from the response cache decodes nothing
    (`deferred_frames`).
    """

    async def decode(state: GroupState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        media = state["samples"][0].media
        if media.kind == "none":
            return {"error": "this sample has no frames or video to decode"}
        stats = runtime.context.stats
        if on_demand and fps is None and media.kind == "video":
            from kinegraph.graphs.deferred_frames import plan_clip

            def count_decode() -> None:
                stats.decodes += 1

            try:
                record, images = await asyncio.to_thread(plan_clip, media, num_frames, max_side, count_decode)
            except (DataError, OSError, ValueError) as exc:
                return {"error": str(exc)}
            return {"frame_record": record, "images": images}
        stats.decodes += 1
        try:
            frames, record = await asyncio.to_thread(
                load_frames_sampled, media, num_frames=num_frames, fps=fps
            )
        except (DataError, OSError, ValueError) as exc:
            return {"error": str(exc)}
        return {"frames": frames, "frame_record": record}

    return decode


def encode_frames(max_side: int | None, whole_video_ok: bool = False, release: bool = False) -> Node:
    """Encode every decoded frame once (JPEG); all questions of the group reuse the bytes. With
    `whole_video_ok`, a model that takes video natively gets the clip's video file whole instead.

    `release` drops the decoded frames once encoded (for graphs whose later nodes only send images);
    images the decode node deferred (`decode_frames(on_demand=True)`) are left as they are.
    """

    async def encode(state: GroupState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        from kinegraph.agents import encode_image

        backend = runtime.context.backend_for(DEFAULT_ROLE)
        if whole_video_ok and takes_whole_video(backend):
            model = f"{backend.provider}:{backend.model}"
            try:
                part, record = whole_video(state["samples"][0].media, state["frame_record"], model)
            except (DataError, OSError) as exc:
                return {"error": str(exc)}
            return {"images": [part], "frame_record": record, "frames": None}
        frames = state.get("frames")
        if frames is None:
            return {}
        images = await asyncio.to_thread(lambda: [encode_image(f, max_side=max_side) for f in frames])
        return {"images": images, "frames": None} if release else {"images": images}

    return encode


def route_on_error(next_node: str) -> Callable[[GroupState], str]:
    """Go on to `next_node`, or to `record_group_error` when decoding failed."""

    def route(state: GroupState) -> str:
        return "record_group_error" if state.get("error") else next_node

    return route


async def record_group_error(state: GroupState) -> dict[str, Any]:
    """Every sample of a group whose input failed becomes an input_error prediction; the run goes on."""
    return {
        "results": [prediction(s, status=Status.input_error, error=state["error"]) for s in state["samples"]]
    }


def question_state(state: GroupState, sample: Sample) -> QuestionState:
    """One question's state: the sample plus what its group computed (shared, not copied)."""
    return QuestionState(
        sample=sample,
        images=state.get("images", []),
        frame_record=state.get("frame_record"),
        measurements=state.get("measurements", {}),
    )


def fan_out(target: str) -> Callable[[GroupState], list[Send]]:
    """One `Send` per question, carrying what the group computed."""

    def route(state: GroupState) -> list[Send]:
        return [Send(target, question_state(state, s)) for s in state["samples"]]

    return route


def answer_each(answer: Node) -> Node:
    """Run a per-question node on every question of the group concurrently, each its own model request.

    The concurrent map happens inside one node rather than as one `Send` branch per question: at
    thousands of questions a second LangGraph's per-task bookkeeping (about 0.2 ms CPU per branch,
    perf/runner_throughput.py) would cap throughput. A question whose node raises becomes a graph_error
    prediction; the other questions of the group keep their answers.
    """

    async def each(state: GroupState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        samples = state["samples"]
        outs = await asyncio.gather(
            *(answer(question_state(state, s), runtime) for s in samples), return_exceptions=True
        )
        results: list[Prediction] = []
        for sample, out in zip(samples, outs, strict=True):
            if isinstance(out, Exception):
                error = f"{type(out).__name__}: {out}"
                results.append(prediction(sample, status=Status.graph_error, error=error))
            elif isinstance(out, BaseException):
                raise out  # cancellation and interpreter exits are not per-question failures
            else:
                results += out["results"]
        return {"results": results}

    return each


def prediction(sample: Sample, **fields: Any) -> Prediction:
    """A prediction for `sample` with the sample's identity, metadata and ground truth filled in."""
    fields.setdefault("metadata", sample.metadata)
    return Prediction(
        sample_id=sample.id,
        benchmark=sample.benchmark,
        group=sample.group,
        question_id=sample.question_id,
        ground_truth=sample.answer,
        **fields,
    )


def role_backend(runtime: Runtime[GraphContext], role: str = DEFAULT_ROLE) -> Any:
    """The backend of model role `role` (the default backend unless the run named one for it)."""
    backend = runtime.context.backend_for(role)
    if backend is None:
        if role == DEFAULT_ROLE:
            raise ValueError("this graph needs a model: pass --model PROVIDER:MODEL")
        raise ValueError(f"this graph needs a model for role {role!r}: pass --role {role}=PROVIDER:MODEL")
    return backend


def model_of(runtime: Runtime[GraphContext], role: str = DEFAULT_ROLE) -> str | None:
    """`PROVIDER:MODEL` of the backend that answers `role` (None when there is none), for traces."""
    backend = runtime.context.backend_for(role)
    return None if backend is None else f"{backend.provider}:{backend.model}"


async def call_model(
    runtime: Runtime[GraphContext], request: GenerateRequest, role: str = DEFAULT_ROLE
) -> GenerateResponse:
    """Ask the backend of `role`, holding a slot of that role's concurrency limit.

    A request whose images are deferred is first looked up in the response cache (no slot, no frames);
    on a miss its clip is decoded and encoded, once, before a slot is taken.
    """
    backend = role_backend(runtime, role)
    if has_deferred(request):
        lookup = getattr(backend, "cached", None)
        hit = lookup(request) if lookup is not None else None
        if hit is not None:
            return hit
        request = await with_images(request)
    limiter = runtime.context.limiter_for(role)
    if limiter is None:
        return await backend.generate(request)
    async with limiter:
        return await backend.generate(request)


async def ask(
    runtime: Runtime[GraphContext], request: GenerateRequest, role: str = DEFAULT_ROLE
) -> tuple[GenerateResponse | None, dict]:
    """Call the model of `role`; on failure return (None, fields of an error prediction) instead of
    raising."""
    from kinegraph.agents import BackendError

    start = time.perf_counter()
    try:
        return await call_model(runtime, request, role), {}
    except BackendError as exc:
        return None, {"status": exc.status, "error": str(exc), "latency_s": time.perf_counter() - start}
    except FramesUnavailable as exc:  # a clip decoded on demand (`decode_frames`) failed
        return None, {
            "status": Status.input_error,
            "error": str(exc),
            "latency_s": time.perf_counter() - start,
        }
    except TimeoutError:
        return None, {
            "status": Status.timeout,
            "error": "model call timed out",
            "latency_s": time.perf_counter() - start,
        }


def usage_of(responses: list[GenerateResponse]) -> Usage:
    total = Usage()
    for r in responses:
        total = total + r.usage
    return total
