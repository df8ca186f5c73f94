"""RAFT frame pairs/s through `dense_flow_signals`: one clip per call (9 pairs, as a per-clip graph node
would send) against clips of many groups pooled into large calls (the run's tool-batching stage).

Weights do not change the speed: the script uses the user's torchvision checkpoint when the torch hub
cache has one, else random weights of the same architecture. Frames are noise textures sliding by a few
pixels, at the probe's 320 px working width (decoded at 1280x720).
Usage: python perf/raft_throughput.py [--device auto] [--clips 8] [--variants small,large]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from kinegraph.tools.dense_flow import DenseFlowSpec, dense_flow_signals
from kinegraph.tools.gpu_flow import resolve_device
from kinegraph.tools.raft import build_raft, find_checkpoint


def clips(n: int, frames: int = 10, height: int = 720, width: int = 1280) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    out = []
    for _ in range(n):
        base = rng.integers(0, 255, size=(height // 8, (width + 8 * frames) // 8, 3), dtype=np.uint8)
        base = np.repeat(np.repeat(base, 8, axis=0), 8, axis=1)
        out.append(np.stack([base[:, 4 * k : 4 * k + width] for k in range(frames)]))
    return out


def weights_for(variant: str, tmp: str) -> tuple[str, str]:
    try:
        return str(find_checkpoint(variant)), "torchvision checkpoint"  # type: ignore[arg-type]
    except FileNotFoundError:
        path = f"{tmp}/raft_{variant}_random.pth"
        torch.save(build_raft(variant).state_dict(), path)  # type: ignore[arg-type]
        return path, "random weights"


def pairs_per_s(data: list[np.ndarray], spec: DenseFlowSpec, per_call_clips: int, batch: int) -> float:
    dense_flow_signals(data[:1], spec, batch)  # warm-up: load, allocate, autotune
    if spec.device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    for k in range(0, len(data), per_call_clips):
        dense_flow_signals(data[k : k + per_call_clips], spec, batch)
    if spec.device.startswith("cuda"):
        torch.cuda.synchronize()
    return sum(len(c) - 1 for c in data) / (time.perf_counter() - start)


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--clips", type=int, default=8)
    parser.add_argument("--variants", default="small,large")
    args = parser.parse_args()
    device = str(resolve_device(args.device))
    data = clips(args.clips)
    big = 256 if device.startswith("cuda") else 32
    name = (
        torch.cuda.get_device_name()
        if device.startswith("cuda")
        else f"CPU, {torch.get_num_threads()} threads"
    )
    print(f"device: {device} ({name}); {args.clips} clips x 9 pairs at 1280x720 -> 320x180\n")
    print(f"| RAFT | weights | one clip per call (9 pairs) | clips pooled, up to {big} pairs per call |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for variant in args.variants.split(","):
            weights, kind = weights_for(variant, tmp)
            spec = DenseFlowSpec(method=f"raft_{variant}", device=device, weights=weights)  # type: ignore[arg-type]
            alone = pairs_per_s(data, spec, 1, 9)
            pooled = pairs_per_s(data, spec, len(data), big)
            print(f"| {variant} | {kind} | {alone:.1f} pairs/s | {pooled:.1f} pairs/s |")


if __name__ == "__main__":
    main()
