"""Input checks on real files: image headers, videos, data-root confinement, media and trajectory building."""

from __future__ import annotations

import asyncio
import base64
import io

import cv2
import numpy as np
import pytest
from PIL import Image

from kinegraph.errors import DataError
from kinegraph.media import frame_pixel_limit, read_video, write_video
from kinegraph.paths import resolve_under
from kinegraph.serve.errors import ServeError
from kinegraph.serve.inputs import (
    Uploads,
    build_media,
    check_image,
    check_packet_frames,
    check_video,
    decode_base64_image,
)
from kinegraph.serve.schemas import QARequest, Trajectory
from kinegraph.serve.settings import ServeSettings
from kinegraph.serve.trajectories import trajectory_context
from tests.serve.forged_video import jpeg, mjpeg_avi
from tests.support.serving import bomb_png, jpeg_bytes, png_bytes


def status_of(call) -> tuple[int, str]:
    with pytest.raises(ServeError) as info:
        call()
    return info.value.status, info.value.message


def test_check_image_reads_format_and_size_from_the_header():
    assert check_image(png_bytes(10, 20), 200, "f") == "PNG"
    assert check_image(jpeg_bytes(10, 20), 200, "f") == "JPEG"
    assert status_of(lambda: check_image(png_bytes(10, 21), 200, "f")) == (
        422,
        "f: 21x10 image exceeds the limit of 200 pixels",
    )


def test_a_decompression_bomb_is_refused_from_its_header():
    bomb = bomb_png(20_000, 20_000)  # 1.2 GB of pixels in a few kB
    assert len(bomb) < 10_000
    assert status_of(lambda: check_image(bomb, 10**6, "f")) == (
        422,
        "f: image dimensions exceed the limit of 1000000 pixels",
    )
    below_pillow_guard = bomb_png(9_000, 9_000)  # under Pillow's own bomb limit: our limit still applies
    assert status_of(lambda: check_image(below_pillow_guard, 10**6, "f")) == (
        422,
        "f: 9000x9000 image exceeds the limit of 1000000 pixels",
    )


def test_non_images_and_other_formats_are_415():
    gif = io.BytesIO()
    Image.new("RGB", (4, 4)).save(gif, format="GIF")
    assert status_of(lambda: check_image(gif.getvalue(), 100, "f")) == (
        415,
        "f: GIF images are not accepted (JPEG, PNG or WebP)",
    )
    assert status_of(lambda: check_image(b"%PDF-1.7 hello", 100, "f"))[0] == 415


def test_base64_images_from_data_urls_or_bare():
    data = png_bytes()
    text = base64.b64encode(data).decode()
    assert decode_base64_image(f"data:image/png;base64,{text}", "i") == data
    assert decode_base64_image(text, "i") == data
    assert status_of(lambda: decode_base64_image("data:image/png,rawbytes", "i")) == (
        422,
        "i: a data URL must be base64 (data:image/png;base64,...)",
    )
    assert status_of(lambda: decode_base64_image("not base64!", "i")) == (422, "i: not valid base64")


def test_resolve_under_confines_references(data_root):
    assert resolve_under(data_root, "clip/frame_0.png", "p") == (data_root / "clip/frame_0.png").resolve()
    assert resolve_under(data_root, "clip/../clip/frame_1.png", "p").name == "frame_1.png"
    for reference in ("../secret.png", "clip/../../secret.png", "escape.png"):
        assert status_of(lambda r=reference: resolve_under(data_root, r, "p")) == (
            403,
            "p: path escapes the data root",
        )
    assert status_of(lambda: resolve_under(data_root, "/etc/passwd", "p"))[0] == 403
    assert status_of(lambda: resolve_under(data_root, "clip\x00.png", "p"))[0] == 403
    assert status_of(lambda: resolve_under(data_root, "clip", "p")) == (
        404,
        "p: no such file under the data root",
    )
    assert status_of(lambda: resolve_under(None, "clip/frame_0.png", "p"))[0] == 400


def test_names_too_long_for_the_file_system_are_422_not_os_errors(data_root):
    assert status_of(lambda: resolve_under(data_root, "a" * 256, "p")) == (
        422,
        "p: a path component is 256 bytes long; the limit is 255",
    )
    assert status_of(lambda: resolve_under(data_root, "clip/" + "é" * 128 + "/f.png", "p")) == (
        422,
        "p: a path component is 256 bytes long; the limit is 255",
    )
    assert status_of(lambda: resolve_under(data_root, "/".join(["d" * 250] * 20), "p")) == (
        422,
        "p: cannot be read under the data root (File name too long)",
    )
    assert status_of(lambda: resolve_under(data_root, "clip/\udc80.png", "p")) == (
        422,
        "p: not valid UTF-8 text",
    )
    assert status_of(lambda: resolve_under(data_root, "a" * 255, "p"))[0] == 404  # at the limit: looked up


def test_check_video_reads_the_container_header(data_root, tmp_path):
    settings = ServeSettings(max_image_pixels=32 * 24, max_video_frames=12)
    check_video(data_root / "clip.mp4", settings, "v")
    small = ServeSettings(max_image_pixels=100, max_video_frames=12)
    assert status_of(lambda: check_video(data_root / "clip.mp4", small, "v")) == (
        422,
        "v: 32x24 frames exceed the limit of 100 pixels",
    )
    short = ServeSettings(max_video_frames=5)
    assert status_of(lambda: check_video(data_root / "clip.mp4", short, "v")) == (
        422,
        "v: 12 frames exceed the limit of 5",
    )
    (tmp_path / "fake.mp4").write_bytes(b"\x00" * 100)
    assert status_of(lambda: check_video(tmp_path / "fake.mp4", settings, "v")) == (
        415,
        "v: not a readable video",
    )


def test_a_video_whose_header_understates_its_frames_is_refused_undecoded(tmp_path):
    path = tmp_path / "liar.avi"
    path.write_bytes(mjpeg_avi([jpeg(64, 64), jpeg(1000, 1200), jpeg(64, 64)], width=64, height=64))
    cap = cv2.VideoCapture(str(path))
    header = (cap.get(cv2.CAP_PROP_FRAME_WIDTH), cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    cap.release()
    assert header == (64, 64)  # what the header check alone sees
    settings = ServeSettings(max_image_pixels=100_000)
    assert status_of(lambda: check_video(path, settings, "v")) == (
        422,
        "v: frame 1 is 1200x1000, over the limit of 100000 pixels "
        "(the container header claims smaller frames)",
    )
    check_video(path, ServeSettings(max_image_pixels=1200 * 1000), "v")


def test_decoding_under_a_frame_pixel_limit_stops_at_the_first_frame_over_it(tmp_path):
    path = tmp_path / "clip.mp4"
    write_video(path, np.zeros((4, 48, 64, 3), np.uint8), fps=4.0)
    assert read_video(path)[0].shape == (4, 48, 64, 3)
    with frame_pixel_limit(64 * 48):
        assert read_video(path)[0].shape == (4, 48, 64, 3)
    with (
        frame_pixel_limit(1000),
        pytest.raises(DataError, match="frame 0 is 64x48, over the limit of 1000 pixels"),
    ):
        read_video(path)

    async def decode_in_a_thread():  # as graph nodes decode: the limit follows into the worker thread
        with frame_pixel_limit(1000):
            await asyncio.to_thread(read_video, path)

    with pytest.raises(DataError, match="over the limit of 1000 pixels"):
        asyncio.run(decode_in_a_thread())
    assert read_video(path)[0].shape == (4, 48, 64, 3)  # the limit ends with its block


def test_the_frame_pixel_limit_reaches_a_graph_decoding_in_its_own_tasks(tmp_path):
    from kinegraph.agents import get_backend
    from kinegraph.graphs import graph_spec
    from kinegraph.graphs.state import GraphContext
    from kinegraph.run.invoke import invoke_group
    from kinegraph.types import Media, Sample, Status

    write_video(tmp_path / "clip.mp4", np.zeros((6, 48, 64, 3), np.uint8), fps=4.0)
    media = Media(kind="video", video_path=str(tmp_path / "clip.mp4"))
    sample = Sample(
        id="a", benchmark="egodyn", group="a", question="q?", options=["left", "right"], media=media
    )
    graph = graph_spec("egodyn.vision").build({})
    context = GraphContext(backend=get_backend("scripted:fixed", responses=["left"]))

    async def answer(limit: int) -> tuple:
        with frame_pixel_limit(limit):
            (prediction,) = await invoke_group(graph, [sample], context)
        return prediction.status, prediction.error

    status, error = asyncio.run(answer(1000))
    assert status == Status.input_error and error.endswith("frame 0 is 64x48, over the limit of 1000 pixels")
    assert asyncio.run(answer(64 * 48)) == (Status.ok, None)


def test_build_media_writes_uploads_in_order(tmp_path):
    settings = ServeSettings(max_frames=3)
    inline = "data:image/png;base64," + base64.b64encode(png_bytes(value=9)).decode()
    request = QARequest(question="q", images=[inline])
    media = build_media(request, Uploads(frames=[jpeg_bytes(), png_bytes(value=200)]), settings, tmp_path)
    assert media.kind == "frames"
    assert [p.rsplit("/", 1)[1] for p in media.frame_paths] == [
        "frame_0000.png",
        "frame_0001.jpg",
        "frame_0002.png",
    ]
    assert open(media.frame_paths[2], "rb").read() == png_bytes(value=200)
    too_many = Uploads(frames=[jpeg_bytes()] * 4)
    assert status_of(lambda: build_media(request, too_many, settings, tmp_path)) == (
        422,
        "5 frames exceed the limit of 3 per request",
    )
    assert build_media(QARequest(question="q"), Uploads(), settings, tmp_path).kind == "none"


def test_trajectory_becomes_egodyn_kinematics(tmp_path):
    t = np.arange(31) * 0.1
    trajectory = Trajectory(timestamps_s=list(t), x_m=list(5.0 * t), y_m=[0.0] * 31, yaw_rad=[0.0] * 31)
    context = trajectory_context(trajectory, tmp_path)
    with np.load(context["arrays_path"]) as arrays:
        assert arrays["speed"].shape == (31,)
        np.testing.assert_allclose(arrays["speed"], 5.0, atol=1e-6)
    assert context["features"]["max_speed"] == pytest.approx(5.0, abs=1e-6)
    short = Trajectory(timestamps_s=[0, 1, 2], x_m=[0, 1, 2], y_m=[0, 0, 0], yaw_rad=[0, 0, 0])
    status, message = status_of(lambda: trajectory_context(short, tmp_path))
    assert status == 422 and message.startswith("trajectory: ")


def test_mpeg4_video_packets_are_not_taken_for_still_images(tmp_path):
    # Pillow's MPEG reader recognises MPEG-4 packets and reads sizes out of them; they are no images
    rng = np.random.default_rng(0)
    frames = [(rng.random((240, 320, 3)) * 255).astype(np.uint8) for _ in range(40)]
    path = tmp_path / "drive.mp4"
    write_video(path, frames, fps=10)
    check_packet_frames(path, 50, "video")  # no packet is read as a still image, however small the limit
    check_video(path, ServeSettings(max_image_pixels=320 * 240, max_video_frames=40), "video")
