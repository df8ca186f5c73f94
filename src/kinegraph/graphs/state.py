"""Graph state and runtime context shared by every benchmark family.

A graph runs on one group of samples (a clip, a video, a scene): frames are decoded and encoded once in
the group state, then each question is answered on its own QuestionState (`nodes.answer_each`, or a
`Send` branch per question or segment in the TAD and DSI graphs). Dependencies (the backend, the run-wide
request limiter, counters) arrive through the runtime context, so one compiled graph serves every backend.
"""

from __future__ import annotations

import asyncio
import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

import numpy as np

from kinegraph.agents.protocol import Backend, ImagePart, VideoPart
from kinegraph.graphs.tool_batches import ToolBatches
from kinegraph.types import DEFAULT_ROLE, FrameRecord, Prediction, Sample


def merge_dicts(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Reducer for measurement dicts written by several tool nodes."""
    return {**left, **right}


class GroupState(TypedDict, total=False):
    """One clip/video: its pending samples, decoded frames, encoded images (or the video whole, for a
    model that takes video natively), tool measurements, results."""

    samples: list[Sample]
    frames: np.ndarray
    frame_record: FrameRecord
    images: list[ImagePart | VideoPart]
    measurements: Annotated[dict[str, Any], merge_dicts]
    error: str | None
    results: Annotated[list[Prediction], operator.add]


class QuestionState(TypedDict):
    """One question's branch: the sample plus what the group already computed."""

    sample: Sample
    images: list[ImagePart | VideoPart]
    frame_record: FrameRecord | None
    measurements: dict[str, Any]


@dataclass
class RunStats:
    """Counters the runner reports (decodes per clip is a performance contract)."""

    decodes: int = 0
    groups: int = 0
    tool_calls: int = 0  # batched GPU-tool calls made elsewhere (Ray workers), added by the driver


@dataclass
class GraphContext:
    """Runtime dependencies of a graph run. `backend` is None for VLM-free graphs; `tools` batches the
    GPU tools across the run's groups.

    `roles` holds the backends of named model roles (`--role answerer=...`), each with its own call
    limit in `limiters`; a role not named there runs on `backend` under `limiter`. `model_roles`, when
    given, are the roles the graph declares: a node asking any other (a misspelt name) is refused rather
    than answered by the default model.
    """

    backend: Backend | None = None
    limiter: asyncio.Semaphore | None = None
    stats: RunStats = field(default_factory=RunStats)
    tools: ToolBatches = field(default_factory=ToolBatches)
    roles: dict[str, Backend] = field(default_factory=dict)
    limiters: dict[str, asyncio.Semaphore] = field(default_factory=dict)
    model_roles: tuple[str, ...] | None = None

    def backend_for(self, role: str) -> Backend | None:
        """The backend that answers `role`: its own when named, else the default one; a ValueError in
        one line for a role the graph does not declare."""
        if self.model_roles is not None and role != DEFAULT_ROLE and role not in self.model_roles:
            declared = ", ".join(self.model_roles) or "none"
            raise ValueError(
                f"this graph has no model role {role!r} (roles: {declared}); "
                "declare it in the builder's model_roles"
            )
        return self.roles.get(role, self.backend)

    def limiter_for(self, role: str) -> asyncio.Semaphore | None:
        """The call limit `role` holds a slot of: its own when it has one, else the run-wide one."""
        return self.limiters.get(role, self.limiter)
