"""nuScenes: the devkit-free table reader, camera geometry and the synthetic dataroot."""

from kinegraph.benchmarks.nuscenes.loader import (
    REQUIRED_FIELDS,
    CameraFrame,
    EgoPose,
    NuScenesTables,
    quaternion_yaw_rad,
)

__all__ = ["CameraFrame", "EgoPose", "NuScenesTables", "REQUIRED_FIELDS", "quaternion_yaw_rad"]
