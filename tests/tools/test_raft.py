"""RAFT re-implementation: torchvision-compatible parameters and checkpoints, and the frame-pair flow API.

Random weights only (nothing is downloaded); parity with torchvision itself was checked at development time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kinegraph.errors import DataError
from tests.support.lazy import lazy_module

torch = lazy_module("torch")
raft = lazy_module("kinegraph.tools.raft")

# torchvision's documented `num_params` for raft_large / raft_small: matching them pins the architecture.
PUBLISHED_PARAMS = {"large": 5_257_536, "small": 990_162}


def _count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def _seeded(variant: str, seed: int) -> raft.Raft:
    torch.manual_seed(seed)
    return raft.build_raft(variant)


@pytest.fixture(scope="module")
def small() -> raft.Raft:
    return _seeded("small", 0)


def _frames(n: int, height: int, width: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (n, height, width, 3)
    return rng.integers(0, 256, shape, dtype=np.uint8), rng.integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.parametrize("variant", ["small", "large"])
def test_parameter_count_matches_torchvision(variant: str) -> None:
    assert _count(raft.build_raft(variant)) == PUBLISHED_PARAMS[variant]


@pytest.mark.parametrize("variant", ["small", "large"])
def test_checkpoint_round_trip_through_a_file(variant: str, tmp_path: Path) -> None:
    saved = _seeded(variant, 1)
    path = tmp_path / "raft.pth"
    torch.save(saved.state_dict(), path)

    loaded = raft.load_raft(variant, weights=path)

    assert _count(loaded) == PUBLISHED_PARAMS[variant]
    assert set(loaded.state_dict()) == set(saved.state_dict())
    assert not loaded.training
    for key, value in saved.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value), key


@pytest.mark.parametrize("wrapper", ["state_dict", "model"])
def test_wrapped_checkpoint_loads(wrapper: str, tmp_path: Path) -> None:
    saved = _seeded("small", 2)
    path = tmp_path / "wrapped.pth"
    torch.save({wrapper: saved.state_dict(), "epoch": 3}, path)

    loaded = raft.load_raft("small", weights=path)

    key = "update_block.flow_head.conv2.weight"
    assert torch.equal(loaded.state_dict()[key], saved.state_dict()[key])


def test_checkpoint_with_wrong_keys_is_a_one_line_error(tmp_path: Path) -> None:
    state = _seeded("small", 3).state_dict()
    del state["update_block.flow_head.conv1.bias"]
    state["update_block.flow_head.conv9.weight"] = torch.zeros(1)
    path = tmp_path / "broken.pth"
    torch.save(state, path)

    with pytest.raises(DataError) as caught:
        raft.load_raft("small", weights=path)

    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message
    assert "missing keys (1): update_block.flow_head.conv1.bias" in message
    assert "unexpected keys (1): update_block.flow_head.conv9.weight" in message


def test_checkpoint_of_the_other_variant_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "large.pth"
    torch.save(_seeded("large", 4).state_dict(), path)

    with pytest.raises(DataError, match="missing keys .*unexpected keys .*bad shapes"):
        raft.load_raft("small", weights=path)


def test_no_weights_names_the_paths_looked_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    cache = tmp_path / "hub" / "checkpoints"

    with pytest.raises(FileNotFoundError) as caught:
        raft.load_raft("large")

    message = str(caught.value)
    for name in raft.CHECKPOINT_FILES["large"]:
        assert str(cache / name) in message
    assert "never downloads" in message

    missing = tmp_path / "nowhere" / "raft.pth"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        raft.load_raft("small", weights=missing)


def test_weights_are_found_in_the_torch_hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    cache = tmp_path / "hub" / "checkpoints"
    cache.mkdir(parents=True)
    saved = _seeded("small", 5)
    torch.save(saved.state_dict(), cache / raft.CHECKPOINT_FILES["small"][-1])  # the V1 name

    loaded = raft.load_raft("small")

    key = "context_encoder.conv.weight"
    assert torch.equal(loaded.state_dict()[key], saved.state_dict()[key])


@pytest.mark.parametrize("variant", ["small", "large"])
@pytest.mark.parametrize(("height", "width"), [(64, 96), (50, 70)])
def test_raft_flow_shape_dtype_finite(variant: str, height: int, width: int) -> None:
    model = _seeded(variant, 6)
    frames_a, frames_b = _frames(2, height, width, seed=7)

    flow = raft.raft_flow(model, frames_a, frames_b, num_flow_updates=4)

    assert flow.shape == (2, height, width, 2)
    assert flow.dtype == np.float32
    assert np.isfinite(flow).all()
    assert np.abs(flow).max() > 0


def test_raft_flow_downscales_to_max_width(small: raft.Raft) -> None:
    frames_a, frames_b = _frames(1, 64, 96, seed=8)

    flow = raft.raft_flow(small, frames_a, frames_b, num_flow_updates=2, max_width_px=48)

    assert flow.shape == (1, 32, 48, 2)


def test_raft_flow_is_batch_invariant_and_deterministic(small: raft.Raft) -> None:
    frames_a, frames_b = _frames(3, 64, 96, seed=9)

    one = raft.raft_flow(small, frames_a, frames_b, batch_size=1)
    two = raft.raft_flow(small, frames_a, frames_b, batch_size=2)
    again = raft.raft_flow(small, frames_a, frames_b, batch_size=2)

    np.testing.assert_allclose(one, two, atol=1e-4, rtol=0)
    np.testing.assert_array_equal(two, again)


def test_raft_flow_rejects_bad_frames(small: raft.Raft) -> None:
    frames_a, frames_b = _frames(1, 64, 96, seed=10)
    with pytest.raises(ValueError, match="uint8"):
        raft.raft_flow(small, frames_a.astype(np.float32), frames_b)
    with pytest.raises(ValueError, match="differ in shape"):
        raft.raft_flow(small, frames_a, frames_b[:, :32])


def test_model_rejects_inputs_too_small_for_the_pyramid(small: raft.Raft) -> None:
    images = torch.zeros(1, 3, 64, 64)
    with pytest.raises(ValueError, match="128"):
        small(images, images)


def test_correlation_window_order_is_x_offset_major() -> None:
    """Pretrained weights expect window channels ordered (dx, dy) with dx varying slowest."""
    height, width, radius = 6, 7, 1
    xs = raft.pixel_grid(1, height, width, torch.device("cpu"))[:, :1]  # every correlation map holds its x
    pyramid = [xs.expand(height * width, 1, height, width).contiguous()]

    window = raft.lookup_correlation(pyramid, raft.pixel_grid(1, height, width, torch.device("cpu")), radius)

    assert window.shape == (1, 9, height, width)
    inner = window[0, :, 1:-1, 1:-1]
    x = xs[0, 0, 1:-1, 1:-1]
    for channel in range(9):
        dx = channel // 3 - radius
        torch.testing.assert_close(inner[channel], x + dx)


@pytest.mark.parametrize("convex", [False, True])
def test_upsampling_a_constant_flow_scales_it_by_eight(convex: bool) -> None:
    flow = torch.tensor([1.5, -0.25]).view(1, 2, 1, 1).expand(1, 2, 3, 4).contiguous()
    mask = torch.randn(1, 8 * 8 * 9, 3, 4) if convex else None

    fine = raft.upsample_flow(flow, mask)

    assert fine.shape == (1, 2, 24, 32)
    interior = fine[:, :, 8:16, 8:24]  # convex weights also mix in the zero padding at the border
    torch.testing.assert_close(interior, torch.tensor([12.0, -2.0]).view(1, 2, 1, 1).expand_as(interior))


@pytest.mark.slow
def test_upstream_preprocessing_is_egodyns_raft_baseline(small: raft.Raft) -> None:
    """The default input preparation, rebuilt here step by step from spec egodyn.md §3.3 and torchvision's
    OpticalFlow transform: INTER_AREA to the working width, [0, 1], zero pad bottom/right to a multiple of
    8 (and the pyramid's minimum), normalise to [-1, 1], final refinement, top-left crop."""
    import cv2

    frames_a, frames_b = _frames(1, 150, 300, seed=10)
    flow = raft.raft_flow(small, frames_a, frames_b, num_flow_updates=3, max_width_px=200)

    def prepared(frame: np.ndarray) -> torch.Tensor:
        shrunk = cv2.resize(frame, (200, 100), interpolation=cv2.INTER_AREA)
        unit = torch.from_numpy(shrunk).permute(2, 0, 1)[None].float() / 255.0
        padded = torch.zeros(1, 3, 128, 200)  # 100 rows -> 104 (x8) -> 128 (the small model's minimum)
        padded[:, :, :100, :200] = unit
        return (padded - 0.5) / 0.5

    with torch.inference_mode():
        expected = small(prepared(frames_a[0]), prepared(frames_b[0]), 3)[:, :, :100, :200]
    np.testing.assert_allclose(flow[0], expected[0].permute(1, 2, 0).numpy(), atol=1e-5, rtol=0)
    other = raft.raft_flow(
        small, frames_a, frames_b, num_flow_updates=3, max_width_px=200, preprocessing="centred_edge"
    )
    assert other.shape == flow.shape and np.abs(other - flow).max() > 1e-3  # the non-official one differs
    with pytest.raises(ValueError, match="preprocessing must be one of"):
        raft.raft_flow(small, frames_a, frames_b, preprocessing="torchvision")  # type: ignore[arg-type]


def test_the_raft_row_is_official_only_with_upstream_preprocessing() -> None:
    from kinegraph.graphs import graph_spec

    spec = graph_spec("egodyn.gpu_flow")
    assert not spec.is_non_official({"method": "raft_large"})  # upstream preparation by default
    assert spec.is_non_official({"method": "raft_large", "raft_preprocessing": "centred_edge"})
    assert spec.is_non_official({})  # Horn-Schunck: no paper ran it
