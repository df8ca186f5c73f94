"""Synthetic QuantiPhy world (`kinegraph synth quantiphy`): videos of bodies under known physics.

Writes the official validation layout: `<out>/validation_videos/<video_id>.mp4` and
`<out>/quantiphy_validation.csv` (the quirky header: an unnamed integer-id column first, two trailing
unnamed columns; multi-line depth_info), with posteriors computed analytically from the motion. The
sidecar `<out>/quantiphy_truth.json` holds the exact pixel centre and extent of every body in every frame,
a seed box per body at frame 0, and for each row the prior's object and the target objects.

Videos cycle through S2, D3, D2, S3 (velocity and acceleration priors alternate in the D categories);
backgrounds are X (plain), S (simple texture) or C (complex); bodies move with constant velocity, constant
acceleration or free fall. In 3D the depth entries are Euclidean camera-object distances (the Blender
convention) at two times per body.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import NamedTuple

import numpy as np

from kinegraph.benchmarks.quantiphy.render import background, draw_box, draw_disc
from kinegraph.benchmarks.quantiphy.scene import (
    HEIGHT_PX,
    PRINCIPAL_POINT_PX,
    WIDTH_PX,
    Body,
    Scene,
    sample_scene,
)
from kinegraph.media import write_video

VIDEO_DIR = "validation_videos"
CSV_NAME = "quantiphy_validation.csv"
TRUTH_NAME = "quantiphy_truth.json"
CSV_HEADER = (
    "",
    "video_id",
    "video_source",
    "video_type",
    "fps",
    "inference_type",
    "question",
    "ground_truth_prior",
    "depth_info",
    "ground_truth_posterior",
    "",
    "",
)
# Factors to SI, written out here so the ground truth does not depend on the calculator's unit code.
_TO_SI = {
    "mm": 1e-3,
    "cm": 1e-2,
    "m": 1.0,
    "meters": 1.0,
    "cm/s": 1e-2,
    "m/s": 1.0,
    "cm/s^2": 1e-2,
    "m/s^2": 1.0,
}
_PLAN = (("S", 2), ("V", 3), ("V", 2), ("S", 3), ("S", 2), ("A", 3), ("A", 2), ("S", 3))


class Row(NamedTuple):
    """One question of a video: text, analytic answer in the asked unit, posterior letter, objects."""

    question: str
    posterior: float
    posterior_kind: str  # S (size, distance) or D (speed, acceleration)
    targets: tuple[int, ...]


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _length_unit(x_m: float, rng: np.random.Generator) -> str:
    if x_m < 0.05 and rng.random() < 0.3:
        return "mm"
    if x_m < 0.4:
        return "cm"
    return str(rng.choice(["meters", "m"]))


def _rate_unit(x_si: float, base: str) -> str:
    return f"cm/{base}" if x_si < 0.5 else f"m/{base}"


def _in(value_si: float, unit: str) -> float:
    return value_si / _TO_SI[unit]


def _nice_times(scene: Scene) -> list[float]:
    """Times (s) that fall exactly on a frame, away from the clip's ends."""
    duration = (scene.n_frames - 1) / scene.fps
    times = [k / 10 for k in range(1, 100) if abs(k / 10 * scene.fps - round(k / 10 * scene.fps)) < 1e-9]
    return [t for t in times if 0.15 * duration <= t <= 0.85 * duration]


def _size(body: Body, aspect: str) -> float:
    width, height = body.size_m
    return {"width": width, "height": height, "length": max(width, height), "diameter": width}[aspect]


def _aspect(body: Body, rng: np.random.Generator) -> str:
    return "diameter" if body.shape == "disc" else str(rng.choice(["width", "height", "length"]))


def _prior(scene: Scene, kind: str, rng: np.random.Generator, times: list[float]) -> tuple[str, str]:
    """The ground_truth_prior text about body 0, and the aspect it fixes ("" for dynamic priors)."""
    body = scene.bodies[0]
    name = body.name
    if kind == "S":
        aspect = _aspect(body, rng)
        value_m = _size(body, aspect)
        unit = _length_unit(value_m, rng)
        v = _fmt(_in(value_m, unit))
        unit = "m" if unit == "meters" else unit
        forms = (
            f"{aspect} of the {name} = {v} {unit}",
            f"{name} {aspect} = {v}{unit}",
            f"{aspect} of the {name} ~{v} {unit}",
        )
        return str(rng.choice(forms)), aspect
    if kind == "V":
        if body.motion == "constant_velocity":
            unit = _rate_unit(body.v0_mps, "s")
            v = _fmt(_in(body.v0_mps, unit))
            forms = (
                f"speed of the {name} = {v} {unit}",
                f"velocity of the {name} = {v}{unit}",
                f"{name} speed ~{v} {unit}",
            )
            return str(rng.choice(forms)), ""
        t0 = float(rng.choice(times))
        speed = body.speed_mps(t0)
        unit = _rate_unit(speed, "s")
        v = _fmt(_in(speed, unit))
        forms = [f"velocity of the {name} at {t0:g}s = {v} {unit}", f"t={t0:g}, {name} velocity = {v} {unit}"]
        if unit == "m/s":
            forms.append(f"speed of the {name} at {t0:g}s = {v}")  # no unit, as in the official data
        return str(rng.choice(forms)), ""
    if body.motion == "free_fall":
        return f"gravity acc = {_fmt(body.a_mps2)} m/s^2", ""
    a = abs(body.a_mps2)
    unit = _rate_unit(a, "s^2")
    v = _fmt(_in(a, unit))
    t0 = float(rng.choice(times))
    forms = (f"acceleration of the {name} = {v} {unit}", f"t={t0:g}, {name} acceleration = {v} {unit}")
    return str(rng.choice(forms)), ""


def _body_questions(
    scene: Scene, k: int, rng: np.random.Generator, times: list[float], skip: tuple[str, str]
) -> list[Row]:
    body, duration = scene.bodies[k], (scene.n_frames - 1) / scene.fps
    name, rows = body.name, []
    aspect = _aspect(body, rng)
    if (k, aspect) != (0, skip[1]):
        size = _size(body, aspect)
        unit = _length_unit(size, rng)
        if rng.random() < 0.08:  # no unit in the question: answered in metres, as upstream does
            rows.append(Row(f"What is the {aspect} of the {name}?", size, "S", (k,)))
        else:
            text = str(
                rng.choice(
                    [
                        f"What is the {aspect} of the {name} in {unit}?",
                        f"What is the {name}'s {aspect} in {unit}?",
                    ]
                )
            )
            rows.append(Row(text, _in(size, unit), "S", (k,)))
    t = float(rng.choice(times))
    t1, t2 = sorted(float(x) for x in rng.choice(times, 2, replace=False)) if len(times) > 1 else (t, t)
    speed = body.speed_mps(t)
    unit = _rate_unit(speed, "s")
    text = str(
        rng.choice(
            [
                f"What is the speed of the {name} at {t:.1f}s in {unit}?",
                f"What is the velocity of the {name} at time {t:g}s in {unit}?",
            ]
        )
    )
    rows.append(Row(text, _in(speed, unit), "D", (k,)))
    mean_speed = body.travelled_m(duration) / duration
    unit = _rate_unit(mean_speed, "s")
    rows.append(Row(f"What is the average speed of the {name} in {unit}?", _in(mean_speed, unit), "D", (k,)))
    if t2 > t1:
        mean_speed = (body.travelled_m(t2) - body.travelled_m(t1)) / (t2 - t1)
        unit = _rate_unit(mean_speed, "s")
        text = f"What is the {name}'s average velocity in {t1:.2f}s to {t2:.2f}s in {unit}?"
        rows.append(Row(text, _in(mean_speed, unit), "D", (k,)))
        shift = body.travelled_m(t2) - body.travelled_m(t1)
        unit = _length_unit(shift, rng)
        text = f"What is the displacement of the {name} between {t1:.1f}s and {t2:.1f}s in {unit}?"
        rows.append(Row(text, _in(shift, unit), "S", (k,)))
    if body.motion != "constant_velocity" and not (k == 0 and skip[0] == "A"):  # not the prior itself
        a = abs(body.a_mps2)
        unit = _rate_unit(a, "s^2")
        rows.append(
            Row(f"What is the acceleration of the {name} at {t:.1f}s in {unit}?", _in(a, unit), "D", (k,))
        )
    path = body.travelled_m(duration)
    unit = _length_unit(path, rng)
    rows.append(
        Row(f"What is the total distance traveled by the {name} in {unit}?", _in(path, unit), "S", (k,))
    )
    return rows


def _pair_questions(scene: Scene, rng: np.random.Generator, times: list[float]) -> list[Row]:
    rows = []
    duration = (scene.n_frames - 1) / scene.fps
    for j in range(len(scene.bodies)):
        for k in range(j + 1, len(scene.bodies)):
            a, b = scene.bodies[j], scene.bodies[k]
            moment, t = str(rng.choice(["at", "initial", "final"])), float(rng.choice(times))
            t = {"initial": 0.0, "final": duration}.get(moment, t)
            gap = float(np.linalg.norm(a.position_m(t) - b.position_m(t)))
            unit = _length_unit(gap, rng)
            if moment == "at":
                text = f"What is the distance between the {a.name} and the {b.name} at {t:.1f}s in {unit}?"
            else:
                text = f"What is the {moment} distance between the {a.name} and the {b.name} in {unit}?"
            rows.append(Row(text, _in(gap, unit), "S", (j, k)))
    return rows


def _choose(rows: list[Row], rng: np.random.Generator, n: int) -> list[Row]:
    """n questions with both posterior kinds when the candidates allow."""
    order = [rows[i] for i in rng.permutation(len(rows))]
    picked = [
        next(r for r in order if r.posterior_kind == kind)
        for kind in "SD"
        if any(r.posterior_kind == kind for r in order)
    ]
    picked += [r for r in order if r not in picked][: max(0, n - len(picked))]
    return picked


def _depth_info(scene: Scene, rng: np.random.Generator, times: list[float]) -> str:
    """Euclidean camera-body distances at two frame-aligned times per body, one line each."""
    form = int(rng.integers(3))
    lines = []
    for body in scene.bodies:
        entity = body.name.replace(" ", "_")
        for t in (times[0], times[-1]):
            d = float(np.linalg.norm(body.position_m(t)))
            lines.append(
                (
                    f"t={t:g}s, distance_{entity}_camera = {d:.4f} m",
                    f"t = {t:.1f}s, distance_{entity}_camera = {d:.4f} m",
                    f"t={t:.1f}s, distance_{entity}_camera={d:.4f} m",
                )[form]
            )
    return "\n".join(lines)


def _render(scene: Scene, rng: np.random.Generator) -> np.ndarray:
    """(T, H, W, 3) uint8 frames; far bodies drawn first."""
    bg = background(scene.background, HEIGHT_PX, WIDTH_PX, rng)
    tracks = [(body, *scene.pixels(body)) for body in sorted(scene.bodies, key=lambda b: -b.start_m[2])]
    frames = np.empty((scene.n_frames, HEIGHT_PX, WIDTH_PX, 3), np.uint8)
    for i in range(scene.n_frames):
        frame = bg.copy()
        for body, uv, ext in tracks:
            if body.shape == "disc":
                draw_disc(frame, uv[i], ext[i, 0], body.colour)
            else:
                draw_box(frame, uv[i], ext[i], body.colour)
        frames[i] = frame
    return frames


def _video_truth(scene: Scene) -> dict:
    objects = {}
    for body in scene.bodies:
        uv, ext = scene.pixels(body)
        (x, y), (w, h) = uv[0], ext[0]
        objects[body.name] = {
            "centre_px": np.round(uv, 4).tolist(),
            "extent_px": np.round(ext, 4).tolist(),
            "seed_box_px": [
                round(x - w / 2 - 3, 1),
                round(y - h / 2 - 3, 1),
                round(x + w / 2 + 3, 1),
                round(y + h / 2 + 3, 1),
            ],
            "motion": body.motion,
        }
    return {
        "fps": scene.fps,
        "n_frames": scene.n_frames,
        "dim": scene.camera.dim,
        "gamma_m_per_px": scene.camera.gamma_m_per_px,
        "focal_px": scene.camera.focal_px,
        "principal_point_px": list(PRINCIPAL_POINT_PX),
        "objects": objects,
    }


def generate(out_dir: Path, n: int = 32, seed: int = 0) -> Path:
    """Write n videos (about four questions each) with the CSV and the truth sidecar; returns out_dir."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    out_dir = Path(out_dir)
    (out_dir / VIDEO_DIR).mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    csv_rows, truth = [], {"image_size_px": [WIDTH_PX, HEIGHT_PX], "videos": {}, "rows": {}}
    qid = 0
    for v in range(n):
        prior_kind, dim = _PLAN[v % len(_PLAN)]
        motions = {
            "S": ["constant_velocity", "constant_acceleration", "free_fall"],
            "V": ["constant_velocity", "constant_acceleration", "free_fall"],
            "A": ["constant_acceleration", "free_fall"],
        }[prior_kind]
        scene = sample_scene(
            rng,
            dim,
            str(rng.choice(motions)),
            int(rng.choice([1, 2, 2, 3])),
            str(rng.choice(["X", "S", "C"])),
            str(rng.choice(["tabletop", "street"])),
        )
        times = _nice_times(scene)
        prior_text, prior_aspect = _prior(scene, prior_kind, rng, times)
        candidates = [
            q
            for k in range(len(scene.bodies))
            for q in _body_questions(scene, k, rng, times, (prior_kind, prior_aspect))
        ]
        candidates += _pair_questions(scene, rng, times)
        rows = _choose(candidates, rng, int(rng.integers(3, 6)))
        objects = "M" if any(t != 0 for r in rows for t in r.targets) else "S"
        video_type = f"{prior_kind}{dim}{objects}{scene.background}"
        video_id = f"synthetic_{v:04d}"
        depth = _depth_info(scene, rng, times) if dim == 3 else ""
        for row in rows:
            qid += 1
            inference = ("S" if prior_kind == "S" else "D") + row.posterior_kind
            csv_rows.append(
                [
                    qid,
                    video_id,
                    "simulation",
                    video_type,
                    scene.fps,
                    inference,
                    row.question,
                    prior_text,
                    depth,
                    _fmt(row.posterior),
                    "",
                    "",
                ]
            )
            truth["rows"][str(qid)] = {
                "video_id": video_id,
                "prior_object": scene.bodies[0].name,
                "target_objects": [scene.bodies[t].name for t in row.targets],
            }
        truth["videos"][video_id] = _video_truth(scene)
        write_video(out_dir / VIDEO_DIR / f"{video_id}.mp4", _render(scene, rng), scene.fps)
    with open(out_dir / CSV_NAME, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)  # \r\n line ends and quoted multi-line fields, like the official file
        writer.writerow(CSV_HEADER)
        writer.writerows(csv_rows)
    (out_dir / TRUTH_NAME).write_text(json.dumps(truth))
    return out_dir
