"""`kinegraph mcp` through the MCP SDK's own client: every tool on synthetic media, and the refusals."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from kinegraph.tool_registry import default_registry
from tests.mcp_server.media_root import CAMERA, write_media_root
from tests.support.lazy import lazy_module
from tests.support.mcp_http import mcp_over_http

mcp = lazy_module("mcp")

# each session fixture starts the MCP server in a subprocess and calls every tool: seconds apiece
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
QP_VIDEO = "quantiphy/validation_videos/synthetic_0000.mp4"
DRIVE = "drives/left_turn.mp4"


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content)


async def session_calls(client: mcp.Client, calls: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": (await client.list_tools()).tools}
    for key, (name, arguments) in calls.items():
        out[key] = await client.call_tool(name, arguments)
    return out


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("mcp") / "root"
    root.mkdir()
    return root, write_media_root(root)


def speed_row(info: dict) -> dict:
    return next(r for r in info["quantiphy_rows"] if r["question"].startswith("What is the average speed"))


def stdio_calls(path: Path, info: dict) -> dict[str, tuple[str, dict[str, Any]]]:
    """key -> (tool, arguments): each tool on the synthetic media, then the refusals."""
    objects = info["quantiphy_truth"]["videos"]["synthetic_0000"]["objects"]
    row = speed_row(info)
    return {
        "ego": (
            "ego_trajectory",
            {
                "video_path": DRIVE,
                "focal_px": CAMERA.fx_px,
                "camera_height_m": CAMERA.mount_height_m,
                "pitch_deg": math.degrees(CAMERA.pitch_rad),
            },
        ),
        "vo": ("visual_odometry", {"video_path": DRIVE}),
        "flow": ("optical_flow", {"video_path": DRIVE, "num_frames": 16}),
        "camera": ("camera_motion", {"video_path": DRIVE}),
        "poses": (
            "tcogmap_from_poses",
            {
                "timestamps_s": [0.0, 0.5, 1.0, 1.5, 2.0],
                "x_m": [0.0, 5.0, 10.0, 15.0, 20.0],
                "y_m": [0.0] * 5,
                "yaw_deg": [0.0] * 5,
            },
        ),
        "track": (
            "track_objects",
            {"video_path": QP_VIDEO, "seed_boxes_px": [objects["green block"]["seed_box_px"]]},
        ),
        "scale": (
            "pixel_scale_calculator",
            {
                "video_path": QP_VIDEO,
                "prior": row["ground_truth_prior"],
                "question": row["question"],
                "prior_box_px": objects["yellow box"]["seed_box_px"],
                "target_boxes_px": [objects["green block"]["seed_box_px"]],
            },
        ),
        "cues": ("image_cues", {"image_path": "day.png"}),
        "outside": ("camera_motion", {"video_path": "../outside.mp4"}),
        "absolute": ("camera_motion", {"video_path": str(path / DRIVE)}),
        "missing_arg": ("ego_trajectory", {"focal_px": 400.0}),
        "wrong_type": ("ego_trajectory", {"video_path": DRIVE, "focal_px": "wide"}),
        "unexpected": ("image_cues", {"image_path": "day.png", "zoom": 2}),
        "broken": ("visual_odometry", {"video_path": "broken.mp4"}),
        "too_many_frames": ("visual_odometry", {"video_path": DRIVE, "num_frames": 500}),
        "unknown": ("no_such_tool", {}),
        "after_errors": ("image_cues", {"image_path": "day.png"}),
    }


@pytest.fixture(scope="module")
def stdio_results(root: tuple[Path, dict]) -> dict[str, Any]:
    """One stdio session: list the tools, call each on the synthetic media, then the refusals."""
    path, info = root
    calls = stdio_calls(path, info)
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "kinegraph.cli", "mcp", "--data-root", str(path)], env=ENV
    )

    async def run() -> dict[str, Any]:
        async with mcp.Client(server) as client:
            return await session_calls(client, calls)

    return anyio.run(run)


def test_every_registered_tool_is_listed_with_its_schema(stdio_results: dict[str, Any]) -> None:
    listed = {t.name: t.input_schema for t in stdio_results["tools"]}
    assert set(listed) == {
        "ego_trajectory", "visual_odometry", "optical_flow", "camera_motion", "tcogmap_from_poses",
        "track_objects", "pixel_scale_calculator", "image_cues",
    }  # fmt: skip
    assert listed["ego_trajectory"]["required"] == ["video_path"]
    assert listed["ego_trajectory"]["properties"]["focal_px"]["type"] == "number"
    assert listed["image_cues"]["required"] == ["image_path"]
    assert "video_path" not in listed["tcogmap_from_poses"]["properties"]


def test_every_registered_tool_is_called_and_answers(root: tuple[Path, dict], stdio_results) -> None:
    answered = {name for key, (name, _) in stdio_calls(*root).items() if not stdio_results[key].is_error}
    assert answered == set(default_registry().names())  # a tool added to the registry needs a call above


def test_measured_left_turn_drive_reads_as_a_left_turn(stdio_results: dict[str, Any]) -> None:
    ego = stdio_results["ego"].structured_content
    assert not stdio_results["ego"].is_error
    assert ego["turn_direction"] == "left" and ego["motion_class"] == "Turn left"
    assert ego["net_heading_change_deg"] > 20
    assert 3.0 < ego["mean_measured_speed_mps"] < 10.0
    assert ego["frames_used"]["n_frames"] == 31
    assert stdio_results["vo"].structured_content["answers"]["yaw_rate_turn_direction"] == "left"
    assert stdio_results["vo"].structured_content["net_yaw_deg"] > 20
    flow = stdio_results["flow"].structured_content
    assert flow["answers"]["yaw_rate_turn_direction"] == "left" and flow["frames_used"]["n_frames"] == 16
    assert stdio_results["camera"].structured_content["direction"] == "left"  # content shifts right


def test_poses_tracker_calculator_and_cues_give_known_values(root: tuple[Path, dict], stdio_results) -> None:
    _, info = root
    poses = stdio_results["poses"].structured_content
    assert poses["motion_class"] == "Straight, constant speed"
    (green,) = stdio_results["track"].structured_content["objects"]
    truth = info["quantiphy_truth"]["videos"]["synthetic_0000"]["objects"]["green block"]["centre_px"]
    assert green["first_centre_px"] == pytest.approx(truth[0], abs=1.5)
    scale = stdio_results["scale"].structured_content
    assert scale["unit"] == "m/s" and scale["path"] == "2d"
    assert scale["value"] == pytest.approx(float(speed_row(info)["ground_truth_posterior"]), rel=0.08)
    assert stdio_results["cues"].structured_content["illumination"] == "daylight"
    assert json.loads(text_of(stdio_results["cues"])) == stdio_results["cues"].structured_content


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("outside", "path escapes the data root"),
        ("absolute", "must be a relative path under the data root"),
        ("missing_arg", "missing required argument 'video_path'"),
        ("wrong_type", "argument 'focal_px' must be of type number"),
        ("unexpected", "unexpected argument 'zoom'"),
        ("broken", "video_path: not a readable video"),
        ("too_many_frames", "num_frames must be between 2 and the server's limit of 64"),
        ("unknown", "unknown tool 'no_such_tool'"),
    ],
)
def test_refusals_are_tool_errors_with_a_clear_message(stdio_results: dict[str, Any], key: str, message: str):
    result = stdio_results[key]
    assert result.is_error and message in text_of(result)
    assert "Traceback" not in text_of(result) and str(REPO) not in text_of(result)


def test_the_server_keeps_serving_after_errors(stdio_results: dict[str, Any]) -> None:
    assert not stdio_results["after_errors"].is_error


def test_streamable_http_serves_the_same_tools(root: tuple[Path, dict]) -> None:
    path, _ = root
    with mcp_over_http(path, "--max-frames", "8", env=ENV) as url:

        async def run() -> dict[str, Any]:
            async with mcp.Client(url) as client:
                return await session_calls(
                    client,
                    {
                        "vo": ("visual_odometry", {"video_path": DRIVE}),
                        "limit": ("visual_odometry", {"video_path": DRIVE, "num_frames": 9}),
                    },
                )

        results = anyio.run(run)
    assert {t.name for t in results["tools"]} == set(default_registry().names())
    assert results["vo"].structured_content["frames_used"]["n_frames"] == 8
    assert results["limit"].is_error and "limit of 8" in text_of(results["limit"])
