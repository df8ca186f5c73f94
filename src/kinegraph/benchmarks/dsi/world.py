"""Synthetic DSI-Bench: rendered clips with known camera and object motion, in the official layout.

A textured backdrop wider than the view, watched by a camera that pans (x) or dollies (zoom), holds a red
bar that moves sideways, approaches or recedes (grows or shrinks), or spins. Each clip gets the questions
its motion answers, in the six DSI categories, as `metadatas/{std,hflip,reverse,reverse_hflip}.csv` and
`videos/<variant>/Synthetic/clip_NNNN.mp4`. The variants are the std frames mirrored and/or played
backwards; their ground truth comes from the same answer rules applied to the transformed motion (mirror:
sideways and spin change sign; reverse: every rate changes sign), so the variant answers are physics, not
text substitution. `synthetic_truth.jsonl` records the motion of every clip and variant.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import cv2
import numpy as np
import pandas as pd

from kinegraph.benchmarks.dsi.loader import VARIANTS
from kinegraph.media import write_video

WIDTH_PX, HEIGHT_PX = 128, 96
N_FRAMES = 15
FPS = 5.0  # 3 s clips, the length DSI-Bench slows short clips to

OBJECT_QUESTION = "How is the red object moving relative to the scene?"
OBJECT_OPTIONS = (
    "A: moving left; B: moving right; C: moving toward the camera; D: moving away from the camera"
)
CAMERA_QUESTION = "How is the camera moving?"
CAMERA_OPTIONS = "A: moving left; B: moving right; C: moving forward; D: moving backward"
DISTANCE_QUESTION = "How does the distance between the camera and the red object change?"
DISTANCE_OPTIONS = "A: getting closer; B: getting farther; C: staying the same; D: first closer, then farther"
SPIN_QUESTION = "How does the red object's orientation change as seen from the camera?"
SPIN_OPTIONS = "A: rotating clockwise; B: rotating counterclockwise; C: not rotating; D: flipping upside down"


@dataclass(frozen=True)
class ClipMotion:
    """Per-frame rates in image units: camera pan (+ right) and zoom (+ forward), object sideways
    (+ right, relative to the scene), growth (+ approaching) and on-screen spin (+ clockwise)."""

    camera_vx_px: float = 0.0
    camera_zoom: float = 0.0
    object_vx_px: float = 0.0
    object_growth: float = 0.0
    object_spin_deg: float = 0.0


def transform(motion: ClipMotion, variant: str) -> ClipMotion:
    """The motion a variant shows: a mirror flips sideways motion and spin; reversal flips every rate."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    out = motion
    if "hflip" in variant:
        out = replace(out, camera_vx_px=0.0 - out.camera_vx_px, object_vx_px=0.0 - out.object_vx_px,
                      object_spin_deg=0.0 - out.object_spin_deg)  # fmt: skip
    if variant.startswith("reverse"):
        out = ClipMotion(*(0.0 - v for v in asdict(out).values()))
    return out


def object_answer(m: ClipMotion) -> str:
    if m.object_vx_px:
        return "A" if m.object_vx_px < 0 else "B"
    return "C" if m.object_growth > 0 else "D"


def camera_answer(m: ClipMotion) -> str:
    if m.camera_vx_px:
        return "A" if m.camera_vx_px < 0 else "B"
    return "C" if m.camera_zoom > 0 else "D"


def distance_answer(m: ClipMotion) -> str:
    return "A" if (m.object_growth > 0 or m.camera_zoom > 0) else "B"


def spin_answer(m: ClipMotion) -> str:
    return "A" if m.object_spin_deg > 0 else "B"


# kind -> [(cate, question, options, answer rule)]
QUESTIONS = {
    "object_static_cam": [(0, OBJECT_QUESTION, OBJECT_OPTIONS, object_answer)],
    "object_moving_cam": [
        (1, OBJECT_QUESTION, OBJECT_OPTIONS, object_answer),
        (3, CAMERA_QUESTION, CAMERA_OPTIONS, camera_answer),
    ],
    "camera_static_scene": [(2, CAMERA_QUESTION, CAMERA_OPTIONS, camera_answer)],
    "distance": [(4, DISTANCE_QUESTION, DISTANCE_OPTIONS, distance_answer)],
    "orientation": [(5, SPIN_QUESTION, SPIN_OPTIONS, spin_answer)],
}
KINDS = tuple(QUESTIONS)


def random_motion(kind: str, rng: np.random.Generator) -> ClipMotion:
    """One unambiguous motion of a clip kind (a single moving cause per question)."""
    sign = float(rng.choice([-1.0, 1.0]))
    first = bool(rng.random() < 0.5)  # which of the kind's two motions
    obj = ClipMotion(object_vx_px=2.0 * sign) if first else ClipMotion(object_growth=0.05 * sign)
    if kind == "object_static_cam":
        return obj
    if kind == "object_moving_cam":
        return replace(obj, camera_vx_px=3.0 * float(rng.choice([-1.0, 1.0])))
    if kind == "camera_static_scene":
        return ClipMotion(camera_vx_px=3.0 * sign) if first else ClipMotion(camera_zoom=0.03 * sign)
    if kind == "distance":
        return ClipMotion(object_growth=0.05 * sign) if first else ClipMotion(camera_zoom=0.03 * sign)
    if kind == "orientation":
        return ClipMotion(object_spin_deg=6.0 * sign)
    raise ValueError(f"unknown clip kind {kind!r}")


def _backdrop(rng: np.random.Generator) -> np.ndarray:
    """A smooth random texture three views wide, (H, 3W, 3) uint8, with vertical posts for parallax cues."""
    low = rng.integers(40, 200, size=(6, 24, 3)).astype(np.uint8)
    backdrop = cv2.resize(low, (3 * WIDTH_PX, HEIGHT_PX), interpolation=cv2.INTER_CUBIC)
    for x in rng.integers(0, 3 * WIDTH_PX, size=18):
        backdrop[:, x : x + 3] = (30, 90, 30)
    backdrop[backdrop[..., 0] > 150, 0] = 150  # keep the backdrop out of the red bar's colour range
    return backdrop


def render(motion: ClipMotion, seed: int) -> np.ndarray:
    """The std clip, (N_FRAMES, H, W, 3) RGB uint8."""
    rng = np.random.default_rng(seed)
    backdrop = _backdrop(rng)
    world_cx, cy = 1.5 * WIDTH_PX, HEIGHT_PX / 2
    start_angle = float(rng.uniform(0, 180))
    frames = []
    for t in range(N_FRAMES):
        scale = (1.0 + motion.camera_zoom) ** t
        cam_x = world_cx + motion.camera_vx_px * t
        warp = np.array(
            [[scale, 0, WIDTH_PX / 2 - scale * cam_x], [0, scale, cy - scale * cy]], dtype=np.float64
        )
        frame = cv2.warpAffine(backdrop, warp, (WIDTH_PX, HEIGHT_PX), borderMode=cv2.BORDER_REFLECT)
        centre_x = scale * (world_cx + motion.object_vx_px * t - cam_x) + WIDTH_PX / 2
        half_len = scale * 10.0 * (1.0 + motion.object_growth) ** t
        theta = np.deg2rad(start_angle + motion.object_spin_deg * t)  # y points down: + is clockwise
        along = np.array([np.cos(theta), np.sin(theta)])
        across = np.array([-along[1], along[0]])
        corners = [np.array([centre_x, cy]) + a * half_len * along + b * 0.3 * half_len * across
                   for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))]  # fmt: skip
        cv2.fillPoly(frame, [np.round(np.array(corners)).astype(np.int32)], (230, 20, 20))
        frames.append(frame)
    return np.stack(frames)


def variant_frames(frames: np.ndarray, variant: str) -> np.ndarray:
    """(T, H, W, 3) frames as a variant shows them: mirrored left-right and/or in reverse order."""
    out = frames[::-1] if variant.startswith("reverse") else frames
    return np.ascontiguousarray(out[:, :, ::-1] if "hflip" in variant else out)


def generate(out_dir: Path, n: int = 20, seed: int = 0) -> Path:
    """Write `n` clips (kinds in rotation) and their questions in all four variants; returns `out_dir`."""
    out_dir = Path(out_dir)
    rng = np.random.default_rng(seed)
    rows: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    truth = []
    for clip in range(n):
        kind = KINDS[clip % len(KINDS)]
        motion = random_motion(kind, rng)
        frames = render(motion, int(rng.integers(2**31)))
        relative = f"Synthetic/clip_{clip:04d}.mp4"
        for variant in VARIANTS:
            shown = transform(motion, variant)
            write_video(out_dir / "videos" / variant / relative, variant_frames(frames, variant), FPS)
            truth.append({"relative_path": relative, "variant": variant, "kind": kind, **asdict(shown)})
            for cate, question, options, rule in QUESTIONS[kind]:
                rows[variant].append(
                    {
                        "cate": cate,
                        "relative_path": relative,
                        "video_type": 0,
                        "question": question,
                        "options": options,
                        "GT": rule(shown),
                        "others": "",
                    }  # fmt: skip
                )
    (out_dir / "metadatas").mkdir(parents=True, exist_ok=True)
    for variant, variant_rows in rows.items():
        pd.DataFrame(variant_rows).to_csv(out_dir / "metadatas" / f"{variant}.csv", index=False)
    (out_dir / "synthetic_truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in truth))
    return out_dir
