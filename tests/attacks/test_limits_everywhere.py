"""Every limit everywhere: serve's `--max-frames` holds for every graph family, and the MCP and Studio doors
check media by the same code as serve (one refusal for one forged video), with MCP's memory, concurrency
and body bounds."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.media import write_video
from kinegraph.serve.errors import ServeError
from kinegraph.serve.inputs import Uploads, build_media
from kinegraph.serve.schemas import QARequest
from kinegraph.serve.settings import ServeSettings
from kinegraph.studio.inputs import StudioInputError, read_samples
from kinegraph.tool_registry import DataRootMedia, MediaLimits, ToolError
from tests.serve.forged_video import jpeg, mjpeg_avi
from tests.support.mcp_http import mcp_over_http
from tests.support.serving import AUTH, running

MAX_PIXELS = 256 * 256


@pytest.fixture(scope="module")
def forged_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """liar.avi: a header and first frame of 32x32, then a 600x600 frame; long.mp4: 40 frames."""
    root = tmp_path_factory.mktemp("limits")
    (root / "liar.avi").write_bytes(mjpeg_avi([jpeg(32, 32), jpeg(600, 600), jpeg(32, 32)], 32, 32))
    write_video(root / "long.mp4", np.zeros((40, 24, 32, 3), np.uint8), fps=10.0)
    return root


@pytest.mark.parametrize("graph", ["quantiphy.zero_shot", "quantiphy.cot"])
def test_max_frames_holds_for_a_graph_that_sends_every_frame(
    attack_model: OpenAILoopback, forged_root: Path, graph: str
) -> None:
    prior = {"quantity": "the ball's diameter", "value": 0.22, "unit": "m"}
    body = {
        "graph": graph,
        "question": "How fast is the ball in m/s?",
        "video_path": "long.mp4",
        "prior": prior,
    }
    with running(
        attack_model, data_root=forged_root, graphs=(graph,), default_graph=graph, max_frames=8
    ) as srv:
        before = attack_model.received
        response = httpx.post(srv.url + "/v1/qa", json=body, headers=AUTH, timeout=60)
    assert response.status_code == 422, response.text
    assert "40 frames, over the limit of 8 per request" in response.json()["error"]["message"]
    assert attack_model.received == before


def test_the_three_doors_refuse_a_frame_behind_a_small_first_one_alike(forged_root: Path) -> None:
    """serve, MCP and Studio: the same words, from the packet's header, before the big frame is decoded."""
    settings = ServeSettings(data_root=forged_root, max_image_pixels=MAX_PIXELS)
    with pytest.raises(ServeError) as served:
        build_media(QARequest(question="q", video_path="liar.avi"), Uploads(), settings, forged_root)
    media = DataRootMedia(MediaLimits(forged_root, max_image_pixels=MAX_PIXELS))
    with pytest.raises(ToolError) as tool:
        media.clip("liar.avi", 3)
    import kinegraph.studio.inputs as studio_inputs

    studio_limits = studio_inputs.STUDIO_LIMITS
    studio_inputs.STUDIO_LIMITS = MediaLimits(None, max_image_pixels=MAX_PIXELS)
    try:
        with pytest.raises(StudioInputError) as studio:
            read_samples(
                "dsi", {"samples": [{"question": "q"}], "media": {"video_path": "liar.avi"}}, forged_root
            )
    finally:
        studio_inputs.STUDIO_LIMITS = studio_limits
    expected = (
        "frame 1 is 600x600, over the limit of 65536 pixels (the container header claims smaller frames)"
    )
    assert str(served.value.message) == f"video: {expected}"
    assert str(tool.value) == f"video_path: {expected}"
    assert str(studio.value) == f"media.video_path: {expected}"


def test_an_mcp_call_keeps_at_most_its_decoded_memory(forged_root: Path) -> None:
    media = DataRootMedia(MediaLimits(forged_root, max_decoded_bytes=10 * 24 * 32 * 3))
    assert len(media.clip("long.mp4", 10).frames) == 10
    with pytest.raises(ToolError, match="of pixels from one clip"):
        media.clip("long.mp4", 20)


def test_mcp_over_http_reads_bodies_with_a_size_limit(forged_root: Path) -> None:
    with mcp_over_http(forged_root) as url:
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        big = (
            b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": "'
            + b"a" * (4 << 20)
            + b'"}}'
        )
        declared = httpx.post(url, content=big, headers=headers, timeout=30)
        streamed = httpx.post(url, content=iter([big[i : i + 65536] for i in range(0, len(big), 65536)]),
                              headers=headers, timeout=30)  # fmt: skip
    assert declared.status_code == 413 and "exceeds the limit of 1048576 bytes" in declared.text
    assert streamed.status_code == 413
