"""Keyframe lookup in nuScenes tables for the TAD and STSBench loaders (devkit-free, read once).

Rebuilds the two devkit indices the loaders need: a scene's sample tokens in order (`first_sample_token`
then `next`), and a sample's keyframe `sample_data` of one channel (via calibrated_sensor -> sensor).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from kinegraph.errors import DataError


class Keyframe(NamedTuple):
    """A sample's keyframe on one channel: image path, timestamp and ego pose (global frame)."""

    sample_token: str
    path: str
    timestamp_us: int
    translation_m: tuple[float, float, float]
    rotation_wxyz: tuple[float, float, float, float]


def _table(version_dir: Path, name: str) -> list[dict[str, Any]]:
    path = version_dir / f"{name}.json"
    try:
        rows = json.loads(path.read_text())
    except OSError as exc:
        raise DataError(f"missing nuScenes table ({exc.strerror})", path=path) from exc
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from exc
    if not isinstance(rows, list):
        raise DataError("expected a JSON array", path=path)
    return rows


class NuScenesFrames:
    """Scene chains and keyframes of one nuScenes version under `dataroot` (e.g. `v1.0-trainval`)."""

    def __init__(self, dataroot: str | Path, version: str = "v1.0-trainval", channel: str = "CAM_FRONT"):
        self.dataroot = Path(dataroot)
        version_dir = self.dataroot / version
        if not version_dir.is_dir():
            raise DataError(f"no nuScenes version folder {version!r}", path=version_dir)
        self.channel = channel
        self._scenes = {r["token"]: r for r in _table(version_dir, "scene")}
        self._samples = {r["token"]: r for r in _table(version_dir, "sample")}
        channel_of = {r["token"]: r["channel"] for r in _table(version_dir, "sensor")}
        cs_channel = {
            r["token"]: channel_of.get(r["sensor_token"]) for r in _table(version_dir, "calibrated_sensor")
        }
        poses = {r["token"]: r for r in _table(version_dir, "ego_pose")}
        self._keyframes: dict[str, Keyframe] = {}
        for sd in _table(version_dir, "sample_data"):
            if not sd.get("is_key_frame") or cs_channel.get(sd["calibrated_sensor_token"]) != channel:
                continue
            pose = poses.get(sd["ego_pose_token"])
            if pose is None:
                raise DataError(f"sample_data {sd['token']} names a missing ego_pose", field="ego_pose_token")
            self._keyframes[sd["sample_token"]] = Keyframe(
                sd["sample_token"],
                str(self.dataroot / sd["filename"]),
                int(sd["timestamp"]),
                tuple(pose["translation"]),  # type: ignore[arg-type]
                tuple(pose["rotation"]),  # type: ignore[arg-type]
            )

    def scene_samples(self, scene_token: str) -> list[str]:
        """Every sample token of a scene, first to last."""
        scene = self._scenes.get(scene_token)
        if scene is None:
            raise DataError(f"scene {scene_token!r} not in the nuScenes tables", field="scene_token")
        tokens, token = [], scene["first_sample_token"]
        while token:
            tokens.append(token)
            token = self._samples[token]["next"]
        return tokens

    def keyframe(self, sample_token: str) -> Keyframe:
        """The keyframe of `self.channel` for one sample."""
        frame = self._keyframes.get(sample_token)
        if frame is None:
            raise DataError(f"sample {sample_token!r} has no {self.channel} keyframe", field="sample_token")
        return frame
