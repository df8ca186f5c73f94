"""The run's tool-batching stage: GPU tools called by many concurrent groups run as shared batches.

A graph node asks `context.tools.flow_signals(frames, spec)` for one clip; the stage pools the clips of
every group in flight into one `dense_flow_signals` call per batch (closing at the spec's frame pairs
per call, or `BATCH_WAIT_S` after its first clip), so memory stays bounded and the accelerator sees
large batches. One stage per run (in the run's `GraphContext`), bound to that run's event loop;
`device` is the run's `--device`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from kinegraph.microbatch import MicroBatcher

if TYPE_CHECKING:  # the tools (cv2, torch) load on first use, not with every graph's state
    from kinegraph.tools.dense_flow import DenseFlowSpec
    from kinegraph.tools.flow import FlowSignals

BATCH_WAIT_S = 0.02  # a batch waits this long after its first clip for clips of other groups


class ToolBatches:
    """Per-run batchers of the deterministic GPU tools, one per (tool, spec), created on first use."""

    def __init__(self, device: str = "auto") -> None:
        self.device = device
        self._batchers: dict[tuple[str, DenseFlowSpec], MicroBatcher[np.ndarray, Any]] = {}

    def flow_spec(self, spec: DenseFlowSpec) -> DenseFlowSpec:
        """The spec as this run executes it: on the run's device unless the graph named one."""
        return replace(spec, device=self.device) if spec.device == "auto" else spec

    async def flow_signals(self, frames: np.ndarray, spec: DenseFlowSpec) -> FlowSignals:
        """Flow signals of one clip (T, H, W, 3), computed together with the other clips in flight."""
        from kinegraph.tools.dense_flow import dense_flow_signals

        return await self._submit("signals", dense_flow_signals, frames, spec)

    async def flow_fields(self, frames: np.ndarray, spec: DenseFlowSpec) -> np.ndarray:
        """Dense flow fields (T-1, h, w, 2) of one clip's consecutive frames, pooled like `flow_signals`
        (road correspondences for the trajectory estimator)."""
        from kinegraph.tools.dense_flow import dense_flow_fields

        return await self._submit("fields", dense_flow_fields, frames, spec)

    async def _submit(
        self, tool: str, run: Callable[..., list[Any]], frames: np.ndarray, spec: DenseFlowSpec
    ) -> Any:
        spec = self.flow_spec(spec)
        batcher = self._batchers.get((tool, spec))
        if batcher is None:
            max_pairs = spec.pairs_per_call()
            batcher = MicroBatcher(
                lambda clips: run(clips, spec, max_pairs),
                max_pairs,
                BATCH_WAIT_S,
                size=lambda clip: len(clip) - 1,
            )
            self._batchers[(tool, spec)] = batcher
        return await batcher.submit(frames)

    def calls(self) -> int:
        """Batched tool calls made so far (clips per call is the figure that matters on a GPU)."""
        return sum(b.calls for b in self._batchers.values())
