"""Pydantic models shared by every layer: what a question is, what a run produced, how a run was set up."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

JsonDict = dict[str, Any]

#: The model role a graph with one backend uses; `--model` fills it (and every role not named otherwise).
DEFAULT_ROLE = "backend"


class Status(StrEnum):
    """How a prediction ended. Errors are never rewritten into answer text."""

    ok = "ok"
    api_error = "api_error"
    parse_failure = "parse_failure"
    timeout = "timeout"
    budget_exceeded = "budget_exceeded"
    input_error = "input_error"
    graph_error = "graph_error"
    skipped = "skipped"  # the graph does not answer this question; left out of scoring like upstream


FAILED_STATUSES = frozenset(
    {Status.api_error, Status.timeout, Status.budget_exceeded, Status.input_error, Status.graph_error}
)


class Media(BaseModel):
    """The visual input of a sample: frame files, or a video plus which frames to use.

    `frame_indices` index into `frame_paths` (kind "frames") or into the decoded video (kind "video");
    `timestamps_s` are seconds from the first frame of the clip, aligned with `frame_indices`.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["frames", "video", "none"] = "none"
    frame_paths: list[str] = Field(default_factory=list)
    video_path: str | None = None
    frame_indices: list[int] | None = None
    timestamps_s: list[float] | None = None
    fps: float | None = None

    @property
    def key(self) -> str:
        """Identity of the underlying clip, so frames are decoded once per clip and shared."""
        if self.kind == "video":
            return f"video:{self.video_path}"
        if self.kind == "frames":
            return "frames:" + "|".join(self.frame_paths)
        return "none"


class Sample(BaseModel):
    """One question of a benchmark, with its ground truth and everything a graph may use.

    `group` names the unit for paired statistics and frame sharing (an EgoDyn clip, a QuantiPhy video).
    `context` carries benchmark-specific inputs (trajectory arrays path, features, priors, depth info, ...).
    `metadata` carries what scorers group by (category, source, video_type, ...).
    """

    id: str
    benchmark: str
    group: str
    question_id: str | None = None
    question: str
    options: list[str] | None = None
    answer: str | float | list[str] | None = None
    media: Media = Field(default_factory=Media)
    context: JsonDict = Field(default_factory=dict)
    metadata: JsonDict = Field(default_factory=dict)


class Usage(BaseModel):
    """Token usage and cost of one call or summed over a run."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cached_requests: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            requests=self.requests + other.requests,
            cached_requests=self.cached_requests + other.cached_requests,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class NativeVideo(BaseModel):
    """The whole video went to a model that samples it itself: which model, asked for which rate."""

    model: str
    #: the frames a second it was asked to sample (None: the provider's own default)
    fps: float | None = None


class FrameRecord(BaseModel):
    """Which frames a graph actually looked at: indices into the clip and their timestamps, and how they
    were chosen (`sampling`: every frame, `count` evenly spaced, `fps` a second, or `given` by the data;
    `sampling_value` is the count or the rate). `native_video` is set when the model got the whole video
    instead (the indices are then the frames it was sent)."""

    indices: list[int] = Field(default_factory=list)
    timestamps_s: list[float] = Field(default_factory=list)
    source: str | None = None
    sampling: Literal["all", "count", "fps", "given"] | None = None
    sampling_value: float | None = None
    native_video: NativeVideo | None = None


class Prediction(BaseModel):
    """What a graph produced for one sample: raw text, parsed answer, trace, cost, and how it ended."""

    sample_id: str
    benchmark: str
    group: str | None = None
    question_id: str | None = None
    graph: str | None = None
    model: str | None = None
    raw: str | None = None
    answer: str | float | list[str] | None = None
    ground_truth: str | float | list[str] | None = None
    status: Status = Status.ok
    error: str | None = None
    trace: list[JsonDict] = Field(default_factory=list)
    frames: FrameRecord | None = None
    usage: Usage = Field(default_factory=Usage)
    #: `usage` split by model role, for graphs with several roles (empty: all of it is the default role's)
    usage_by_role: dict[str, Usage] = Field(default_factory=dict)
    latency_s: float = 0.0
    metadata: JsonDict = Field(default_factory=dict)
    #: what the answer rests on that the user should know (e.g. a camera assumed, not given or measured);
    #: run.json counts them per group and the run ends with one line per kind
    warnings: list[str] = Field(default_factory=list)


def group_warnings(predictions: Iterable[Prediction]) -> dict[str, int]:
    """How many groups (clips, videos) each warning was raised for."""
    groups: dict[str, set[str]] = {}
    for p in predictions:
        for warning in p.warnings:
            groups.setdefault(warning, set()).add(p.group or p.sample_id)
    return {warning: len(members) for warning, members in sorted(groups.items())}


def usage_per_role(predictions: Iterable[Prediction]) -> dict[str, Usage]:
    """Usage summed per model role over `predictions`; roles that made no request are left out."""
    totals: dict[str, Usage] = {}
    for p in predictions:
        for role, usage in (p.usage_by_role or {DEFAULT_ROLE: p.usage}).items():
            if usage.requests or usage.cached_requests or usage.cost_usd:
                totals[role] = totals.get(role, Usage()) + usage
    return totals


DEVICE_PATTERN = r"^(auto|cpu|cuda(:[0-9]+)?)$"


class RoleModel(BaseModel):
    """The backend of one named model role (`--role NAME=PROVIDER:MODEL`, `--role-option NAME.key=value`):
    its own server URL and backend options; nothing is inherited from `--base-url` or `--model-option`."""

    model_config = ConfigDict(extra="forbid")

    model: str
    base_url: str | None = None
    options: JsonDict = Field(default_factory=dict)


class RunConfig(BaseModel):
    """Everything needed to reproduce a run; written to run.json."""

    benchmark: str
    graph: str
    model: str | None = None
    data: str | None = None
    out_dir: str
    limit: int | None = None
    #: `--limit-per KEY`: `limit` counts groups per value of this subset key (task, category), not samples
    limit_per: str | None = None
    #: `--subset`: suite key -> accepted values (AND across keys); `ids` -> id files (see kinegraph.subsets)
    subset: dict[str, list[str]] = Field(default_factory=dict)
    concurrency: int = 8
    base_url: str | None = None
    cache: str | None = None
    use_cache: bool = True
    #: the model's sampling seed where its provider takes one, and the graph's `seed` option unless `-O seed=`
    #: sets it (`kinegraph.run.seeding`); None: no seed sent, the graph's own default
    seed: int | None = None
    max_cost_usd: float | None = None
    #: a finished run whose failed share passes this ends `failed`, exit 1 (`kinegraph.run.verdict`)
    max_error_rate: float = Field(default=0.5, ge=0.0, le=1.0)
    retry_errors: bool = False
    options: JsonDict = Field(default_factory=dict)
    loader_options: JsonDict = Field(default_factory=dict)
    model_options: JsonDict = Field(default_factory=dict)
    #: named model roles (e.g. Scene-CoT's `answerer`); the graph's other roles run on `model`
    roles: dict[str, RoleModel] = Field(default_factory=dict)
    #: where GPU tools run: "auto" (CUDA when present, else CPU), "cpu", "cuda" or "cuda:N"
    device: str = Field(default="auto", pattern=DEVICE_PATTERN)

    @property
    def out_path(self) -> Path:
        return Path(self.out_dir)
