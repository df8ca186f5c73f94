"""Camera self-motion from dense flow, on textures moved by known warps (pan, zoom) with a moving object."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from kinegraph.tools.camera_motion import CameraMotion, camera_direction, camera_motion

W, H = 160, 120


def _texture(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    low = rng.integers(0, 255, (60, 80, 3)).astype(np.uint8)
    return cv2.resize(low, (3 * W, 3 * H), interpolation=cv2.INTER_CUBIC)


def _clip(shift_px: float = 0.0, zoom: float = 0.0, n: int = 6, object_px: float = 0.0) -> np.ndarray:
    """A camera that pans (image content moves by -shift_px per frame) or zooms, with a small red square."""
    texture = _texture()
    frames = []
    for t in range(n):
        scale = (1 + zoom) ** t
        cx, cy = 1.5 * W + shift_px * t, 1.5 * H
        warp = np.array([[scale, 0, W / 2 - scale * cx], [0, scale, H / 2 - scale * cy]])
        frame = cv2.warpAffine(texture, warp, (W, H), borderMode=cv2.BORDER_REFLECT)
        x = int(20 + object_px * t)
        frame[50:62, x : x + 12] = (230, 20, 20)
        frames.append(frame)
    return np.stack(frames)


def test_pan_right_moves_content_left():
    motion = camera_motion(_clip(shift_px=3.0, object_px=-4.0))
    assert motion.shift_x_px == pytest.approx(-3.0, abs=0.3)  # the object does not move the median
    assert abs(motion.expansion_px) < 0.1 and motion.n_pairs == 5 and motion.width_px == W
    assert camera_direction(motion) == "right"
    assert camera_direction(camera_motion(_clip(shift_px=-3.0))) == "left"


def test_zoom_in_and_out_read_as_forward_and_backward():
    forward = camera_motion(_clip(zoom=0.03))
    # radial flow of a 3 % zoom is 0.03 x radius; the median radius of a 160 x 120 frame is about 45 px
    assert forward.expansion_px == pytest.approx(0.03 * 45, rel=0.3)
    assert camera_direction(forward) == "forward"
    assert camera_direction(camera_motion(_clip(zoom=-0.03))) == "backward"


def test_reversing_and_mirroring_the_clip_flip_the_measurement():
    clip = _clip(shift_px=2.0)
    assert camera_direction(camera_motion(clip[::-1])) == "left"
    assert camera_direction(camera_motion(np.ascontiguousarray(clip[:, :, ::-1]))) == "left"


def test_static_scene_and_thresholds():
    assert camera_direction(camera_motion(_clip())) == "static"
    assert camera_direction(CameraMotion(0.4, 0.0, 0.1, 0.0, 3, W)) == "static"
    assert camera_direction(CameraMotion(-0.2, 0.0, 0.3, 0.0, 3, W)) == "forward"


def test_bad_clips_are_rejected():
    with pytest.raises(ValueError, match="at least 2|2 frames"):
        camera_motion(_clip(n=1))
