"""Request and response bodies of the driving-QA endpoint (`/v1/qa`) and the graph listing."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kinegraph.types import FrameRecord, JsonDict, Status, Usage

OptionText = Annotated[str, Field(min_length=1, max_length=200)]
GraphOptionValue = bool | int | float | str | None
# Finite and physically plausible: a value of 1e308 m would overflow the derived speeds to inf or 0.
Seconds = Annotated[float, Field(ge=-1e7, le=1e7)]
Metres = Annotated[float, Field(ge=-1e7, le=1e7)]
Radians = Annotated[float, Field(ge=-1e4, le=1e4)]


class Trajectory(BaseModel):
    """The ego poses of the clip, one per camera frame: seconds, metres, radians (+yaw = left).

    EgoDyn graphs need at least 20 poses spanning at least 2.7 s (the 3 s clip window).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    timestamps_s: list[Seconds] = Field(min_length=2, max_length=10_000)
    x_m: list[Metres] = Field(max_length=10_000)
    y_m: list[Metres] = Field(max_length=10_000)
    yaw_rad: list[Radians] = Field(max_length=10_000)

    @model_validator(mode="after")
    def _same_length(self) -> Trajectory:
        n = len(self.timestamps_s)
        for name in ("x_m", "y_m", "yaw_rad"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} values, timestamps_s has {n}")
        return self


class EgoPoses(BaseModel):
    """Ego poses of the frames, one per frame in order (nuScenes' convention): seconds, metres in a world
    frame, and the ego's rotation as a unit quaternion (w, x, y, z). TAD's TCogMap and +EP read them."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    timestamps_s: list[Seconds] = Field(min_length=2, max_length=10_000)
    translation_m: list[Annotated[list[Metres], Field(min_length=3, max_length=3)]] = Field(max_length=10_000)
    rotation_wxyz: list[Annotated[list[float], Field(min_length=4, max_length=4)]] = Field(max_length=10_000)

    @model_validator(mode="after")
    def _same_length(self) -> EgoPoses:
        n = len(self.timestamps_s)
        for name in ("translation_m", "rotation_wxyz"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} poses, timestamps_s has {n}")
        if any(b <= a for a, b in zip(self.timestamps_s, self.timestamps_s[1:], strict=False)):
            raise ValueError("timestamps_s must increase")
        if any(sum(v * v for v in q) < 1e-12 for q in self.rotation_wxyz):
            raise ValueError("rotation_wxyz holds a zero quaternion")
        return self


class QuantityPrior(BaseModel):
    """QuantiPhy's one known physical quantity (the paper's prior), e.g. the ball's diameter = 0.22 m."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    quantity: str = Field(min_length=1, max_length=200, description="What is known: 'the ball's diameter'.")
    value: float = Field(gt=0, le=1e12)
    unit: str = Field(min_length=1, max_length=40, description="m, cm, m/s, km/h, m/s^2, ...")
    at_time_s: float | None = Field(None, ge=0, le=1e6, description="When the value holds (dynamic priors).")
    depths: str | None = Field(
        None,
        max_length=2000,
        description="Depth of the objects for 3D videos, as QuantiPhy's depth_info text.",
    )

    def text(self) -> str:
        """The prior as QuantiPhy's `ground_truth_prior` column writes it."""
        lead = f"t={self.at_time_s:g}s, " if self.at_time_s is not None else ""
        return f"{lead}{self.quantity} = {self.value:g} {self.unit}"


Keysegment = Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=2, max_length=1000)]


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
    trajectory: Trajectory | None = Field(None, description="EgoDyn: the clip's planar ego trajectory.")
    ego_poses: EgoPoses | None = Field(None, description="TAD / STSBench: one ego pose per frame.")
    nuscenes_scene: str | None = Field(
        None,
        max_length=64,
        pattern=r"^[0-9a-zA-Z_-]+$",
        description="TAD / STSBench: a nuScenes scene under the data root; its CAM_FRONT keyframes and their "
        "ego poses are the frames and poses.",
    )
    keysegments: list[Keysegment] | Literal["derive"] | None = Field(
        None,
        max_length=100,
        description="TAD scene questions: frame indices of each keysegment, or 'derive' for ten evenly "
        "spread 5 s windows (non-official).",
    )
    task: str | None = Field(
        None,
        max_length=100,
        description="The benchmark task (TAD config name, AutoDriDM task) when it matters.",
    )
    question_id: str | None = Field(None, max_length=100, description="EgoDyn: a question of the bank.")
    prior: QuantityPrior | None = Field(None, description="QuantiPhy: the known quantity.")
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
    inputs: dict[str, str] = Field(
        default_factory=dict,
        description="Inputs the server made rather than received: 'trajectory': 'measured' (from the "
        "frames), 'ego_poses': 'measured' or 'from trajectory', 'frames': 'keyframes at 2 Hz from the "
        "video', 'keysegments': 'derived', 'question_id': 'matched' (from the question text).",
    )
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
    needs: list[str] = Field(description="Request fields this graph needs (see docs/serve.md).")
    refused: str | None = Field(None, description="Why no request can be served by it, if none can.")
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
