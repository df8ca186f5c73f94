"""Fixtures for the tool tests: keyframe poses of scripted ego maneuvers."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from kinegraph.benchmarks.synthetic.maneuvers import EgoTrack

KeyframePoses = tuple[np.ndarray, np.ndarray, np.ndarray]


@pytest.fixture
def keyframe_poses() -> Callable[[EgoTrack, int], KeyframePoses]:
    """nuScenes-style keyframe poses of a track: every 6th 12 Hz sweep (2 Hz) from `offset`.

    Returns (timestamps_us (K,), translation_m (K, 3), rotation_wxyz (K, 4)).
    """

    def poses(track: EgoTrack, offset: int = 0) -> KeyframePoses:
        idx = np.arange(offset, len(track.timestamps_s), 6)
        timestamps_us = np.round(track.timestamps_s[idx] * 1e6).astype(np.int64)
        translation = np.column_stack([track.xy_m[idx], np.zeros(len(idx))])
        return timestamps_us, translation, track.rotation_wxyz()[idx]

    return poses
