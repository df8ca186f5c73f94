"""Request and response bodies of the driving-QA endpoint (`/v1/qa`) and the graph listing."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kinegraph.types import FrameRecord, JsonDict, Status, Usage

OptionText = Annotated[str, Field(min_length=1, max_length=200)]
GraphOptionValue = bool | int | float | str | None


class Trajectory(BaseModel):
    """The ego poses of the clip, one per camera frame: seconds, metres, radians (+yaw = left).

    EgoDyn graphs need at least 20 poses spanning at least 2.7 s (the 3 s clip window).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    timestamps_s: list[float] = Field(min_length=2, max_length=10_000)
    x_m: list[float] = Field(max_length=10_000)
    y_m: list[float] = Field(max_length=10_000)
    yaw_rad: list[float] = Field(max_length=10_000)

    @model_validator(mode="after")
    def _same_length(self) -> Trajectory:
        n = len(self.timestamps_s)
        for name in ("x_m", "y_m", "yaw_rad"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} values, timestamps_s has {n}")
        return self


class QARequest(BaseModel):
    """One driving question about one clip.

    Frames come as inline `images` (data URLs or base64; multipart uploads go here too), as
    `frame_paths` under the server's data root, or as one `video_path` under it (or an uploaded video).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    question: str = Field(min_length=1, max_length=4000)
    options: list[OptionText] | None = Field(None, max_length=64, description="Answer choices, if any.")
    graph: str | None = Field(None, max_length=200, description="A served graph (default: the server's).")
    request_id: str | None = Field(None, max_length=128, description="Echoed back; generated when absent.")
    images: list[str] = Field(default_factory=list, description="Frames in order, as data URLs or base64.")
    frame_paths: list[str] = Field(default_factory=list, description="Frame files under the data root.")
    video_path: str | None = Field(None, max_length=1000, description="A video file under the data root.")
    fps: float | None = Field(None, gt=0, le=1000, description="Frame rate, for frame timestamps.")
    trajectory: Trajectory | None = None
    graph_options: dict[str, GraphOptionValue] = Field(
        default_factory=dict, description="Builder options of the graph (see GET /v1/graphs)."
    )


class QAResponse(BaseModel):
    """What the graph produced: the parsed answer, the raw model text, the trace, usage and latency."""

    request_id: str
    graph: str
    model: str | None = None
    answer: str | float | list[str] | None = None
    raw: str | None = None
    status: Status
    error: str | None = None
    trace: list[JsonDict] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    frames: FrameRecord | None = None
    latency_s: float = Field(description="Wall time of the whole request on the server.")


class GraphOption(BaseModel):
    name: str
    type: str
    default: Any = None


class GraphInfo(BaseModel):
    """A graph this server answers with, and the options its builder takes."""

    name: str
    description: str
    needs_model: bool
    needs_trajectory: bool
    available: bool = Field(description="False when the graph needs a model and none is configured.")
    options: list[GraphOption]


class GraphList(BaseModel):
    default_graph: str
    model: str | None
    graphs: list[GraphInfo]


class Health(BaseModel):
    status: str
    model: str | None
    graphs: int
    auth: bool
