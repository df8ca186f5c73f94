"""Dense optical flow of many clips in one batched call: Horn-Schunck in torch, or learned RAFT.

Both feed the flow heuristic's ROI signals (turn, expansion, magnitude) and so its six-answer mapping.
`DenseFlowSpec` names the method, the device and, for RAFT, the user's own torchvision checkpoint
(nothing is downloaded). The runner pools clips of concurrent groups into these calls
(`graphs.tool_batches`), so a GPU sees hundreds of frame pairs per call instead of one clip's nine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

import numpy as np

from kinegraph.extras import need
from kinegraph.tools.flow import MAX_WIDTH_PX, FlowSignals
from kinegraph.tools.motion_signals import as_clip

if TYPE_CHECKING:
    import torch

FlowMethod = Literal["horn_schunck", "raft_small", "raft_large"]
FLOW_METHODS: tuple[FlowMethod, ...] = ("horn_schunck", "raft_small", "raft_large")


@dataclass(frozen=True)
class DenseFlowSpec:
    """Which flow, where: `method`, `device` ("auto" = CUDA when present), RAFT `weights` (a local file;
    None = the torch hub cache), the working width (frames are downscaled to at most this) and the
    frame pairs per network call (None = `default_batch_pairs`)."""

    method: FlowMethod = "horn_schunck"
    device: str = "auto"
    weights: str | None = None
    max_width_px: int = MAX_WIDTH_PX
    batch_pairs: int | None = None
    #: RAFT's input preparation: EgoDyn's baseline (`upstream`) or the non-official `centred_edge`
    raft_preprocessing: str = "upstream"

    def __post_init__(self) -> None:
        if self.method not in FLOW_METHODS:
            raise ValueError(f"flow method must be one of {list(FLOW_METHODS)}, got {self.method!r}")
        need("torch", f"the {self.method} flow", "gpu")
        if self.method == "horn_schunck" and self.weights is not None:
            raise ValueError("flow weights apply to RAFT only (method raft_small or raft_large)")
        if self.max_width_px < 16:
            raise ValueError(f"max_width_px must be >= 16, got {self.max_width_px}")
        if self.batch_pairs is not None and self.batch_pairs < 1:
            raise ValueError(f"batch_pairs must be >= 1, got {self.batch_pairs}")

    def pairs_per_call(self) -> int:
        """`batch_pairs`, else large on CUDA and small on CPU (where big batches fall out of cache)."""
        from kinegraph.tools.gpu_flow import resolve_device  # torch loads only when flow runs

        if self.batch_pairs is not None:
            return self.batch_pairs
        return 256 if resolve_device(self.device).type == "cuda" else 8


@lru_cache(maxsize=4)
def _raft(variant: str, weights: str | None, device: str) -> torch.nn.Module:
    """One loaded RAFT per (variant, weights, device) per process: loading costs seconds."""
    from kinegraph.tools.raft import load_raft

    return load_raft(variant, weights).to(device).eval()  # type: ignore[arg-type]


def _pair_fields(a: np.ndarray, b: np.ndarray, spec: DenseFlowSpec, batch_pairs: int) -> np.ndarray:
    """Flow (N, h, w, 2) px at the working resolution from frames a to b (N, H, W, 3), one size."""
    import torch

    from kinegraph.tools.gpu_flow import horn_schunck, preprocess_gray, resolve_device

    device = resolve_device(spec.device)
    if spec.method != "horn_schunck":
        from kinegraph.tools.raft import raft_flow

        model = _raft(spec.method.removeprefix("raft_"), spec.weights, str(device))
        return raft_flow(
            model,
            a,
            b,
            device=device,
            batch_size=batch_pairs,
            max_width_px=spec.max_width_px,
            preprocessing=spec.raft_preprocessing,  # type: ignore[arg-type]
        )
    out = []
    with torch.no_grad():
        for start in range(0, len(a), batch_pairs):
            stop = start + batch_pairs
            prev = preprocess_gray(torch.from_numpy(a[start:stop]).to(device), spec.max_width_px)
            nxt = preprocess_gray(torch.from_numpy(b[start:stop]).to(device), spec.max_width_px)
            out.append(horn_schunck(prev, nxt).permute(0, 2, 3, 1).cpu().numpy())
    return np.concatenate(out).astype(np.float32)


def dense_flow_fields(
    clips: Sequence[np.ndarray], spec: DenseFlowSpec, batch_pairs: int | None = None
) -> list[np.ndarray]:
    """Flow fields per clip, (T-1, h, w, 2) px [dx, dy] at the working resolution (width at most
    `spec.max_width_px`), consecutive frames of every clip of one size solved in shared batches."""
    batch = batch_pairs or spec.pairs_per_call()
    frames = [as_clip(c) for c in clips]
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for index, clip in enumerate(frames):
        by_shape.setdefault(clip.shape[1:], []).append(index)
    out: list[np.ndarray] = [np.zeros(0)] * len(frames)
    for owners in by_shape.values():  # one call per frame size: the pairs of every clip of that size
        a = np.concatenate([frames[i][:-1] for i in owners])
        b = np.concatenate([frames[i][1:] for i in owners])
        fields = _pair_fields(a, b, spec, batch)
        start = 0
        for i in owners:
            out[i] = fields[start : start + len(frames[i]) - 1]
            start += len(frames[i]) - 1
    return out


def _raft_signals(clips: Sequence[np.ndarray], spec: DenseFlowSpec, batch_pairs: int) -> list[FlowSignals]:
    import torch

    from kinegraph.tools.gpu_flow import signals_from_flow

    out = []
    for fields in dense_flow_fields(clips, spec, batch_pairs):
        table = signals_from_flow(torch.from_numpy(fields).permute(0, 3, 1, 2)).to(torch.float64).numpy()
        out.append(FlowSignals(table[:, 0], table[:, 1], table[:, 2]))
    return out


def dense_flow_signals(
    clips: Sequence[np.ndarray], spec: DenseFlowSpec, batch_pairs: int | None = None
) -> list[FlowSignals]:
    """Flow signals per clip (frames (T, H, W, 3) RGB uint8, T >= 2), every clip's pairs in one batched
    pass of `spec.method` on `spec.device`, at most `batch_pairs` (default: the spec's) per network call."""
    batch = batch_pairs or spec.pairs_per_call()
    if spec.method == "horn_schunck":
        from kinegraph.tools.gpu_flow import gpu_flow_signals

        return gpu_flow_signals(clips, spec.device, batch_pairs=batch, max_width_px=spec.max_width_px)
    return _raft_signals(clips, spec, batch)
