"""Dense flow of many clips in one batched call: the same signals per clip as one clip at a time."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.lazy import lazy_module

torch = lazy_module("torch")
dense_flow = lazy_module("kinegraph.tools.dense_flow")
gpu_flow = lazy_module("kinegraph.tools.gpu_flow")
raft = lazy_module("kinegraph.tools.raft")


def _clip(rng: np.random.Generator, frames: int, height: int, width: int, shift_px: int) -> np.ndarray:
    """A textured image sliding `shift_px` to the right per frame."""
    base = rng.integers(0, 255, size=(height, width + shift_px * frames, 3)).astype(np.uint8)
    base = np.repeat(np.repeat(base[::4, ::4], 4, axis=0), 4, axis=1)[:height]
    return np.stack([base[:, k * shift_px : k * shift_px + width] for k in range(frames)][::-1])


@pytest.fixture(scope="module")
def clips() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [_clip(rng, 4, 90, 160, 2), _clip(rng, 3, 90, 160, 3), _clip(rng, 4, 72, 128, 1)]


def _assert_same(batched, alone) -> None:
    for got, want in zip(batched, alone, strict=True):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, atol=1e-4)


@pytest.mark.slow
def test_horn_schunck_batched_over_clips_equals_one_clip_at_a_time(clips):
    spec = dense_flow.DenseFlowSpec(device="cpu")
    batched = dense_flow.dense_flow_signals(clips, spec, batch_pairs=64)
    _assert_same(batched, [gpu_flow.gpu_flow_signals([c], "cpu")[0] for c in clips])
    assert [len(s[0]) for s in batched] == [3, 2, 3]


@pytest.mark.slow
def test_raft_batched_over_clips_equals_one_clip_at_a_time(clips, tmp_path):
    torch.manual_seed(0)
    weights = tmp_path / "raft_small.pth"
    torch.save(raft.build_raft("small").state_dict(), weights)
    spec = dense_flow.DenseFlowSpec(method="raft_small", device="cpu", weights=str(weights))
    batched = dense_flow.dense_flow_signals(clips, spec, batch_pairs=4)
    alone = [dense_flow.dense_flow_signals([c], spec, batch_pairs=1)[0] for c in clips]
    _assert_same(batched, alone)
    assert all(np.all(np.isfinite(np.concatenate(list(s)))) for s in batched)


def test_spec_refuses_what_it_cannot_run():
    with pytest.raises(ValueError, match="flow method must be one of"):
        dense_flow.DenseFlowSpec(method="farneback")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="RAFT only"):
        dense_flow.DenseFlowSpec(weights="/some/file.pth")
    with pytest.raises(ValueError, match="max_width_px"):
        dense_flow.DenseFlowSpec(max_width_px=8)


def test_raft_without_weights_anywhere_names_where_it_looked(clips, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    with pytest.raises(FileNotFoundError, match="raft_large"):
        dense_flow.dense_flow_signals(clips[:1], dense_flow.DenseFlowSpec(method="raft_large", device="cpu"))
