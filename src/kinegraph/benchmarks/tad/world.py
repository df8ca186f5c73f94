"""Synthetic TAD: scripted ego maneuvers as nuScenes keyframe tables plus the TAD configs (HF field layout).

The ego's ground truth comes from the script (the maneuver of each 3 s segment), not from any tool.
Scenes are chains of maneuvers written as nuScenes tables (CAM_FRONT keyframes at 2 Hz, ego poses) with
frames rendered by the road renderer. With `agents` > 0 each scene also has that many other vehicles
(`tad_road_users`, one per class), drawn in the frames; their questions (exact-answer and multiple-choice
action, temporal ordering and action localisation, and temporal object localisation) are derived from
their trajectories and from what the ego camera shows. Without agents the set is ego-only (six tasks).
`kinegraph synth tad` puts the configs in the root and the nuScenes tables in `<root>/nuscenes`, where
the TAD loader looks by default.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from kinegraph.benchmarks.nuscenes.world import camera_rotation_wxyz, plan_track, token
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera, RoadRenderer
from kinegraph.benchmarks.synthetic.road_users import Road, RoadUser, movers_at
from kinegraph.benchmarks.synthetic.road_world import build_world, ego_lane_offset_m
from kinegraph.benchmarks.tad.road_users import (
    PLURAL,
    TAD_CLASSES,
    scripted_vehicle,
    tad_action,
    visible,
    visible_segments,
)
from kinegraph.media import write_image

KEYFRAME_HZ = 2.0
SEGMENT_S = 3.0
FRAMES_PER_SEGMENT = int(SEGMENT_S * KEYFRAME_HZ)  # 6 intervals: 7 keyframes, shared ends overlap

# TAD's eight actions for each scripted maneuver (braking or speeding up without a stop is straight driving).
TAD_ACTION = {
    "cruise": "Straight, constant speed",
    "accelerate": "Straight, constant speed",
    "brake": "Straight, constant speed",
    "emergency_stop": "Stopping",
    "stop_and_go": "Starting",
    "standing": "Stopped",
    "left_turn": "Turn left",
    "right_turn": "Turn right",
    "lane_change_left": "Change lane to the left",
    "lane_change_right": "Change lane to the right",
}
TAD_ACTIONS = tuple(dict.fromkeys(TAD_ACTION.values()))
PHRASE_LIST = ", ".join(f"'{a}'" for a in TAD_ACTIONS)
LETTER_REPLY = "Respond with exactly one letter corresponding to the correct option."


def _quaternions(yaw_rad: np.ndarray) -> np.ndarray:
    half = yaw_rad / 2.0
    return np.stack([np.cos(half), np.zeros_like(half), np.zeros_like(half), np.sin(half)], axis=1)


def write_nuscenes_keyframes(
    root: Path,
    scenes: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]],
    frames: list[list[np.ndarray]],
    camera: PinholeCamera,
) -> None:
    """nuScenes tables (v1.0-trainval) of keyframe-only scenes: (token, times_us, xy_m (N, 2), yaw_rad),
    with each scene's CAM_FRONT keyframe images `frames` taken by `camera`."""
    tables: dict[str, list[dict]] = {
        "log": [{"token": "log", "logfile": "synthetic"}],
        "sensor": [{"token": "cam", "channel": "CAM_FRONT", "modality": "camera"}],
        "calibrated_sensor": [
            {
                "token": "cs",
                "sensor_token": "cam",
                "translation": [camera.mount_forward_m, camera.mount_left_m, camera.mount_height_m],
                "rotation": camera_rotation_wxyz(),
                "camera_intrinsic": camera.intrinsic_matrix().tolist(),
            }
        ],
        "scene": [],
        "sample": [],
        "sample_data": [],
        "ego_pose": [],
    }
    for (scene_token, times_us, xy_m, yaw_rad), images in zip(scenes, frames, strict=True):
        n = len(times_us)
        samples = [token(scene_token, "sample", i) for i in range(n)]
        quats = _quaternions(yaw_rad)
        tables["scene"].append(
            {
                "token": scene_token,
                "name": scene_token[:8],
                "log_token": "log",
                "nbr_samples": n,
                "first_sample_token": samples[0],
                "last_sample_token": samples[-1],
            }
        )
        for i, sample in enumerate(samples):
            sd = token(scene_token, "sd", i)
            filename = f"samples/CAM_FRONT/{scene_token}_{i:03d}.jpg"
            write_image(root / filename, images[i])
            ts = int(times_us[i])
            tables["sample"].append(
                {
                    "token": sample,
                    "timestamp": ts,
                    "scene_token": scene_token,
                    "prev": samples[i - 1] if i else "",
                    "next": samples[i + 1] if i + 1 < n else "",
                }
            )
            tables["sample_data"].append(
                {
                    "token": sd,
                    "sample_token": sample,
                    "ego_pose_token": sd,
                    "calibrated_sensor_token": "cs",
                    "timestamp": ts,
                    "is_key_frame": True,
                    "filename": filename,
                    "prev": "",
                    "next": "",
                }
            )
            tables["ego_pose"].append(
                {
                    "token": sd,
                    "timestamp": ts,
                    "rotation": quats[i].tolist(),
                    "translation": [float(xy_m[i, 0]), float(xy_m[i, 1]), 0.0],
                }
            )
    (root / "v1.0-trainval").mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        (root / "v1.0-trainval" / f"{name}.json").write_text(json.dumps(rows))


def _options(correct: str, distractors: list[str], rng: np.random.Generator) -> tuple[list[str], str]:
    choices = [correct, *distractors]
    order = rng.permutation(len(choices))
    shuffled = [choices[i] for i in order]
    letters = "ABCDEFGH"
    return [f"{letters[i]}. {c}." for i, c in enumerate(shuffled)], letters[shuffled.index(correct)]


def _distractors(exclude: set[str], k: int, rng: np.random.Generator) -> list[str]:
    pool = [a for a in TAD_ACTIONS if a not in exclude]
    return [pool[i] for i in rng.choice(len(pool), size=k, replace=False)]


def _collapse(actions: list[str]) -> list[str]:
    return [a for i, a in enumerate(actions) if i == 0 or a != actions[i - 1]]


def tad_scene_questions(
    actions: list[str], anchors: list[int], rng: np.random.Generator
) -> dict[str, list[dict]]:
    """The six ego tasks' questions for one scene whose segment k does actions[k] (anchored at anchors[k])."""
    out: dict[str, list[dict]] = {}
    for k, action in enumerate(actions):
        out.setdefault("exact_answer_action", []).append(
            {
                "segment": k,
                "answer": action,
                "options": [],
                "question": "What best describes the motion of the ego vehicle in this video segment? "
                f"Respond with exactly one full phrase from the following list: {PHRASE_LIST}",
            }
        )
        options, letter = _options(action, _distractors({action}, 3, rng), rng)
        out.setdefault("mc_action", []).append(
            {
                "segment": k,
                "answer": letter,
                "options": options,
                "question": f"What is the motion of the ego vehicle in this video segment? {LETTER_REPLY}",
            }
        )
    counts = {a: actions.count(a) for a in dict.fromkeys(actions)}
    most = max(counts.values())
    if list(counts.values()).count(most) == 1:
        longest = max(counts, key=counts.__getitem__)
        others = [a for a in counts if a != longest]
        others += _distractors(set(counts), 3 - len(others), rng) if len(others) < 3 else []
        options, letter = _options(longest, others[:3], rng)
        out["action_duration"] = [
            {
                "answer": letter,
                "options": options,
                "question": f"Which action did the ego vehicle spend the most time doing? {LETTER_REPLY}",
            }
        ]
    order = _collapse(actions)
    if len(set(order)) >= 2:
        wrong = {"; ".join(order[::-1]), "; ".join(order[1:] + order[:1]), "; ".join(order[-1:] + order[:-1])}
        wrong.discard("; ".join(order))
        options, letter = _options("; ".join(order), sorted(wrong), rng)
        out["temp_ordering"] = [
            {
                "answer": letter,
                "options": options,
                "question": "Which of the following represents the correct temporal order of motions for "
                "the ego "
                f"vehicle? {LETTER_REPLY}",
            }
        ]
    for action in counts:
        segments = [anchors[k] for k, a in enumerate(actions) if a == action]
        out.setdefault("temp_action_localize", []).append(
            {
                "answer": segments,
                "options": [],
                "question": f"In which frames is the ego vehicle doing action '{action.lower()}'? Respond "
                "with an "
                "explicit list of all frame numbers, enumerating each value individually, without "
                "summarizing as a range.",
            }
        )
    first = {a: actions.index(a) for a in counts}
    if len(first) >= 2:
        a, b = sorted(first, key=first.__getitem__)[:2]
        options, letter = _options(a, [b], rng)
        out["relative_action_localize"] = [
            {
                "answer": letter,
                "options": options,
                "question": f"Which ego vehicle event happened earlier in the video? {LETTER_REPLY}",
            }
        ]
    return out


LOCALIZE_REPLY = (
    "Respond with an explicit list of all frame numbers, enumerating each value individually, without "
    "summarizing as a range."
)


def tad_object_questions(
    category: str, actions: dict[int, str], anchors: list[int], rng: np.random.Generator
) -> dict[str, list[dict]]:
    """Questions about the scene's only `category` vehicle, whose action in each segment it is seen in
    is `actions[k]`: segment actions, their order and localisation, and where it is visible at all.
    The texts never say "the ego vehicle" (upstream's ego/non-ego split reads that phrase)."""
    out: dict[str, list[dict]] = {}
    if not actions:
        return out
    for k, action in actions.items():
        out.setdefault("exact_answer_action", []).append(
            {
                "segment": k,
                "answer": action,
                "options": [],
                "question": f"What best describes the motion of the {category} visible in this video "
                f"segment? Respond with exactly one full phrase from the following list: {PHRASE_LIST}",
            }
        )
        options, letter = _options(action, _distractors({action}, 3, rng), rng)
        out.setdefault("mc_action", []).append(
            {
                "segment": k,
                "answer": letter,
                "options": options,
                "question": f"What is the motion of the {category} in this video segment? {LETTER_REPLY}",
            }
        )
    order = _collapse([actions[k] for k in sorted(actions)])
    if len(set(order)) >= 2:
        wrong = {"; ".join(order[::-1]), "; ".join(order[1:] + order[:1]), "; ".join(order[-1:] + order[:-1])}
        wrong.discard("; ".join(order))
        options, letter = _options("; ".join(order), sorted(wrong), rng)
        out["temp_ordering"] = [
            {
                "answer": letter,
                "options": options,
                "question": "Which of the following represents the correct temporal order of motions for "
                f"the {category}? {LETTER_REPLY}",
            }
        ]
    for action in dict.fromkeys(actions[k] for k in sorted(actions)):
        out.setdefault("temp_action_localize", []).append(
            {
                "answer": [anchors[k] for k in sorted(actions) if actions[k] == action],
                "options": [],
                "question": f"In which frames is the {category} doing action '{action.lower()}'? "
                + LOCALIZE_REPLY,
            }
        )
    out["temp_object_localize"] = [
        {
            "answer": [anchors[k] for k in sorted(actions)],
            "options": [],
            "question": f"In which frames are there any {PLURAL[category]} visible? " + LOCALIZE_REPLY,
        }
    ]
    return out


def _scene_vehicles(
    track, lane_offset_m: np.ndarray, windows: list[list[int]], agents: int, rng: np.random.Generator
) -> tuple[list[RoadUser], dict[str, dict[int, str]]]:
    """The scene's vehicles sampled at its keyframes, and each one's action per segment it is seen in."""
    road = Road.around_ego(track.xy_m, track.yaw_rad, lane_offset_m)
    s_ego = float(road.locate(track.xy_m[:1])[0][0])
    n_segments = len(windows)
    users, seen = [], {}
    for category in [TAD_CLASSES[i] for i in rng.permutation(len(TAD_CLASSES))[:agents]]:
        vehicle = scripted_vehicle(road, category, s_ego + rng.uniform(10, 30), rng, n_segments, SEGMENT_S)
        at_keyframes = vehicle.sample(track.timestamps_s)
        shown = visible(at_keyframes, track.xy_m, track.yaw_rad)
        seen[category] = {
            k: tad_action(at_keyframes.sample(track.timestamps_s[windows[k]]), road)
            for k in visible_segments(shown, windows)
        }
        users.append(at_keyframes)
    return users, seen


def _detections(samples: list[str], vehicles: list[RoadUser], track) -> dict[str, dict[str, int]]:
    """A perfect detector's counts per keyframe (`tad.scene_cot -O detections=...`): the road users the
    camera shows, by class."""
    shown = [(v.category, visible(v, track.xy_m, track.yaw_rad)) for v in vehicles]
    out: dict[str, dict[str, int]] = {}
    for i, sample_token in enumerate(samples):
        counts: dict[str, int] = {}
        for category, seen in shown:
            if seen[i]:
                counts[category] = counts.get(category, 0) + 1
        out[sample_token] = counts
    return out


def write_tad_world(
    root: Path,
    n_scenes: int = 6,
    seed: int = 0,
    segments: int = 4,
    agents: int = 0,
    size: tuple[int, int] = (160, 90),
) -> tuple[Path, Path]:
    """(TAD config dir `root/tad`, nuScenes root `root/nuscenes`): side by side, so loading the configs
    alone (without `nuscenes_root`) gives samples without frames or poses."""
    root = Path(root)
    return write_tad_set(root / "tad", root / "nuscenes", n_scenes, seed, segments, agents, size)


def write_tad_set(
    tad_dir: Path,
    nuscenes_root: Path,
    n_scenes: int,
    seed: int,
    segments: int = 4,
    agents: int = 0,
    size: tuple[int, int] = (160, 90),
) -> tuple[Path, Path]:
    """TAD configs in `tad_dir`, nuScenes tables in `nuscenes_root`: `n_scenes` scenes of `segments` x 3 s
    with `agents` other vehicles each (at most one per TAD class), rendered at `size` (width, height)."""
    if not 0 <= agents <= len(TAD_CLASSES):
        raise ValueError(f"agents must be 0..{len(TAD_CLASSES)} (one vehicle per class), got {agents}")
    tad_dir.mkdir(parents=True, exist_ok=True)
    camera = PinholeCamera.nuscenes_front(*size)
    scenes, keysegment_rows, frames = [], [], []
    configs: dict[str, list[dict]] = {}
    detections: dict[str, dict[str, int]] = {}
    for k in range(n_scenes):
        rng = np.random.default_rng([seed, k])
        track = plan_track([seed, k], segments, rate_hz=KEYFRAME_HZ)
        names = [name for name, _, _ in track.segments]
        scene_token = token(seed, "tad-scene", k)
        times_us = (
            1_500_000_000_000_000 + k * 60_000_000 + np.round(track.timestamps_s * 1e6).astype(np.int64)
        )
        scenes.append((scene_token, times_us, track.xy_m, track.yaw_rad))
        samples = [token(scene_token, "sample", i) for i in range(len(times_us))]
        windows = [
            list(range(j * FRAMES_PER_SEGMENT, (j + 1) * FRAMES_PER_SEGMENT + 1)) for j in range(segments)
        ]
        anchors = [w[len(w) // 2] for w in windows]
        keysegment_rows.append(
            {
                "scene_token": scene_token,
                "sample_tokens": samples,
                "keysegments": anchors,
                "keyframes_token_formatted": [
                    {"segment_key": samples[a], "frames": [samples[i] for i in w]}
                    for a, w in zip(anchors, windows, strict=True)
                ],
                "keyframes_index_formatted": [
                    {"segment_index_key": str(a), "indices": w} for a, w in zip(anchors, windows, strict=True)
                ],
            }
        )
        offset = ego_lane_offset_m(track.timestamps_s, track.yaw_rad, track.speed_mps, track.segments)
        vehicles, seen = _scene_vehicles(track, offset, windows, agents, np.random.default_rng([seed, k, 2]))
        detections.update(_detections(samples, vehicles, track))
        world = build_world(track.xy_m, track.yaw_rad, int(scene_token[:8], 16), lane_offset_m=offset,
                            max_raster_px=1500)  # fmt: skip
        renderer = RoadRenderer(world, camera)
        frames.append(
            [
                renderer.render(
                    *map(float, (*track.xy_m[i], track.yaw_rad[i])), movers=movers_at(vehicles, i)
                )
                for i in range(len(times_us))
            ]
        )
        questions = [tad_scene_questions([TAD_ACTION[n] for n in names], anchors, rng)]
        object_rng = np.random.default_rng([seed, k, 3])
        questions += [tad_object_questions(c, actions, anchors, object_rng) for c, actions in seen.items()]
        for task, rows in ((t, r) for q in questions for t, r in q.items()):
            for q in rows:
                row = {
                    "idx": len(configs.get(task, [])),
                    "scene_token": scene_token,
                    "question": q["question"],
                    "options": q["options"],
                    "answer": q["answer"],
                }
                if "segment" in q:
                    row["sample_token"] = samples[anchors[q["segment"]]]
                    row["keysegment"] = anchors[q["segment"]]
                configs.setdefault(task, []).append(row)
    write_nuscenes_keyframes(nuscenes_root, scenes, frames, camera)
    configs["keysegments"] = keysegment_rows
    for name, rows in configs.items():
        (tad_dir / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tad_dir / "detections.json").write_text(json.dumps(detections))
    return tad_dir, nuscenes_root


def generate(out_dir: Path, n: int = 6, seed: int = 0, agents: int = 3) -> Path:
    """Write `n` scenes of four 3 s maneuvers with `agents` other vehicles each, 320x180 frames;
    returns `out_dir` (the TAD folder the loader reads)."""
    if n < 1:
        raise ValueError(f"need at least one scene, got n={n}")
    out_dir = Path(out_dir)
    return write_tad_set(
        out_dir, out_dir / "nuscenes", n_scenes=n, seed=seed, agents=agents, size=(320, 180)
    )[0]
