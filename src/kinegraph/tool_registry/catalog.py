"""The tools a model may call: each a documented function over a `Clip`/`Image` and JSON arguments.

Every result is a small JSON object with units in its keys. The measurements are the project's own
deterministic tools (`kinegraph.tools`) and the probe outputs EgoDyn's graphs already report
(`kinegraph.tools.probe_results`), so a model calling a tool sees what a graph would.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from kinegraph.tool_registry.media import Clip, Image
from kinegraph.tool_registry.registry import ToolRegistry, register

Box = tuple[float, float, float, float]


def ego_trajectory(
    clip: Clip,
    focal_px: float | None = None,
    camera_height_m: float | None = None,
    pitch_deg: float | None = None,
) -> dict[str, Any]:
    """The ego vehicle's metric trajectory measured from a forward-facing driving video (ground-plane visual
    odometry): TCogMap's motion class, turn direction, net heading change, distance and speeds.

    Args:
        focal_px: Focal length of the camera in pixels at the video's resolution (default: CARLA's).
        camera_height_m: Height of the camera above the road in metres (default: CARLA's).
        pitch_deg: Camera pitch in degrees, + = looking down (default: estimated from the road).
    """
    from kinegraph.benchmarks.egodyn.questions import load_question_bank
    from kinegraph.tools.camera_model import camera_from_options
    from kinegraph.tools.ego_trajectory import estimate_trajectory, measured_kinematics
    from kinegraph.tools.oracle import label_clip
    from kinegraph.tools.probe_results import measured_tcogmap

    height, width = clip.frames.shape[1:3]
    camera = camera_from_options(
        width, height, focal_px=focal_px, camera_height_m=camera_height_m, pitch_deg=pitch_deg
    )
    trajectory = estimate_trajectory(clip.frames, clip.timestamps_s, camera)
    kinematics = measured_kinematics(trajectory)
    features = {k: round(v, 4) for k, v in kinematics.features.items()}
    tcogmap = measured_tcogmap({"signals": {"features": features}}, trajectory.summary())
    answers = label_clip(kinematics.arrays(), load_question_bank(), features=kinematics.features)
    speed = trajectory.speed_mps()
    return {
        "motion_class": tcogmap["motion_class"],
        "summary": tcogmap["summary"],
        "turn_direction": answers["yaw_rate_turn_direction"],
        **tcogmap["signals"],
        "mean_measured_speed_mps": round(float(np.mean(speed)), 3),
        "camera": tcogmap["camera"],
    }


def visual_odometry(clip: Clip) -> dict[str, Any]:
    """EgoDyn's visual odometry (KLT tracks + essential matrix between consecutive frames): per-pair yaw in
    degrees (+ = left), per-pair median feature displacement in pixels (a speed proxy, no metric scale),
    and the answers these imply for the turn, speed-trend and braking questions."""
    from kinegraph.tools.probe_results import vo_measurement

    out = vo_measurement(clip.frames)
    signals = out["signals"]
    return {
        "answers": out["answers"],
        "yaw_deg": signals["yaw_deg"],
        "displacement_px": signals["disp_px"],
        "net_yaw_deg": round(float(sum(signals["yaw_deg"])), 2),
    }


def optical_flow(clip: Clip) -> dict[str, Any]:
    """EgoDyn's dense optical flow heuristic (Farneback between consecutive frames): per-pair turn,
    expansion and magnitude signals in pixels and the answers they imply for the turn, speed-trend and
    braking questions."""
    from kinegraph.tools.probe_results import flow_measurement

    out = flow_measurement(clip.frames)
    return {"answers": out["answers"], "signals_px": out["signals"]}


def tcogmap_from_poses(
    timestamps_s: list[float], x_m: list[float], y_m: list[float], yaw_deg: list[float]
) -> dict[str, Any]:
    """TCogMap's Algorithm 1 (the official rules) on given ego poses in a fixed ground frame: the motion
    class (stopped, turning left or right, changing lane, starting, stopping, constant speed) and its phrase.

    Args:
        timestamps_s: Pose times in seconds, increasing.
        x_m: Forward/east position in metres, one per time.
        y_m: Left/north position in metres, one per time.
        yaw_deg: Heading in degrees, + = counter-clockwise (left), one per time.
    """
    from kinegraph.tools.tcogmap import classify_ego_motion, motion_phrase

    n = len(timestamps_s)
    if n < 2 or not len(x_m) == len(y_m) == len(yaw_deg) == n:
        raise ValueError(f"need at least 2 poses with one x_m, y_m, yaw_deg per time; got {n} times")
    t = np.asarray(timestamps_s, dtype=float)
    if np.any(np.diff(t) <= 0):
        raise ValueError("timestamps_s must increase")
    yaw = np.radians(np.asarray(yaw_deg, dtype=float))
    translation = np.column_stack([x_m, y_m, np.zeros(n)])
    rotation = np.column_stack([np.cos(yaw / 2), np.zeros(n), np.zeros(n), np.sin(yaw / 2)])
    motion_class = classify_ego_motion(np.round(t * 1e6), translation, rotation)
    return {"motion_class": motion_class, "summary": f"the ego vehicle is {motion_phrase(motion_class)}"}


def camera_motion(clip: Clip) -> dict[str, Any]:
    """The camera's own motion from dense optical flow of the whole image (no scale): dominant direction
    (left, right, forward, backward, static) and mean image shift, expansion and rotation in px/frame."""
    from kinegraph.tools.camera_motion import camera_direction
    from kinegraph.tools.camera_motion import camera_motion as measure

    motion = measure(clip.frames)
    return {
        "direction": camera_direction(motion),
        **{k: round(v, 4) if isinstance(v, float) else v for k, v in motion._asdict().items()},
    }


def _track_summary(centre_px: np.ndarray, extent_px: np.ndarray, times_s: np.ndarray) -> dict[str, Any]:
    seen = np.flatnonzero(np.all(np.isfinite(centre_px), axis=1))
    if len(seen) == 0:
        return {"frames_seen": 0}
    first, last = int(seen[0]), int(seen[-1])
    span_s = float(times_s[last] - times_s[first])
    steps = np.linalg.norm(np.diff(centre_px[seen], axis=0), axis=1)
    return {
        "frames_seen": len(seen),
        "first_centre_px": [round(float(v), 2) for v in centre_px[first]],
        "last_centre_px": [round(float(v), 2) for v in centre_px[last]],
        "median_extent_px": [round(float(v), 2) for v in np.nanmedian(extent_px[seen], axis=0)],
        "path_length_px": round(float(steps.sum()), 2),
        "mean_speed_px_per_s": round(float(steps.sum()) / span_s, 3) if span_s > 0 else None,
    }


def check_boxes_px(boxes: list[tuple[float, float, float, float]], frame: np.ndarray, where: str) -> None:
    """ValueError unless every box (x0, y0, x1, y1) is finite, non-empty and overlaps the frame, its
    corners at most one frame size outside it: a box of 1e300 px would give a confident, meaningless scale."""
    height, width = frame.shape[:2]
    for i, box in enumerate(boxes):
        x0, y0, x1, y1 = (float(v) for v in box)
        inside = -width <= x0 < x1 <= 2 * width and -height <= y0 < y1 <= 2 * height
        if not (all(math.isfinite(v) for v in (x0, y0, x1, y1)) and inside and x1 > 0 and y1 > 0):
            raise ValueError(
                f"{where}[{i}]: ({x0:g}, {y0:g}, {x1:g}, {y1:g}) is not a box x0 < x1, y0 < y1 on the "
                f"{width}x{height} frame"
            )
        if x0 >= width or y0 >= height:
            raise ValueError(f"{where}[{i}]: lies outside the {width}x{height} frame")


def track_objects(
    clip: Clip, seed_boxes_px: list[tuple[float, float, float, float]] | None = None
) -> dict[str, Any]:
    """Moving objects seen by a static camera, tracked through the video (background model + connected
    components): per object the frames seen, first and last centre, median extent and speed in pixels.

    Args:
        seed_boxes_px: Boxes (x0, y0, x1, y1) in pixels around each object in the first decoded frame
            (default: every moving component of that frame).
    """
    from kinegraph.tools.tracker import track_objects as track

    check_boxes_px(seed_boxes_px or [], clip.frames[0], "seed_boxes_px")
    tracks = track(clip.frames, [tuple(b) for b in seed_boxes_px] if seed_boxes_px else None)
    times = np.asarray(clip.timestamps_s)
    return {"objects": [_track_summary(t.centre_px, t.extent_px, times) for t in tracks]}


def _named_tracks(
    tracks: dict[str, Any], grounding: dict[str, Any], prior: str, question: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Tracks and grounding keyed by the prior's object and the question's objects, one box each."""
    from kinegraph.tools.quantiphy_text import parse_prior, parse_question

    source, targets = parse_prior(prior).object, list(parse_question(question).objects)
    if len(targets) != len(grounding["target_objects"]):
        raise ValueError(
            f"the question names {len(targets)} object(s) ({', '.join(targets)}): give one target box each"
        )
    named = {source: tracks[grounding["prior_object"]]}
    named |= {name: tracks[box] for name, box in zip(targets, grounding["target_objects"], strict=True)}
    return named, {"prior_object": source, "target_objects": targets}


def pixel_scale_calculator(
    clip: Clip,
    prior: str,
    question: str,
    prior_box_px: tuple[float, float, float, float],
    target_boxes_px: list[tuple[float, float, float, float]],
    depth_info: str = "",
    dimension: Literal["2d", "3d"] = "2d",
) -> dict[str, Any]:
    """QuantiPhy's pixel-scale calculator on a video from a static camera: one known quantity (the prior)
    fixes the pixel-to-world scale, the tracked target is measured with it (2D: one scale; 3D: focal length
    calibrated on the prior's object, depths from depth_info). Answers in the question's unit.

    Args:
        prior: The known fact, e.g. "The width of the red box is 0.5 m."
        question: What to find, e.g. "What is the speed of the red box in m/s?"
        prior_box_px: Box (x0, y0, x1, y1) in pixels around the prior's object in the first frame.
        target_boxes_px: Boxes (x0, y0, x1, y1) in pixels around the target object(s) in the first frame.
        depth_info: 3D only: camera-object distances as QuantiPhy writes them.
        dimension: 2d (fronto-parallel scene) or 3d (objects at different depths).
    """
    from kinegraph.tools.quantiphy_solve import DEFAULT_SCHEME, solve_row
    from kinegraph.tools.tracker import track_objects as track

    if not target_boxes_px:
        raise ValueError("target_boxes_px needs at least one box")
    check_boxes_px([prior_box_px], clip.frames[0], "prior_box_px")
    check_boxes_px(target_boxes_px, clip.frames[0], "target_boxes_px")
    if not math.isclose(np.ptp(np.diff(clip.timestamps_s)), 0.0, abs_tol=1e-6):
        raise ValueError("the calculator needs every frame at a constant rate (decode all frames)")
    fps = 1.0 / float(np.mean(np.diff(clip.timestamps_s)))
    boxes = list(dict.fromkeys([tuple(prior_box_px), *(tuple(b) for b in target_boxes_px)]))  # a box once
    tracks = {str(b): t for b, t in zip(boxes, track(clip.frames, boxes), strict=True)}
    row = {
        "ground_truth_prior": prior,
        "question": question,
        "fps": fps,
        "video_type": "S3" if dimension == "3d" else "S2",
        "depth_info": depth_info,
    }
    grounding = {
        "prior_object": str(tuple(prior_box_px)),
        "target_objects": [str(tuple(b)) for b in target_boxes_px],
    }
    if dimension == "3d":  # depth entries name their objects: key the tracks by the texts' object names
        tracks, grounding = _named_tracks(tracks, grounding, prior, question)
    height, width = clip.frames.shape[1:3]
    scheme, window = DEFAULT_SCHEME["tracker"]
    answer = solve_row(row, grounding, tracks, (width, height), scheme, window)
    return {
        "value": answer.value,
        "unit": answer.unit,
        "value_si": answer.value_si,
        "answer": answer.text(),
        "path": answer.path,
        "scale": answer.scale,
        "scale_unit": "m/px" if answer.path == "2d" else "focal_px",
        "notes": list(answer.notes),
    }


def image_cues(image: Image) -> dict[str, Any]:
    """Heuristic cues of one driving image: illumination (daylight or night, from the sky's luma in 0..1)
    and the colour of a lit traffic-light lamp (red, yellow, green or none); cues, not detections."""
    from kinegraph.tools.image_cues import image_cues as cues

    out = cues(image.pixels)
    return {**out._asdict(), "sky_luma": round(out.sky_luma, 4)}


def default_registry() -> ToolRegistry:
    """Every tool a model may call, by name."""
    return ToolRegistry(
        register(f)
        for f in (
            ego_trajectory,
            visual_odometry,
            optical_flow,
            tcogmap_from_poses,
            camera_motion,
            track_objects,
            pixel_scale_calculator,
            image_cues,
        )
    )
