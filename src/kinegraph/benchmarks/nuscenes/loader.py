"""Devkit-free reader of nuScenes tables: scenes, samples, camera sample_data chains, ego poses.

Card: nuScenes (Caesar et al., CVPR 2020), data CC BY-NC-SA 4.0; schema of `nutonomy/nuscenes-devkit`
@d9de17a (`docs/schema_nuscenes.md`). Reads `<dataroot>/<version>/<table>.json` of real nuScenes
(v1.0-mini, v1.0-trainval) and of `kinegraph synth nuscenes`. The raw tables carry no channel on
sample_data and no `data` dict on sample; the devkit derives both (calibrated_sensor -> sensor, and
keyframe sample_data per sample), and so does this reader. Timestamps are integer microseconds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kinegraph.errors import DataError
from kinegraph.jsonfiles import read_text

# The fields this reader uses, per table; other fields are kept but not checked.
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "log": ("token",),
    "sensor": ("token", "channel", "modality"),
    "calibrated_sensor": ("token", "sensor_token", "translation", "rotation", "camera_intrinsic"),
    "scene": ("token", "name", "log_token", "nbr_samples", "first_sample_token", "last_sample_token"),
    "sample": ("token", "timestamp", "scene_token", "prev", "next"),
    "sample_data": (
        "token",
        "sample_token",
        "ego_pose_token",
        "calibrated_sensor_token",
        "timestamp",
        "is_key_frame",
        "filename",
        "prev",
        "next",
    ),
    "ego_pose": ("token", "timestamp", "rotation", "translation"),
}


class EgoPose(NamedTuple):
    """The ego vehicle's pose in the log's global frame (localisation is planar: z = 0)."""

    token: str
    timestamp_us: int
    translation_m: tuple[float, float, float]
    rotation_wxyz: tuple[float, float, float, float]
    yaw_rad: float  # z-Euler angle as EgoDyn computes it (scipy 'xyz')


class CameraFrame(NamedTuple):
    """One camera sample_data (keyframe or sweep) with its ego pose."""

    token: str
    sample_token: str
    channel: str
    filename: str  # relative to the dataroot, e.g. samples/CAM_FRONT/...jpg or sweeps/CAM_FRONT/...jpg
    timestamp_us: int
    is_key_frame: bool
    ego_pose: EgoPose

    @property
    def timestamp_s(self) -> float:
        return self.timestamp_us / 1e6


def quaternion_yaw_rad(rotation_wxyz: Any) -> float:
    """Heading about z of a nuScenes [w, x, y, z] quaternion, as EgoDyn: scipy `as_euler('xyz')[2]`."""
    from scipy.spatial.transform import Rotation  # here: the TAD and STSBench loaders need no scipy

    w, x, y, z = (float(v) for v in rotation_wxyz)
    return float(Rotation.from_quat([x, y, z, w]).as_euler("xyz")[2])


class NuScenesTables:
    """The tables of one nuScenes version, indexed by token, with the devkit's reverse indices."""

    def __init__(
        self, dataroot: str | Path, version: str = "v1.0-mini", texts: Mapping[str, str] | None = None
    ) -> None:
        """The tables under `dataroot/version`, read by path; given `texts` (every table's JSON text, by
        table name, read by the caller from files it opened), parsed from those instead and the folder
        named in messages only."""
        self.dataroot = Path(dataroot)
        self.version = version
        table_dir = self.dataroot / version
        if texts is None and not table_dir.is_dir():
            raise DataError(f"no nuScenes tables: directory {version}/ not found", path=table_dir)
        self._paths = {name: table_dir / f"{name}.json" for name in REQUIRED_FIELDS}
        self._tables = {name: self._load(name, texts) for name in REQUIRED_FIELDS}
        self._index = {name: {r["token"]: r for r in rows} for name, rows in self._tables.items()}
        self._channel_of_calib = {}
        for calib in self._tables["calibrated_sensor"]:
            sensor = self.get("sensor", calib["sensor_token"])
            self._channel_of_calib[calib["token"]] = sensor["channel"]
        self._keyframe: dict[tuple[str, str], str] = {}
        for sd in self._tables["sample_data"]:
            if sd["is_key_frame"]:
                self._keyframe[(sd["sample_token"], self.channel(sd))] = sd["token"]

    def _load(self, name: str, texts: Mapping[str, str] | None) -> list[dict]:
        path = self._paths[name]
        if texts is None and not path.is_file():
            raise DataError(
                f"missing nuScenes table {name!r} (expected {self.version}/{name}.json)", path=path
            )
        try:
            rows = json.loads(read_text(path) if texts is None else texts[name])
        except json.JSONDecodeError as exc:
            raise DataError(f"unreadable JSON: {exc}", path=path) from exc
        if not isinstance(rows, list):
            raise DataError(f"expected a JSON array of records, got {type(rows).__name__}", path=path)
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise DataError(f"record #{i} is not an object", path=path)
            for field in REQUIRED_FIELDS[name]:
                if field not in row:
                    raise DataError(
                        f"record #{i} (token {row.get('token', '?')}) has no such field",
                        path=path,
                        field=field,
                    )
        return rows

    def table(self, name: str) -> list[dict]:
        """All records of a table, in file order."""
        if name not in self._tables:
            raise KeyError(f"table {name!r} is not loaded; loaded: {', '.join(self._tables)}")
        return self._tables[name]

    def get(self, name: str, token: str) -> dict:
        """The record of `name` with `token`; DataError naming the table file when it does not exist."""
        try:
            return self._index[name][token]
        except KeyError:
            raise DataError(
                f"no {name} record with token {token!r}", path=self._paths[name], field="token"
            ) from None

    @property
    def scenes(self) -> list[dict]:
        return self._tables["scene"]

    def channel(self, sample_data: dict) -> str:
        """The sensor channel of a sample_data record (via calibrated_sensor -> sensor)."""
        token = sample_data["calibrated_sensor_token"]
        if token not in self._channel_of_calib:
            self.get("calibrated_sensor", token)  # raises a DataError naming the table
        return self._channel_of_calib[token]

    def samples(self, scene_token: str) -> list[dict]:
        """The keyframe samples of a scene in time order (first_sample_token, then `next`)."""
        scene = self.get("scene", scene_token)
        out, token, seen = [], scene["first_sample_token"], set()
        while token:
            if token in seen:
                raise DataError(
                    f"sample {token} comes back in its own chain", path=self._paths["sample"], field="next"
                )
            seen.add(token)
            sample = self.get("sample", token)
            out.append(sample)
            token = sample["next"]
        return out

    def keyframe_token(self, sample_token: str, channel: str = "CAM_FRONT") -> str:
        """The keyframe sample_data token of `channel` for a sample (devkit: `sample['data'][channel]`)."""
        key = (sample_token, channel)
        if key not in self._keyframe:
            raise DataError(
                f"sample {sample_token} has no {channel} keyframe",
                path=self._paths["sample_data"],
                field="is_key_frame",
            )
        return self._keyframe[key]

    def ego_pose(self, token: str) -> EgoPose:
        record = self.get("ego_pose", token)
        try:
            translation = tuple(float(v) for v in record["translation"])
            rotation = tuple(float(v) for v in record["rotation"])
            timestamp_us = int(record["timestamp"])
        except (TypeError, ValueError) as exc:
            raise DataError(
                f"ego_pose {token}: {exc}", path=self._paths["ego_pose"], field="translation"
            ) from exc
        if len(translation) != 3 or len(rotation) != 4 or not np.all(np.isfinite(translation + rotation)):
            raise DataError(
                f"ego_pose {token}: need finite translation[3] and rotation[4]",
                path=self._paths["ego_pose"],
                field="rotation",
            )
        try:
            yaw = quaternion_yaw_rad(rotation)
        except ValueError as exc:
            raise DataError(
                f"ego_pose {token}: {exc}", path=self._paths["ego_pose"], field="rotation"
            ) from exc
        return EgoPose(token, timestamp_us, translation, rotation, yaw)  # type: ignore[arg-type]

    def camera_frame(self, sample_data_token: str) -> CameraFrame:
        sd = self.get("sample_data", sample_data_token)
        return CameraFrame(
            token=sd["token"],
            sample_token=sd["sample_token"],
            channel=self.channel(sd),
            filename=sd["filename"],
            timestamp_us=int(sd["timestamp"]),
            is_key_frame=bool(sd["is_key_frame"]),
            ego_pose=self.ego_pose(sd["ego_pose_token"]),
        )

    def camera_frames(self, scene_token: str, channel: str = "CAM_FRONT") -> list[CameraFrame]:
        """Every sample_data of `channel` in a scene (keyframes and sweeps) in time order, following
        prev/next from the first keyframe and staying inside the scene."""
        first = self.keyframe_token(self.samples(scene_token)[0]["token"], channel)

        def in_scene(sd: dict) -> bool:
            owner = self._index["sample"].get(sd["sample_token"])
            return owner is not None and owner["scene_token"] == scene_token

        before, token = [], self.get("sample_data", first)["prev"]
        while token and in_scene(self.get("sample_data", token)):
            before.append(token)
            token = self.get("sample_data", token)["prev"]
        after, token = [first], self.get("sample_data", first)["next"]
        while token and in_scene(self.get("sample_data", token)):
            after.append(token)
            token = self.get("sample_data", token)["next"]
        return [self.camera_frame(t) for t in before[::-1] + after]

    def frames_in_window(self, end_token: str, t_start_s: float, t_end_s: float) -> list[CameraFrame]:
        """Frames of `end_token`'s channel with t_start_s <= t <= t_end_s (seconds = us / 1e6), found
        by walking `prev` from `end_token` as EgoDyn's extractor does; returned in time order."""
        out, token = [], end_token
        while token:
            sd = self.get("sample_data", token)
            t_s = sd["timestamp"] / 1e6
            if t_s < t_start_s:
                break
            if t_start_s <= t_s <= t_end_s:
                out.append(token)
            token = sd["prev"]
        return [self.camera_frame(t) for t in out[::-1]]

    def camera_intrinsic(self, calibrated_sensor_token: str) -> np.ndarray:
        """K (3, 3) of a camera's calibrated_sensor; DataError for non-camera sensors (empty intrinsic)."""
        calib = self.get("calibrated_sensor", calibrated_sensor_token)
        k = np.asarray(calib["camera_intrinsic"], dtype=np.float64)
        if k.shape != (3, 3):
            raise DataError(
                f"calibrated_sensor {calibrated_sensor_token} has no 3x3 camera intrinsic (shape {k.shape})",
                path=self._paths["calibrated_sensor"],
                field="camera_intrinsic",
            )
        return k
