"""One EgoDyn clip measured from its frames: every frame -> metric ego trajectory -> official kinematics,
oracle answers and TCogMap class. Shared by `egodyn.measured`, `egodyn.measured_trajectory` and the
`tcogmap` probe of `egodyn.tools`; plain functions run in a worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kinegraph.benchmarks.egodyn import scene_clips
from kinegraph.tools.camera_model import (
    CARLA_DEFAULT_HFOV_DEG,
    DEFAULT_HEIGHT_M,
    CameraModel,
    camera_from_options,
    camera_from_row,
)
from kinegraph.tools.probe_results import measured_tcogmap
from kinegraph.types import FrameRecord, Sample

if TYPE_CHECKING:
    from kinegraph.tools.ego_trajectory import EgoTrajectory
    from kinegraph.tools.oracle import Bank, Label

MIN_AGREEMENT = 2 / 3  # of re-measured speed profiles that must give a half question's measured label
NO_HALF = {"half_comparison": "similar", "peak_half_detection": "no_peak"}  # rule -> the answer naming none


def clip_camera(
    sample: Sample,
    width_px: int,
    height_px: int,
    *,
    focal_px: float | None = None,
    camera_height_m: float | None = None,
    pitch_deg: float | None = None,
) -> CameraModel:
    """The clip's camera: the data's (`context["camera"]`), else the graph options, else CARLA defaults."""
    row = sample.context.get("camera")
    if isinstance(row, dict):
        return camera_from_row(row, where=f"clip {sample.group} camera")
    return camera_from_options(
        width_px, height_px, focal_px=focal_px, camera_height_m=camera_height_m, pitch_deg=pitch_deg
    )


def camera_warnings(camera: CameraModel) -> list[str]:
    """The warnings a prediction carries when its clip was measured through assumed camera values: its
    speeds and distances scale with the assumed focal length and mounting height, and a roll assumed
    level reads a tilted mount's straight drive as turning."""
    defaults = {
        "focal": f"a {CARLA_DEFAULT_HFOV_DEG:.0f} deg field of view",
        "height": f"a {DEFAULT_HEIGHT_M} m mount",
    }
    scale = [defaults[name] for name in sorted(camera.assumed & defaults.keys())]
    warnings = []
    if scale:
        warnings.append(
            f"camera assumed, not given or measured: {' and '.join(scale)} (speeds scale with it; give "
            "-O focal_px= -O camera_height_m= or a camera object)"
        )
    if "roll" in camera.assumed:
        warnings.append(
            "camera roll assumed level, not given or measured (too little road tracked; a tilted mount "
            "turns a straight drive; give roll_deg in the camera object)"
        )
    return warnings


def decode_clip(sample: Sample, num_frames: int | None) -> tuple[np.ndarray, FrameRecord]:
    """The clip's frames (all when `num_frames` is None) and their record, which must carry times."""
    return scene_clips.decode_media(sample.media, num_frames)


def measure_clip(
    sample: Sample,
    camera_options: dict[str, float | None],
    num_frames: int | None,
    decoded: tuple[np.ndarray, FrameRecord] | None = None,
    flows: Sequence[np.ndarray] | None = None,
    scene_camera: bool = False,
) -> dict:
    """Decode the clip (unless `decoded`), measure its trajectory (LK tracks, or the given dense `flows`),
    run the official kinematics and oracle (a worker thread). With `scene_camera`, camera values the
    clip's frames cannot show are taken from its scene-mates where they measured them (`scene_clips`)."""
    from kinegraph.tools.ego_trajectory import estimate_trajectory

    frames, record = decoded if decoded is not None else decode_clip(sample, num_frames)
    camera = clip_camera(sample, frames.shape[2], frames.shape[1], **camera_options)
    if not scene_camera:
        return _measured(record, estimate_trajectory(frames, record.timestamps_s, camera, flows=flows))
    width = frames.shape[2]
    if flows is None:  # LK tracks: the measurement its scene-mates read their lens from too
        trajectory = scene_clips.own_trajectory(
            sample,
            camera_options,
            num_frames,
            lambda: estimate_trajectory(frames, record.timestamps_s, camera),
            width,
        )
    else:
        trajectory = estimate_trajectory(frames, record.timestamps_s, camera, flows=flows)
    lent = scene_clips.scene_camera(sample, camera, trajectory.camera, camera_options, num_frames, width)
    if lent is not None:  # what the clip could not show, measured on its scene-mates: measure it again
        trajectory = estimate_trajectory(frames, record.timestamps_s, lent, flows=flows)
    return _measured(record, trajectory)


def _half_label(rule: str, values: np.ndarray, params: Mapping[str, Any]) -> Label:
    """The label a half question's `rule` gives `values`."""
    from kinegraph.tools.oracle import halves, peak_half

    return halves(values, params)[2] if rule == "half_comparison" else peak_half(values, params)[3]


def unresolved_halves(
    answers: Mapping[str, Label], trajectory: EgoTrajectory, bank: Bank
) -> dict[str, dict[str, Any]]:
    """The questions among `answers` that name a half of the clip (which half is more dynamic, which
    holds the speed peak) where the measurement does not resolve one: their label comes back in fewer
    than `MIN_AGREEMENT` of the speed profiles the frames could as well have given
    (`remeasured_speeds`). Question id -> the measured label, its agreement and the answer that names
    no half ("similar", "no_peak").

    On a steady clip each half's acceleration is the speed's noise, and the ratio of two noise levels
    names a half: at dusk (seed 4001) 20 of the 31 clips whose halves are alike were answered a half."""
    from kinegraph.tools.ego_trajectory import remeasured_speeds

    asked = {
        qid: q
        for qid, q in bank.items()
        if q.rule in NO_HALF and q.params.get("feature") in ("speed", "accel")
        if answers.get(qid) != NO_HALF[q.rule]
    }
    if not asked:
        return {}
    t = trajectory.timestamps_s
    mid = 0.5 * (t[:-1] + t[1:])
    profiles = [
        {"speed": speed, "accel": np.gradient(speed, mid)}
        for speed in remeasured_speeds(t, trajectory.step_m, trajectory.step_sigma_m)
    ]
    out = {}
    for qid, q in asked.items():
        labels = [_half_label(q.rule, arrays[q.params["feature"]], q.params) for arrays in profiles]
        agreement = float(np.mean([label == answers[qid] for label in labels]))
        if agreement < MIN_AGREEMENT:
            out[qid] = {"measured": answers[qid], "agreement": round(agreement, 3), "answer": NO_HALF[q.rule]}
    return out


def _measured(record: FrameRecord, trajectory: EgoTrajectory) -> dict:
    """The frame record, official kinematics and oracle answers of a measured trajectory; a half of the
    clip the measurement does not resolve is not named (`unresolved_halves`, recorded in the signals)."""
    from kinegraph.benchmarks.egodyn.questions import load_question_bank
    from kinegraph.tools.ego_trajectory import measured_kinematics
    from kinegraph.tools.oracle import label_clip

    kinematics = measured_kinematics(trajectory)
    bank = load_question_bank()
    answers = label_clip(kinematics.arrays(), bank, features=kinematics.features)
    unresolved = unresolved_halves(answers, trajectory, bank)
    answers.update({qid: entry["answer"] for qid, entry in unresolved.items()})
    return {
        "record": record,
        "kinematics": kinematics,
        "measured": {
            "warnings": camera_warnings(trajectory.camera),
            "answers": answers,
            "signals": {
                "unresolved": unresolved,
                "trajectory": trajectory.summary(),
                "features": {k: round(v, 4) for k, v in kinematics.features.items()},
                "kinematics": {
                    key: [round(float(v), 4) for v in getattr(kinematics, key)]
                    for key in ("timestamps", "speed", "accel", "yaw_rate", "jerk")
                },
            },
        },
    }


def tcogmap_probe(sample: Sample) -> dict[str, Any]:
    """The `tcogmap` probe: every frame of the clip -> measured trajectory -> TCogMap (a worker thread).
    Raises DataError/ValueError when the clip cannot be measured: the caller fails the clip's questions."""
    out = measure_clip(sample, {}, None)
    return measured_tcogmap(out["measured"], out["measured"]["signals"]["trajectory"])
