"""Torch Horn-Schunck probe: known warps, agreement with the Farneback heuristic, batching, CUDA vs CPU."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from kinegraph.tools import flow
from tests.support.lazy import lazy_module
from tests.support.vision_scenes import drive, render_clip, render_frame, textured_image, true_flow

torch = lazy_module("torch")
gpu_flow = lazy_module("kinegraph.tools.gpu_flow")


def _grey_pair(first: np.ndarray, second: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    grey = gpu_flow.preprocess_gray(torch.from_numpy(np.stack([first, second])))
    return grey[:1], grey[1:]


def _warp_about_centre(image: np.ndarray, angle_deg: float = 0.0, scale: float = 1.0) -> np.ndarray:
    h, w = image.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle_deg, scale)
    return cv2.warpAffine(image, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


@pytest.fixture(scope="module")
def clips() -> list[np.ndarray]:
    """Two drives (320 x 180, no downsampling): a left turn and a straight acceleration."""
    return [
        render_clip(drive(4, 1.0, np.radians(1.5)), 320, 180),
        render_clip(drive(5, np.linspace(0.5, 1.5, 4)), 320, 180),
    ]


@pytest.fixture(scope="module")
def tiny_clips(clips: list[np.ndarray]) -> list[np.ndarray]:
    """The same drives at 160 x 90, for the batching tests (solved with `LIGHT`)."""
    return [np.ascontiguousarray(clip[:, ::2, ::2]) for clip in clips]


LIGHT = {"levels": 3, "warps": 1, "iterations": 10}  # HornSchunckSettings: torch loads when a test runs


@pytest.mark.slow
@pytest.mark.parametrize(("dx_px", "dy_px"), [(2.5, -1.0), (-6.0, 3.0)])
def test_horn_schunck_recovers_a_known_translation(dx_px: float, dy_px: float) -> None:
    image = textured_image(180, 320)
    shifted = cv2.warpAffine(
        image, np.float32([[1, 0, dx_px], [0, 1, dy_px]]), (320, 180), borderMode=cv2.BORDER_REFLECT
    )
    field = gpu_flow.horn_schunck(*_grey_pair(image, shifted))[0, :, 30:150, 40:280]
    assert field[0].median().item() == pytest.approx(dx_px, abs=0.1)
    assert field[1].median().item() == pytest.approx(dy_px, abs=0.1)


@pytest.mark.slow
@pytest.mark.parametrize(
    "pose_b",
    [(0.0, 1.0, 0.0), (-0.02, 1.0, float(np.radians(1.5))), (0.0, 0.0, float(np.radians(-1.0)))],
    ids=["forward", "forward-left", "yaw-right"],
)
def test_horn_schunck_matches_the_exact_flow_of_a_rendered_drive(pose_b: tuple[float, float, float]) -> None:
    pose_a = (0.0, 0.0, 0.0)
    first, second = render_frame(*pose_a, 320, 180), render_frame(*pose_b, 320, 180)
    exact = true_flow(pose_a, pose_b, 320, 180)[36:153]  # the signal band
    field = gpu_flow.horn_schunck(*_grey_pair(first, second))[0].permute(1, 2, 0).numpy()[36:153]
    assert np.median(np.hypot(*(field - exact).transpose(2, 0, 1))) < 0.3  # px; Farneback: 0.2-0.7


def test_preprocessing_matches_the_heuristics_grey_frames() -> None:
    rgb = textured_image(360, 640, seed=5)
    ours = gpu_flow.preprocess_gray(torch.from_numpy(rgb[None]))[0, 0].numpy()
    assert ours.shape == (180, 320)
    assert np.max(np.abs(ours - flow.preprocess_gray(rgb).astype(np.float32))) <= 1.0  # cv2 rounds to uint8


@pytest.mark.parametrize(("angle_deg", "scale"), [(1.0, 1.0), (-1.0, 1.0), (0.0, 1.02), (0.0, 0.98)])
def test_rotation_and_zoom_signals_agree_with_farneback(angle_deg: float, scale: float) -> None:
    image = textured_image(180, 320)
    pair = np.stack([image, _warp_about_centre(image, angle_deg, scale)])
    ours = gpu_flow.gpu_flow_signals([pair], device="cpu")[0]
    reference = flow.flow_signals(pair)
    for mine, theirs in zip(ours, reference, strict=True):
        assert mine[0] == pytest.approx(theirs[0], rel=0.1, abs=0.02)


def test_drives_map_to_the_expected_answers(clips: list[np.ndarray]) -> None:
    turn, accelerate = gpu_flow.gpu_flow_probe(clips, device="cpu")
    assert np.mean(turn.signals.turn_px) > 0.05
    assert turn.answers["yaw_rate_turn_direction"] == "left"
    assert np.all(np.diff(accelerate.signals.magnitude_px) > 0)
    assert accelerate.answers["yaw_rate_turn_direction"] == "straight"
    assert accelerate.answers["speed_trend"] == "accelerating"  # mean expansion > 0.2, as the heuristic


def test_batches_split_across_clips_give_the_same_signals(tiny_clips: list[np.ndarray]) -> None:
    together = gpu_flow.gpu_flow_signals(
        tiny_clips, device="cpu", settings=gpu_flow.HornSchunckSettings(**LIGHT), batch_pairs=2
    )
    alone = [
        gpu_flow.gpu_flow_signals(
            [clip], device="cpu", settings=gpu_flow.HornSchunckSettings(**LIGHT), batch_pairs=64
        )[0]
        for clip in tiny_clips
    ]
    assert [len(s.turn_px) for s in together] == [3, 4]
    for a, b in zip(together, alone, strict=True):
        np.testing.assert_allclose(np.stack(a), np.stack(b), atol=1e-4)


def test_clips_of_different_sizes_are_solved_in_their_own_groups(tiny_clips: list[np.ndarray]) -> None:
    smaller = np.ascontiguousarray(tiny_clips[0][:, ::2, ::2])
    mixed = gpu_flow.gpu_flow_signals(
        [tiny_clips[0], smaller, tiny_clips[1]], device="cpu", settings=gpu_flow.HornSchunckSettings(**LIGHT)
    )
    assert [len(s.turn_px) for s in mixed] == [3, 3, 4]
    alone = gpu_flow.gpu_flow_signals(
        [tiny_clips[1]], device="cpu", settings=gpu_flow.HornSchunckSettings(**LIGHT)
    )[0]
    np.testing.assert_allclose(np.stack(mixed[2]), np.stack(alone), atol=1e-4)


def test_device_resolution() -> None:
    assert gpu_flow.resolve_device("cpu").type == "cpu"
    assert gpu_flow.resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cuda"):
            gpu_flow.resolve_device("cuda")


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="at least 2 frames"):
        gpu_flow.gpu_flow_signals([np.zeros((1, 90, 160, 3), np.uint8)], device="cpu")
    with pytest.raises(ValueError, match="batch_pairs"):
        gpu_flow.gpu_flow_signals([np.zeros((2, 90, 160, 3), np.uint8)], device="cpu", batch_pairs=0)


def test_blank_frames_give_zero_signals() -> None:
    (signals,) = gpu_flow.gpu_flow_signals([np.full((3, 90, 160, 3), 77, np.uint8)], device="cpu")
    np.testing.assert_array_equal(np.stack(signals), 0.0)


@pytest.mark.gpu
def test_cuda_matches_cpu(clips: list[np.ndarray]) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: torch.cuda.is_available() is False")
    on_cpu = gpu_flow.gpu_flow_probe(clips, device="cpu")
    on_cuda = gpu_flow.gpu_flow_probe(clips, device="cuda")
    for a, b in zip(on_cpu, on_cuda, strict=True):
        np.testing.assert_allclose(np.stack(a.signals), np.stack(b.signals), atol=2e-3)
        assert a.answers == b.answers
