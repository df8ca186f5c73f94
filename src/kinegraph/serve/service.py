"""Answer one question with one served graph: validate options, build the sample, run, map the outcome.

A request is a group of one sample; the graph runs exactly as in `kinegraph run` (same nodes, prompts and
official parser), with the app-wide backend and model-call limit in the runtime context. Compiled graphs
are kept per (graph, options), a file option by the identity of the file opened under the data root; the
builder reads a private copy of that file, never its name. `prepare` does every check a request can fail
before its graph runs, so a streamed answer (`run` with `on_progress`) starts only once the request is
known to be good.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import shutil
import tempfile
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinegraph.graphs import GraphSpec, graph_spec, graphs
from kinegraph.graphs.state import GraphContext
from kinegraph.media_limits import decoding_within
from kinegraph.paths import file_identity, open_under, private_copy
from kinegraph.run.invoke import invoke_group
from kinegraph.serve.errors import ServeError
from kinegraph.serve.inputs import REFERENCED, Uploads, build_media, invalid, media_limits
from kinegraph.serve.needs import check_needs, refusal, request_needs
from kinegraph.serve.option_bounds import OptionOutOfBounds, bound_options
from kinegraph.serve.samples import request_sample
from kinegraph.serve.schemas import GraphInfo, GraphOption, QARequest, QAResponse
from kinegraph.serve.settings import ServeSettings
from kinegraph.serve.stream import OnProgress, node_summary
from kinegraph.serve.trajectories import (
    keyframe_poses,
    keyframes_of,
    measured_motion,
    nuscenes_scene,
    pose_context,
    trajectory_context,
)
from kinegraph.suites import card_of
from kinegraph.types import FrameRecord, Media, Prediction, Sample, Status

log = logging.getLogger("kinegraph.serve")

COMPILED_CACHE_SIZE = 64

# What a client is told when the model backend fails; the backend's own error (its URL, host and port
# included) goes to the server log only.
_BACKEND_FAILURES = {
    Status.api_error: (502, "model_error", "the model backend failed"),
    Status.budget_exceeded: (502, "model_error", "the model-call budget is exhausted"),
    Status.timeout: (504, "timeout", "the model backend timed out"),
}


@dataclass
class PreparedRequest:
    """A checked request turned into its graph's sample, ready to run; its uploads live in `workdir`
    until `close()`."""

    graph: GraphSpec
    compiled: Any
    sample: Sample
    made: dict[str, str]
    workdir: tempfile.TemporaryDirectory[str]
    start: float
    deadline: float
    option_copies: Any = None  # the private copies of the graph's option files, kept while it runs

    def close(self) -> None:
        self.workdir.cleanup()


def graph_info(spec: GraphSpec, has_model: bool) -> GraphInfo:
    """What `/v1/graphs` says of a served graph: its needs and the options its builder takes."""
    options = [
        GraphOption(name=o.name, type=o.type_name, default=_json_default(o.default)) for o in spec.options
    ]
    return GraphInfo(
        name=spec.name,
        description=spec.description,
        needs_model=spec.needs_model,
        needs_trajectory=spec.needs_trajectory,
        needs=request_needs(spec),
        refused=refusal(spec),
        available=(has_model or not spec.needs_model) and refusal(spec) is None,
        options=options,
    )


@dataclass(frozen=True)
class OptionFile:
    """The file a graph option names, opened by descriptor under the data root: its `fd` (closed with
    `close_option_files`) and its identity (`kinegraph.paths.file_identity`), which compiled graphs are
    cached by."""

    reference: str
    fd: int
    identity: tuple[int, int, int, int]


def served_options(
    spec: GraphSpec, options: dict[str, Any], max_frames: int, data_root: Path | None = None
) -> dict[str, Any]:
    """A request's graph options as the spec types them, within `serve.option_bounds` (frame counts up to
    `max_frames`; a file option opened by descriptor under `data_root`, an `OptionFile` the caller closes
    with `close_option_files`)."""
    try:
        checked = spec.check_options(options)
    except ValueError as exc:
        raise ServeError(422, f"graph_options: {exc}") from None
    opened: list[OptionFile] = []

    def open_file(reference: str, where: str) -> OptionFile:
        fd = open_under(data_root, reference, where)
        try:
            opened.append(OptionFile(reference, fd, file_identity(fd)))
        except BaseException:
            os.close(fd)
            raise
        return opened[-1]

    try:
        return bound_options(checked, max_frames, open_file)
    except OptionOutOfBounds as exc:
        close_option_files({str(i): f for i, f in enumerate(opened)})
        raise ServeError(422, str(exc)) from None
    except BaseException:
        close_option_files({str(i): f for i, f in enumerate(opened)})
        raise


def close_option_files(options: dict[str, Any]) -> None:
    """Close the descriptors of the `OptionFile`s among `options`."""
    for value in options.values():
        if isinstance(value, OptionFile):
            os.close(value.fd)


class _OptionCopies:
    """A private folder (mode 0700) of the copies of one compiled graph's option files, removed once
    neither the compiled-graph cache nor a running request holds it (a graph may read them lazily, as
    RAFT loads its weights on first use)."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="kinegraph-options-"))
        weakref.finalize(self, shutil.rmtree, str(self.path), ignore_errors=True)


def _answers_only(graph: GraphSpec) -> str:
    """What a VLM-free graph answers (its benchmark card says), for the refusal of a question it does not."""
    card = card_of(graph.family)
    if card is not None and card.vlm_free_scope is not None and not graph.needs_model:
        return f": {card.vlm_free_scope()}"
    return ""


def _json_default(value: Any) -> Any:
    if value is inspect.Parameter.empty:
        return None
    return value if isinstance(value, bool | int | float | str | type(None)) else repr(value)


class QAService:
    """The served graphs, the backend, and the compiled-graph cache of one app."""

    def __init__(self, settings: ServeSettings, backend: Any = None) -> None:
        self.settings = settings
        names = settings.graphs or tuple(graphs.names())
        self.graphs = {name: graph_spec(name) for name in names}
        if settings.default_graph not in self.graphs:
            raise ValueError(f"default graph {settings.default_graph!r} is not served ({', '.join(names)})")
        from kinegraph.agents import get_backend

        if backend is None and settings.model is not None:
            backend = get_backend(
                settings.model,
                base_url=settings.base_url,
                cache=settings.cache or False,
                **settings.model_options,
            )
        self.backend = backend
        used = {role for g in self.graphs.values() for role in g.model_roles}
        for role in settings.roles:
            if role not in used:
                raise ValueError(f"--role {role}: no served graph has that model role")
        self.roles = {
            role: get_backend(
                named.model, base_url=named.base_url, cache=settings.cache or False, **named.options
            )
            for role, named in settings.roles.items()
        }
        self._compiled: OrderedDict[tuple[str, str], tuple[Any, _OptionCopies | None]] = OrderedDict()
        self._model_slots: asyncio.Semaphore | None = None
        self._role_slots: dict[str, asyncio.Semaphore] = {}
        # derived once, at start: this imports every served builder, so a broken one fails here
        self._missing = {name: self._missing_role(g) for name, g in self.graphs.items()}
        self._infos = [graph_info(g, self._missing[g.name] is None) for g in self.graphs.values()]

    def _missing_role(self, graph: GraphSpec) -> str | None:
        """Why `graph` cannot be served with the server's models (a role nothing fills), or None."""
        default = None if self.backend is None else f"{self.backend.provider}:{self.backend.model}"
        named = {role: m for role, m in self.settings.roles.items() if role in graph.model_roles}
        try:
            graph.resolve_roles(default, named)
        except ValueError as exc:
            return str(exc).replace("pass --", "start the server with --")
        return None

    def graph_infos(self) -> list[GraphInfo]:
        return list(self._infos)

    def served(self, name: str | None) -> GraphSpec:
        name = name or self.settings.default_graph
        if name not in self.graphs:
            raise ServeError(404, f"unknown graph {name!r}; served: {', '.join(self.graphs)}", "not_found")
        graph = self.graphs[name]
        missing = self._missing[name]
        if missing is not None:
            raise ServeError(503, missing, "service_unavailable")
        return graph

    def compiled(self, graph: GraphSpec, options: dict[str, Any]) -> Any:
        """`graph` built with `options`, from the cache when it was built with the same options before."""
        return self._compiled_entry(graph, options)[0]

    def _compiled_entry(self, graph: GraphSpec, options: dict[str, Any]) -> tuple[Any, _OptionCopies | None]:
        """The compiled graph and the private copies of its option files. The cache keys a file option by
        the identity of the file opened, never by its name: a file changed or swapped since is copied and
        built again. The builder is given the private copy of the opened file, never a name under the root."""
        keyed = {k: ("file", v.identity) if isinstance(v, OptionFile) else v for k, v in options.items()}
        key = (graph.name, repr(sorted(keyed.items())))  # repr: option values may be lists (`probes`)
        if key in self._compiled:
            self._compiled.move_to_end(key)
            return self._compiled[key]
        copies, built = None, dict(options)
        for name, value in options.items():
            if isinstance(value, OptionFile):
                copies = copies or _OptionCopies()
                try:
                    built[name] = str(private_copy(value.fd, copies.path / name / Path(value.reference).name))
                except OSError as exc:
                    raise ServeError(
                        422, f"graph_options.{name}: cannot be read under the data root ({exc.strerror})"
                    ) from None
        try:
            compiled = graph.build(built)
        except (TypeError, ValueError) as exc:
            message = str(exc) if copies is None else str(exc).replace(f"{copies.path}/", "")
            raise ServeError(422, f"graph_options: {message}") from None
        self._compiled[key] = (compiled, copies)
        if len(self._compiled) > COMPILED_CACHE_SIZE:
            self._compiled.popitem(last=False)
        return compiled, copies

    async def answer(
        self, request: QARequest, uploads: Uploads | None = None, on_progress: OnProgress | None = None
    ) -> QAResponse:
        """Run the request's graph on its inputs within the request timeout."""
        prepared = await self.prepare(request, uploads)
        try:
            return await self.run(prepared, on_progress)
        finally:
            prepared.close()

    async def prepare(self, request: QARequest, uploads: Uploads | None = None) -> PreparedRequest:
        """Check the request and build its sample (a 4xx `ServeError` for anything wrong with it), so that a
        stream starts only for a request the graph can be run on. Close the result when done."""
        start, deadline = (
            time.perf_counter(),
            asyncio.get_running_loop().time() + self.settings.request_timeout_s,
        )
        graph = self.served(request.graph)
        options = served_options(
            graph, request.graph_options, self.settings.max_frames, self.settings.data_root
        )
        try:
            uploads = uploads or Uploads()
            n_images = len(request.images) + len(uploads.frames)
            has_media = bool(n_images or request.frame_paths or request.video_path or uploads.video)
            to_measure = check_needs(
                graph, request, n_images, has_media or request.nuscenes_scene is not None
            )
            request_id = request.request_id or uuid.uuid4().hex
            compiled, copies = self._compiled_entry(graph, options)
        finally:
            close_option_files(options)
        workdir = tempfile.TemporaryDirectory(prefix="kinegraph-serve-", ignore_cleanup_errors=True)
        try:
            async with self._within(deadline):
                card = card_of(graph.family)
                rate_hz = card.keyframe_rate_hz if card is not None else None
                media, context, made = await asyncio.to_thread(
                    self._inputs, request, uploads, Path(workdir.name), request_id, to_measure, rate_hz
                )
            sample, shaped = request_sample(request, graph.family, request_id, media, context)
        except ServeError as exc:  # e.g. frames no probe can measure, named as the client knows them
            workdir.cleanup()
            exc.message = self._public_text(exc.message, Path(workdir.name))
            raise
        except BaseException:
            workdir.cleanup()
            raise
        return PreparedRequest(graph, compiled, sample, {**made, **shaped}, workdir, start, deadline, copies)

    async def run(self, prepared: PreparedRequest, on_progress: OnProgress | None = None) -> QAResponse:
        """Run a prepared request's graph; `on_progress(node, summary)` hears of each node as it finishes.
        The outcome is the response, or the `ServeError` a client is told (4xx/5xx, nothing internal)."""
        graph, request_id = prepared.graph, prepared.sample.id
        async with self._within(prepared.deadline):
            prediction = await self._predict(prepared, on_progress)
        if prediction.status == Status.input_error:
            raise ServeError(422, prediction.error or "the graph could not use these inputs")
        if prediction.status == Status.skipped:
            raise ServeError(422, f"graph {graph.name} does not answer this question{_answers_only(graph)}")
        if prediction.status in _BACKEND_FAILURES:
            status, kind, what = _BACKEND_FAILURES[prediction.status]
            log.error("model backend failed on request %s (%s): %s", request_id, graph.name, prediction.error)
            raise ServeError(status, f"{what} on this request (request_id {request_id})", kind)
        if prediction.status == Status.graph_error:
            raise ServeError(
                500, f"the graph failed on this request (request_id {request_id})", "server_error"
            )
        return QAResponse(
            request_id=request_id,
            graph=graph.name,
            model=self.settings.model if graph.needs_model else None,
            answer=prediction.answer,
            raw=prediction.raw,
            status=prediction.status,
            error=prediction.error,
            trace=prediction.trace,
            usage=prediction.usage,
            frames=prediction.frames,
            inputs=prepared.made,
            latency_s=time.perf_counter() - prepared.start,
        )

    @contextlib.asynccontextmanager
    async def _within(self, deadline: float) -> AsyncIterator[None]:
        """The request timeout, counted from the request's start: a 504 when `deadline` passes."""
        try:
            async with asyncio.timeout_at(deadline):
                yield
        except TimeoutError:
            raise ServeError(
                504, f"no answer within {self.settings.request_timeout_s:g} s (request timeout)", "timeout"
            ) from None

    def _inputs(
        self,
        request: QARequest,
        uploads: Uploads,
        workdir: Path,
        request_id: str,
        to_measure: list[str],
        keyframe_rate_hz: float | None = None,
    ) -> tuple[Media, dict[str, Any], dict[str, str]]:
        """The media and context of the request: given, read from a nuScenes scene, or measured. For a
        graph that reads keyframes (`keyframe_rate_hz`), a video becomes its keyframes at that rate."""
        context: dict[str, Any] = {}
        made: dict[str, str] = {}
        video = None
        if request.nuscenes_scene is not None:
            if request.images or uploads.frames or request.frame_paths or request.video_path or uploads.video:
                raise invalid("give frames one way only: a nuscenes_scene brings its own keyframes")
            media, context["ego_poses"] = nuscenes_scene(
                self.settings.data_root,
                self.settings.nuscenes_version,
                request.nuscenes_scene,
                workdir / REFERENCED,
            )
            if len(media.frame_paths) > self.settings.max_frames:
                raise invalid(
                    f"nuscenes_scene: {len(media.frame_paths)} keyframes exceed the limit of "
                    f"{self.settings.max_frames} per request"
                )
        else:
            media = build_media(request, uploads, self.settings, workdir)
        if keyframe_rate_hz is not None and media.kind == "video":
            with decoding_within(media_limits(self.settings)):  # each decoded keyframe checked too
                keyframes = keyframes_of(media, keyframe_rate_hz, workdir, self.settings.max_frames)
            video, media = media, keyframes
            made["frames"] = f"keyframes at {keyframe_rate_hz:g} Hz from the video"
        if request.trajectory is not None:
            context.update(trajectory_context(request.trajectory, workdir))
        if request.ego_poses is not None:
            n = len(media.frame_paths)
            if n and len(request.ego_poses.timestamps_s) != n:
                which = f" (the video's {made['frames']})" if video is not None else ""
                raise invalid(f"ego_poses: {len(request.ego_poses.timestamps_s)} poses for {n} frames{which}")
            context["ego_poses"] = pose_context(request.ego_poses)
        if "ego_poses" in to_measure and (video is not None or request.trajectory is not None):
            context["ego_poses"], made["ego_poses"] = keyframe_poses(request, video, media, request_id)
            to_measure = [f for f in to_measure if f != "ego_poses"]
        if to_measure:
            kinematics, poses = measured_motion(media, workdir, request_id)
            if "trajectory" in to_measure:
                context.update(kinematics)
                made["trajectory"] = "measured"
            if "ego_poses" in to_measure:
                context["ego_poses"] = poses
                made["ego_poses"] = "measured"
        return media, context, made

    def _public_frames(self, frames: FrameRecord | None, workdir: Path) -> FrameRecord | None:
        """The frame record with its source as the client knows it: `upload`, or relative to the data root."""
        if frames is None or frames.source is None:
            return frames
        source = Path(frames.source)
        root = self.settings.data_root.resolve() if self.settings.data_root else None
        if source.is_relative_to(workdir / REFERENCED):
            name = str(source.relative_to(workdir / REFERENCED))
        elif source.is_relative_to(workdir):
            name = "upload"
        elif root is not None and source.is_relative_to(root):
            name = str(source.relative_to(root))
        else:
            name = None
        return frames.model_copy(update={"source": name})

    def _public_text(self, text: str | None, workdir: Path) -> str | None:
        """An error message without server paths: uploads by name, references relative to the data root."""
        if text is None:
            return None
        text = text.replace(f"{workdir / REFERENCED}/", "").replace(f"{workdir}/", "upload:")
        if self.settings.data_root is not None:
            text = text.replace(f"{self.settings.data_root.resolve()}/", "")
        return text

    async def _predict(self, prepared: PreparedRequest, on_progress: OnProgress | None) -> Prediction:
        """The graph's prediction, with server paths taken out of its frames and error."""
        graph, workdir = prepared.graph, Path(prepared.workdir.name)
        if self._model_slots is None:
            self._model_slots = asyncio.Semaphore(self.settings.model_concurrency)
        roles = {role: self.roles[role] for role in graph.model_roles if role in self.roles}
        for role in roles:
            self._role_slots.setdefault(role, asyncio.Semaphore(self.settings.model_concurrency))
        runtime = GraphContext(
            backend=self.backend if graph.needs_model else None,
            limiter=self._model_slots,
            roles=roles,
            limiters={role: self._role_slots[role] for role in roles},
        )

        async def on_update(node: str, update: Any) -> None:
            if isinstance(update, dict):
                update = {
                    key: self._public_frames(value, workdir) if isinstance(value, FrameRecord) else value
                    for key, value in update.items()
                }
            await on_progress(node, node_summary(update, lambda text: self._public_text(text, workdir)))

        with decoding_within(media_limits(self.settings)):
            (prediction,) = await invoke_group(
                prepared.compiled, [prepared.sample], runtime, on_update=on_update if on_progress else None
            )
        if prediction.status == Status.graph_error:
            log.error("graph %s failed on request %s: %s", graph.name, prepared.sample.id, prediction.error)
        return prediction.model_copy(
            update={
                "frames": self._public_frames(prediction.frames, workdir),
                "error": self._public_text(prediction.error, workdir),
            }
        )
