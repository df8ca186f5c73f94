"""Synthetic worlds shared by the synthetic-world tests: a tiny nuScenes dataroot and a straight-road world,
each written once per session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kinegraph.benchmarks.nuscenes.world import generate
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera
from kinegraph.benchmarks.synthetic.road_world import RoadWorld, build_world

TINY = {"width_px": 160, "height_px": 90, "segments_per_scene": 3}


@pytest.fixture(scope="session")
def tiny_nuscenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two 9 s scenes at 160x90, seed 5."""
    return generate(tmp_path_factory.mktemp("nuscenes"), 2, 5, **TINY)


@pytest.fixture(scope="session")
def straight_world() -> RoadWorld:
    """A world around a 200 m straight path along +x."""
    xy = np.column_stack([np.linspace(0.0, 200.0, 50), np.zeros(50)])
    return build_world(xy, np.zeros(50), seed=3)


@pytest.fixture(scope="session")
def small_camera() -> PinholeCamera:
    return PinholeCamera.nuscenes_front(320, 180)
